"""Views that cut, broadcast or add axes: ``np.split``/``array_split``/``hsplit``/``vsplit``/
``dsplit`` (a list of views along one axis: writes through a part reach the array, as in
NumPy), ``np.broadcast_to``/``np.broadcast_arrays`` (read-only views: a write into one is
refused when compiling, where NumPy raises or warns) and ``np.atleast_1d/2d/3d`` (the array
itself, or a view with size-1 axes added).

The number of parts must be known when compiling (an int of sections, or a tuple/list of
split indices, which may be run-time ints with Python's slicing rules: negative from the
end, clamped to the axis); the sizes are checked when the function runs (``np.split`` raises
ValueError for an unequal division, as NumPy)."""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedError, ZymaseTypeError
from ...ir.ops import (
    AddI,
    Broadcast,
    CmpI,
    FloorDivI,
    MinI,
    ModI,
    MulI,
    OrI,
    Reshape,
    Select,
    Transpose,
)
from ...ir.types import I64, ArrayType
from ..emit import alloc, check
from ..typing import Array, EmptyList, ListVal, Scalar, Tup, TupList
from .arrays import array_from_sequence, as_array, broadcast_shapes, operand, shape_arg
from .copies import protect_copy
from .params import REQUIRED, bind, const_int, norm_axis
from .registry import register_all

# ---------------------------------------------------------------------- split


def _part(lw, a: Array, axis: int, lo, hi, node) -> Array:
    """``a[..., lo:hi, ...]`` (Python's slice rules) along ``axis``: a view."""
    full = ("slice", None, None, None)
    cut = ("slice", Scalar(lo, True), Scalar(hi, True), None)
    return Array(lw.subview(a, [full] * axis + [cut], node))


def split(lw, a: Array, spec, axis: int, equal: bool, fname, node) -> TupList:
    """The parts of ``a`` along ``axis``: ``spec`` a number of sections (``equal``: they must
    be of one size, ``np.split``) or a tuple of split indices."""
    b = lw.b
    n = lw.dim(a, axis)
    if isinstance(spec, EmptyList):  # ([]: no split, the whole array)
        spec = Tup(())
    if isinstance(spec, Tup):
        if not all(isinstance(x, Scalar) and x.type.is_int for x in spec.items):
            raise lw.err(ZymaseTypeError, f"{fname}(): the split indices must be integers",
                         node)
        cuts = [b.cast(x.value, I64) for x in spec.items]
        bounds = [b.i64(0), *cuts, n]
        return TupList(tuple(_part(lw, a, axis, lo, hi, node)
                             for lo, hi in zip(bounds, bounds[1:])))
    if isinstance(spec, (Array, ListVal)):
        raise lw.err(UnsupportedError, f"{fname}() with split indices in an array is not "
                     "supported (the number of parts must be known when compiling): give "
                     "them as a tuple or list, e.g. (2, 5)", node)
    if not isinstance(spec, Scalar) or lw.constant_of(spec) is None:
        raise lw.err(UnsupportedError, f"{fname}(): the number of sections must be a constant "
                     "int (the number of parts must be known when compiling), or give the "
                     "split indices as a tuple", node)
    k = const_int(lw, spec, f"{fname}(): the number of sections", node)
    if k <= 0:
        raise lw.err(ZymaseTypeError, f"{fname}(): number sections must be larger than 0.",
                     node)
    kk = b.i64(k)
    if equal:
        check(lw, b.op(CmpI, b.op(ModI, n, kk), b.i64(0), pred="eq"), "ValueError",
              "array split does not result in an equal division")
    each, extra = b.op(FloorDivI, n, kk), b.op(ModI, n, kk)
    # NumPy's: the first n % k parts one longer
    starts = [b.op(AddI, b.op(MulI, b.i64(i), each), b.op(MinI, b.i64(i), extra))
              for i in range(k + 1)]
    return TupList(tuple(_part(lw, a, axis, lo, hi, node) for lo, hi in zip(starts, starts[1:])))


def _splitter(fname, equal):
    def h(lw, args, kwargs, node):
        p = bind(lw, fname, args, kwargs, node,
                 [("ary", REQUIRED), ("indices_or_sections", REQUIRED), ("axis", 0)])
        a = as_array(lw, p["ary"], fname, node)
        axis = norm_axis(lw, const_int(lw, p["axis"], "axis", node), a.type.ndim, node)
        return split(lw, a, p["indices_or_sections"], axis, equal, fname, node)
    return h


def _fixed_splitter(fname, min_ndim, axis_of):
    def h(lw, args, kwargs, node):
        p = bind(lw, fname, args, kwargs, node, [("ary", REQUIRED),
                                                 ("indices_or_sections", REQUIRED)])
        a = as_array(lw, p["ary"], fname, node)
        if a.type.ndim < min_ndim:
            raise lw.err(ZymaseTypeError, f"{fname}() only works on arrays of {min_ndim} or "
                         "more dimensions", node)
        return split(lw, a, p["indices_or_sections"], axis_of(a.type.ndim), True, fname, node)
    return h


