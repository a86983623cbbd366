"""Arrays built by repeating others: ``np.meshgrid`` (``indexing="xy"`` or ``"ij"``, new
arrays), ``np.mgrid[0:n, 0:m]`` (one array, first axis the coordinate) and ``np.ogrid[...]``
(broadcastable ranges) of integer, float and ``a:b:kj`` (linspace) slices, ``np.tile``
(repetitions known when compiling) and ``np.repeat`` (one count for every element, with or
without ``axis``)."""

from __future__ import annotations

import ast

import numpy as np

from ...errors import UnsupportedError, ZymaseTypeError
from ...ir.ops import CmpI, FloorDivI, ModI, MulI, Reshape
from ...ir.types import F64, I64, ArrayType
from ..emit import alloc, check, load, nest, store
from ..typing import Array, Scalar, Tup
from .arrays import array_from_sequence, as_array, map_elements, operand
from .params import REQUIRED, bind, const_int, is_none, norm_axis, static
from .registry import CALLS, register_all
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


GRIDS = (np.mgrid, np.ogrid)


def grid(lw, obj, node) -> Array | Tup:
    """``np.mgrid[...]`` / ``np.ogrid[...]`` (``node`` the subscript): each slice is an
    ``np.arange`` (``a:b:s``) or an ``np.linspace`` (``a:b:kj``, k points, the end included);
    the dtype is the slices' common one (int64, or float64 when any part is a float)."""
    sparse = obj is np.ogrid
    name = "np.ogrid" if sparse else "np.mgrid"
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if not all(isinstance(p, ast.Slice) for p in parts):
        raise lw.err(UnsupportedError, f"{name}[...] takes slices (start:stop:step)", node)
    ranges, floats = [], False
    for p in parts:
        start = lw.expr(p.lower) if p.lower is not None else lw.const_int(0)
        stop = lw.expr(p.upper) if p.upper is not None else None
        step = lw.expr(p.step) if p.step is not None else lw.const_int(1)
        if stop is None:
            raise lw.err(UnsupportedError, f"{name}[...] needs each slice's stop", node)
        count = static(lw, step)
        if isinstance(count, complex):
            n = int(abs(count))
            if count.real != 0 or n != abs(count):
                raise lw.err(ZymaseTypeError, f"{name}[a:b:kj] needs k a whole number", node)
            ranges.append(CALLS[np.linspace](lw, [start, stop, lw.const_int(n)], {}, node))
        elif isinstance(step, Scalar) and step.type.is_complex:
            raise lw.err(UnsupportedError, f"{name}[a:b:kj] needs k known when compiling",
                         node)
        else:
            ranges.append(CALLS[np.arange](lw, [start, stop, step], {}, node))
        floats = floats or ranges[-1].type.dtype.kind == "f"
    t = F64 if floats else I64
    k = len(ranges)
    if sparse:
        ranges = [r if r.type.dtype == t else map_elements(lw, [r], lambda x: x, t, node)
                  for r in ranges]
        outs = []
        for d, r in enumerate(ranges):
            dims = [lw.b.i64(1)] * k
            dims[d] = lw.dim(r, 0)
            outs.append(Array(lw.b.create(Reshape, [r.value, *dims],
                                          [ArrayType(t, k, "C")]).result))
        return outs[0] if k == 1 and not isinstance(node.slice, ast.Tuple) else Tup(tuple(outs))
    if k == 1 and not isinstance(node.slice, ast.Tuple):
        return ranges[0]
    dims = [lw.dim(r, 0) for r in ranges]
    out = alloc(lw, t, [lw.b.i64(k), *dims])
    for d, r in enumerate(ranges):
        nest(lw, dims, lambda idx, acc, d=d, r=r: store(
            lw, lw.b.cast(load(lw, r, [idx[d]]), t), out, [lw.b.i64(d), *idx]))
    return out


register_all({np.meshgrid: _meshgrid, np.tile: _tile, np.repeat: _repeat})
