"""Reductions over arrays: sum, prod, max, min, mean, argmax, argmin, any, all (all elements or
along one axis), with NumPy's result types and NaN behaviour (max/min/argmax/argmin propagate or
point at the first NaN; max/min of an empty array raise ValueError); their keywords (``axis=``,
``keepdims=``; ``dtype=``/``out=`` are refused rather than ignored) as functions and as methods;
and Python's builtin ``max``/``min`` of an array."""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedError, ZymaseTypeError
from ...ir.core import Block, Region
from ...ir.ops import (
    AddF,
    AddI,
    AndI,
    Assert,
    CmpF,
    CmpI,
    DivF,
    For,
    IsNan,
    MulF,
    MulI,
    Not,
    OrI,
    Reshape,
    Select,
)
from ...ir.types import C64, C128, F32, F64, I1, I64, U64, ArrayType
from ..emit import alloc, load, nest, parallel_loop, store
from ..typing import Array, ListVal, Scalar, Tup
from .arrays import as_operand, list_to_array
from .params import REQUIRED, bind, const_axes, const_int, is_none, norm_axis, static
from .registry import add_methods, register_all

IDENTITY = {"sum": 0, "prod": 1, "any": False, "all": True}
WIDER = {F32: F64, C64: C128}  # accumulator types of float32/complex64 sums


def result_dtype(kind, t):
    if kind in ("sum", "prod"):  # (NumPy sums small ints in the platform's int or uint)
        return U64 if t.unsigned else I64 if (t.is_int or t.is_bool) else t
    if kind == "mean":
        return F64 if (t.is_int or t.is_bool) else t
    if kind in ("argmax", "argmin"):
        return I64
    if kind in ("any", "all"):
        return I1
    return t


def reduce_array(lw, kind, a: Array, axis, node):
    nd = a.type.ndim
    if axis is not None:
        if not -nd <= axis < nd:
            raise lw.err(UnsupportedError, f"axis {axis} is out of bounds for ndim={nd}", node)
        axis %= nd
        if nd == 1:
            axis = None
    dims = lw.dims(a)
    if axis is None:
        return Scalar(_reduce(lw, kind, a, dims, lambda idx: idx, dims), False)
    out_dims = dims[:axis] + dims[axis + 1:]
    if kind in ("max", "min", "argmax", "argmin"):  # NumPy raises even when out is empty
        ok = lw.b.op(CmpI, dims[axis], lw.b.i64(0), pred="gt")
        lw.b.create(Assert, [ok], [], {
            "kind": "ValueError",
            "msg": f"attempt to get {kind} of an empty sequence (axis {axis} has length 0)"})
    out = alloc(lw, result_dtype(kind, a.type.dtype), out_dims)

    def body(oidx, acc):
        def full(k):
            return oidx[:axis] + [k[0]] + oidx[axis:]
        r = _reduce(lw, kind, a, [dims[axis]], full, [dims[axis]])
        store(lw, r, out, oidx)

    nest(lw, out_dims, body, parallel=True)
    return out


def _reduce(lw, kind, a, loop_dims, to_index, all_dims):
    """Reduce ``a`` over the loop nest ``loop_dims`` (``to_index`` maps loop indices to indices
    into ``a``); returns the scalar Value."""
    b = lw.b
    t = a.type.dtype
    rt = result_dtype(kind, t)
    if kind in IDENTITY or kind == "mean":
        # float32 sums accumulate in float64: one float32 accumulator stops growing at 2**24
        # ones (NumPy sums float32 pairwise, which keeps the error small; this keeps it smaller)
        at = WIDER.get(rt, rt) if kind in ("sum", "mean") else rt
        init = b.const(IDENTITY.get(kind, 0), at)

        if kind in ("sum", "mean") and at.is_float and loop_dims:
            total = _lane_sum(lw, a, loop_dims, to_index, init)
        else:
            def body(idx, acc):
                x = b.cast(load(lw, a, to_index(idx)), at)
                return [_combine(lw, kind, acc[0], x)]

            total = nest(lw, loop_dims, body, [init], parallel=True)[0]
        if kind != "mean":
            return b.cast(total, rt)
        count = b.i64(1)
        for d in loop_dims:
            count = b.op(MulI, count, d)
        return b.cast(b.op(DivF, total, b.cast(count, at)), rt)
    return _extremum(lw, kind, a, loop_dims, to_index)


