"""``prange`` loops, a mixin of FunctionLowerer.

``for i in zymase.prange(...)`` (or ``numba.prange``) becomes ``scf.parallel``: the same loop as
``range`` gives, whose iterations may run at once.  What the compiler can see is checked here,
at the user's line:

* no ``break`` or ``return`` in the body (``continue`` is fine);
* every name the body carries from one iteration to the next is a reduction
  (``ir/parallel.py``); other names assigned in the body are private to an iteration (after the
  loop a name holds the last iteration's value, as in Python);
* no plain write that every iteration makes to the same element (``a[0] = x``), and no read of
  an element a neighbouring iteration writes (``a[i] = a[i - 1] + x``);
* ``a[k] += x`` where the element is not the iteration's own (``k`` is not the loop index: a
  histogram, a scatter) becomes an atomic add (``array.atomic_add``).
"""

from __future__ import annotations

import ast
import sys

from ...errors import UnsupportedError
from ...ir.ops import AtomicAdd, NegF, NegI, Parallel
from ...ir.parallel import reduction
from ...lang import prange
from .. import scan
from ..typing import PyObj


def is_prange(obj) -> bool:
    if obj is prange:
        return True
    numba = sys.modules.get("numba")
    return numba is not None and obj is getattr(numba, "prange", None)


class ParallelMixin:
    """Mixin of FunctionLowerer: ``prange`` loops."""

    def prange_call(self, node) -> bool:
        if not isinstance(node, ast.Call):
            return False
        f = self.expr(node.func)
        return isinstance(f, PyObj) and is_prange(f.obj)

    def lower_prange(self, s, node):
        if scan.has_loop_exit(s.body, (ast.Break,)) or scan.has_return(s.body):
            raise self.err(UnsupportedError, "a prange loop cannot `break` or `return`: its "
                           "iterations run at once, in no particular order (use range)", s)
        if not isinstance(s.target, ast.Name):
            raise self.err(UnsupportedError, "the target of a prange loop must be one name",
                           s.target)
        if node.keywords:
            raise self.err(UnsupportedError, "prange takes the arguments of range, without "
                           "keywords", node)
        _check_races(self, s)
        lb, ub, step, bind = self.range_args([self.expr(a) for a in node.args], node)
        self.prange_vars.append((s.target.id, _fresh_arrays(s.body)))
        try:
            op, names = self.lower_for_range(s, lb, ub, step,
                                             lambda iv: self.assign(s.target, bind(iv)),
                                             loop_class=Parallel)
        finally:
            self.prange_vars.pop()
        for k, name in enumerate(names):
            if reduction(op, k) is None:
                where = _assignment_of(s.body, name) or s
                raise self.err(UnsupportedError, f"`{name}` carries a value from one iteration "
                               "of this prange loop to the next, so the iterations cannot run at "
                               "once; only reductions can (`s += x`, `s *= x`, `m = max(m, x)`, "
                               "`m = min(m, x)`): use range for a loop whose iterations depend "
                               "on each other", where)

    def owns_element(self, target: ast.Subscript) -> bool:
        """Whether the element ``target`` names belongs to one iteration of the innermost
        enclosing prange loop (its index is that loop's variable in some position)."""
        if not self.prange_vars:
            return True
        i, fresh = self.prange_vars[-1]
        if _root(target) in fresh:
            return True
        node = target
        while isinstance(node, ast.Subscript):
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if any(isinstance(e, ast.Name) and e.id == i for e in items):
                return True
            node = node.value
        return False


    def atomic_update(self, base, idx, op, value_node, target, node) -> None:
        """``a[k] += x`` on an element other iterations may update too."""
        if not isinstance(op, (ast.Add, ast.Sub)) or base.type.dtype.is_bool:
            raise self.err(UnsupportedError, "in a prange loop, an element that is not the "
                           "iteration's own (not indexed by the loop variable) can only be "
                           "updated with `+=` or `-=` (done atomically)", node)
        v = self.to_dtype(self.expr(value_node), base.type.dtype, target)
        if isinstance(op, ast.Sub):
            v = self.b.op(NegI if base.type.dtype.is_int else NegF, v)
        self.b.create(AtomicAdd, [v, base.value, *idx], [])

    def shared_update_error(self, node):
        return self.err(UnsupportedError, "in a prange loop, a slice or fancy-indexed update "
                        "of elements that are not the iteration's own (not indexed by the loop "
                        "variable) would race between iterations: update element by element "
                        "(`a[k] += x` is atomic), or use range", node)


_CREATORS = frozenset({"zeros", "ones", "empty", "full", "zeros_like", "ones_like",
                       "empty_like", "full_like", "array", "copy", "arange", "linspace"})


