"""Ranges: ``np.arange`` (NumPy's fill: ``start + i * delta``) and ``np.linspace`` (NumPy's formula,
``retstep`` included); ``np.logspace`` and ``np.geomspace`` of numbers, computed as NumPy computes
them (``base ** linspace``; ``geomspace`` through ``log10`` with its ends set exactly)."""

from __future__ import annotations

import ast

import numpy as np

from ...errors import UnsupportedError, ZymaseTypeError
from ...ir.ops import (
    AddF,
    AndI,
    Ceil,
    CmpF,
    CmpI,
    DivF,
    Floor,
    FloorDivI,
    IsFinite,
    Log10,
    MaxI,
    MulF,
    NegI,
    Not,
    Pow,
    Select,
    Sign,
    SubF,
    SubI,
)
from ...ir.types import F64, I64
from ..emit import alloc, arith, check, load, nest, store
from ..typing import Array, Scalar, SType, Tup, result_type
from .arrays import dtype_arg, map_elements, operand, sdtype
from .params import REQUIRED, bind, is_none, static
from .registry import register_all


def _real_scalar(lw, v, what, node) -> Scalar:
    if not isinstance(v, Scalar) or v.type.is_complex:
        raise lw.err(ZymaseTypeError, f"{what} must be a real number, not {lw.describe(v)}", node)
    return v


def _arange_length(lw, start, stop, step, ct):
    """NumPy's ``ceil((stop - start) / step)``, at least 0 (step 0: ZeroDivisionError)."""
    b = lw.b
    x0, x1, dx = (b.cast(v.value, ct) for v in (start, stop, step))
    check(
        lw,
        b.op(CmpF if ct.is_inexact else CmpI, dx, b.const(0, ct), pred="ne"),
        "ZeroDivisionError",
        "division by zero",
    )
    if ct.is_int:
        n = b.op(NegI, b.op(FloorDivI, b.op(SubI, x0, x1), dx))
    else:
        q = b.op(Ceil, b.op(DivF, b.op(SubF, x1, x0), dx))
        check(lw, b.op(IsFinite, q), "ValueError", "arange: cannot compute length")
        n = b.cast(q, I64)
    return b.op(MaxI, n, b.i64(0))


def arange(lw, start, stop, step, dtype, node) -> Array:
    """Values ``start, start + step, start + i * delta`` with ``delta`` the difference of the first
    two in the result type (NumPy's fill).  Without ``dtype`` the result is float64 or int64
    whatever the arguments' NumPy types (as NumPy does)."""
    b = lw.b
    vals = [_real_scalar(lw, v, "np.arange() argument", node) for v in (start, stop, step)]
    ct = F64 if any(v.type.is_inexact for v in vals) else I64  # NumPy: Python float or int
    t = dtype or ct
    if t.is_bool or t.is_complex:
        raise lw.err(UnsupportedError, f"np.arange() of {t.np_dtype.name} is not supported", node)
    n = _arange_length(lw, *vals, ct)
    v0 = b.cast(vals[0].value, t)
    v1 = b.cast(arith(lw, "add", *(b.cast(v.value, ct) for v in (vals[0], vals[2]))), t)
    delta = arith(lw, "sub", v1, v0)
    out = alloc(lw, t, [n])

    def body(idx, acc):
        i = idx[0]
        y = arith(lw, "add", v0, arith(lw, "mul", b.cast(i, t), delta))
        y = b.op(Select, b.op(CmpI, i, b.i64(1), pred="eq"), v1, y)
        store(lw, b.op(Select, b.op(CmpI, i, b.i64(0), pred="eq"), v0, y), out, idx)

    nest(lw, [n], body)
    return out


def _arange(lw, args, kwargs, node):
    p = bind(
        lw,
        "np.arange",
        args,
        kwargs,
        node,
        [("start", REQUIRED), ("stop", None), ("step", None), ("dtype", None)],
    )
    start, stop = (lw.const_int(0), p["start"]) if is_none(p["stop"]) else (p["start"], p["stop"])
    step = lw.const_int(1) if is_none(p["step"]) else p["step"]
    dt = None if is_none(p["dtype"]) else dtype_arg(lw, p["dtype"], None, node)
    return arange(lw, start, stop, step, dt, node)