def python_extremum(lw, kind, a: Array, node):
    """Python's builtin ``max(a)``/``min(a)`` of a 1-d array: the first element, replaced by
    each later one that compares greater (smaller).  With NaNs the answer depends on where they
    are, as in CPython (``max([1, nan, 2])`` is 2, ``max([nan, 1])`` is nan); ``np.max``
    propagates NaN instead."""
    if a.type.ndim != 1:
        raise lw.err(ZymaseTypeError, f"{kind}() of a {a.type.ndim}-d array compares its rows, "
                     "which Python refuses (ambiguous truth value): use np." + kind, node)
    b = lw.b
    n = lw.dims(a)[0]
    ok = b.op(CmpI, n, b.i64(0), pred="gt")
    b.create(Assert, [ok], [], {"kind": "ValueError",
                                     "msg": f"{kind}() arg is an empty sequence"})
    t = a.type.dtype
    pred = "gt" if kind == "max" else "lt"

    def body(idx, acc):
        x = load(lw, a, idx)
        cmp = CmpF if t.is_inexact else CmpI
        better = b.op(cmp, x, acc[0], pred=pred)
        return [b.op(Select, better, x, acc[0])]

    first = load(lw, a, [b.i64(0)])
    return Scalar(nest(lw, [n], body, [first])[0], False)


LANES = 8


def _lane_sum(lw, a, loop_dims, to_index, init):
    """A float sum as NumPy's inner block adds: along the last loop dim, ``LANES`` interleaved
    partial sums (one vector register) over the largest multiple of ``LANES`` elements, combined
    pairwise, then the rest in order; rows (the outer dims) in order.  Vectorized code with
    about ``LANES`` times less rounding error than one running sum."""
    b = lw.b
    at = init.type
    *outer, n = loop_dims
    lanes = b.i64(LANES)
    m = b.op(AndI, n, b.i64(-LANES))  # n rounded down to a multiple of LANES (a power of 2)

    lw.mod.read_once += 1
    group = lw.mod.read_once

    def read(idx):  # each element is read once, by one of these loads (passes/fuse.py)
        v = load(lw, a, to_index(idx))
        v.op.attrs["read_once"] = group
        return b.cast(v, at)

    def row(oidx, acc):
        def block(j, parts):
            return [b.op(AddF, p, read(oidx + [b.op(AddI, j, b.i64(k))]))
                    for k, p in enumerate(parts)]

        parts = _stepped(lw, m, lanes, block, [init] * LANES, parallel=not outer)
        while len(parts) > 1:
            parts = [b.op(AddF, parts[k], parts[k + 1]) for k in range(0, len(parts), 2)]

        def rest(idx, acc2):
            return [b.op(AddF, acc2[0], read(oidx + idx))]

        tail = _from(lw, m, n, rest, parts)
        return [b.op(AddF, acc[0], tail[0])]

    return nest(lw, outer, row, [init], parallel=True)[0]


def _stepped(lw, hi, step, body, carried, parallel: bool = False):
    """``for j in range(0, hi, step)`` carrying ``carried``; ``body(j, acc) -> new acc``
    (``parallel``: ``acc`` holds sums, as ``emit.nest``'s)."""
    return _loop(lw, lw.b.i64(0), hi, step, lambda iv, acc: body(iv, acc), carried,
                 parallel and lw.options.parallel)


def _from(lw, lo, hi, body, carried):
    """``for i in range(lo, hi)``; ``body([i], acc) -> new acc``."""
    return _loop(lw, lo, hi, lw.b.i64(1), lambda iv, acc: body([iv], acc), carried)


def _loop(lw, lo, hi, step, body, carried, parallel: bool = False):
    b = lw.b
    blk = Block([I64, *[v.type for v in carried]])
    with b.at(blk):
        b.yield_(*body(blk.args[0], list(blk.args[1:])))
    op = b.create(For, [lo, hi, step, *carried], [v.type for v in carried],
                  regions=[Region([blk])])
    if parallel:
        op = parallel_loop(op)
    return list(op.results)


def _combine(lw, kind, acc, x):
    b = lw.b
    if kind == "any":
        return b.op(OrI, acc, b.cast(x, I1))
    if kind == "all":
        return b.op(AndI, acc, b.cast(x, I1))
    fl = acc.type.is_inexact
    name = {"sum": (AddI, AddF), "mean": (AddI, AddF),
            "prod": (MulI, MulF)}[kind][fl]
    return b.op(name, acc, x)


