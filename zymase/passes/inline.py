"""inline: replace every ``func.call`` of a non-recursive function by a copy of its body.

Expects: a module whose functions end with exactly one ``func.return`` as their last op (control
flow is structured, so a body is a straight list of ops).  Leaves: no calls to functions that are
not (directly or mutually) recursive and not marked ``noinline`` (functions with custom
derivative rules, until differentiation has used them); callees that are no longer called and are
not marked ``entry`` are removed.  Copied ops keep the callee's source locations (those of a
``library`` function take the call's: errors in zymase's own routines name the user's line).
Mirrors MLIR's ``--inline`` (``mlir/lib/Transforms/InlinerPass.cpp``) with an always-inline cost
model, and LLVM's ``AlwaysInliner`` plus ``GlobalDCE`` for the dead callees.
"""

from __future__ import annotations

from ..ir.core import Func, Module, Op
from ..ir.ops import Call, Return
from .rewrite import clone_op, walk


def inline(module: Module) -> bool:
    recursive = recursive_funcs(module)
    inlined: set[str] = set()
    progress = True
    while progress:  # an inlined body may hold calls of its own
        progress = False
        for f in module:
            for op in walk(f):
                callee = _callee(op)
                if (callee in module.funcs and callee not in recursive
                        and not module[callee].attrs.get("noinline")):
                    inline_call(op, module[callee])
                    inlined.add(callee)
                    progress = True
    _remove_dead_callees(module, inlined)
    return bool(inlined)


def inline_call(call: Op, callee: Func) -> None:
    """Copy ``callee``'s body before ``call`` and replace the call's results by what it returns."""
    mapping = dict(zip(callee.args, call.operands, strict=True))
    *body, ret = callee.body.ops
    assert isinstance(ret, Return), f"@{callee.sym_name} does not end in func.return"
    block = call.parent
    library = callee.attrs.get("library")  # zymase's own Python routines: the caller's line
    for op in body:
        new = clone_op(op, mapping)
        if library:
            for inner in new.walk():
                inner.loc = call.loc
        block.insert_before(call, new)
    for r, v in zip(call.results, ret.operands, strict=True):
        r.replace_all_uses_with(mapping.get(v, v))
    call.erase()


def call_graph(module: Module) -> dict[str, set[str]]:
    """Function name -> names of the functions it calls."""
    return {f.sym_name: {c for op in f.walk() if (c := _callee(op))} for f in module}


def recursive_funcs(module: Module) -> set[str]:
    """Functions that can reach themselves through calls."""
    graph = call_graph(module)
    out = set()
    for name in graph:
        seen, stack = set(), list(graph[name])
        while stack:
            g = stack.pop()
            if g == name:
                out.add(name)
                break
            if g not in seen and g in graph:
                seen.add(g)
                stack.extend(graph[g])
    return out


def _callee(op: Op) -> str | None:
    return str(op.attrs["callee"]) if isinstance(op, Call) else None


def remove_unreachable(module: Module, roots: list[str]) -> None:
    """Drop the functions no call chain from ``roots`` reaches (after AD: the primal a gradient
    no longer calls, say), so that nothing later optimizes or compiles them."""
    graph = call_graph(module)
    seen, stack = set(roots), list(roots)
    while stack:
        for g in graph.get(stack.pop(), ()):
            if g not in seen:
                seen.add(g)
                stack.append(g)
    for name in [n for n in module.funcs if n not in seen]:
        del module.funcs[name]


def _remove_dead_callees(module: Module, candidates: set[str]) -> None:
    """Drop inlined callees nobody calls any more, unless Python calls them (``entry``)."""
    while True:
        called = set().union(*call_graph(module).values())
        dead = [n for n in candidates if n in module.funcs and n not in called]
        dead = [n for n in dead if not module[n].attrs.get("entry")]
        if not dead:
            return
        for n in dead:
            del module.funcs[n]
