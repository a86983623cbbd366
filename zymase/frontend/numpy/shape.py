"""Shapes: ``reshape``/``ravel`` (views), ``flatten`` (a copy), ``transpose`` (a view),
``concatenate``/``hstack``/``vstack``/``stack``, ``roll``, ``diff``, ``cumsum``/``cumprod``.

``reshape`` and ``ravel`` of a C-contiguous array are views (``array.reshape``), as in NumPy:
writing through the result changes the original.  Of an array that may not be contiguous (a
slice, a transpose) they copy, where NumPy views when the strides allow it; writing into such a
copy (where NumPy might have written into the original) is refused at compile time
(``copies.py``), so the difference never shows.
"""

from __future__ import annotations

import numpy as np

from ...errors import ShapeError, UnsupportedError, ZymaseTypeError
from ...ir.ops import AddI, CmpI, FloorDivI, MaxI, ModI, MulI, Reshape, Select, SubI, Transpose
from ...ir.types import I64, ArrayType
from ..emit import alloc, arith, check, load, nest, size_of, store
from ..typing import Array, Scalar, Tup
from .arrays import (
    array_from_sequence,
    as_array,
    broadcast_to,
    common_type,
    dtype_arg,
    operand,
    shape_arg,
)
from .copies import protect_copy
from .params import REQUIRED, bind, const_int, is_none, norm_axis
from .reductions import result_dtype
from .registry import add_methods, register_all

# ---------------------------------------------------------------------- reshaping copies


def reshape_copy(lw, a: Array, dims) -> Array:
    """A new C array of shape ``dims`` holding ``a``'s elements in C order (sizes must agree).

    The loop runs over the new shape and carries the source's multi-index, advanced like an
    odometer, so no division is needed."""
    out = alloc(lw, a.type.dtype, dims)
    src_dims = lw.dims(a)

    def body(idx, acc):
        store(lw, load(lw, a, acc), out, idx)
        return _advance(lw, acc, src_dims)

    nest(lw, dims, body, [lw.b.i64(0)] * a.type.ndim)
    return out


def _advance(lw, idx, dims):
    b = lw.b
    out, carry = list(idx), b.i1(True)
    for k in reversed(range(len(idx))):
        inc = b.op(Select, carry, b.op(AddI, idx[k], b.i64(1)), idx[k])
        wrapped = b.op(CmpI, inc, dims[k], pred="eq")
        out[k] = b.op(Select, wrapped, b.i64(0), inc) if k else inc
        carry = wrapped
    return out


def ravel(lw, a: Array) -> Array:
    return reshaped(lw, a, [size_of(lw, lw.dims(a))])


def reshaped(lw, a: Array, dims) -> Array:
    """``a`` with shape ``dims`` (same size): a view of a C-contiguous array, else a copy
    marked so that writes into it are refused (see the module docstring)."""
    if a.type.layout == "C":
        t = ArrayType(a.type.dtype, len(dims), "C")
        return Array(lw.b.create(Reshape, [a.value, *dims], [t]).result)
    block, n = lw.b.block, len(lw.b.block.ops)
    out = reshape_copy(lw, a, dims)
    protect_copy(block, n, out, "reshape")
    return out


def new_shape(lw, a: Array, dims):
    """``dims`` with one -1 inferred, checked against ``a``'s size (ValueError as NumPy)."""
    b = lw.b
    size = size_of(lw, lw.dims(a))
    known, unknown, flags = b.i64(1), b.i64(0), []
    for d in dims:
        check(
            lw,
            b.op(CmpI, d, b.i64(-1), pred="ge"),
            "ValueError",
            "negative dimensions are not allowed",
        )
        neg = b.op(CmpI, d, b.i64(-1), pred="eq")
        flags.append(neg)
        known = b.op(MulI, known, b.op(Select, neg, b.i64(1), d))
        unknown = b.op(AddI, unknown, b.cast(neg, I64))
    check(
        lw,
        b.op(CmpI, unknown, b.i64(1), pred="le"),
        "ValueError",
        "can only specify one unknown dimension",
    )
    inferred = b.op(FloorDivI, size, b.op(MaxI, known, b.i64(1)))
    out = [b.op(Select, f, inferred, d) for f, d in zip(flags, dims)]
    check(
        lw,
        b.op(CmpI, size_of(lw, out), size, pred="eq"),
        "ValueError",
        "cannot reshape array into the requested shape (sizes differ)",
    )
    return out


def reshape(lw, a, shape, node) -> Array:
    a = as_array(lw, a, "reshape", node)
    return reshaped(lw, a, new_shape(lw, a, shape_arg(lw, shape, node)))


