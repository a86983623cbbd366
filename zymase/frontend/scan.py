"""Syntactic scans of a function body that the lowering needs before it emits a statement:
which names a loop body assigns, and whether a statement can break, continue or return."""

from __future__ import annotations

import ast


def assigned_names(stmts: list[ast.stmt]) -> list[str]:
    """Names bound by assignments, augmented assignments and for-targets (nested ones too),
    in first-seen order."""
    seen: dict[str, None] = {}
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                seen.setdefault(node.id, None)
            elif isinstance(node, ast.Call) and _is_method(node, "append"):
                # `lst.append(x)` rebinds the list's buffer and length
                seen.setdefault(node.func.value.id, None)
    return list(seen)


def local_names(fdef: ast.FunctionDef) -> frozenset:
    """The names the function assigns anywhere in its own body (Python makes them local
    everywhere in it), not counting nested functions, lambdas and classes."""
    out, todo = set(), list(fdef.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.id)
        todo.extend(ast.iter_child_nodes(node))
    return frozenset(out)


def _is_method(call: ast.Call, name: str) -> bool:
    f = call.func
    return isinstance(f, ast.Attribute) and f.attr == name and isinstance(f.value, ast.Name)


def has_return(stmts: list[ast.stmt]) -> bool:
    return any(isinstance(n, ast.Return) for s in stmts for n in ast.walk(s))


def has_loop_exit(stmts: list[ast.stmt], kinds=(ast.Break, ast.Continue)) -> bool:
    """True when a statement can break/continue the *enclosing* loop (nested loops excluded)."""
    for s in stmts:
        if isinstance(s, kinds):
            return True
        if isinstance(s, (ast.For, ast.While)):
            if s.orelse and has_loop_exit(s.orelse, kinds):
                return True
            continue
        if isinstance(s, ast.If) and (has_loop_exit(s.body, kinds)
                                      or has_loop_exit(s.orelse, kinds)):
            return True
    return False


def may_exit(stmt: ast.stmt, in_loop: bool) -> bool:
    """Can this statement leave the rest of its block unexecuted (return/break/continue)?"""
    if has_return([stmt]):
        return True
    return in_loop and has_loop_exit([stmt])


def always_returns(stmts: list[ast.stmt]) -> bool:
    """Does every path through ``stmts`` end in a ``return`` (or ``raise``)?"""
    for s in stmts:
        if isinstance(s, (ast.Return, ast.Raise)):
            return True
        if isinstance(s, ast.If) and always_returns(s.body) and always_returns(s.orelse):
            return True
        if (isinstance(s, ast.While) and _is_true(s.test)
                and not has_loop_exit(s.body, (ast.Break,))):
            return True
    return False


def _is_true(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and bool(node.value) is True


def returns_value(fdef: ast.FunctionDef) -> bool:
    """Does any ``return`` of the function (not of nested functions) return a value?"""
    for node in ast.walk(fdef):
        if isinstance(node, ast.Return) and node.value is not None:
            if not (isinstance(node.value, ast.Constant) and node.value.value is None):
                return True
    return False


# ---------------------------------------------------------------------- liveness of loop names


def maybe_unbound(fdef: ast.FunctionDef) -> frozenset:
    """The local names some read may find unbound: a path from the function's start reaches the
    read without assigning the name (every loop counted as running no times and once).  Only
    these need to know at run time whether they are bound."""
    a = fdef.args
    params = {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs}
    params |= {p.arg for p in (a.vararg, a.kwarg) if p is not None}
    return frozenset(n for n in local_names(fdef) - params if _exposed(fdef.body, n, False)[0])


def carried_value_read(fdef: ast.FunctionDef, loop: ast.stmt, name: str) -> bool:
    """Can a read of ``name`` see the value an earlier iteration of ``loop`` left in it: a read
    outside the loop, or one in its body that an iteration can reach before assigning it?

    (A name the body binds on some paths only must then be carried from iteration to iteration;
    when no read can see the old value it need not be.)"""
    inside = {id(n) for n in ast.walk(loop)}
    for node in _own_nodes(fdef.body):
        if id(node) not in inside and _is_read(node, name):
            return True
    bound = isinstance(loop, ast.For) and name in _target_names(loop.target)
    return _exposed(loop.body, name, bound)[0]


def _own_nodes(stmts):
    """Every node of ``stmts``, not descending into nested functions, lambdas and classes."""
    todo = list(stmts)
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                 ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))


def _is_read(node, name) -> bool:
    if isinstance(node, ast.Name) and node.id == name:
        return isinstance(node.ctx, ast.Load)
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        return node.target.id == name
    return False


def _reads(node, name) -> bool:
    return any(_is_read(n, name) for n in _own_nodes([node]))


def _target_names(target) -> set:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Store)}


def _exposed(stmts, name, bound: bool) -> tuple[bool, bool]:
    """(may ``stmts`` read ``name`` before assigning it, is it assigned after them on every path
    that goes on), starting with ``name`` assigned or not (``bound``).  A path that breaks,
    continues or returns goes on nowhere, so it counts as assigned."""
    for s in stmts:
        if bound:
            return False, True
        if isinstance(s, (ast.Assign, ast.AnnAssign)):
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            value_read = s.value is not None and _reads(s.value, name)
            # `name[i] = v` and `name.x = v` read `name`
            if value_read or any(_reads(t, name) for t in targets):
                return True, False
            bound = any(name in _target_names(t) for t in targets) and s.value is not None
        elif isinstance(s, ast.AugAssign):
            if _reads(s, name):
                return True, False
        elif isinstance(s, ast.If):
            if _reads(s.test, name):
                return True, False
            e1, b1 = _exposed(s.body, name, False)
            e2, b2 = _exposed(s.orelse, name, False)
            if e1 or e2:
                return True, False
            bound = b1 and b2
        elif isinstance(s, (ast.For, ast.While)):
            head = s.iter if isinstance(s, ast.For) else s.test
            if _reads(head, name):
                return True, False
            first = isinstance(s, ast.For) and name in _target_names(s.target)
            if _exposed(s.body, name, first)[0] or _exposed(s.orelse, name, False)[0]:
                return True, False
        elif isinstance(s, (ast.Return, ast.Raise, ast.Break, ast.Continue)):
            if _reads(s, name):
                return True, False
            return False, True
        elif _reads(s, name):
            return True, False
    return False, bound
