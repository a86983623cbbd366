"""Reductions that skip NaN: ``np.nansum``, ``np.nanprod``, ``np.nanmean``, ``np.nanmax``,
``np.nanmin``, ``np.nanargmax``, ``np.nanargmin``, ``np.nanvar``, ``np.nanstd`` (all elements or
one axis, ``keepdims=``), and the weighted mean ``np.average(a, axis, weights, returned)`` and the
range ``np.ptp(a, axis)``.

NaN counts as NumPy counts it: ``nansum``/``nanprod`` replace it by 0/1 and reduce as ``np.sum``/
``np.prod`` (so an all-NaN slice sums to 0); ``nanmean`` divides the sum of the numbers by their
count (NaN for an all-NaN slice, where NumPy also warns); ``nanmax``/``nanmin`` are NumPy's
``fmax``/``fmin`` reductions (NaN for an all-NaN slice; an empty one raises ValueError);
``nanargmax``/``nanargmin`` read NaN as -inf/+inf and raise ValueError for an all-NaN slice;
``nanvar``/``nanstd`` are NumPy's two passes over the numbers with ``ddof`` (NaN where the
degrees of freedom are not positive).  Integer and boolean arrays hold no NaN: these are the
plain reductions.  Float32 data keeps float32 results; sums accumulate in float64 (NumPy sums
pairwise; both are close to the exact sum) and divisions by counts are done in float64, as
NumPy's.  Complex arrays are refused.  Derivatives flow to the numbers used (a NaN gets none).
"""

from __future__ import annotations

import ast

import numpy as np

from ...errors import UnsupportedError, ZymaseTypeError, ZymaseValueError
from ...ir.ops import (
    AddF,
    AddI,
    AndI,
    CmpF,
    CmpI,
    DivF,
    IsNan,
    MulF,
    Not,
    OrI,
    Select,
    Sqrt,
    SubF,
)
from ...ir.types import F32, F64, I1, I64
from ..emit import alloc, check, load, nest, size_of, store
from ..typing import Array, Scalar, SType, Tup, result_type
from .arrays import as_array, map_elements
from .params import REQUIRED, bind, const_int, is_none, norm_axis, static
from .reductions import keep_dims, pop_keepdims
from .registry import CALLS, register_all

WIDE = {F32: F64}  # the accumulator of float32 sums


def _lines(lw, a: Array, axis, types, line):
    """``line(loop_dims, to_index) -> [Value, ...]`` (one per type of ``types``) over all of
    ``a`` (axis None: Scalars) or over every line along ``axis`` (new arrays)."""
    dims = lw.dims(a)
    if axis is None:
        return [Scalar(v, False) for v in line(dims, lambda idx: idx)]
    out_dims = dims[:axis] + dims[axis + 1:]
    outs = [alloc(lw, t, out_dims) for t in types]

    def body(oidx, acc):
        vals = line([dims[axis]], lambda k: oidx[:axis] + k + oidx[axis:])
        for v, o in zip(vals, outs):
            store(lw, v, o, oidx)

    nest(lw, out_dims, body, parallel=True)
    return outs


def _params(lw, fname, args, kwargs, node, extra=()):
    """(bound arguments, the array, its axis (None or an int; None for a 1-D array), keepdims)."""
    kwargs, keep = pop_keepdims(lw, kwargs, fname, node)
    p = bind(lw, fname, args, kwargs, node, [("a", REQUIRED), ("axis", None), *extra])
    for k in ("dtype", "out"):
        if k in p and not is_none(p[k]):
            raise lw.err(UnsupportedError, f"{fname}({k}=...) is not supported", node)
    a = as_array(lw, p["a"], fname, node)
    if a.type.dtype.is_complex:
        raise lw.err(UnsupportedError, f"{fname}() of complex numbers is not supported", node)
    if isinstance(p["axis"], Tup):
        raise lw.err(UnsupportedError, f"{fname}(axis=...) with several axes is not supported: "
                     "give one axis or None", node)
    axis = None
    if not is_none(p["axis"]):
        axis = norm_axis(lw, const_int(lw, p["axis"], "axis", node), a.type.ndim, node)
        axis = None if a.type.ndim == 1 else axis
    return p, a, axis, keep


def _finish(lw, r, a, p, keep, node):
    return keep_dims(lw, r, a, p["axis"], node) if keep else r


def _plain(lw, fn, args, kwargs, node):
    """The NumPy reduction ``fn`` (no NaN in integer and boolean arrays)."""
    return CALLS[fn](lw, args, kwargs, node)