register_all({
    np.split: _splitter("np.split", True), np.array_split: _splitter("np.array_split", False),
    np.hsplit: _fixed_splitter("np.hsplit", 1, lambda nd: 1 if nd > 1 else 0),
    np.vsplit: _fixed_splitter("np.vsplit", 2, lambda nd: 0),
    np.dsplit: _fixed_splitter("np.dsplit", 3, lambda nd: 2),
})  # fmt: skip

# ---------------------------------------------------------------------- broadcasting views

def read_only_broadcast(lw, a: Array, dims) -> Array:
    """``a`` viewed with shape ``dims``, writes into it refused when compiling: the view is
    selected (by a constant, folded away later) against a protected 1-element buffer, so the
    alias analysis of ``copies.check_reshape_copies`` sees it may be that buffer."""
    t = ArrayType(a.type.dtype, len(dims), "A")
    view = lw.b.create(Broadcast, [a.value, *dims], [t]).result
    block, start = lw.b.block, len(lw.b.block.ops)
    guard = alloc(lw, a.type.dtype, [lw.b.i64(1)] * len(dims))
    protect_copy(block, start, guard, "broadcast")
    wide = lw.b.create(Broadcast, [guard.value, *dims], [t]).result
    return Array(lw.b.op(Select, lw.b.i1(True), view, wide))


def _broadcast_to(lw, args, kwargs, node):
    p = bind(lw, "np.broadcast_to", args, kwargs, node, [("array", REQUIRED),
                                                          ("shape", REQUIRED)],
             {"subok": False})
    a = operand(lw, p["array"], node)
    if isinstance(a, Scalar):
        a = array_from_sequence(lw, Tup((a,)), node)
    dims = shape_arg(lw, p["shape"], node)
    nd, want = a.type.ndim, len(dims)
    if nd > want:
        raise lw.err(ZymaseTypeError, f"np.broadcast_to(): the array has more dimensions "
                     f"({nd}) than the shape ({want})", node)
    b = lw.b
    for d in dims:
        check(lw, b.op(CmpI, d, b.i64(0), pred="ge"), "ValueError",
              "all elements of broadcast shape must be non-negative")
    for d, w in zip(lw.dims(a), dims[want - nd:]):
        ok = b.op(OrI, b.op(CmpI, d, w, pred="eq"), b.op(CmpI, d, b.i64(1), pred="eq"))
        check(lw, ok, "ValueError", "operands could not be broadcast together with the "
              "requested shape (np.broadcast_to)")
    return read_only_broadcast(lw, a, dims)


def _broadcast_arrays(lw, args, kwargs, node):
    bind(lw, "np.broadcast_arrays", [], kwargs, node, [], {"subok": False})
    vals = [operand(lw, x, node) for x in args]
    if not vals or all(isinstance(v, Scalar) for v in vals):
        raise lw.err(UnsupportedError, "np.broadcast_arrays() needs at least one array (of "
                     "numbers only it gives 0-d arrays, which are not supported)", node)
    arrays = [array_from_sequence(lw, Tup((v,)), node) if isinstance(v, Scalar) else v
              for v in vals]
    dims = broadcast_shapes(lw, [lw.dims(x) for x in arrays])
    return Tup(tuple(read_only_broadcast(lw, x, dims) for x in arrays))


# ---------------------------------------------------------------------- atleast_nd


def with_axes(lw, a: Array, new_at) -> Array:
    """``a`` with a size-1 axis at each position of ``new_at`` (of the result): a view (a
    reshape of a C-contiguous array, else a broadcast and a transpose), writes reach ``a``."""
    src = lw.dims(a)
    nd = len(src) + len(new_at)
    it = iter(src)
    dims = [lw.b.i64(1) if d in new_at else next(it) for d in range(nd)]
    if a.type.layout == "C":
        t = ArrayType(a.type.dtype, nd, "C")
        return Array(lw.b.create(Reshape, [a.value, *dims], [t]).result)
    t = ArrayType(a.type.dtype, nd, "A")
    wide = lw.b.create(Broadcast, [a.value, *[lw.b.i64(1)] * len(new_at), *src], [t]).result
    old, new = iter(range(len(new_at), nd)), iter(range(len(new_at)))
    perm = [next(new) if d in new_at else next(old) for d in range(nd)]
    return Array(lw.b.op(Transpose, wide, perm=perm))


# where NumPy puts the new axes, by the array's ndim (a number is taken as a 1-element array)
NEW_AXES = {
    1: {},
    2: {1: [0]},
    3: {1: [0, 2], 2: [2]},
}


def _atleast(k):
    fname = f"np.atleast_{k}d"

    def h(lw, args, kwargs, node):
        bind(lw, fname, [], kwargs, node, [])
        if not args:
            raise lw.err(ZymaseTypeError, f"{fname}() needs at least one array", node)
        out = []
        for x in args:
            v = operand(lw, x, node)
            if isinstance(v, Scalar):
                v = array_from_sequence(lw, Tup((v,)), node)
            new_at = NEW_AXES[k].get(v.type.ndim)
            out.append(with_axes(lw, v, new_at) if new_at else v)
        return out[0] if len(out) == 1 else Tup(tuple(out))
    return h


register_all({
    np.broadcast_to: _broadcast_to, np.broadcast_arrays: _broadcast_arrays,
    np.atleast_1d: _atleast(1), np.atleast_2d: _atleast(2), np.atleast_3d: _atleast(3),
})  # fmt: skip