def linspace(lw, start, stop, num, endpoint: bool, dtype, node):
    """NumPy's formula: ``step = (stop - start) / div``, ``y = arange(num) * step + start`` (or
    ``arange / div * delta`` when the step underflows to 0), the last value set to ``stop``.
    Returns (array, step)."""
    b = lw.b
    dt = result_type(sdtype(start), sdtype(stop)).type
    dt = dt if dt.is_inexact else F64
    t = dtype or dt
    check(
        lw,
        b.op(CmpI, num, b.i64(0), pred="ge"),
        "ValueError",
        "Number of samples must be non-negative",
    )
    div = b.op(SubI, num, b.i64(1)) if endpoint else num
    s0, s1 = b.cast(start.value, dt), b.cast(stop.value, dt)
    step, div_t, use_div, mult, div_pos = _linspace_scale(b, b.op(SubF, s1, s0), div, dt)
    out = alloc(lw, t, [num])
    many = b.op(CmpI, num, b.i64(1), pred="gt")
    end = b.op(Select, many, b.op(SubI, num, b.i64(1)), b.i64(-1))

    def body(idx, acc):
        yi = b.cast(idx[0], dt)
        y = b.op(Select, use_div, b.op(DivF, yi, div_t), yi)
        y = b.op(AddF, b.op(MulF, y, mult), s0)
        if endpoint:
            y = b.op(Select, b.op(CmpI, idx[0], end, pred="eq"), s1, y)
        if t.is_int:
            y = b.op(Floor, y)
        store(lw, b.cast(y, t), out, idx)

    nest(lw, [num], body)
    return out, b.op(Select, div_pos, step, b.const(float("nan"), dt))


def _linspace_scale(b, delta, div, dt):
    """(step, div as ``dt``, use_div, mult, div > 0): ``y_i = (i / div if use_div else i) * mult``
    covers NumPy's three cases (a step, a step that underflows to 0, no step)."""
    div_t = b.cast(b.op(MaxI, div, b.i64(1)), dt)
    step = b.op(DivF, delta, div_t)
    div_pos = b.op(CmpI, div, b.i64(0), pred="gt")
    step_zero = b.op(CmpF, step, b.const(0, dt), pred="eq")
    use_div = b.op(AndI, div_pos, step_zero)
    use_step = b.op(AndI, div_pos, b.op(Not, step_zero))
    return step, div_t, use_div, b.op(Select, use_step, step, delta), div_pos


def _linspace(lw, args, kwargs, node):
    p = bind(
        lw,
        "np.linspace",
        args,
        kwargs,
        node,
        [
            ("start", REQUIRED),
            ("stop", REQUIRED),
            ("num", 50),
            ("endpoint", True),
            ("retstep", False),
            ("dtype", None),
        ],
        {"axis": 0},
    )
    start, stop = (operand(lw, p[k], node) for k in ("start", "stop"))
    if not (isinstance(start, Scalar) and isinstance(stop, Scalar)):
        raise lw.err(UnsupportedError, "np.linspace() of arrays is not supported", node)
    num = lw.const_int(50) if isinstance(p["num"], int) else p["num"]
    if not (isinstance(num, Scalar) and num.type.is_int):
        raise lw.err(ZymaseTypeError, "np.linspace(num=...) must be an integer", node)
    flags = [static(lw, p[k]) for k in ("endpoint", "retstep")]
    if not all(isinstance(f, bool) for f in flags):
        raise lw.err(UnsupportedError, "np.linspace(endpoint=, retstep=) must be constants", node)
    dt = None if is_none(p["dtype"]) else dtype_arg(lw, p["dtype"], None, node)
    if dt is not None and (dt.is_bool or (dt.is_int and sdtype(start).type.is_complex)):
        raise lw.err(
            UnsupportedError, f"np.linspace(dtype={dt.np_dtype.name}) is not supported", node
        )
    out, step = linspace(lw, start, stop, lw.b.cast(num.value, I64), flags[0], dt, node)
    return Tup((out, Scalar(step, False))) if flags[1] else out


register_all({np.arange: _arange, np.linspace: _linspace})


# ---------------------------------------------------------------------- logspace, geomspace