def _is_nan(lw, x):
    return lw.b.op(IsNan, x)


# ---------------------------------------------------------------------- nansum, nanprod


def _replaced(fname, fn, fill):
    def h(lw, args, kwargs, node):
        args, kwargs = list(args), dict(kwargs)
        if not args and "a" in kwargs:
            args.append(kwargs.pop("a"))
        if not args:
            raise lw.err(ZymaseTypeError, f"{fname}() is missing the argument `a`", node)
        a = as_array(lw, args[0], fname, node)
        if a.type.dtype.is_complex:
            raise lw.err(UnsupportedError, f"{fname}() of complex numbers is not supported",
                         node)
        if a.type.dtype.is_inexact:
            t = a.type.dtype
            c = lw.b.const(fill, t)
            a = map_elements(lw, [a], lambda x: Scalar(lw.b.op(
                Select, _is_nan(lw, x.value), c, x.value), False), t, node)
        return _plain(lw, fn, [a, *args[1:]], kwargs, node)
    return h


# ---------------------------------------------------------------------- nanmean


def _sum_count(lw, a, dims, to_index):
    """(sum of the numbers in ``a``'s accumulator type, their count as i64)."""
    b = lw.b
    t = a.type.dtype
    at = WIDE.get(t, t)

    def body(idx, acc):
        x = load(lw, a, to_index(idx))
        nan = _is_nan(lw, x)  # (NaN replaced before any arithmetic: no NaN in derivatives)
        s = b.op(AddF, acc[0], b.cast(b.op(Select, nan, b.const(0.0, t), x), at))
        n = b.op(AddI, acc[1], b.cast(b.op(Not, nan), I64))
        return [s, n]

    return nest(lw, dims, body, [b.const(0.0, at), b.i64(0)])


def _over_count(lw, total, count, t):
    """NumPy's ``_divide_by_count``: the sum (rounded to ``t``) over the count, in float64."""
    b = lw.b
    num = b.cast(b.cast(total, t), F64)
    return b.cast(b.op(DivF, num, b.cast(count, F64)), t)


def _nanmean(lw, args, kwargs, node):
    fname = "np.nanmean"
    p, a, axis, keep = _params(lw, fname, args, kwargs, node, [("dtype", None), ("out", None)])
    if not a.type.dtype.is_inexact:
        return _finish(lw, _plain(lw, np.mean, [a], _axis_kw(p), node), a, p, keep, node)
    t = a.type.dtype

    def line(dims, to_index):
        total, count = _sum_count(lw, a, dims, to_index)
        return [_over_count(lw, total, count, t)]

    return _finish(lw, _lines(lw, a, axis, [t], line)[0], a, p, keep, node)


def _axis_kw(p):
    return {} if is_none(p["axis"]) else {"axis": p["axis"]}


# ---------------------------------------------------------------------- nanmax, nanmin


def _nan_extremum(fname, fn, is_max):
    def h(lw, args, kwargs, node):
        p, a, axis, keep = _params(lw, fname, args, kwargs, node, [("out", None)])
        if not a.type.dtype.is_inexact:
            return _finish(lw, _plain(lw, fn, [a], _axis_kw(p), node), a, p, keep, node)
        b = lw.b
        t = a.type.dtype
        name = "fmax" if is_max else "fmin"

        def line(dims, to_index):
            check(lw, b.op(CmpI, size_of(lw, dims), b.i64(0), pred="gt"), "ValueError",
                  f"zero-size array to reduction operation {name} which has no identity")

            def body(idx, acc):
                x = load(lw, a, to_index(idx))
                better = b.op(CmpF, x, acc[0], pred="gt" if is_max else "lt")
                take = b.op(OrI, better, b.op(AndI, _is_nan(lw, acc[0]),
                                              b.op(Not, _is_nan(lw, x))))
                return [b.op(Select, take, x, acc[0])]

            return nest(lw, dims, body, [b.const(float("nan"), t)])

        return _finish(lw, _lines(lw, a, axis, [t], line)[0], a, p, keep, node)
    return h


