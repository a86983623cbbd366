"""Subscripts and iteration: ``a[i]``, ``a[i, j]``, ``a[1:-1]``, ``a[:, j]``, ``a[::2]``
(views share the array's buffer), stores through them, tuple and list indexing, and what a
``for`` iterates.

An integer index goes through ``array.index`` (negative indices count from the end; with
``boundscheck`` an index out of range raises IndexError naming the line).  Slices follow Python's
``slice.indices``: bounds are clamped, the step may be negative, and the result is an
``array.subview``.
"""

from __future__ import annotations

import ast

from ...errors import UnsupportedError, ZymaseIndexError, ZymaseTypeError
from ...ir.ops import (
    AddI,
    AndI,
    Assert,
    Broadcast,
    CmpI,
    Dim,
    FloorDivI,
    Index,
    Load,
    MaxI,
    MinI,
    MulI,
    NegI,
    Reshape,
    Select,
    Store,
    SubI,
    Subview,
    Transpose,
)
from ...ir.types import I1, I64, ArrayType
from ..emit import finite_to_int
from ..numpy.arrays import array_from_sequence, assign_into, list_to_array
from ..numpy.complex import complex_part
from ..numpy.fancy import fancy_read, fancy_write
from ..numpy.tiling import GRIDS, grid
from ..typing import Array, ListVal, PyObj, Scalar, Struct, Tup, TupList