def _reshape(lw, args, kwargs, node):
    p = bind(
        lw, "np.reshape", args, kwargs, node, [("a", REQUIRED), ("shape", REQUIRED)], {"order": "C"}
    )
    return reshape(lw, p["a"], p["shape"], node)


def _m_reshape(lw, a, args, kwargs, node):
    if "shape" in kwargs:
        args = [*args, kwargs.pop("shape")]
    bind(lw, "ndarray.reshape", [], kwargs, node, [], {"order": "C"})
    if len(args) != 1:
        args = [Tup(tuple(args))]
    return reshape(lw, a, args[0], node)


def _ravel(lw, args, kwargs, node):
    p = bind(lw, "np.ravel", args, kwargs, node, [("a", REQUIRED)], {"order": "C"})
    return ravel(lw, as_array(lw, p["a"], "np.ravel", node))


def _m_ravel(lw, a, args, kwargs, node):
    bind(lw, "ndarray.ravel", args, kwargs, node, [], {"order": "C"})
    return ravel(lw, a)


def _m_flatten(lw, a, args, kwargs, node):
    bind(lw, "ndarray.flatten", args, kwargs, node, [], {"order": "C"})
    return reshape_copy(lw, a, [size_of(lw, lw.dims(a))])  # always a copy, as in NumPy


def transpose(lw, a, axes, node) -> Array:
    a = as_array(lw, a, "transpose", node)
    nd = a.type.ndim
    if is_none(axes):
        perm = list(range(nd))[::-1]
    else:
        items = axes.items if isinstance(axes, Tup) else (axes,)
        perm = [norm_axis(lw, const_int(lw, x, "an axis", node), nd, node) for x in items]
        if sorted(perm) != list(range(nd)):
            raise lw.err(ZymaseTypeError, "transpose: axes do not match the array", node)
    return Array(lw.b.op(Transpose, a.value, perm=perm))


def _transpose(lw, args, kwargs, node):
    p = bind(lw, "np.transpose", args, kwargs, node, [("a", REQUIRED), ("axes", None)])
    return transpose(lw, p["a"], p["axes"], node)


def _m_transpose(lw, a, args, kwargs, node):
    p = bind(lw, "ndarray.transpose", [], kwargs, node, [("axes", None)])
    axes = p["axes"] if not args else args[0] if len(args) == 1 else Tup(tuple(args))
    return transpose(lw, a, axes, node)


# ---------------------------------------------------------------------- joining


def _arrays(lw, seq, fname, node) -> list[Array]:
    if not isinstance(seq, Tup) or not seq.items:
        raise lw.err(ZymaseTypeError, f"{fname}() needs a non-empty tuple or list of arrays", node)
    out = [operand(lw, x, node) for x in seq.items]
    if not all(isinstance(x, Array) for x in out):
        raise lw.err(ShapeError, f"{fname}(): zero-dimensional arrays cannot be joined", node)
    return out


def _same_ndim(lw, arrays, fname, node):
    nd = arrays[0].type.ndim
    if any(x.type.ndim != nd for x in arrays):
        raise lw.err(
            ShapeError,
            f"{fname}(): all the input arrays must have the same number of dimensions",
            node,
        )
    return nd


def _copy_into(lw, src: Array, out: Array, to_out):
    """``out[to_out(idx)] = src[idx]`` over all of ``src`` (cast to ``out``'s type)."""
    t = out.type.dtype
    nest(
        lw,
        lw.dims(src),
        lambda idx, acc: store(lw, lw.b.cast(load(lw, src, idx), t), out, to_out(idx)),
    )


def concatenate(lw, arrays, axis, dtype, node) -> Array:
    """Join along an existing axis; the other dims must match (ShapeError at run time)."""
    if axis is None:
        arrays, axis = [ravel(lw, a) if a.type.ndim != 1 else a for a in arrays], 0
    nd = _same_ndim(lw, arrays, "np.concatenate", node)
    axis = norm_axis(lw, axis, nd, node)
    t = dtype or common_type(arrays)
    dims = lw.dims(arrays[0])
    total = dims[axis]
    for a in arrays[1:]:
        ad = lw.dims(a)
        for k in range(nd):
            if k != axis:
                check(
                    lw,
                    lw.b.op(CmpI, ad[k], dims[k], pred="eq"),
                    "ShapeError",
                    "all the input array dimensions except for the concatenation axis must "
                    "match exactly",
                )
        total = lw.b.op(AddI, total, ad[axis])
    out = alloc(lw, t, dims[:axis] + [total] + dims[axis + 1 :])
    off = lw.b.i64(0)
    for a in arrays:

        def to_out(idx, off=off):
            return idx[:axis] + [lw.b.op(AddI, idx[axis], off)] + idx[axis + 1 :]

        _copy_into(lw, a, out, to_out)
        off = lw.b.op(AddI, off, lw.dim(a, axis))
    return out