def _nan_arg(fname, fn, is_max):
    def h(lw, args, kwargs, node):
        p, a, axis, keep = _params(lw, fname, args, kwargs, node, [("out", None)])
        if not a.type.dtype.is_inexact:
            kw = _axis_kw(p)
            if keep:
                kw["keepdims"] = lw.const_bool(True)
            return _plain(lw, fn, [a], kw, node)
        b = lw.b
        t = a.type.dtype
        fill = b.const(float("-inf") if is_max else float("inf"), t)

        def line(dims, to_index):
            def body(idx, acc):
                best, best_i, flat, seen = acc
                x = load(lw, a, to_index(idx))
                nan = _is_nan(lw, x)
                x = b.op(Select, nan, fill, x)  # (NumPy: NaN read as -inf for nanargmax)
                better = b.op(OrI, b.op(CmpI, flat, b.i64(0), pred="eq"),
                              b.op(CmpF, x, best, pred="gt" if is_max else "lt"))
                return [b.op(Select, better, x, best), b.op(Select, better, flat, best_i),
                        b.op(AddI, flat, b.i64(1)), b.op(OrI, seen, b.op(Not, nan))]

            _, best_i, _, seen = nest(lw, dims, body, [fill, b.i64(0), b.i64(0),
                                                       b.const(False, I1)])
            check(lw, seen, "ValueError", "All-NaN slice encountered")
            return [best_i]

        r = _lines(lw, a, axis, [I64], line)[0]
        return _finish(lw, r, a, p, keep, node)
    return h


# ---------------------------------------------------------------------- nanvar, nanstd


def _nan_variance(fname, fn, sqrt):
    def h(lw, args, kwargs, node):
        p, a, axis, keep = _params(lw, fname, args, kwargs, node,
                                   [("dtype", None), ("out", None), ("ddof", 0)])
        if not a.type.dtype.is_inexact:
            kw = {**_axis_kw(p), "ddof": p["ddof"]}
            return _finish(lw, _plain(lw, fn, [a], kw, node), a, p, keep, node)
        b = lw.b
        t = a.type.dtype
        at = WIDE.get(t, t)
        ddof = p["ddof"]
        if isinstance(ddof, int):
            ddof = b.f64(float(ddof))
        elif isinstance(ddof, Scalar) and not ddof.type.is_complex:
            ddof = b.cast(ddof.value, F64)
        else:
            raise lw.err(ZymaseTypeError, f"{fname}(ddof=...) must be a real number", node)

        def line(dims, to_index):
            total, count = _sum_count(lw, a, dims, to_index)
            mean = _over_count(lw, total, count, t)

            def body(idx, acc):
                x = load(lw, a, to_index(idx))
                dev = b.op(SubF, b.op(Select, _is_nan(lw, x), mean, x), mean)  # (NaN: 0)
                return [b.op(AddF, acc[0], b.cast(b.op(MulF, dev, dev), at))]

            ss = nest(lw, dims, body, [b.const(0.0, at)])[0]
            dof = b.op(SubF, b.cast(count, F64), ddof)
            v = b.cast(b.op(DivF, b.cast(b.cast(ss, t), F64), dof), t)
            v = b.op(Select, b.op(CmpF, dof, b.f64(0.0), pred="le"),
                     b.const(float("nan"), t), v)
            return [b.op(Sqrt, v) if sqrt else v]

        return _finish(lw, _lines(lw, a, axis, [t], line)[0], a, p, keep, node)
    return h


# ---------------------------------------------------------------------- average, ptp