def _extremum(lw, kind, a, loop_dims, to_index):
    """max/min (value) or argmax/argmin (flat index); the first NaN wins, as in NumPy."""
    b = lw.b
    size = b.i64(1)
    for d in loop_dims:
        size = b.op(MulI, size, d)
    ok = b.op(CmpI, size, b.i64(0), pred="gt")
    b.create(Assert, [ok], [], {"kind": "ValueError",
                                     "msg": f"attempt to get {kind} of an empty sequence"})
    first = load(lw, a, to_index([b.i64(0)] * len(loop_dims)))
    is_max = kind in ("max", "argmax")
    t = a.type.dtype

    def body(idx, acc):
        best, best_i, flat = acc
        x = load(lw, a, to_index(idx))
        pred = "gt" if is_max else "lt"
        if t.is_inexact:
            better = b.op(CmpF, x, best, pred=pred)
            nan_x = b.op(IsNan, x)
            nan_best = b.op(IsNan, best)
            better = b.op(OrI, better, b.op(AndI, nan_x,
                                                   b.op(Not, nan_best)))
        else:
            better = b.op(CmpI, x, best, pred=pred)
        return [b.op(Select, better, x, best), b.op(Select, better, flat, best_i),
                b.op(AddI, flat, b.i64(1))]

    best, best_i, _ = nest(lw, loop_dims, body, [first, b.i64(0), b.i64(0)])
    return best if kind in ("max", "min") else best_i


# ---------------------------------------------------------------------- the NumPy functions


def reduce_all(lw, kind, v, node, axis=None, python=False):
    """sum/prod/max/min/mean/argmax/argmin of an array (all elements or along ``axis``)."""
    if isinstance(v, Scalar):
        return v
    if isinstance(v, ListVal):
        v = list_to_array(lw, v)
    if not isinstance(v, Array):
        raise lw.err(ZymaseTypeError, f"cannot reduce {lw.describe(v)}", node)
    if python and kind in ("max", "min"):
        return python_extremum(lw, kind, v, node)
    return reduce_array(lw, kind, v, axis, node)


def reduce_axis0(lw, kind, v, node):
    if isinstance(v, Array) and v.type.ndim > 1:
        return reduce_all(lw, kind, v, node, axis=0)
    return reduce_all(lw, kind, v, node)


def _reducer(kind):
    def h(lw, args, kwargs, node):
        axis = kwargs.get("axis", args[1] if len(args) > 1 else None)
        ax = None if axis is None else lw.constant_of(axis)
        if axis is not None and not isinstance(ax, int):
            raise lw.err(UnsupportedError, "axis= must be a constant integer", node)
        return reduce_all(lw, kind, as_operand(lw, args[0], node), node, ax)
    return h


def _checked_reducer(original, fname):
    """The reducer of numpy.py with its keywords checked: ``keepdims=`` is honoured,
    ``dtype=...`` and ``out=...`` are refused instead of being ignored."""

    def h(lw, args, kwargs, node):
        kwargs, keep = pop_keepdims(lw, kwargs, fname, node)
        b = bind(
            lw,
            fname,
            args,
            kwargs,
            node,
            [("a", REQUIRED), ("axis", None)],
            {"out": None, "dtype": None},
        )
        if isinstance(b["axis"], Tup):
            return _over_axes(lw, lambda v, kw: original(lw, [v], kw, node), b["a"], b["axis"],
                              keep, fname, node)
        axis = _axis_kw(lw, b["axis"], node)
        r = original(lw, [b["a"]], axis, node)
        return keep_dims(lw, r, b["a"], b["axis"], node) if keep else r

    return h


def _checked_method(original, name):
    def m(lw, a, args, kwargs, node):
        kwargs, keep = pop_keepdims(lw, kwargs, f"ndarray.{name}", node)
        b = bind(
            lw,
            f"ndarray.{name}",
            args,
            kwargs,
            node,
            [("axis", None)],
            {"out": None, "dtype": None},
        )
        if isinstance(b["axis"], Tup):
            return _over_axes(lw, lambda v, kw: original(lw, v, [], kw, node), a, b["axis"],
                              keep, f"ndarray.{name}", node)
        r = original(lw, a, [], _axis_kw(lw, b["axis"], node), node)
        return keep_dims(lw, r, a, b["axis"], node) if keep else r

    return m


