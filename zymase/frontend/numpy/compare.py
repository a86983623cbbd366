"""Comparisons and selection: ``np.where``, ``np.clip`` (NaN propagates), ``np.isnan``/
``isinf``/``isfinite``, ``np.isclose``/``allclose`` (NumPy 2's rule)."""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedError, ZymaseTypeError
from ...ir.ops import (
    AbsF,
    AddF,
    AndI,
    CmpF,
    ComplexIm,
    ComplexRe,
    IsFinite,
    IsInf,
    IsNan,
    MulF,
    OrI,
    Select,
    SubF,
)
from ...ir.types import I1
from ..emit import arith
from ..typing import Array, FVal, Scalar, result_type
from .arrays import (
    common_type,
    elementwise,
    elementwise2,
    float_type,
    map_elements,
    operand,
    sdtype,
)
from .params import REQUIRED, bind, is_none, static
from .reductions import reduce_all
from .registry import add_methods, register_all


def _where(lw, args, kwargs, node):
    if kwargs or len(args) not in (1, 3):
        raise lw.err(ZymaseTypeError, "np.where() takes (condition, x, y)", node)
    if len(args) == 1:
        raise lw.err(
            UnsupportedError,
            "np.where(condition) with one argument (np.nonzero) is "
            "not supported; use np.where(condition, x, y)",
            node,
        )
    cond, x, y = (operand(lw, a, node) for a in args)
    if not any(isinstance(v, Array) for v in (cond, x, y)):
        raise lw.err(
            UnsupportedError,
            "np.where() of three scalars makes a 0-d array, which is "
            "not supported; use `x if condition else y`",
            node,
        )
    t = result_type(sdtype(x), sdtype(y)).type

    def elem(c, a, b):
        c = lw.truth(c, node).value
        return Scalar(lw.b.op(Select, c, lw.b.cast(a.value, t), lw.b.cast(b.value, t)))

    return map_elements(lw, [cond, x, y], elem, t, node)


def clip(lw, a, lo, hi, node):
    """``np.clip(a, lo, hi)``: ``min(max(a, lo), hi)`` with NaN propagating, either bound None."""
    bounds = [(k, operand(lw, v, node)) for k, v in (("max", lo), ("min", hi)) if not is_none(v)]
    a = operand(lw, a, node)
    vals = [a] + [v for _, v in bounds]
    t = common_type(vals)
    if t.is_complex:
        raise lw.err(
            ZymaseTypeError,
            "np.clip() of complex numbers is not supported (they are not ordered)",
            node,
        )

    def elem(x, *bs):
        out = lw.b.cast(x.value, t)
        for (kind, _), bnd in zip(bounds, bs):
            out = arith(lw, kind, out, lw.b.cast(bnd.value, t))
        return Scalar(out, False)

    if all(isinstance(v, Scalar) for v in vals):
        return elem(*vals)
    return map_elements(lw, vals, elem, t, node)


def _clip(lw, args, kwargs, node):
    b = bind(
        lw,
        "np.clip",
        args,
        kwargs,
        node,
        [("a", REQUIRED), ("a_min", None), ("a_max", None), ("min", None), ("max", None)],
        {"out": None},
    )
    lo = b["min"] if is_none(b["a_min"]) else b["a_min"]
    hi = b["max"] if is_none(b["a_max"]) else b["a_max"]
    return clip(lw, b["a"], lo, hi, node)


def _m_clip(lw, a, args, kwargs, node):
    return _clip(lw, [a, *args], kwargs, node)


def _is_test(op):
    """np.isnan/isinf/isfinite (``op`` IsNan/IsInf/IsFinite): False/False/True for ints; complex
    tests both parts."""

    def elem(lw, x):
        t = x.type
        if not t.is_inexact:
            return lw.b.i1(op is IsFinite)
        if not t.is_complex:
            return lw.b.op(op, x.value)
        re, im = (lw.b.op(op, lw.b.op(p, x.value)) for p in (ComplexRe, ComplexIm))
        return lw.b.op(AndI if op is IsFinite else OrI, re, im)

    def h(lw, args, kwargs, node):
        b = bind(lw, op.name.replace("math.", "np."), args, kwargs, node, [("x", REQUIRED)])
        return elementwise(lw, b["x"], lambda x: elem(lw, x), I1, node)

    return h


def _isclose(lw, args, kwargs, node, fname="np.isclose"):
    """NumPy 2's ``isclose``: ``|a - b| <= atol + rtol * |b|`` with ``b`` finite, or ``a == b``
    (so inf is close to inf only, and equal values always), NaN close to NaN only with
    ``equal_nan``; computed in the inputs' float type (float32 stays float32, as in NumPy)."""
    p = bind(lw, fname, args, kwargs, node, [("a", REQUIRED), ("b", REQUIRED), ("rtol", 1e-05),
                                             ("atol", 1e-08), ("equal_nan", False)])
    equal_nan = static(lw, p["equal_nan"])
    if not isinstance(equal_nan, (bool, np.bool_)):
        raise lw.err(UnsupportedError, f"{fname}(equal_nan=...) must be True or False, known "
                     "at compile time", node)
    tols = []
    for k in ("rtol", "atol"):
        v = p[k] if isinstance(p[k], FVal) else Scalar(lw.b.f64(p[k]), True)
        if not isinstance(v, Scalar) or v.type.is_complex:
            raise lw.err(ZymaseTypeError, f"{fname}({k}=...) must be a real number", node)
        tols.append(v)
    b = lw.b

    def elem(x, y, t):
        ft = float_type(t)
        if ft.is_complex:
            raise lw.err(UnsupportedError, f"{fname}() of complex numbers is not supported",
                         node)
        x, y = b.cast(x.value, ft), b.cast(y.value, ft)
        rtol, atol = (b.cast(v.value, ft) for v in tols)
        diff = b.op(AbsF, b.op(SubF, x, y))
        tol = b.op(AddF, atol, b.op(MulF, rtol, b.op(AbsF, y)))
        close = b.op(AndI, b.op(CmpF, diff, tol, pred="le"),
                     b.op(IsFinite, y))
        r = b.op(OrI, close, b.op(CmpF, x, y, pred="eq"))  # NumPy 2's rule
        if equal_nan:
            both = b.op(AndI, b.op(IsNan, x), b.op(IsNan, y))
            r = b.op(OrI, r, both)
        return r

    return elementwise2(lw, p["a"], p["b"], elem, lambda t: I1, node)


def _allclose(lw, args, kwargs, node):
    close = _isclose(lw, args, kwargs, node, "np.allclose")
    if isinstance(close, Array):
        close = reduce_all(lw, "all", close, node)
    return Scalar(close.value, True)  # a Python bool, as NumPy's allclose returns


register_all(
    {
        np.where: _where,
        np.clip: _clip,
        np.isclose: _isclose,
        np.allclose: _allclose,
        np.isnan: _is_test(IsNan),
        np.isinf: _is_test(IsInf),
        np.isfinite: _is_test(IsFinite),
    }
)
add_methods({"clip": _m_clip})
