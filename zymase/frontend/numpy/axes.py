"""Views that reverse, swap, move, add or drop axes: ``np.flip``/``fliplr``/``flipud`` (negative
strides, as ``a[::-1]``), ``np.swapaxes``/``np.moveaxis`` (transposes), ``np.expand_dims`` and
``np.squeeze(a, axis)`` (a size-1 axis in or out; ``squeeze`` checks the size when it runs,
and without ``axis`` needs every axis it drops named, since sizes are not known when
compiling); ``np.tril``/``np.triu`` (new arrays, zero outside the triangle); and
``np.ndarray(shape, dtype)`` (``np.empty``)."""

from __future__ import annotations

import numpy as np

from ...errors import ZymaseTypeError
from ...ir.ops import CmpI, Select, SubI, Transpose
from ...ir.types import I64
from ..emit import alloc, check, load, nest, store
from ..typing import Array, Scalar, Tup
from .arrays import as_array
from .params import REQUIRED, bind, const_axes, const_int, is_none, norm_axis
from .registry import CALLS, register_all
from .shape import reshaped


def flip(lw, a: Array, axes, node) -> Array:
    minus_one = Scalar(lw.b.const(-1, I64), True)
    items = [("slice", None, None, minus_one) if d in axes else ("slice", None, None, None)
             for d in range(a.type.ndim)]
    return Array(lw.subview(a, items, node))


def _flip(lw, args, kwargs, node):
    p = bind(lw, "np.flip", args, kwargs, node, [("m", REQUIRED), ("axis", None)])
    a = as_array(lw, p["m"], "np.flip", node)
    nd = a.type.ndim
    axes = list(range(nd)) if is_none(p["axis"]) else const_axes(lw, p["axis"], nd, "np.flip", node)
    return flip(lw, a, axes, node)


def _flip_one(fname, axis):
    def h(lw, args, kwargs, node):
        p = bind(lw, fname, args, kwargs, node, [("m", REQUIRED)])
        a = as_array(lw, p["m"], fname, node)
        if a.type.ndim <= axis:
            raise lw.err(ZymaseTypeError, f"{fname}() needs an array of at least "
                         f"{axis + 1} dimension(s)", node)
        return flip(lw, a, [axis], node)
    return h


def _swapaxes(lw, args, kwargs, node):
    p = bind(lw, "np.swapaxes", args, kwargs, node,
             [("a", REQUIRED), ("axis1", REQUIRED), ("axis2", REQUIRED)])
    a = as_array(lw, p["a"], "np.swapaxes", node)
    nd = a.type.ndim
    i, j = (norm_axis(lw, const_int(lw, p[k], k, node), nd, node) for k in ("axis1", "axis2"))
    perm = list(range(nd))
    perm[i], perm[j] = perm[j], perm[i]
    return Array(lw.b.op(Transpose, a.value, perm=perm))


def _moveaxis(lw, args, kwargs, node):
    p = bind(lw, "np.moveaxis", args, kwargs, node,
             [("a", REQUIRED), ("source", REQUIRED), ("destination", REQUIRED)])
    a = as_array(lw, p["a"], "np.moveaxis", node)
    nd = a.type.ndim
    src = const_axes(lw, p["source"], nd, "np.moveaxis source", node)
    dst = const_axes(lw, p["destination"], nd, "np.moveaxis destination", node)
    if len(src) != len(dst):
        raise lw.err(ZymaseTypeError, "np.moveaxis: source and destination need the same "
                     "number of axes", node)
    perm = [d for d in range(nd) if d not in src]  # (NumPy's own construction)
    for to, frm in sorted(zip(dst, src)):
        perm.insert(to, frm)
    return Array(lw.b.op(Transpose, a.value, perm=perm))


def _expand_dims(lw, args, kwargs, node):
    p = bind(lw, "np.expand_dims", args, kwargs, node, [("a", REQUIRED), ("axis", REQUIRED)])
    a = as_array(lw, p["a"], "np.expand_dims", node)
    items = p["axis"].items if isinstance(p["axis"], Tup) else (p["axis"],)
    nd = a.type.ndim + len(items)
    axes = const_axes(lw, p["axis"], nd, "np.expand_dims", node)
    dims, it = [], iter(lw.dims(a))
    for d in range(nd):
        dims.append(lw.b.i64(1) if d in axes else next(it))
    return reshaped(lw, a, dims)


def _squeeze(lw, args, kwargs, node):
    p = bind(lw, "np.squeeze", args, kwargs, node, [("a", REQUIRED), ("axis", None)])
    a = as_array(lw, p["a"], "np.squeeze", node)
    if is_none(p["axis"]):
        raise lw.err(ZymaseTypeError, "np.squeeze() without axis= drops the axes of size 1, "
                     "which are known only when the function runs: name them "
                     "(np.squeeze(a, axis=1))", node)
    axes = const_axes(lw, p["axis"], a.type.ndim, "np.squeeze", node)
    dims = lw.dims(a)
    for d in axes:
        check(lw, lw.b.op(CmpI, dims[d], lw.b.i64(1), pred="eq"), "ValueError",
              "cannot select an axis to squeeze out which has size not equal to one")
    return reshaped(lw, a, [n for d, n in enumerate(dims) if d not in axes])


def _triangle(fname, lower):
    def h(lw, args, kwargs, node):
        p = bind(lw, fname, args, kwargs, node, [("m", REQUIRED), ("k", 0)])
        a = as_array(lw, p["m"], fname, node)
        if a.type.ndim < 2:
            raise lw.err(ZymaseTypeError, f"{fname}() needs an array of 2 or more dimensions",
                         node)
        k = p["k"] if isinstance(p["k"], Scalar) else Scalar(lw.b.const(p["k"], I64), True)
        k = lw.b.cast(k.value, I64)
        t = a.type.dtype
        out = alloc(lw, t, lw.dims(a))
        zero = lw.b.const(0, t)

        def body(idx, acc):
            diff = lw.b.op(SubI, idx[-1], idx[-2])  # j - i
            keep = lw.b.op(CmpI, diff, k, pred="le" if lower else "ge")
            store(lw, lw.b.op(Select, keep, load(lw, a, idx), zero), out, idx)

        nest(lw, lw.dims(a), body)
        return out
    return h


def _ndarray(lw, args, kwargs, node):
    p = bind(lw, "np.ndarray", args, kwargs, node, [("shape", REQUIRED), ("dtype", None)])
    kw = {} if is_none(p["dtype"]) else {"dtype": p["dtype"]}
    return CALLS[np.empty](lw, [p["shape"]], kw, node)


register_all({
    np.flip: _flip, np.fliplr: _flip_one("np.fliplr", 1), np.flipud: _flip_one("np.flipud", 0),
    np.swapaxes: _swapaxes, np.moveaxis: _moveaxis, np.expand_dims: _expand_dims,
    np.squeeze: _squeeze, np.tril: _triangle("np.tril", True),
    np.triu: _triangle("np.triu", False), np.ndarray: _ndarray,
})  # fmt: skip
