"""Order statistics: ``np.quantile(a, q)`` and ``np.percentile(a, q)`` (``q / 100``), over all
elements or along one axis, ``keepdims=``, ``q`` a number or a 1-D array (the result then has
``len(q)`` first, as NumPy's), with the methods ``"linear"`` (default), ``"lower"``,
``"higher"``, ``"nearest"`` and ``"midpoint"``; the other methods and ``weights=`` are refused.

Each line along the axis is sorted (``np.sort``: ``library.argsort_stable`` and a gather) and
read at NumPy's indices with NumPy's arithmetic (``library.quantile_positions``/``_lerp``, the
same virtual index, weight and two-sided lerp, so values match to the last bit); a line holding
a NaN gives NaN.  The derivative with respect to ``a`` is that of the interpolation of the two
sorted neighbours (weights ``1 - gamma`` and ``gamma``), scattered back through the sort.
Result types are NumPy's: the lerp is computed in the type of ``a`` and ``q`` promoted (a
Python float ``q`` is weak: float32 data gives float32), the picking methods keep ``a``'s type.
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedError, ZymaseTypeError
from ...ir.ops import AndI, CmpF, CmpI, DivF, Transpose
from ...ir.types import F64, I1, I64
from ..emit import check, load, nest, size_of
from ..library import quantile_indices, quantile_lerp, quantile_pick, quantile_positions
from ..typing import Array, Scalar, SType, Tup, result_type
from .arrays import array_from_sequence, as_array, map_elements, operand
from .params import REQUIRED, bind, const_int, is_none, norm_axis, static
from .registry import register_all
from .shape import reshaped

METHODS = ("linear", "lower", "higher", "nearest", "midpoint")
OTHER_METHODS = ("inverted_cdf", "averaged_inverted_cdf", "closest_observation",
                 "interpolated_inverted_cdf", "hazen", "weibull", "median_unbiased",
                 "normal_unbiased")
PICK = {"lower": 0, "higher": 1, "nearest": 2}


def _method(lw, v, fname, node) -> str:
    m = v if isinstance(v, str) else static(lw, v)
    if m in METHODS:
        return m
    names = ", ".join(map(repr, METHODS))
    if m in OTHER_METHODS:
        raise lw.err(UnsupportedError, f"{fname}(method={m!r}) is not supported in compiled "
                     f"code: the methods are {names}", node)
    raise lw.err(ZymaseTypeError, f"{fname}(): method must be one of {names} (a constant "
                 "string)", node)


def _rows(lw, a: Array, axis):
    """``a`` as a 2-D (lines, n) array whose rows are the lines along ``axis`` (all of ``a``
    when None), and the shape of the result of one quantile (the other axes)."""
    b = lw.b
    dims = lw.dims(a)
    if axis is None:
        return reshaped(lw, a, [b.i64(1), size_of(lw, dims)]), []
    nd = a.type.ndim
    rest = [d for d in range(nd) if d != axis]
    if axis != nd - 1:
        a = Array(b.op(Transpose, a.value, perm=[*rest, axis]))
    other = [dims[d] for d in rest]
    return reshaped(lw, a, [size_of(lw, other), dims[axis]]), other


def _q_array(lw, q, vt, scale, fname, node) -> Array:
    """``q`` as a 1-D array of ``vt`` (divided by ``scale``), checked in [0, 1] as NumPy."""
    b = lw.b
    arr = array_from_sequence(lw, Tup((q,)), node) if isinstance(q, Scalar) else q
    div = b.const(float(scale), vt)
    arr = map_elements(lw, [arr], lambda x: Scalar(
        b.op(DivF, b.cast(x.value, vt), div) if scale != 1 else b.cast(x.value, vt)), vt, node)
    msg = ("Percentiles must be in the range [0, 100]" if scale == 100 else
           "Quantiles must be in the range [0, 1]")

    def body(idx, acc):
        x = load(lw, arr, idx)
        ok = b.op(AndI, b.op(CmpF, x, b.const(0.0, vt), pred="ge"),
                  b.op(CmpF, x, b.const(1.0, vt), pred="le"))  # (NaN fails both)
        check(lw, ok, "ValueError", msg)

    nest(lw, lw.dims(arr), body)
    return arr


def quantile(lw, a: Array, q, axis, method, keepdims, scale, fname, node):
    b = lw.b
    weak = isinstance(q, Scalar) and q.weak
    qt = q.type if isinstance(q, Scalar) else q.type.dtype
    vt = qt if qt.is_inexact else F64  # the type of the virtual index
    take = method in PICK or (method == "linear" and scale == 1 and not qt.is_inexact)
    if not take and a.type.dtype == I1:
        raise lw.err(ZymaseTypeError, f"{fname}() of booleans with method={method!r}: NumPy's "
                     "interpolation subtracts them, which is not defined for booleans (cast "
                     "with .astype(float), or use method='lower'/'higher'/'nearest')", node)
    qa = _q_array(lw, q, vt, scale, fname, node)
    x, other = _rows(lw, a, axis)
    n = lw.dim(x, 1)
    check(lw, b.op(CmpI, n, b.i64(0), pred="gt"), "IndexError",
          "index -1 is out of bounds for axis 0 with size 0")
    count = Scalar(n, True)  # (a Python int in the library routines)
    if take:
        mode = Scalar(b.i64(PICK.get(method, 0)), True)
        idx = lw.call_library(quantile_indices, [count, qa, mode], node)
        out = lw.call_library(quantile_pick, [x, idx], node)
    else:
        rt = result_type(SType(a.type.dtype, False), SType(vt, weak)).type
        mid = Scalar(b.i1(method == "midpoint"), True)
        lo, hi, gamma, rest, up = lw.call_library(quantile_positions, [count, qa, mid],
                                                  node).items
        if rt != vt:
            gamma, rest = (map_elements(lw, [v], lambda s: s, rt, node) for v in (gamma, rest))
        out = lw.call_library(quantile_lerp, [x, lo, hi, gamma, rest, up], node)
    if keepdims:
        nd = a.type.ndim
        other = [b.i64(1)] * nd if axis is None else \
            other[:axis] + [b.i64(1)] + other[axis:]
    if isinstance(q, Array):
        return reshaped(lw, out, [lw.dim(out, 0), *other])
    if not other:
        return Scalar(load(lw, out, [b.i64(0), b.i64(0)]), False)
    return reshaped(lw, out, other)


def _quantile(fname, scale):
    def h(lw, args, kwargs, node):
        p = bind(lw, fname, args, kwargs, node,
                 [("a", REQUIRED), ("q", REQUIRED), ("axis", None), ("out", None),
                  ("overwrite_input", False), ("method", "linear"), ("keepdims", False),
                  ("weights", None)])
        if not is_none(p["out"]):
            raise lw.err(UnsupportedError, f"{fname}(out=...) is not supported: assign the "
                         f"result (out[...] = {fname}(...))", node)
        if not is_none(p["weights"]):
            raise lw.err(UnsupportedError, f"{fname}(weights=...) is not supported (NumPy "
                         "takes weights only with method='inverted_cdf')", node)
        method = _method(lw, p["method"], fname, node)
        keep = static(lw, p["keepdims"]) if not isinstance(p["keepdims"], bool) else \
            p["keepdims"]
        if not isinstance(keep, (bool, np.bool_)):
            raise lw.err(UnsupportedError, f"{fname}(keepdims=...) must be True or False, "
                         "known when compiling", node)
        a = as_array(lw, p["a"], fname, node)
        if a.type.dtype.is_complex:
            raise lw.err(ZymaseTypeError, f"{fname}(): a must be an array of real numbers",
                         node)
        if isinstance(p["axis"], Tup):
            raise lw.err(UnsupportedError, f"{fname}(axis=...) with several axes is not "
                         "supported: give one axis or None (or move the axes together and "
                         "reshape)", node)
        axis = None if is_none(p["axis"]) else \
            norm_axis(lw, const_int(lw, p["axis"], "axis", node), a.type.ndim, node)
        q = operand(lw, p["q"], node)
        if isinstance(q, Array) and q.type.ndim != 1:
            raise lw.err(ZymaseTypeError, f"{fname}(): q must be a scalar or 1d", node)
        qt = q.type if isinstance(q, Scalar) else q.type.dtype
        if qt.is_complex:
            raise lw.err(ZymaseTypeError, f"{fname}(): q must be real", node)
        if qt == I1:  # (NumPy takes True as 1)
            q = Scalar(lw.b.cast(q.value, I64), q.weak) if isinstance(q, Scalar) else \
                map_elements(lw, [q], lambda s: s, I64, node)
        return quantile(lw, a, q, axis, method, bool(keep), scale, fname, node)
    return h


register_all({np.quantile: _quantile("np.quantile", 1),
              np.percentile: _quantile("np.percentile", 100)})
