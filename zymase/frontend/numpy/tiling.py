"""Arrays built by repeating others: ``np.meshgrid`` (``indexing="xy"`` or ``"ij"``, new
arrays), ``np.tile`` (repetitions known when compiling) and ``np.repeat`` (one count for every
element, with or without ``axis``)."""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedError, ZymaseTypeError
from ...ir.ops import CmpI, FloorDivI, ModI, MulI
from ...ir.types import I64
from ..emit import alloc, check, load, nest, store
from ..typing import Array, Scalar, Tup
from .arrays import array_from_sequence, as_array, operand
from .params import REQUIRED, bind, const_int, is_none, norm_axis, static
from .registry import register_all
from .shape import ravel


def _flat(lw, v, fname, node) -> Array:
    v = operand(lw, v, node)
    if isinstance(v, Scalar):
        return array_from_sequence(lw, Tup((v,)), node)
    return v if v.type.ndim == 1 else ravel(lw, v)


def _meshgrid(lw, args, kwargs, node):
    kwargs = dict(kwargs)
    indexing = static(lw, kwargs.pop("indexing")) if "indexing" in kwargs else "xy"
    sparse = static(lw, kwargs.pop("sparse")) if "sparse" in kwargs else False
    kwargs.pop("copy", None)
    if kwargs:
        raise lw.err(ZymaseTypeError, f"np.meshgrid() got unexpected keywords {sorted(kwargs)}",
                     node)
    if indexing not in ("xy", "ij"):
        raise lw.err(ZymaseTypeError, "np.meshgrid(indexing=) is 'xy' or 'ij'", node)
    if sparse:
        raise lw.err(UnsupportedError, "np.meshgrid(sparse=True) is not supported; use "
                     "x[:, None] and y[None, :]", node)
    xs = [_flat(lw, a, "np.meshgrid", node) for a in args]
    dims = [lw.dim(x, 0) for x in xs]
    axis_of = list(range(len(xs)))
    if indexing == "xy" and len(xs) > 1:
        dims[0], dims[1] = dims[1], dims[0]
        axis_of[0], axis_of[1] = 1, 0
    outs = []
    for x, ax in zip(xs, axis_of):
        out = alloc(lw, x.type.dtype, dims)
        nest(lw, dims, lambda idx, acc, x=x, ax=ax, out=out: store(
            lw, load(lw, x, [idx[ax]]), out, idx))
        outs.append(out)
    return Tup(tuple(outs))


def _tile(lw, args, kwargs, node):
    p = bind(lw, "np.tile", args, kwargs, node, [("A", REQUIRED), ("reps", REQUIRED)])
    a = as_array(lw, p["A"], "np.tile", node)
    reps = p["reps"].items if isinstance(p["reps"], Tup) else (p["reps"],)
    reps = [const_int(lw, r, "reps", node) for r in reps]
    if any(r < 0 for r in reps):
        raise lw.err(ZymaseTypeError, "np.tile(): negative repetitions", node)
    nd = max(a.type.ndim, len(reps))
    reps = [1] * (nd - len(reps)) + reps
    src = [lw.b.i64(1)] * (nd - a.type.ndim) + lw.dims(a)
    lead = nd - a.type.ndim
    dims = [lw.b.op(MulI, d, lw.b.i64(r)) for d, r in zip(src, reps)]
    out = alloc(lw, a.type.dtype, dims)

    def body(idx, acc):
        at = [lw.b.op(ModI, i, d) for i, d in zip(idx[lead:], src[lead:])]
        store(lw, load(lw, a, at), out, idx)

    nest(lw, dims, body)
    return out


def _repeat(lw, args, kwargs, node):
    p = bind(lw, "np.repeat", args, kwargs, node,
             [("a", REQUIRED), ("repeats", REQUIRED), ("axis", None)])
    a = operand(lw, p["a"], node)
    if isinstance(a, Scalar):
        a = array_from_sequence(lw, Tup((a,)), node)
    r = operand(lw, p["repeats"], node)
    if not isinstance(r, Scalar) or r.type.is_inexact:
        raise lw.err(UnsupportedError, "np.repeat() with one count per element is not "
                     "supported (the result's size depends on the counts); give one integer",
                     node)
    k = lw.b.cast(r.value, I64)
    check(lw, lw.b.op(CmpI, k, lw.b.i64(0), pred="ge"), "ValueError",
          "repeats may not contain negative values.")
    if is_none(p["axis"]):
        a = a if a.type.ndim == 1 else ravel(lw, a)
        axis = 0
    else:
        axis = norm_axis(lw, const_int(lw, p["axis"], "axis", node), a.type.ndim, node)
    src = lw.dims(a)
    dims = list(src)
    dims[axis] = lw.b.op(MulI, src[axis], k)
    out = alloc(lw, a.type.dtype, dims)

    def body(idx, acc):
        at = list(idx)
        at[axis] = lw.b.op(FloorDivI, idx[axis], k)
        store(lw, load(lw, a, at), out, idx)

    nest(lw, dims, body)
    return out


register_all({np.meshgrid: _meshgrid, np.tile: _tile, np.repeat: _repeat})