def _concatenate(lw, args, kwargs, node):
    p = bind(
        lw,
        "np.concatenate",
        args,
        kwargs,
        node,
        [("arrays", REQUIRED), ("axis", 0), ("dtype", None)],
        {"out": None},
    )
    axis = None if is_none(p["axis"]) else const_int(lw, p["axis"], "axis", node)
    dt = None if is_none(p["dtype"]) else dtype_arg(lw, p["dtype"], None, node)
    return concatenate(lw, _arrays(lw, p["arrays"], "np.concatenate", node), axis, dt, node)


def _atleast(lw, seq, nd, fname, node):
    """The items of ``seq`` as arrays of at least ``nd`` dims (leading size-1 dims are views)."""
    if not isinstance(seq, Tup) or not seq.items:
        raise lw.err(ZymaseTypeError, f"{fname}() needs a non-empty tuple or list", node)
    out = []
    for x in seq.items:
        x = operand(lw, x, node)
        if isinstance(x, Scalar):
            x = array_from_sequence(lw, Tup((x,)), node)
        if x.type.ndim < nd:

            x = broadcast_to(lw, x, [lw.b.i64(1)] * (nd - x.type.ndim) + lw.dims(x))
        out.append(x)
    return out


def _hstack(lw, args, kwargs, node):
    p = bind(lw, "np.hstack", args, kwargs, node, [("tup", REQUIRED)], {"dtype": None})
    arrays = _atleast(lw, p["tup"], 1, "np.hstack", node)
    return concatenate(lw, arrays, 0 if arrays[0].type.ndim == 1 else 1, None, node)


def _vstack(lw, args, kwargs, node):
    p = bind(lw, "np.vstack", args, kwargs, node, [("tup", REQUIRED)], {"dtype": None})
    return concatenate(lw, _atleast(lw, p["tup"], 2, "np.vstack", node), 0, None, node)


def _stack(lw, args, kwargs, node):
    """Join equal-shaped arrays along a new axis."""
    p = bind(
        lw,
        "np.stack",
        args,
        kwargs,
        node,
        [("arrays", REQUIRED), ("axis", 0)],
        {"out": None, "dtype": None},
    )
    arrays = _arrays(lw, p["arrays"], "np.stack", node)
    nd = _same_ndim(lw, arrays, "np.stack", node)
    axis = norm_axis(lw, const_int(lw, p["axis"], "axis", node), nd + 1, node)
    dims = lw.dims(arrays[0])
    for a in arrays[1:]:
        for d, e in zip(lw.dims(a), dims):
            check(
                lw,
                lw.b.op(CmpI, d, e, pred="eq"),
                "ShapeError",
                "all input arrays must have the same shape",
            )
    out = alloc(lw, common_type(arrays), dims[:axis] + [lw.b.i64(len(arrays))] + dims[axis:])
    for k, a in enumerate(arrays):
        _copy_into(lw, a, out, lambda idx, k=k: idx[:axis] + [lw.b.i64(k)] + idx[axis:])
    return out


# ---------------------------------------------------------------------- roll / diff


def roll(lw, a: Array, shift, axis) -> Array:
    """``out[i] = a[(i - shift) mod n]`` along ``axis`` (the flattened array when None)."""
    if axis is None:
        flat = ravel(lw, a) if a.type.ndim != 1 else a
        rolled = roll(lw, flat, shift, 0)
        return rolled if a.type.ndim == 1 else reshape_copy(lw, rolled, lw.dims(a))
    b = lw.b
    dims = lw.dims(a)
    n = dims[axis]
    s = b.op(ModI, shift, b.op(MaxI, n, b.i64(1)))
    out = alloc(lw, a.type.dtype, dims)

    def body(idx, acc):
        j = b.op(SubI, idx[axis], s)
        j = b.op(
            Select, b.op(CmpI, j, b.i64(0), pred="lt"), b.op(AddI, j, n), j
        )
        store(lw, load(lw, a, idx[:axis] + [j] + idx[axis + 1 :]), out, idx)

    nest(lw, dims, body)
    return out