def _space_args(lw, p, fname, node):
    """(start, stop, num as i64, endpoint, dtype or None) of ``np.logspace``/``np.geomspace``,
    ``start``/``stop`` numbers (arrays of them are not supported)."""
    start, stop = (operand(lw, p[k], node) for k in ("start", "stop"))
    if not (isinstance(start, Scalar) and isinstance(stop, Scalar)):
        raise lw.err(UnsupportedError, f"{fname}() of arrays is not supported (give numbers)",
                     node)
    num = lw.const_int(50) if isinstance(p["num"], int) else p["num"]
    if not (isinstance(num, Scalar) and num.type.is_int):
        raise lw.err(ZymaseTypeError, f"{fname}(num=...) must be an integer", node)
    endpoint = p["endpoint"] if isinstance(p["endpoint"], bool) else static(lw, p["endpoint"])
    if not isinstance(endpoint, bool):
        raise lw.err(UnsupportedError, f"{fname}(endpoint=) must be a constant", node)
    dt = None if is_none(p["dtype"]) else dtype_arg(lw, p["dtype"], None, node)
    if dt is not None and dt.is_bool:
        raise lw.err(UnsupportedError, f"{fname}(dtype=bool) is not supported", node)
    return start, stop, lw.b.cast(num.value, I64), endpoint, dt


def _logspace(lw, args, kwargs, node):
    """NumPy's ``power(base, linspace(start, stop, num))``, then ``astype(dtype)``: the type is
    that of ``start``/``stop``/``base`` as NumPy promotes them (Python numbers weak)."""
    p = bind(lw, "np.logspace", args, kwargs, node,
             [("start", REQUIRED), ("stop", REQUIRED), ("num", 50), ("endpoint", True),
              ("base", 10.0), ("dtype", None)], {"axis": 0})
    start, stop, num, endpoint, dt = _space_args(lw, p, "np.logspace", node)
    base = lw.pyvalue(p["base"], node) if isinstance(p["base"], (int, float)) else \
        operand(lw, p["base"], node)
    if not isinstance(base, Scalar):
        raise lw.err(UnsupportedError, "np.logspace(base=...) of an array is not supported "
                     "(give a number)", node)
    if any(v.type.is_complex for v in (start, stop, base)):
        raise lw.err(UnsupportedError, "np.logspace() of complex numbers is not supported", node)
    y, _ = linspace(lw, start, stop, num, endpoint, None, node)
    out = lw.binop(ast.Pow(), base, y, node)
    if dt is not None and dt != out.type.dtype:
        out = map_elements(lw, [out], lambda x: Scalar(lw.b.cast(x.value, dt), False), dt, node)
    return out


def _geomspace(lw, args, kwargs, node):
    """NumPy's construction: ``start``/``stop`` divided by the sign of ``start``, the
    ``logspace`` of their ``log10``, the ends set to the numbers themselves, times the sign
    (float64, or float32 when ``start``, ``stop`` and ``dtype`` are float32)."""
    p = bind(lw, "np.geomspace", args, kwargs, node,
             [("start", REQUIRED), ("stop", REQUIRED), ("num", 50), ("endpoint", True),
              ("dtype", None)], {"axis": 0})
    start, stop, num, endpoint, dt = _space_args(lw, p, "np.geomspace", node)
    if start.type.is_complex or stop.type.is_complex:
        raise lw.err(UnsupportedError, "np.geomspace() of complex numbers is not supported",
                     node)
    b = lw.b
    st = result_type(SType(start.type, False), SType(stop.type, False))
    st = result_type(result_type(st, SType(F64, True)), SType(dt or F64, False))
    ct = st.type
    for v in (start, stop):
        check(lw, b.op(CmpF if v.type.is_inexact else CmpI, v.value, b.const(0, v.type),
                       pred="ne"), "ValueError", "Geometric sequence cannot include zero")
    s0, s1 = b.cast(start.value, ct), b.cast(stop.value, ct)
    sign = b.op(Sign, s0)
    s0, s1 = b.op(DivF, s0, sign), b.op(DivF, s1, sign)
    logs = [Scalar(b.op(Log10, s), False) for s in (s0, s1)]
    y, _ = linspace(lw, *logs, num, endpoint, None, node)
    ten = b.const(10.0, ct)
    last = b.op(SubI, num, b.i64(1))
    many = b.op(CmpI, num, b.i64(1), pred="gt")
    t = dt or ct
    out = alloc(lw, t, [num])

    def body(idx, acc):
        i = idx[0]
        r = b.op(Pow, ten, b.cast(load(lw, y, idx), ct))
        r = b.op(Select, b.op(CmpI, i, b.i64(0), pred="eq"), s0, r)
        if endpoint:
            r = b.op(Select, b.op(AndI, many, b.op(CmpI, i, last, pred="eq")), s1, r)
        store(lw, b.cast(b.op(MulF, r, sign), t), out, idx)

    nest(lw, [num], body)
    return out


register_all({np.logspace: _logspace, np.geomspace: _geomspace})