def _average(lw, args, kwargs, node):
    fname = "np.average"
    p, a, axis, keep = _params(lw, fname, args, kwargs, node,
                               [("weights", None), ("returned", False)])
    returned = p["returned"] if isinstance(p["returned"], bool) else static(lw, p["returned"])
    if not isinstance(returned, (bool, np.bool_)):
        raise lw.err(UnsupportedError, f"{fname}(returned=...) must be True or False, known "
                     "when compiling", node)
    b = lw.b
    if is_none(p["weights"]):
        avg = _plain(lw, np.mean, [a], _axis_kw(p), node)
        if not returned:
            return _finish(lw, avg, a, p, keep, node)
        rt = avg.type if isinstance(avg, Scalar) else avg.type.dtype
        dims = lw.dims(a)
        n = size_of(lw, dims if axis is None else [dims[axis]])
        count = b.cast(b.cast(n, F64), rt)
        if isinstance(avg, Scalar):
            scl = Scalar(count, False)
        else:
            scl = alloc(lw, rt, lw.dims(avg))
            nest(lw, lw.dims(avg), lambda idx, acc: store(lw, count, scl, idx))
        return Tup((_finish(lw, avg, a, p, keep, node), _finish(lw, scl, a, p, keep, node)))
    w = as_array(lw, p["weights"], fname, node)
    if w.type.dtype.is_complex:
        raise lw.err(UnsupportedError, f"{fname}() with complex weights is not supported", node)
    st = result_type(SType(a.type.dtype, False), SType(w.type.dtype, False))
    if not a.type.dtype.is_inexact:
        st = result_type(st, SType(F64, False))
    rt = st.type
    at = WIDE.get(rt, rt)
    nd = a.type.ndim
    dims = lw.dims(a)
    if w.type.ndim == nd:
        same = b.const(True, I1)
        for x, y in zip(lw.dims(w), dims):
            same = b.op(AndI, same, b.op(CmpI, x, y, pred="eq"))
        if is_none(p["axis"]):
            check(lw, same, "TypeError",
                  "Axis must be specified when shapes of a and weights differ.")
        else:
            check(lw, same, "ValueError",
                  "Shape of weights must be consistent with shape of a along specified axis.")

        def weight(idx):
            return load(lw, w, idx)
    elif w.type.ndim == 1 and not is_none(p["axis"]):
        ax = norm_axis(lw, const_int(lw, p["axis"], "axis", node), nd, node)
        check(lw, b.op(CmpI, lw.dim(w, 0), dims[ax], pred="eq"), "ValueError",
              "Shape of weights must be consistent with shape of a along specified axis.")

        def weight(idx):
            return load(lw, w, [idx[ax]])
    elif is_none(p["axis"]):
        raise lw.err(ZymaseTypeError, f"{fname}(): Axis must be specified when shapes of a and "
                     "weights differ.", node)
    else:
        raise lw.err(ZymaseValueError, f"{fname}(): the weights must have the shape of a, or be "
                     "1-D with the length of a along axis", node)

    def line(loop_dims, to_index):
        def body(idx, acc):
            full = to_index(idx)
            x = b.cast(load(lw, a, full), rt)
            wt = b.cast(weight(full), rt)
            return [b.op(AddF, acc[0], b.cast(wt, at)),
                    b.op(AddF, acc[1], b.cast(b.op(MulF, x, wt), at))]

        sw, sxw = nest(lw, loop_dims, body, [b.const(0.0, at), b.const(0.0, at)])
        sw, sxw = b.cast(sw, rt), b.cast(sxw, rt)
        check(lw, b.op(CmpF, sw, b.const(0.0, rt), pred="ne"), "ZeroDivisionError",
              "Weights sum to zero, can't be normalized")
        return [b.op(DivF, sxw, sw), sw]

    avg, scl = _lines(lw, a, axis, [rt, rt], line)
    avg = _finish(lw, avg, a, p, keep, node)
    return Tup((avg, _finish(lw, scl, a, p, keep, node))) if returned else avg


def _ptp(lw, args, kwargs, node):
    fname = "np.ptp"
    kwargs, keep = pop_keepdims(lw, kwargs, fname, node)
    p = bind(lw, fname, args, kwargs, node, [("a", REQUIRED), ("axis", None), ("out", None)])
    if not is_none(p["out"]):
        raise lw.err(UnsupportedError, f"{fname}(out=...) is not supported", node)
    a = as_array(lw, p["a"], fname, node)
    if a.type.dtype.is_bool:
        raise lw.err(ZymaseTypeError, f"{fname}() of booleans: NumPy subtracts the minimum from "
                     "the maximum, which is not defined for booleans", node)
    if a.type.dtype.is_complex:
        raise lw.err(UnsupportedError, f"{fname}() of complex numbers is not supported", node)
    kw = _axis_kw(p)
    if keep:
        kw["keepdims"] = lw.const_bool(True)
    hi = _plain(lw, np.max, [a], kw, node)
    lo = _plain(lw, np.min, [a], kw, node)
    return lw.binop(ast.Sub(), hi, lo, node)


register_all({
    np.nansum: _replaced("np.nansum", np.sum, 0),
    np.nanprod: _replaced("np.nanprod", np.prod, 1),
    np.nanmean: _nanmean,
    np.nanmax: _nan_extremum("np.nanmax", np.max, True),
    np.nanmin: _nan_extremum("np.nanmin", np.min, False),
    np.nanargmax: _nan_arg("np.nanargmax", np.argmax, True),
    np.nanargmin: _nan_arg("np.nanargmin", np.argmin, False),
    np.nanvar: _nan_variance("np.nanvar", np.var, False),
    np.nanstd: _nan_variance("np.nanstd", np.std, True),
    np.average: _average,
    np.ptp: _ptp,
})  # fmt: skip