def _roll(lw, args, kwargs, node):
    p = bind(
        lw, "np.roll", args, kwargs, node, [("a", REQUIRED), ("shift", REQUIRED), ("axis", None)]
    )
    a = as_array(lw, p["a"], "np.roll", node)
    shift = p["shift"]
    if not (isinstance(shift, Scalar) and (shift.type.is_int or shift.type.is_bool)):
        raise lw.err(UnsupportedError, "np.roll(shift=...) must be one integer", node)
    axis = (
        None
        if is_none(p["axis"])
        else norm_axis(lw, const_int(lw, p["axis"], "np.roll(axis=...)", node), a.type.ndim, node)
    )
    return roll(lw, a, lw.b.cast(shift.value, I64), axis)


def diff(lw, a: Array, axis: int) -> Array:
    """``a[1:] - a[:-1]`` along ``axis`` (``!=`` for booleans, as NumPy)."""
    b = lw.b
    dims = lw.dims(a)
    out_dims = list(dims)
    out_dims[axis] = b.op(MaxI, b.op(SubI, dims[axis], b.i64(1)), b.i64(0))
    out = alloc(lw, a.type.dtype, out_dims)

    def body(idx, acc):
        nxt = idx[:axis] + [b.op(AddI, idx[axis], b.i64(1))] + idx[axis + 1 :]
        store(lw, arith(lw, "sub", load(lw, a, nxt), load(lw, a, idx)), out, idx)

    nest(lw, out_dims, body)
    return out


def _diff(lw, args, kwargs, node):
    p = bind(lw, "np.diff", args, kwargs, node, [("a", REQUIRED), ("n", 1), ("axis", -1)])
    a = as_array(lw, p["a"], "np.diff", node)
    n = const_int(lw, p["n"], "np.diff(n=...)", node)
    if n < 0:
        raise lw.err(ZymaseTypeError, f"np.diff(): order must be non-negative but got {n}", node)
    axis = norm_axis(lw, const_int(lw, p["axis"], "np.diff(axis=...)", node), a.type.ndim, node)
    for _ in range(n):
        a = diff(lw, a, axis)
    return a


# ---------------------------------------------------------------------- cumulative


def accumulate(lw, kind, a: Array, axis, dtype) -> Array:
    """cumsum/cumprod: running sums (products) in C order, or along ``axis``."""
    b = lw.b
    t = dtype or result_dtype("sum", a.type.dtype)
    op, init = ("add", 0) if kind == "sum" else ("mul", 1)
    dims = lw.dims(a)
    if axis is None:
        out = alloc(lw, t, [size_of(lw, dims)])

        def flat(idx, acc):
            s = arith(lw, op, acc[0], b.cast(load(lw, a, idx), t))
            store(lw, s, out, [acc[1]])
            return [s, b.op(AddI, acc[1], b.i64(1))]

        nest(lw, dims, flat, [b.const(init, t), b.i64(0)])
        return out
    out = alloc(lw, t, dims)

    def line(oidx, acc):
        def step(k, s):
            idx = oidx[:axis] + k + oidx[axis:]
            v = arith(lw, op, s[0], b.cast(load(lw, a, idx), t))
            store(lw, v, out, idx)
            return [v]

        nest(lw, [dims[axis]], step, [b.const(init, t)])

    nest(lw, dims[:axis] + dims[axis + 1 :], line)
    return out


def _accumulator(kind):
    fname = f"np.cum{kind}"

    def h(lw, args, kwargs, node):
        p = bind(
            lw,
            fname,
            args,
            kwargs,
            node,
            [("a", REQUIRED), ("axis", None), ("dtype", None)],
            {"out": None},
        )
        a = as_array(lw, p["a"], fname, node)
        axis = (
            None
            if is_none(p["axis"])
            else norm_axis(lw, const_int(lw, p["axis"], "axis", node), a.type.ndim, node)
        )
        dt = None if is_none(p["dtype"]) else dtype_arg(lw, p["dtype"], None, node)
        return accumulate(lw, kind, a, axis, dt)

    return h


register_all(
    {
        np.reshape: _reshape,
        np.ravel: _ravel,
        np.transpose: _transpose,
        np.concatenate: _concatenate,
        np.hstack: _hstack,
        np.vstack: _vstack,
        np.stack: _stack,
        np.roll: _roll,
        np.diff: _diff,
        np.cumsum: _accumulator("sum"),
        np.cumprod: _accumulator("prod"),
    }
)
add_methods(
    {
        "reshape": _m_reshape,
        "ravel": _m_ravel,
        "flatten": _m_flatten,
        "transpose": _m_transpose,
        "cumsum": lambda lw, a, args, kwargs, node: _accumulator("sum")(
            lw, [a, *args], kwargs, node
        ),
        "cumprod": lambda lw, a, args, kwargs, node: _accumulator("prod")(
            lw, [a, *args], kwargs, node
        ),
    }
)
