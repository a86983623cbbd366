"""Alias roots: which buffers (arguments, allocations, constants) an array value may be, following
views, selects, calls and the values that branches and loops carry; and which buffers an op
itself writes (``written_buffers``).  Used by the frontend (writes into copies where NumPy views),
by reverse mode (activity, caching) and by ``passes.licm`` (writes into constants)."""

from __future__ import annotations

from .core import VIEW, Func, Op, Value
from .ops import (
    Alloc,
    ArrayConst,
    Call,
    For,
    If,
    Select,
    TapePopRef,
    TapePushArray,
    TapePushRef,
    While,
)
from .types import ArrayType


def written_buffers(op: Op) -> list[Value]:
    """The arrays ``op`` itself writes into or frees (``Op.written``: the destination of
    ``array.store`` and ``linalg.matmul``, the buffer of ``array.free``).  A call writes what
    its callee writes: callers look that up."""
    if isinstance(op, (TapePushArray, TapePushRef)):
        # a push reads the array and writes its tape; Op.written() counts every array operand
        # of an op that does not name the operands it writes
        return []
    return op.written()


def array_roots(func: Func) -> dict:
    """Array value -> the buffers it may be (arguments, allocations, constants), following
    views, selects, calls and the values that branches and loops carry."""
    roots: dict = {}
    for a in func.args:
        if isinstance(a.type, ArrayType):
            roots[a] = {a}
    changed = True
    while changed:
        changed = False
        for op in func.walk():
            for dst, srcs in array_flows(op):
                new = set().union(*(roots.get(s, set()) for s in srcs)) if srcs else {dst}
                cur = roots.setdefault(dst, set())
                if not new <= cur:
                    cur |= new
                    changed = True
    return roots


def region_flows(op: Op):
    """(destination, source) pairs of values that region ops pass along: inits to block
    arguments, yields to block arguments and results."""
    if isinstance(op, For):
        body = op.regions[0].block
        yields = body.terminator.operands
        for k, init in enumerate(op.operands[3:]):
            yield body.args[k + 1], init
            yield body.args[k + 1], yields[k]
            yield op.results[k], yields[k]
            # a carried position is one variable: its argument and result share activity
            yield op.results[k], body.args[k + 1]
            yield body.args[k + 1], op.results[k]
    elif isinstance(op, If):
        for r in op.regions:
            for k, y in enumerate(r.block.terminator.operands):
                yield op.results[k], y
    elif isinstance(op, While):
        before, after = op.regions[0].block, op.regions[1].block
        cond = before.terminator.operands[1:]
        yields = after.terminator.operands
        for k, init in enumerate(op.operands):
            yield before.args[k], init
            yield before.args[k], yields[k]
        for k, fwd in enumerate(cond):
            yield after.args[k], fwd
            yield op.results[k], fwd
            yield op.results[k], after.args[k]
            yield after.args[k], op.results[k]


def array_flows(op: Op):
    """(array value, [source arrays]) for ops producing array values; [] means a new root."""
    if isinstance(op, (Alloc, ArrayConst, TapePopRef)):  # (a popped array: one of its own)
        return [(op.result, [])]
    if op.has_trait(VIEW):
        return [(op.result, [op.operands[0]])]
    if isinstance(op, Select) and isinstance(op.result.type, ArrayType):
        return [(op.result, [op.operands[1], op.operands[2]])]  # either buffer
    if isinstance(op, Call):
        srcs = [v for v in op.operands if isinstance(v.type, ArrayType)]
        fresh = op.attrs.get("fresh") or [False] * len(op.results)  # (``summarize_calls``)
        return [(r, [] if new else srcs) for r, new in zip(op.results, fresh)
                if isinstance(r.type, ArrayType)]
    return [(d, [s]) for d, s in region_flows(op) if isinstance(d.type, ArrayType)]


def call_writes(op: Call) -> list[Value]:
    """The array arguments a call may write: those ``summarize_calls`` found its callee writes,
    else all of them."""
    arrays = [v for v in op.operands if isinstance(v.type, ArrayType)]
    writes = op.attrs.get("writes")
    return arrays if writes is None else [op.operands[k] for k in writes]


def summarize_calls(module) -> None:
    """Mark each call with what its callee does to arrays: ``fresh`` (per result, whether it is
    always a buffer the callee allocates, or one a call of its returns so) and ``writes`` (the
    positions of the array arguments it may write, through its own calls too).  A least fixed
    point over the module, so that a recursive function returning a new array counts as
    returning a new array."""
    funcs = module.funcs
    fresh = {n: [True] * len(f.attrs["result_types"]) for n, f in funcs.items()}
    writes = {n: set() for n in funcs}

    def mark():
        for f in funcs.values():
            for op in f.walk():
                if isinstance(op, Call):
                    name = str(op.attrs["callee"])
                    if name in funcs:
                        op.attrs["fresh"] = list(fresh[name])
                        op.attrs["writes"] = sorted(writes[name])
                    else:
                        op.attrs.pop("fresh", None)
                        op.attrs.pop("writes", None)
    changed = True
    while changed:
        mark()
        changed = False
        for name, f in funcs.items():
            roots = array_roots(f)
            args = {a: k for k, a in enumerate(f.args)}
            ret = f.body.terminator
            new_fresh = [not isinstance(v.type, ArrayType) or all(
                r.op is not None and isinstance(r.op, (Alloc, Call)) for r in roots.get(v, {v}))
                for v in (ret.operands if ret is not None else [])]
            new_writes = set(writes[name])
            for op in f.walk():
                written = call_writes(op) if isinstance(op, Call) else written_buffers(op)
                for v in written:
                    new_writes |= {args[r] for r in roots.get(v, ()) if r in args}
            merged = [a and b for a, b in zip(fresh[name], new_fresh)]
            if len(new_fresh) == len(merged) and merged != fresh[name]:
                fresh[name] = merged
                changed = True
            if new_writes != writes[name]:
                writes[name] = new_writes
                changed = True