class IndexingMixin:
    """Mixin of FunctionLowerer: subscripts, views and loop iteration."""

    # ------------------------------------------------------------------ attributes
    def dim(self, a: Array, axis: int):
        return self.b.op(Dim, a.value, axis=axis)

    def dims(self, a: Array):
        return [self.dim(a, k) for k in range(a.type.ndim)]

    def array_attribute(self, a: Array, name: str, node):
        if name == "shape":
            return Tup(tuple(Scalar(d, True) for d in self.dims(a)))
        if name == "ndim":
            return self.const_int(a.type.ndim)
        if name == "size":
            n = self.b.i64(1)
            for d in self.dims(a):
                n = self.b.op(MulI, n, d)
            return Scalar(n, True)
        if name == "T":
            perm = list(range(a.type.ndim))[::-1]
            return Array(self.b.op(Transpose, a.value, perm=perm))
        if name == "dtype":
            return PyObj(a.type.dtype.np_dtype)
        if name in ("real", "imag"):
            return complex_part(self, a, name, node)
        return None

    # ------------------------------------------------------------------ reading
    def expr_Subscript(self, node):
        base = self.expr(node.value)
        if isinstance(base, Tup):
            return self.tuple_subscript(base, node)
        if isinstance(base, Struct) and base.pytype is dict:
            return self.dict_subscript(base, node)
        if isinstance(base, ListVal):
            i = self.index_scalar(self.expr(node.slice), node)
            j = self.norm_index(i, base.length, node)
            return Scalar(self.b.op(Load, base.buf, j), False)
        if isinstance(base, PyObj) and base.obj in GRIDS:
            return grid(self, base.obj, node)
        if not isinstance(base, Array):
            raise self.err(ZymaseTypeError, f"{self.describe(base)} cannot be indexed", node)
        elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if any(self._is_newaxis(e) for e in elts):
            return self.newaxis_view(base, elts, node)
        items = self.parse_index(node.slice, base, node)
        if not items and base.type.ndim == 0:
            return base  # `a[...]` of a 0-d array: the array itself (a view, as NumPy)
        # (`t[..., 1, 2, 3]` of a 3-D array is NumPy's 0-d view; here it is the element, as
        # the arithmetic on it is NumPy's arithmetic on the 0-d array: a NumPy scalar)
        if any(kind == "array" for kind, *_ in items):
            return fancy_read(self, base, items, node)
        return self.view_or_load(base, items, node)

    def _is_newaxis(self, e) -> bool:
        if isinstance(e, ast.Constant):
            return e.value is None
        if isinstance(e, ast.Attribute) and e.attr == "newaxis":
            v = self.expr(e)
            return isinstance(v, PyObj) and v.obj is None
        return False

    def newaxis_view(self, a: Array, elts, node):
        """``a[:, i:i + k, None]``, ``a[i, None]``, ``m[..., np.newaxis]``: ``a`` indexed by
        the other items, then a size-1 axis where each None stands (a reshape of a contiguous
        result, else a broadcast of the result and a transpose: views either way)."""
        elts = self._expand_ellipsis(a, elts, node)
        rest, new_at, count = [], [], 0
        for e in elts:
            if self._is_newaxis(e):
                new_at.append(count)
                count += 1
                continue
            if isinstance(e, ast.Slice):
                count += 1
            rest.append(e)
        items = self.parse_index(ast.Tuple(elts=rest, ctx=ast.Load())) if rest else []
        if any(kind == "array" for kind, *_ in items):
            raise self.err(UnsupportedError, "indexing with None (np.newaxis) together with "
                           "index arrays is not supported: index first, then add the axis",
                           node)
        r = self.view_or_load(a, items, node) if items else a
        if isinstance(r, Scalar):  # every axis taken: only the new ones remain
            r = array_from_sequence(self, Tup((r,)), node)
            new_at = new_at[1:]
            if not new_at:
                return r
        src = self.dims(r)
        nd = len(src) + len(new_at)
        dims, it = [], iter(src)
        for d in range(nd):
            dims.append(self.b.i64(1) if d in new_at else next(it))
        if r.type.layout == "C":
            t = ArrayType(r.type.dtype, nd, "C")
            return Array(self.b.create(Reshape, [r.value, *dims], [t]).result)
        lead = [self.b.i64(1)] * len(new_at)
        t = ArrayType(r.type.dtype, nd, "A")
        wide = self.b.create(Broadcast, [r.value, *lead, *src], [t]).result
        # new axes first, then the result's: move each to its place
        old = iter(range(len(new_at), nd))
        new = iter(range(len(new_at)))
        perm = [next(new) if d in new_at else next(old) for d in range(nd)]
        return Array(self.b.op(Transpose, wide, perm=perm))

    def _expand_ellipsis(self, a: Array, elts, node):
        """``...`` as the full slices it stands for."""
        dots = [k for k, e in enumerate(elts) if isinstance(e, ast.Constant) and
                e.value is Ellipsis]
        if not dots:
            return list(elts)
        if len(dots) > 1:
            raise self.err(ZymaseIndexError, "an index can only have a single ellipsis ('...')",
                           node)
        used = sum(1 for e in elts if not self._is_newaxis(e) and not
                   (isinstance(e, ast.Constant) and e.value is Ellipsis))
        fill = [ast.Slice(lower=None, upper=None, step=None)] * max(a.type.ndim - used, 0)
        k = dots[0]
        return list(elts[:k]) + fill + list(elts[k + 1:])

    def tuple_subscript(self, base: Tup, node):
        key = self.expr(node.slice)
        k = self.constant_of(key)
        if isinstance(k, int):
            try:
                return base.items[k]
            except IndexError:  # (Python's IndexError and words, when compiling)
                kind = "list" if isinstance(base, TupList) else "tuple"
                raise self.err(ZymaseIndexError, f"{kind} index out of range (index {k}, "
                               f"length {len(base.items)})", node) from None
        if isinstance(node.slice, ast.Slice):
            parts = [self.constant_of(self.expr(p)) if p is not None else None
                     for p in (node.slice.lower, node.slice.upper, node.slice.step)]
            return Tup(base.items[slice(*parts)])
        got = self.pick_item(base, key, node)
        if got is not None:
            return got
        raise self.err(UnsupportedError, "a tuple or list of items of different types can only "
                       "be indexed by constants", node)

    def pick_item(self, base: Tup, key, node):
        """``items[i]`` for a run-time ``i`` when every item has one type (a list of arrays of
        one dtype and rank, say): a select chain after Python's index checks; else None."""
        items = base.items
        if not items or not isinstance(key, Scalar):
            return None
        first = items[0]
        if isinstance(first, Array):
            same = all(isinstance(x, Array) and x.type == first.type for x in items)
        elif isinstance(first, Scalar):
            same = all(isinstance(x, Scalar) and x.type == first.type and x.weak == first.weak
                       for x in items)
        else:
            same = False
        if not same:
            return None
        i = self.index_scalar(key, node)
        j = self.norm_index(i, self.b.i64(len(items)), node)
        value = first.value
        for k, x in enumerate(items[1:], 1):
            hit = self.b.op(CmpI, j, self.b.i64(k), pred="eq")
            value = self.b.op(Select, hit, x.value, value)
        return Array(value) if isinstance(first, Array) else Scalar(value, first.weak)

    def dict_subscript(self, base: Struct, node):
        key = self.constant_of(self.expr(node.slice))
        if not isinstance(key, str):
            raise self.err(UnsupportedError, "dicts can only be indexed by constant strings", node)
        if key not in base.fields:
            raise self.err(ZymaseTypeError, f"the dict has no key {key!r} (its keys: "
                           f"{', '.join(map(repr, base.fields))})", node)
        return base.fields[key]

    def parse_index(self, sl, base: Array | None = None, node=None):
        """The items of an index expression: ("int", Scalar) | ("slice", lo, hi, step) |
        ("array", Array); an ellipsis (``...``) becomes the full slices it stands for in
        ``base`` (the axes the other items leave: a boolean mask takes as many as its rank)."""
        elts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        items, dots = [], []
        for e in elts:
            if isinstance(e, ast.Slice):
                items.append(("slice", *(self.expr(p) if p is not None else None
                                         for p in (e.lower, e.upper, e.step))))
                continue
            v = self.expr(e)
            # (a tuple held in a name, `a[idx]`, indexes as its items would)
            for x in v.items if type(v) is Tup else (v,):
                if isinstance(x, PyObj) and x.obj is Ellipsis:
                    dots.append((len(items), e))
                else:
                    self._index_items(x, e, items)
        if not dots:
            return items
        if len(dots) > 1:
            raise self.err(ZymaseIndexError, "an index can only have a single ellipsis ('...')",
                           dots[1][1])
        used = sum(it[1].type.ndim if it[0] == "array" and it[1].type.dtype.is_bool else 1
                   for it in items)
        nd = base.type.ndim if base is not None else used
        if used > nd:
            raise self.err(ZymaseIndexError, f"too many indices for array: array is "
                           f"{nd}-dimensional, but {used} were indexed", node)
        k = dots[0][0]
        return items[:k] + [("slice", None, None, None)] * (nd - used) + items[k:]

    def _index_items(self, v, e, items) -> None:
        """Append the item(s) of ``v``, the value of element ``e`` of an index, to ``items``."""
        if isinstance(v, TupList) and all(isinstance(x, Scalar) for x in v.items):
            v = array_from_sequence(self, v, e)  # a[[0, 2, 2]]: an index array
        elif isinstance(v, ListVal):
            v = list_to_array(self, v)  # a list built with append
        if isinstance(v, Array):
            items.append(("array", v))
        elif isinstance(v, Scalar):
            items.append(("int", self.index_scalar(v, e)))
        elif isinstance(v, Tup) and all(isinstance(x, Scalar) for x in v.items):
            items.extend(("int", self.index_scalar(x, e)) for x in v.items)
        else:
            raise self.err(UnsupportedError, f"cannot index an array with {self.describe(v)}",
                           e)

    def index_scalar(self, v, node) -> Scalar:
        if not isinstance(v, Scalar) or not (v.type.is_int):
            raise self.err(ZymaseTypeError, f"array indices must be integers, not "
                           f"{self.describe(v)}", node)
        return Scalar(self.b.cast(v.value, I64), v.weak)

    def index_value(self, a: Array, idx: list[Scalar], node):
        """``a[i0, i1, ...]`` with integer indices (a load, or a view for fewer than ndim)."""
        return self.view_or_load(a, [("int", i) for i in idx], node)

    def view_or_load(self, a: Array, items, node):
        nd = a.type.ndim
        if len(items) > nd:
            raise self.err(ZymaseTypeError, f"too many indices ({len(items)}) for an array with "
                           f"ndim={nd}", node)
        if len(items) == nd and all(k == "int" for k, *_ in items):
            idx = [self.norm_index(it[1], self.dim(a, d), node) for d, it in enumerate(items)]
            return Scalar(self.b.op(Load, a.value, *idx), False)
        return Array(self.subview(a, items, node))

    def subview(self, a: Array, items, node):
        nd = a.type.ndim
        items = list(items) + [("slice", None, None, None)] * (nd - len(items))
        offs, rest, keep, contiguous = [], [], [], a.type.layout == "C"
        seen_slice = False
        for d, it in enumerate(items):
            n = self.dim(a, d)
            if it[0] == "int":
                offs.append(self.norm_index(it[1], n, node))
                keep.append(False)
                contiguous &= not seen_slice
                continue
            lo, size, step = self.norm_slice(it[1], it[2], it[3], n, node)
            offs.append(lo)
            rest += [size, step]
            keep.append(True)
            full = it[1] is None and it[2] is None and it[3] is None
            unit = self.constant_of(step) == 1
            contiguous &= (full or (unit and not seen_slice))
            seen_slice = True
        t = ArrayType(a.type.dtype, sum(keep), "C" if contiguous else "A")
        return self.b.create(Subview, [a.value, *offs, *rest], [t], {"keep": keep}).result

    def norm_index(self, i: Scalar, n, node):
        """A Python integer index into a dim of size ``n``: wrap negatives, check the range."""
        k = self.constant_of(i)
        if self.options.boundscheck:
            if k is not None and k >= 0:
                return self.b.create(Index, [i.value, n], None,
                                     {"wrap": False, "check": True}).result
            return self.b.create(Index, [i.value, n], None,
                                 {"wrap": True, "check": True}).result
        return self.wrap(i.value, n)

    def wrap(self, x, n):
        k = self.constant_of(Scalar(x))
        if k is not None and k >= 0:
            return x
        neg = self.b.op(CmpI, x, self.b.i64(0), pred="lt")
        return self.b.op(Select, neg, self.b.op(AddI, x, n), x)

    def norm_slice(self, lo, hi, step, n, node):
        """(offset, size, step) of ``lo:hi:step`` on a dim of size ``n`` (Python semantics)."""
        b = self.b
        st = b.i64(1) if step is None else self.index_scalar(step, node).value
        k = self.constant_of(Scalar(st))
        if k == 0:
            raise self.err(ZymaseTypeError, "slice step cannot be zero", node)
        if k is None:
            ok = b.op(CmpI, st, b.i64(0), pred="ne")
            b.create(Assert, [ok], [],
                     {"kind": "ValueError", "msg": "slice step cannot be zero"})
        lo_v = None if lo is None else self.index_scalar(lo, node).value
        hi_v = None if hi is None else self.index_scalar(hi, node).value
        if k is not None and k > 0:
            return self._slice_pos(lo_v, hi_v, st, n, k)
        if k is not None:
            return self._slice_neg(lo_v, hi_v, st, n)
        p_lo, p_size, _ = self._slice_pos(lo_v, hi_v, st, n, None)
        n_lo, n_size, _ = self._slice_neg(lo_v, hi_v, st, n)
        pos = b.op(CmpI, st, b.i64(0), pred="gt")
        return (b.op(Select, pos, p_lo, n_lo), b.op(Select, pos, p_size, n_size),
                st)

    def _clamp(self, x, lo, hi):
        return self.b.op(MinI, self.b.op(MaxI, x, lo), hi)

    def _slice_pos(self, lo, hi, st, n, k):
        b = self.b
        zero = b.i64(0)
        lo = zero if lo is None else self._clamp(self.wrap(lo, n), zero, n)
        hi = n if hi is None else self._clamp(self.wrap(hi, n), zero, n)
        span = b.op(SubI, hi, lo)
        if k != 1:
            span = b.op(FloorDivI, b.op(AddI, span,
                                                b.op(SubI, st, b.i64(1))), st)
        return lo, b.op(MaxI, span, zero), st

    def _slice_neg(self, lo, hi, st, n):
        b = self.b
        m1 = b.i64(-1)
        top = b.op(SubI, n, b.i64(1))
        lo = top if lo is None else self._clamp(self.wrap(lo, n), m1, top)
        hi = m1 if hi is None else self._clamp(self.wrap(hi, n), m1, top)
        mag = b.op(NegI, st)
        span = b.op(FloorDivI, b.op(AddI, b.op(SubI, lo, hi),
                                            b.op(SubI, mag, b.i64(1))), mag)
        return lo, b.op(MaxI, span, b.i64(0)), st

    # ------------------------------------------------------------------ writing
    def store_subscript(self, target, value):
        base = self.expr(target.value)
        if isinstance(base, ListVal):
            i = self.index_scalar(self.expr(target.slice), target)
            j = self.norm_index(i, base.length, target)
            self.b.create(Store, [self.to_dtype(value, base.dtype, target), base.buf, j])
            return
        if isinstance(base, TupList):
            raise self.err(UnsupportedError, "assigning into a list written out as [a, b, ...] "
                           "is not supported (it is a fixed tuple here): build it with "
                           "np.array([...]) or with append", target)
        if not isinstance(base, Array):
            raise self.err(ZymaseTypeError, f"cannot assign into {self.describe(base)}", target)
        items = self.parse_index(target.slice, base, target)
        if any(kind == "array" for kind, *_ in items):
            return fancy_write(self, base, items, value, target)
        nd = base.type.ndim
        if len(items) == nd and all(k == "int" for k, *_ in items):
            idx = [self.norm_index(it[1], self.dim(base, d), target) for d, it in enumerate(items)]
            v = self.to_dtype(value, base.type.dtype, target)
            self.b.create(Store, [v, base.value, *idx])
            return
        view = Array(self.subview(base, items, target))
        assign_into(self, view, value, target)

    def to_dtype(self, value, dtype, node):
        if not isinstance(value, Scalar):
            raise self.err(ZymaseTypeError, f"cannot store {self.describe(value)} into an element "
                           f"of {dtype.np_dtype.name}", node)
        if value.type.is_complex and not dtype.is_complex:
            raise self.err(ZymaseTypeError, "cannot store a complex value into a real array", node)
        if value.type.is_inexact and dtype.is_int:  # as NumPy: NaN raises ValueError, inf and
            # floats past the dtype's range OverflowError
            return finite_to_int(self, value, dtype)
        if value.type.is_int and dtype.is_int and dtype.bits < value.type.bits:
            # an integer stored into an element must fit: NumPy raises OverflowError (it
            # converts through a Python int), where a whole-array copy would wrap
            b, lim = self.b, 2 ** (dtype.bits - 1)
            v = b.cast(value.value, I64)
            fits = b.op(AndI, b.op(CmpI, v, b.i64(-lim), pred="ge"),
                        b.op(CmpI, v, b.i64(lim), pred="lt"))
            b.create(Assert, [fits], [], {
                "kind": "OverflowError",
                "msg": f"Python integer out of bounds for {dtype.np_dtype.name}"})
        return self.b.cast(value.value, dtype)

    def aug_subscript(self, target, op, value_node, node):
        base = self.expr(target.value)
        if isinstance(base, Array):
            items = self.parse_index(target.slice, base, target)
            nd = base.type.ndim
            if len(items) == nd and all(k == "int" for k, *_ in items):
                idx = [self.norm_index(it[1], self.dim(base, d), target)
                       for d, it in enumerate(items)]
                if not self.owns_element(target):
                    self.atomic_update(base, idx, op, value_node, target, node)
                    return
                cur = Scalar(self.b.op(Load, base.value, *idx), False)
                new = self.binop(op, cur, self.expr(value_node), node)
                self.b.create(Store, [self.to_dtype(new, base.type.dtype, target),
                                              base.value, *idx])
                return
            if not self.owns_element(target):
                raise self.shared_update_error(node)
            if not any(k == "array" for k, *_ in items):
                view = Array(self.subview(base, items, target))
                self.inplace_binop(op, view, self.expr(value_node), node)
                return
        if not self.owns_element(target):
            raise self.shared_update_error(node)
        cur = self.expr(target)
        self.store_subscript(target, self.binop(op, cur, self.expr(value_node), node))

    # ------------------------------------------------------------------ iteration
    def iteration(self, node):
        """What a ``for`` iterates: (lb, ub, step, bind(iv) -> target value), or None for a
        compile-time tuple (unrolled)."""
        if isinstance(node, ast.Call):
            f = self.expr(node.func)
            fn = f.obj if isinstance(f, PyObj) else None
            if fn is range:
                return self.range_args([self.expr(a) for a in node.args], node)
            if fn is reversed:
                return self.reversed_iteration(node)
            if fn is enumerate:
                return self.enumerate_iteration(node)
            if fn is zip:
                return self.zip_iteration(node)
        v = self.expr(node)
        if isinstance(v, Tup):
            return None
        n, get = self.sequence(v, node)
        return self.b.i64(0), n, self.b.i64(1), get

    def enumerate_iteration(self, node):
        """``enumerate(seq, start=0)``: (start + k, seq[k])."""
        args = list(node.args)
        kw = {k.arg: k.value for k in node.keywords}
        if set(kw) - {"start"} or not 1 <= len(args) + len(kw) <= 2 or \
                (len(args) == 2 and kw) or not args:
            raise self.err(ZymaseTypeError, "enumerate() takes a sequence and an optional "
                           "start", node)
        start_node = args[1] if len(args) == 2 else kw.get("start")
        n, get = self.iterable(args[0])
        b = self.b
        zero, one = b.i64(0), b.i64(1)
        if start_node is None:
            return zero, n, one, lambda iv: Tup((iv, get(iv)))
        start = self.expr(start_node)
        if not (isinstance(start, Scalar) and (start.type.is_int or start.type == I1)):
            raise self.err(ZymaseTypeError, "enumerate() start must be an integer",
                           start_node)
        s = b.cast(start.value, I64)
        return zero, n, one, lambda iv: Tup((Scalar(b.op(AddI, s, iv.value), True),
                                             get(iv)))

    def zip_iteration(self, node):
        """``zip(a, b, ...)``: the shortest length; ``strict=True`` raises ValueError when the
        lengths differ, as Python does."""
        kw = {k.arg: k.value for k in node.keywords}
        if set(kw) - {"strict"}:
            raise self.err(ZymaseTypeError, f"zip() got an unexpected keyword argument "
                           f"{sorted(set(kw) - {'strict'})[0]!r}", node)
        strict = False
        if "strict" in kw:
            strict = self.constant_of(self.expr(kw["strict"]))
            if not isinstance(strict, (bool, int)):
                raise self.err(UnsupportedError, "zip(strict=...) must be known at compile time",
                               kw["strict"])
        if not node.args:
            raise self.err(UnsupportedError, "zip() of nothing is an empty loop: not supported",
                           node)
        seqs = [self.iterable(a) for a in node.args]
        b = self.b
        n = seqs[0][0]
        for m, _ in seqs[1:]:
            if strict:
                ok = b.op(CmpI, m, seqs[0][0], pred="eq")
                b.create(Assert, [ok], [], {
                    "kind": "ValueError", "msg": "zip() arguments have different lengths"})
            n = b.op(MinI, n, m)
        return b.i64(0), n, b.i64(1), lambda iv: Tup(tuple(g(iv) for _, g in seqs))

    def reversed_iteration(self, node):
        """``reversed(range(...))`` (the same values, last first) or ``reversed(seq)`` of an
        array or a list."""
        if len(node.args) != 1 or node.keywords:
            raise self.err(ZymaseTypeError, "reversed() takes exactly one argument", node)
        arg = node.args[0]
        b = self.b
        if isinstance(arg, ast.Call) and isinstance(f := self.expr(arg.func), PyObj) \
                and f.obj is range:
            lb, ub, st, bind = self.range_args([self.expr(a) for a in arg.args], arg)
            n = self.range_trip(lb, ub, st)
            last = b.op(AddI, lb, b.op(MulI, b.op(SubI, n, b.i64(1)), st))
            k = self.constant_of(Scalar(st))  # a constant step stays one (no counter guard)
            neg = b.i64(-k) if isinstance(k, int) else b.op(NegI, st)
            return last, b.op(SubI, lb, st), neg, bind
        v = self.expr(arg)
        if isinstance(v, Tup):
            raise self.err(UnsupportedError, "reversed() of a tuple is not supported: write the "
                           "tuple in reverse order", node)
        n, get = self.sequence(v, arg)
        return b.op(SubI, n, b.i64(1)), b.i64(-1), b.i64(-1), get

    def iterable(self, node):
        """(length, get(k)) of what ``enumerate``/``zip`` are given: a sequence, or a ``range``,
        ``reversed``, ``enumerate`` or ``zip`` of its own."""
        if isinstance(node, ast.Call) and isinstance(f := self.expr(node.func), PyObj) and \
                f.obj in (range, reversed, enumerate, zip):
            lb, ub, step, bind = self.iteration(node)
            b = self.b
            if self.constant_of(Scalar(lb)) == 0 and self.constant_of(Scalar(step)) == 1:
                return b.op(MaxI, ub, b.i64(0)), bind
            n = self.range_trip(lb, ub, step)
            return n, lambda k: bind(Scalar(b.op(AddI, lb, b.op(MulI, k.value,
                                                                          step)), True))
        return self.sequence(self.expr(node), node)

    def sequence(self, v, node):
        """(length, get(i)) of something indexable by a loop counter."""
        if isinstance(v, Array):
            if v.type.ndim == 0:
                raise self.err(ZymaseTypeError, "cannot iterate over a 0-d array", node)
            return self.dim(v, 0), lambda iv: self._row(v, iv)
        if isinstance(v, ListVal):
            return v.length, lambda iv: Scalar(self.b.op(Load, v.buf, iv.value), False)
        raise self.err(UnsupportedError, f"cannot iterate over {self.describe(v)} (use range, "
                       "enumerate, zip, an array or a list)", node)

    def _row(self, a: Array, iv: Scalar):
        if a.type.ndim == 1:
            return Scalar(self.b.op(Load, a.value, iv.value), False)
        offs = [iv.value] + [self.b.i64(0)] * (a.type.ndim - 1)
        rest = []
        for d in range(1, a.type.ndim):
            rest += [self.dim(a, d), self.b.i64(1)]
        t = ArrayType(a.type.dtype, a.type.ndim - 1, a.type.layout)
        keep = [False] + [True] * (a.type.ndim - 1)
        return Array(self.b.create(Subview, [a.value, *offs, *rest], [t],
                                   {"keep": keep}).result)

    def range_args(self, args, node):
        if not 1 <= len(args) <= 3:
            raise self.err(ZymaseTypeError, f"range() takes 1 to 3 integer arguments, not "
                           f"{len(args)}", node)
        for a in args:
            if not isinstance(a, Scalar):
                raise self.err(ZymaseTypeError, f"range() arguments must be integers, not "
                               f"{self.describe(a)}", node)
        for a in args:
            if not (a.type.is_int or a.type == I1):
                raise self.err(ZymaseTypeError, f"range() arguments must be integers, not "
                               f"{self.describe(a)}", node)
        vals = [self.b.cast(a.value, I64) for a in args]
        if len(vals) == 1:
            lb, ub, st = self.b.i64(0), vals[0], self.b.i64(1)
        elif len(vals) == 2:
            lb, ub, st = vals[0], vals[1], self.b.i64(1)
        else:
            lb, ub, st = vals
            k = self.constant_of(Scalar(st))
            if k == 0:
                raise self.err(ZymaseTypeError, "range() arg 3 must not be zero", node)
            if k is None:
                ok = self.b.op(CmpI, st, self.b.i64(0), pred="ne")
                self.b.create(Assert, [ok], [], {"kind": "ValueError",
                                                      "msg": "range() arg 3 must not be zero"})
        return lb, ub, st, lambda iv: iv