def _fresh_arrays(stmts) -> frozenset:
    """Names every assignment in ``stmts`` binds to a new array (``np.zeros(...)``,
    ``x.copy()``): private to the iteration, so updates of their elements need no atomics."""
    fresh, other = set(), set()
    for node in ast.walk(ast.Module(body=list(stmts), type_ignores=[])):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            new = isinstance(node, (ast.Assign, ast.AnnAssign)) and \
                isinstance(node.value, ast.Call) and \
                isinstance(node.value.func, ast.Attribute) and node.value.func.attr in _CREATORS
            for t in targets:
                for n in (t.id,) if isinstance(t, ast.Name) else ():
                    (fresh if new else other).add(n)
                for x in ast.walk(t) if not isinstance(t, ast.Name) else ():
                    if isinstance(x, ast.Name) and isinstance(t, (ast.Tuple, ast.List)):
                        other.add(x.id)
        elif isinstance(node, (ast.For, ast.With)):
            for x in ast.walk(node.target if isinstance(node, ast.For) else node):
                if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store):
                    other.add(x.id)
    return frozenset(fresh - other)


def _assignment_of(stmts, name):
    for node in ast.walk(ast.Module(body=list(stmts), type_ignores=[])):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return node
    return None


def _names(node) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _root(node):
    while isinstance(node, ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _index_items(node: ast.Subscript):
    return node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]


def _shift(e, i):
    """``c`` when index expression ``e`` is ``i + c`` or ``i - c`` (``c`` a literal), 0 for
    ``i`` itself, None otherwise."""
    if isinstance(e, ast.Name) and e.id == i:
        return 0
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub)) and \
            isinstance(e.left, ast.Name) and e.left.id == i and \
            isinstance(e.right, ast.Constant) and isinstance(e.right.value, int):
        return e.right.value if isinstance(e.op, ast.Add) else -e.right.value
    return None


def _check_races(lw, s) -> None:
    """Refuse the dependences between iterations that the source shows."""
    i = s.target.id if isinstance(s.target, ast.Name) else None
    local = set(scan.assigned_names(s.body))
    depends = {i}  # names whose value follows the loop index
    for _ in range(8):
        grown = {n for node in ast.walk(ast.Module(body=list(s.body), type_ignores=[]))
                 if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                 and _names(node.value) & depends
                 for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                 for n in _names(t)}
        if grown <= depends:
            break
        depends |= grown
    written: dict[str, list[int]] = {}  # array -> positions where it is written at index i
    for st in s.body:  # plain writes at the top level of the body, run by every iteration
        if isinstance(st, ast.Assign):
            for t in st.targets:
                if isinstance(t, ast.Subscript) and _root(t) not in local and \
                        not (_names(t.slice) & depends) and not any(
                            isinstance(x, ast.Subscript) and _names(x.slice) & depends
                            for x in ast.walk(t.value)):
                    raise lw.err(UnsupportedError, f"every iteration of this prange loop "
                                 f"writes the same element of `{_root(t)}`: the iterations "
                                 f"would race; index it by `{i}`, or use range", t)
    for node in ast.walk(ast.Module(body=list(s.body), type_ignores=[])):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AugAssign) else []
        for t in targets:
            if isinstance(t, ast.Subscript) and _root(t) not in local:
                for p, e in enumerate(_index_items(t)):
                    if _shift(e, i) == 0:
                        written.setdefault(_root(t), []).append(p)
    scattered = {}  # array -> an update of elements that are not the iteration's own (atomic)
    for node in ast.walk(ast.Module(body=list(s.body), type_ignores=[])):
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Subscript) and \
                _root(node.target) not in local and \
                not any(_shift(e, i) == 0 for e in _index_items(node.target)):
            scattered.setdefault(_root(node.target), node.target)
    for node in ast.walk(ast.Module(body=list(s.body), type_ignores=[])):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and \
                _root(node) in scattered:
            raise lw.err(UnsupportedError, f"this prange loop reads `{ast.unparse(node)}` while "
                         f"its iterations update `{ast.unparse(scattered[_root(node)])}`: what "
                         "one iteration reads another may be writing (use range, or read from "
                         "a copy)", node)
    for node in ast.walk(ast.Module(body=list(s.body), type_ignores=[])):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and \
                _root(node) in written and isinstance(node.value, ast.Name):
            for p, e in enumerate(_index_items(node)):
                c = _shift(e, i)
                if c and p in written[_root(node)]:
                    raise lw.err(UnsupportedError, f"iteration `{i}` of this prange loop reads "
                                 f"`{ast.unparse(node)}`, which another iteration writes: the "
                                 "iterations depend on each other (use range, or read from a "
                                 "copy)", node)