def _over_axes(lw, reduce_one, a, axes, keep, fname, node):
    """A reduction over the tuple of axes ``axes`` (``np.sum(x, axis=(1, 2))``): one axis at a
    time from the last (sum, prod, max, min, any, all are exact that way, and a mean of
    equal-sized means is the mean), then the reduced axes kept as length 1 for ``keepdims``."""
    if fname.endswith(("argmax", "argmin")):
        raise lw.err(ZymaseTypeError, f"{fname}(axis=) takes one axis, not a tuple (as in "
                     "NumPy)", node)
    a = as_operand(lw, a, node)
    if isinstance(a, ListVal):
        a = list_to_array(lw, a)
    if not isinstance(a, Array):
        raise lw.err(ZymaseTypeError, f"{fname}(axis=...) needs an array, not "
                     f"{lw.describe(a)}", node)
    nd = a.type.ndim
    axes = sorted(const_axes(lw, axes, nd, f"{fname}(axis=)", node), reverse=True)
    if not axes:
        raise lw.err(UnsupportedError, f"{fname}(axis=()) reduces nothing; use the array "
                     "itself (or .astype for the result type)", node)
    r = a
    for ax in axes:
        r = reduce_one(r, {"axis": lw.const_int(ax)})
    return _ones_at(lw, r, axes, nd) if keep else r


def _ones_at(lw, r, axes, nd):
    """``r`` (a reduction of an ``nd``-dimensional array over ``axes``) with length-1 axes at
    ``axes``: a reshape of a fresh C-ordered result."""
    b = lw.b
    if isinstance(r, Scalar):
        out = alloc(lw, r.type, [b.i64(1)] * nd)
        store(lw, r.value, out, [b.i64(0)] * nd)
        return out
    if r.type.layout != "C":
        copy = alloc(lw, r.type.dtype, lw.dims(r))
        nest(lw, lw.dims(r), lambda idx, acc: store(lw, load(lw, r, idx), copy, idx))
        r = copy
    kept = iter(lw.dims(r))
    dims = [b.i64(1) if d in axes else next(kept) for d in range(nd)]
    t = ArrayType(r.type.dtype, nd, "C")
    return Array(b.create(Reshape, [r.value, *dims], [t]).result)


def pop_keepdims(lw, kwargs, fname, node):
    """(the other keywords, the value of ``keepdims=``: a bool known at compile time)."""
    if "keepdims" not in kwargs:
        return kwargs, False
    rest = dict(kwargs)
    k = static(lw, rest.pop("keepdims"))
    if not isinstance(k, (bool, np.bool_)):
        raise lw.err(UnsupportedError, f"{fname}(keepdims=...) must be True or False, known at "
                     "compile time", node)
    return rest, bool(k)


def keep_dims(lw, r, a, axis, node):
    """The reduction ``r`` of ``a`` with the reduced axis kept as a length-1 axis (all axes
    for ``axis=None``), as NumPy's ``keepdims=True``: a view of a fresh result."""
    if not isinstance(a, Array):
        return r  # a scalar's reduction is the scalar, and keepdims keeps it 0-d
    nd = a.type.ndim
    if is_none(axis):
        r = r if isinstance(r, Scalar) else Scalar(load(lw, r, []))
        return _ones_at(lw, r, range(nd), nd)
    return _ones_at(lw, r, [norm_axis(lw, const_int(lw, axis, "axis=", node), nd, node)], nd)


def _axis_kw(lw, axis, node):
    if is_none(axis):
        return {}
    return {"axis": lw.const_int(const_int(lw, axis, "axis=", node))}


REDUCER_NAMES = {
    np.sum: "sum",
    np.prod: "prod",
    np.max: "max",
    np.amax: "max",
    np.min: "min",
    np.amin: "min",
    np.mean: "mean",
    np.argmax: "argmax",
    np.argmin: "argmin",
    np.any: "any",
    np.all: "all",
}


def _method(kind):
    return lambda lw, a, args, kwargs, node: _reducer(kind)(lw, [a, *args], kwargs, node)


register_all({f: _checked_reducer(_reducer(kind), f"np.{f.__name__}")
              for f, kind in REDUCER_NAMES.items()})
add_methods({kind: _checked_method(_method(kind), kind)
             for kind in dict.fromkeys(REDUCER_NAMES.values())})
