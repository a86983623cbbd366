"""Products of whole arrays: ``np.cross`` (vectors along the last axis, or along ``axisa``/
``axisb``/``axisc``/``axis``; leading dims broadcast), ``np.kron`` (the Kronecker product, the
smaller rank padded with leading 1s) and ``np.tensordot(a, b, axes)`` (``axes`` an int or two
lists of axes, known when compiling), with NumPy's result types (arrays promote as arrays: a
bool product is a bool).

``cross`` takes 3-vectors and 2-vectors (a 2-vector's third component is zero, NumPy 2 calls
them deprecated); the formulas are NumPy's for each pair of sizes, chosen when the function runs
where the sizes are known only then.  Two 2-vectors give one number per pair, a result of one
dimension fewer: that rank must be known when compiling, so both sizes must be (an array built
from a literal list); otherwise the result holds 3-vectors and two 2-vectors raise ValueError
naming the formula to write.  ``tensordot`` is NumPy's own construction: both operands
transposed and reshaped to matrices (copies where not contiguous), one ``matmul`` (BLAS for
floats, with the product's derivative rule), the result reshaped; contracting every axis gives a
NumPy scalar where NumPy gives a 0-d array (0-d arrays are not supported).  Derivatives come
from the loads, stores and products these lower to.
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedError, ZymaseTypeError, ZymaseValueError
from ...ir.ops import (
    AddI,
    Alloc,
    AndI,
    ArrayConst,
    Broadcast,
    CmpI,
    Dim,
    MinI,
    MulI,
    NegF,
    NegI,
    Not,
    OrI,
    Reshape,
    Select,
    Transpose,
)
from ..emit import alloc, arith, check, load, nest, size_of, store
from ..typing import Array, Scalar, SType, Tup, result_type
from .arrays import broadcast_shapes, broadcast_to, map_elements, operand
from .linalg import matmul
from .params import REQUIRED, bind, const_int, is_none, norm_axis
from .registry import register_all
from .shape import reshaped


def static_dim(lw, a: Array, axis: int):
    """The size of ``a`` along ``axis`` when it is known when compiling (an array made from a
    literal, or an allocation, reshape or broadcast to constant sizes), else None."""
    return _static_size(lw, a.value, axis)


def _static_size(lw, src, axis):
    op = src.op
    while isinstance(op, Transpose):
        src, axis = op.operands[0], op.attrs["perm"][axis]
        op = src.op
    if isinstance(op, ArrayConst):
        return int(op.attrs["data"].shape[axis])
    if isinstance(op, Alloc):
        v = op.operands[axis]
    elif isinstance(op, (Broadcast, Reshape)):
        v = op.operands[1 + axis]
    else:
        return None
    if isinstance(v.op, Dim):
        return _static_size(lw, v.op.operands[0], v.op.attrs["axis"])
    k = lw.constant_of(Scalar(v))
    return k if isinstance(k, int) and not isinstance(k, bool) else None


def _strong_array(lw, v, fname, node) -> Array:
    """An operand as an array (NumPy's ``asarray``: a number would be a 0-d array)."""
    v = operand(lw, v, node)
    if not isinstance(v, Array):
        raise lw.err(ZymaseValueError, f"{fname}(): at least one array has zero dimension (a "
                     "number is a 0-d array here; 0-d arrays are not supported)", node)
    return v


# ---------------------------------------------------------------------- cross

CROSS_SIZES = "incompatible dimensions for cross product\n(dimension must be 2 or 3)"


def _to_last(lw, a: Array, axis: int) -> Array:
    nd = a.type.ndim
    if axis == nd - 1:
        return a
    perm = [d for d in range(nd) if d != axis] + [axis]
    return Array(lw.b.op(Transpose, a.value, perm=perm))


def _cross(lw, args, kwargs, node):
    p = bind(lw, "np.cross", args, kwargs, node,
             [("a", REQUIRED), ("b", REQUIRED), ("axisa", -1), ("axisb", -1), ("axisc", -1),
              ("axis", None)])
    a, b = (_strong_array(lw, p[k], "np.cross", node) for k in ("a", "b"))
    t = result_type(SType(a.type.dtype, False), SType(b.type.dtype, False)).type
    if t.is_bool:
        raise lw.err(ZymaseTypeError, "np.cross() of booleans: NumPy subtracts them, which is not "
                     "defined for booleans (cast with .astype(int) first)", node)
    keys = ("axisa", "axisb", "axisc")
    if not is_none(p["axis"]):
        axes = [const_int(lw, p["axis"], "np.cross(axis=)", node)] * 3
    else:
        axes = [const_int(lw, p[k], f"np.cross({k}=)", node) for k in keys]
    a = _to_last(lw, a, norm_axis(lw, axes[0], a.type.ndim, node))
    b = _to_last(lw, b, norm_axis(lw, axes[1], b.type.ndim, node))
    sizes = [static_dim(lw, x, x.type.ndim - 1) for x in (a, b)]
    if any(s not in (None, 2, 3) for s in sizes):
        raise lw.err(ZymaseValueError, "np.cross(): " + CROSS_SIZES.replace("\n", " "), node)
    bb = lw.b
    na, nb = lw.dim(a, a.type.ndim - 1), lw.dim(b, b.type.ndim - 1)
    two, three = bb.i64(2), bb.i64(3)
    for n in (na, nb):
        check(lw, bb.op(OrI, bb.op(CmpI, n, two, pred="eq"), bb.op(CmpI, n, three, pred="eq")),
              "ValueError", CROSS_SIZES)
    lead = broadcast_shapes(lw, [lw.dims(a)[:-1], lw.dims(b)[:-1]])
    a = broadcast_to(lw, a, lead + [na])
    b = broadcast_to(lw, b, lead + [nb])

    def parts(x, n, idx):
        """(x0, x1, x2) of the vector at ``idx``: x2 read at index 1 for a 2-vector (unused)."""
        third = bb.op(MinI, bb.i64(2), bb.op(AddI, n, bb.i64(-1)))
        return [bb.cast(load(lw, x, idx + [i]), t) for i in (bb.i64(0), bb.i64(1), third)]

    def mul(x, y):
        return arith(lw, "mul", x, y)

    def sub(x, y):
        return arith(lw, "sub", x, y)

    def neg(x):
        return bb.op(NegF if t.is_inexact else NegI, x)

    if sizes == [2, 2]:
        if not lead:
            (a0, a1, _), (b0, b1, _) = parts(a, na, []), parts(b, nb, [])
            return Scalar(sub(mul(a0, b1), mul(a1, b0)), False)
        out = alloc(lw, t, lead)

        def body2(idx, acc):
            (a0, a1, _), (b0, b1, _) = parts(a, na, idx), parts(b, nb, idx)
            store(lw, sub(mul(a0, b1), mul(a1, b0)), out, idx)

        nest(lw, lead, body2, parallel=True)
        return out
    both_two = bb.op(AndI, bb.op(CmpI, na, two, pred="eq"), bb.op(CmpI, nb, two, pred="eq"))
    check(lw, bb.op(Not, both_two), "ValueError",
          "np.cross() of two arrays of 2-vectors gives one number per pair, an array of one "
          "dimension fewer, and the vectors' sizes were not known when compiling (the result "
          "was made for 3-vectors): write a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]")
    a3, b3 = bb.op(CmpI, na, three, pred="eq"), bb.op(CmpI, nb, three, pred="eq")
    out = alloc(lw, t, lead + [three])

    def body(idx, acc):
        (a0, a1, a2), (b0, b1, b2) = parts(a, na, idx), parts(b, nb, idx)
        # NumPy's formulas for (3, 3), (2, 3) (a2 = 0) and (3, 2) (b2 = 0)
        c0 = bb.op(Select, a3, bb.op(Select, b3, sub(mul(a1, b2), mul(a2, b1)),
                                     neg(mul(a2, b1))), mul(a1, b2))
        c1 = bb.op(Select, a3, bb.op(Select, b3, sub(mul(a2, b0), mul(a0, b2)), mul(a2, b0)),
                   neg(mul(a0, b2)))
        c2 = sub(mul(a0, b1), mul(a1, b0))
        for k, c in enumerate((c0, c1, c2)):
            store(lw, c, out, idx + [bb.i64(k)])

    nest(lw, lead, body, parallel=True)
    nd = len(lead) + 1
    axisc = norm_axis(lw, axes[2], nd, node)
    if axisc == nd - 1:
        return out
    perm = list(range(nd - 1))
    perm.insert(axisc, nd - 1)
    return Array(bb.op(Transpose, out.value, perm=perm))


# ---------------------------------------------------------------------- kron


def _kron(lw, args, kwargs, node):
    p = bind(lw, "np.kron", args, kwargs, node, [("a", REQUIRED), ("b", REQUIRED)])
    a, b = operand(lw, p["a"], node), operand(lw, p["b"], node)
    t = result_type(SType(a.type if isinstance(a, Scalar) else a.type.dtype, False),
                    SType(b.type if isinstance(b, Scalar) else b.type.dtype, False)).type
    if isinstance(a, Scalar) and isinstance(b, Scalar):
        raise lw.err(UnsupportedError, "np.kron() of two numbers gives a 0-d array, which is not "
                     "supported: multiply them", node)
    if isinstance(a, Scalar) or isinstance(b, Scalar):  # (NumPy: a number is an array of 1s)
        strong = [Scalar(v.value, False) if isinstance(v, Scalar) else v for v in (a, b)]
        return map_elements(lw, strong, lambda x, y: Scalar(arith(lw, "mul", lw.b.cast(
            x.value, t), lw.b.cast(y.value, t)), False), t, node)
    nd = max(a.type.ndim, b.type.ndim)
    one = lw.b.i64(1)
    da = [one] * (nd - a.type.ndim) + lw.dims(a)
    db = [one] * (nd - b.type.ndim) + lw.dims(b)
    dims = [lw.b.op(MulI, x, y) for x, y in zip(da, db)]
    out = alloc(lw, t, dims)
    pa, pb = nd - a.type.ndim, nd - b.type.ndim
    loops = [d for pair in zip(da, db) for d in pair]  # (i0, j0, i1, j1, ...): no division

    def body(idx, acc):
        ia, ib = idx[0::2], idx[1::2]
        x = lw.b.cast(load(lw, a, ia[pa:]), t)
        y = lw.b.cast(load(lw, b, ib[pb:]), t)
        at = [lw.b.op(AddI, lw.b.op(MulI, i, n), j) for i, j, n in zip(ia, ib, db)]
        store(lw, arith(lw, "mul", x, y), out, at)

    nest(lw, loops, body, parallel=True)
    return out


# ---------------------------------------------------------------------- tensordot


def _axis_list(lw, v, node):
    items = v.items if isinstance(v, Tup) else (v,)
    return [const_int(lw, x, "np.tensordot(axes=)", node) for x in items]


def _tensordot(lw, args, kwargs, node):
    p = bind(lw, "np.tensordot", args, kwargs, node, [("a", REQUIRED), ("b", REQUIRED),
                                                       ("axes", 2)])
    a, b = (_strong_array(lw, p[k], "np.tensordot", node) for k in ("a", "b"))
    nda, ndb = a.type.ndim, b.type.ndim
    axes = p["axes"]
    if isinstance(axes, Tup):
        if len(axes.items) != 2:
            raise lw.err(ZymaseTypeError, "np.tensordot(axes=) takes an int or two sequences of "
                         "axes (axes_a, axes_b)", node)
        axes_a, axes_b = (_axis_list(lw, x, node) for x in axes.items)
    else:
        n = axes if isinstance(axes, int) else const_int(lw, axes, "np.tensordot(axes=)", node)
        if n < 0 or n > nda or n > ndb:
            raise lw.err(ZymaseValueError, f"np.tensordot(axes={n}): the operands have {nda} "
                         f"and {ndb} dimension(s)", node)
        axes_a, axes_b = list(range(nda - n, nda)), list(range(n))
    if len(axes_a) != len(axes_b):
        raise lw.err(ZymaseValueError, "np.tensordot(): shape-mismatch for sum (as many axes of "
                     "a as of b are summed)", node)
    axes_a = [norm_axis(lw, x, nda, node) for x in axes_a]
    axes_b = [norm_axis(lw, x, ndb, node) for x in axes_b]
    if len(set(axes_a)) != len(axes_a) or len(set(axes_b)) != len(axes_b):
        raise lw.err(ZymaseValueError, "np.tensordot(): repeated axis in axes", node)
    bb = lw.b
    dims_a, dims_b = lw.dims(a), lw.dims(b)
    for i, j in zip(axes_a, axes_b):
        check(lw, bb.op(CmpI, dims_a[i], dims_b[j], pred="eq"), "ValueError",
              "shape-mismatch for sum")
    free_a = [d for d in range(nda) if d not in axes_a]
    free_b = [d for d in range(ndb) if d not in axes_b]
    k = size_of(lw, [dims_a[d] for d in axes_a])
    m = size_of(lw, [dims_a[d] for d in free_a])
    n = size_of(lw, [dims_b[d] for d in free_b])
    a2 = reshaped(lw, _permuted(lw, a, free_a + axes_a), [m, k])
    b2 = reshaped(lw, _permuted(lw, b, axes_b + free_b), [k, n])
    res = matmul(lw, a2, b2, node, "np.tensordot")
    dims = [dims_a[d] for d in free_a] + [dims_b[d] for d in free_b]
    if not dims:
        return Scalar(load(lw, res, [bb.i64(0), bb.i64(0)]), False)
    return reshaped(lw, res, dims)


def _permuted(lw, a: Array, perm) -> Array:
    if perm == list(range(a.type.ndim)):
        return a
    return Array(lw.b.op(Transpose, a.value, perm=perm))


register_all({np.cross: _cross, np.kron: _kron, np.tensordot: _tensordot})
