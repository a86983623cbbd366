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
