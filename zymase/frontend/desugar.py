"""Comprehensions and loop ``else`` clauses, rewritten into the plain statements they stand for
before anything else reads the function's syntax tree (``source.get_source`` calls ``desugar``
once per function).

* ``[elt for x in xs if c]`` becomes, in front of the statement that holds it,

      comp.0 = []
      for x.1 in xs:
          if c:                      # with x renamed to x.1 (names with a dot cannot clash)
              comp.0.append(elt)

  and the comprehension is replaced by ``comp.0``.  A generator expression given to a call
  (``max(x for x in a)``, ``np.array(...)``) is the same list; ``sum(...)`` of one adds as it
  goes (``s = 0``, then ``s = s + elt``: Python's order, no list); ``any(...)`` and ``all(...)``
  of one become a loop that stops at the first element deciding the answer, as Python's do.
  Elements are numbers (lists hold scalars in compiled code).
* ``return A if c else B`` and ``x = A if c else B`` with a comprehension in ``A`` or ``B``
  become ``if`` statements (each branch's comprehension runs only on its path).
* ``for ... else`` / ``while ... else``: a flag set by each ``break`` of the loop; the ``else``
  body runs under ``if not flag``.

Hoisting a comprehension in front of its statement keeps Python's order of evaluation only if
nothing evaluated before it in the same statement has an effect it could see, so a
comprehension is hoisted only from places evaluated once and first-come: an assignment's value,
a ``return``, an expression statement, an ``if`` test, a ``for`` loop's iterable; not from a
``while`` test (evaluated again each time), the branches of ``a if c else b``, the right side of
``and``/``or``, nor after a call to a function that may write arrays (a helper of the user's) in
the same statement.  The comprehensions left are refused by the lowering with the reason.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import math

import numpy as np

from ..errors import UnsupportedError
from .scan import local_names

# methods that change the object they are called on
_WRITING_METHODS = frozenset({"append", "fill", "sort", "put", "itemset", "resize", "extend",
                              "insert", "pop", "partition", "setflags"})
_COMPS = (ast.ListComp, ast.GeneratorExp)


def desugar(src) -> None:
    """Rewrite ``src.tree`` (a ``source.Source``) in place."""
    _Desugar(src).run()


class _Desugar:
    def __init__(self, src):
        self.src = src
        self.count = 0
        self.locals = local_names(src.tree)
        a = src.tree.args
        self.variables = self.locals | {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs}

    def fresh(self, base: str) -> str:
        self.count += 1
        return f"{base}.{self.count}"

    def run(self):
        for node in ast.walk(self.src.tree):  # (for the lowering's message on those left)
            if isinstance(node, ast.Call) and node.args and \
                    isinstance(node.args[0], ast.GeneratorExp):
                node.args[0].zy_call_arg = True
        self.src.tree.body = self.block(self.src.tree.body)

    # ------------------------------------------------------------------ statements
    def block(self, stmts: list) -> list:
        out = []
        for s in stmts:
            out.extend(self.stmt(s))
        return out

    def stmt(self, s) -> list:
        if isinstance(s, (ast.Return, ast.Assign)) and isinstance(s.value, ast.IfExp) and \
                any(isinstance(n, _COMPS) for n in ast.walk(s.value)):
            # `return A if c else B` with a comprehension in a branch: as an if statement, so
            # that each branch's comprehension runs only on its path
            e, other = s.value, _copy(s)
            s.value, other.value = e.body, e.orelse
            return self.stmt(_at(ast.If(e.test, [s], [other]), s))
        pre: list = []
        hoist = _Hoister(self, pre)
        if isinstance(s, (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return)):
            if isinstance(s, ast.AugAssign):  # its target is evaluated before its value
                for c in ast.walk(s.target):
                    if isinstance(c, ast.Call):
                        hoist.saw_call(c)
            if s.value is not None:
                s.value = hoist.visit(s.value)
        elif isinstance(s, (ast.If, ast.Assert)):  # (an assert's message: only on failure)
            s.test = hoist.visit(s.test)
        elif isinstance(s, ast.For):
            hoist.lazy_ok = False
            s.iter = hoist.visit(s.iter)
        out = self.block(pre)  # the hoisted loops may hold comprehensions of their own
        if isinstance(s, (ast.For, ast.While)) and s.orelse:
            out.extend(self.loop_else(s))
            return out
        for field in ("body", "orelse", "finalbody"):
            if isinstance(getattr(s, field, None), list) and not isinstance(s, ast.FunctionDef):
                setattr(s, field, self.block(getattr(s, field)))
        out.append(s)
        return out

    def loop_else(self, loop) -> list:
        """``for/while ... else``: the else body runs when no ``break`` of this loop ran."""
        orelse, loop.orelse = loop.orelse, []
        flag = self.fresh("broke")
        breaks = _own_breaks(loop.body)
        out = []
        if breaks:
            out.append(_at(ast.Assign([_name(flag, ast.Store())], ast.Constant(False)), loop))
            for parent, field, k, brk in reversed(breaks):
                getattr(parent, field)[k:k + 1] = [
                    _at(ast.Assign([_name(flag, ast.Store())], ast.Constant(True)), brk), brk]
        out.extend(self.stmt(loop))
        if breaks:
            test = _at(ast.UnaryOp(ast.Not(), _name(flag)), loop)
            out.extend(self.stmt(_at(ast.If(test, orelse, []), loop)))
        else:
            out.extend(self.block(orelse))
        return out

    # ------------------------------------------------------------------ comprehensions
    def comprehension(self, node, pre: list, kind: str = "list") -> ast.AST:
        """Statements computing the comprehension ``node`` appended to ``pre``; returns the
        expression standing for its value.  ``kind``: "list", "sum", "any" or "all"."""
        renames: dict = {}
        loops = []
        for g in node.generators:
            if g.is_async:
                raise UnsupportedError("async comprehensions are not supported",
                                       self.src.loc(node))
            it = _Renamer(renames).visit(g.iter)
            names = _target_names(g.target)
            if names is None:
                raise UnsupportedError("a comprehension's `for` target must be a name or a "
                                       "tuple of names", self.src.loc(g.target))
            for n in names:
                renames = {**renames, n: self.fresh(n)}
            target = _Renamer(renames).visit(g.target)
            conds = [_Renamer(renames).visit(c) for c in g.ifs]
            loops.append((target, it, conds))
        elt = _Renamer(renames).visit(node.elt)
        # the name shows in messages about the value ("`sum(...) at line 3, column 12` is a
        # Python int ..."); one comprehension node, one name, also when a branch rewrite
        # copied it
        base = {"list": "[...]", "sum": "sum(...)"}.get(kind, f"{kind}(...)")
        where = self.src.loc(node)
        result = f"{base} at line {where.line}, column {where.col}"
        if kind == "list":
            pre.append(_at(ast.Assign([_name(result, ast.Store())], ast.List([], ast.Load())),
                           node))
            call = _at(ast.Call(ast.Attribute(_name(result), "append", ast.Load()), [elt], []),
                       elt)
            call.zy_comprehension = True  # for the lowering's message on non-scalar elements
            inner = [_at(ast.Expr(call), elt)]
        elif kind == "sum":  # Python's order: ((0 + e0) + e1) + ..., with no list kept
            pre.append(_at(ast.Assign([_name(result, ast.Store())], ast.Constant(0)), node))
            inner = [_at(ast.Assign([_name(result, ast.Store())],
                                    _at(ast.BinOp(_name(result), ast.Add(), elt), elt)), elt)]
        else:
            if len(node.generators) > 1:
                raise UnsupportedError(f"{kind}() of a generator with several `for` clauses is "
                                       "not supported: use nested loops", self.src.loc(node))
            decided = kind == "any"  # the value found by the first deciding element
            pre.append(_at(ast.Assign([_name(result, ast.Store())],
                                      ast.Constant(not decided)), node))
            test = elt if kind == "any" else _at(ast.UnaryOp(ast.Not(), elt), elt)
            inner = [_at(ast.If(test, [_at(ast.Assign([_name(result, ast.Store())],
                                                      ast.Constant(decided)), elt),
                                       _at(ast.Break(), elt)], []), elt)]
        for target, it, conds in reversed(loops):
            for c in reversed(conds):
                inner = [_at(ast.If(c, inner, []), c)]
            inner = [_at(ast.For(target, it, inner, []), it)]
        pre.extend(inner)
        return _at(_name(result), node)

    def purity(self, call: ast.Call) -> bool:
        """Whether the called function is known not to write anything the program can read
        (NumPy, math, builtins, and methods other than the writing ones)."""
        f = call.func
        if isinstance(f, ast.Attribute):
            root = f
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id not in self.locals:
                obj = self._resolve(f)
                if obj is not None:
                    return _library(obj)
            return f.attr not in _WRITING_METHODS
        if isinstance(f, ast.Name) and f.id not in self.locals:
            obj = self._resolve(f)
            return obj is not None and _library(obj)
        return False

    def _resolve(self, node):
        if isinstance(node, ast.Name):
            try:
                return self.src.lookup(node.id)
            except KeyError:
                return None
        if isinstance(node, ast.Attribute):
            base = self._resolve(node.value)
            return getattr(base, node.attr, None) if base is not None else None
        return None

    def writes(self, node) -> bool:
        """Whether evaluating ``node`` may call a function that writes arrays."""
        return any(isinstance(c, ast.Call) and not self.purity(c) for c in ast.walk(node))

    def builtin(self, node, fn) -> bool:
        return isinstance(node, ast.Name) and node.id not in self.locals and \
            self._resolve(node) is fn


def _library(obj) -> bool:
    if inspect.ismodule(obj):
        return True
    mod = getattr(obj, "__module__", None) or ""
    if isinstance(obj, np.ufunc) or mod == "numpy" or mod.startswith("numpy."):
        return True
    return obj is getattr(builtins, getattr(obj, "__name__", ""), None) or \
        obj is getattr(math, getattr(obj, "__name__", ""), None)


class _Hoister(ast.NodeTransformer):
    """Replaces the comprehensions of one statement's eagerly evaluated expression, in Python's
    order of evaluation, by names computed in ``pre``.  A comprehension is left in place (and
    refused by the lowering) where running it first could be seen: after a call that may write
    arrays; when it calls such a function itself and anything was read before it; a generator
    whose call has other arguments that write or that the generator's writes could change; a
    generator anywhere but as the iterable of max/min/sum/any/all (len(), NumPy functions and
    for loops take generators differently, lazily or not at all)."""

    def __init__(self, d: _Desugar, pre: list, lazy_ok: bool = True):
        self.d, self.pre = d, pre
        self.after_call = None  # the first call seen that may write arrays
        self.read = False  # whether anything that reads program state was evaluated yet
        self.lazy_ok = lazy_ok  # False in a `for` iterable: the loop consumes lazily

    def _comp(self, node, kind="list"):
        if self.after_call is not None:
            return _refuse(node, "it would run before the call to a function that may write "
                           "arrays earlier in this statement")
        if self.read and self.d.writes(node):
            return _refuse(node, "it calls a function that may write arrays, and this "
                           "statement reads values before it")
        self.read = True
        return self.d.comprehension(node, self.pre, kind)

    def visit_ListComp(self, node):
        return self._comp(node)

    def visit_GeneratorExp(self, node):
        return node  # only as the iterable of some builtins (visit_Call)

    def visit_Name(self, node):
        if node.id in self.d.variables:  # (not a function's or a module's name)
            self.read = True
        return node

    def visit_Subscript(self, node):
        self.generic_visit(node)
        self.read = True
        return node

    def visit_Call(self, node):
        node.func = self.visit(node.func)
        args = node.args
        arg0 = args[0] if args else None
        kind = None
        for fn, k in ((builtins.sum, "sum"), (builtins.any, "any"), (builtins.all, "all"),
                      (builtins.max, "list"), (builtins.min, "list")):
            if self.d.builtin(node.func, fn):
                kind = k
        if isinstance(arg0, ast.ListComp) and kind == "sum" and len(args) == 1 and \
                not node.keywords:  # the same additions, no list
            out = self._comp(arg0, "sum")
            return node if out is arg0 else out
        if isinstance(arg0, ast.GeneratorExp):
            if kind is None:
                _refuse(arg0, "a generator expression is compiled as the argument of sum(), "
                        "max(), min(), any() and all() (len(), NumPy functions and others take "
                        "generators differently): use a list comprehension")
                return node
            if not self.lazy_ok:
                _refuse(arg0, "a `for` loop takes a generator one element at a time, between "
                        "runs of its body: loop over the generator's own iterable, or use a "
                        "list comprehension")
                return node
            rest = args[1:] + [k.value for k in node.keywords]
            if rest and (self.d.writes(arg0) or any(self.d.writes(r) for r in rest)):
                _refuse(arg0, "the call's other arguments are evaluated before the "
                        "generator's first element, and one of them may write arrays")
                return node
            if len(args) == 1 and not node.keywords and kind != "list":
                out = self._comp(arg0, kind)
                return node if out is arg0 else out
            node.args[0] = self._comp(arg0)
            if node.args[0] is arg0:
                return node
            args = node.args
        node.args = [a if k == 0 and a is not arg0 else self.visit(a)  # (a hoisted name)
                     for k, a in enumerate(node.args)]
        node.keywords = [self.visit(k) for k in node.keywords]
        self.saw_call(node)
        self.read = True
        return node

    def saw_call(self, node):
        if self.after_call is None and not self.d.purity(node):
            self.after_call = node

    def visit_IfExp(self, node):
        node.test = self.visit(node.test)
        self.read = True
        return node

    def visit_BoolOp(self, node):
        node.values[0] = self.visit(node.values[0])
        self.read = True
        return node

    def visit_Lambda(self, node):
        return node

    def visit_SetComp(self, node):
        return node

    def visit_DictComp(self, node):
        return node


class _Renamer(ast.NodeTransformer):
    """A copy of an expression with comprehension variables renamed (nested comprehensions'
    own variables shadow them, as in Python)."""

    def __init__(self, renames: dict):
        self.renames = renames

    def visit(self, node):
        return super().visit(_copy(node)) if node is not None else None

    def visit_Name(self, node):
        new = self.renames.get(node.id)
        return _at(ast.Name(new, node.ctx), node) if new is not None else node

    def _scoped(self, node):
        inner = dict(self.renames)
        for k, g in enumerate(node.generators):
            g.iter = _Renamer(inner).visit(g.iter) if k else self.visit(g.iter)
            for n in _target_names(g.target) or ():
                inner.pop(n, None)
            g.ifs = [_Renamer(inner).visit(c) for c in g.ifs]
        if isinstance(node, ast.DictComp):
            node.key, node.value = _Renamer(inner).visit(node.key), _Renamer(inner).visit(
                node.value)
        else:
            node.elt = _Renamer(inner).visit(node.elt)
        return node

    visit_ListComp = visit_GeneratorExp = visit_SetComp = visit_DictComp = _scoped

    def visit_Lambda(self, node):
        return node


def _refuse(node, why: str):
    """Leave ``node`` to the lowering, which refuses it saying ``why``."""
    node.zy_refusal = why
    return node


def _copy(node):
    import copy
    return copy.deepcopy(node)


def _target_names(t):
    if isinstance(t, ast.Name):
        return [t.id]
    if isinstance(t, (ast.Tuple, ast.List)):
        out = []
        for e in t.elts:
            sub = _target_names(e)
            if sub is None:
                return None
            out.extend(sub)
        return out
    return None


def _own_breaks(body: list) -> list:
    """(parent, field, index, node) of each ``break`` that ends the loop whose body this is."""
    out = []

    def walk(parent, field):
        for k, s in enumerate(getattr(parent, field)):
            if isinstance(s, ast.Break):
                out.append((parent, field, k, s))
            elif isinstance(s, (ast.For, ast.While)):
                walk(s, "orelse")  # a nested loop's else belongs to this loop
            elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            else:
                for f in ("body", "orelse", "finalbody"):
                    if isinstance(getattr(s, f, None), list):
                        walk(s, f)
                for h in getattr(s, "handlers", []) or []:
                    walk(h, "body")

    holder = ast.Module(body, [])
    walk(holder, "body")
    return out


def _name(n: str, ctx=None):
    return ast.Name(n, ctx or ast.Load())


def _at(node, where):
    """``node`` with ``where``'s source position (for messages), on it and its new children."""
    ast.copy_location(node, where)
    for child in ast.walk(node):
        if not hasattr(child, "lineno") and "lineno" in getattr(child, "_attributes", ()):
            ast.copy_location(child, where)
    return node
