"""``scipy.special`` in compiled code: the elementwise functions ``expit``, ``logit``,
``log_expit``, ``erf``, ``erfc``, ``gammaln``, ``digamma`` (``psi``), ``xlogy`` and ``xlog1py``
(one ``math`` op each, or a few with a select where SciPy switches formulas for accuracy), and the
reductions ``logsumexp`` (``axis=``, ``keepdims=``, ``b=``), ``softmax`` and ``log_softmax``
(``axis=``).  Results have SciPy's types: float32 stays float32, integers and booleans give
float64, numbers give NumPy floats; complex numbers are refused.

Derivatives come from the ops' rules: each function is built from differentiable ops (a select
sends the derivative to the branch it takes), so forward and reverse mode need nothing here.

``import zymase`` does not import SciPy: the handlers are registered by name
(``registry.register_lazy``) and bound to SciPy's objects when a program that calls them has
imported ``scipy.special``.
"""

from __future__ import annotations

import ast
import math

import numpy as np

from ...errors import UnsupportedError
from ...ir.ops import (
    AbsF,
    AddF,
    AndI,
    CmpF,
    CmpI,
    Digamma,
    DivF,
    Erf,
    Erfc,
    Exp,
    IsFinite,
    IsNan,
    Lgamma,
    Log,
    Log1p,
    MulF,
    NegF,
    Not,
    OrI,
    Select,
    Sign,
    SubF,
)
from ...ir.types import F32, F64
from ..emit import check, load, nest
from ..typing import Array, Scalar, Tup, result_type
from .arrays import (
    array_from_sequence,
    broadcast_to,
    elementwise,
    elementwise2,
    float_type,
    operand,
    sdtype,
)
from .params import REQUIRED, bind, const_int, is_none, norm_axis, static
from .reductions import keep_dims
from .registry import CALLS, register_lazy
from .stats import over_lines

MODULE = "scipy.special"

# ---------------------------------------------------------------------- elementwise


def _unary(name, build):
    """``scipy.special.<name>(x)``: ``build(b, x, t) -> Value`` on each element cast to the
    float result type ``t``."""
    fname = f"{MODULE}.{name}"

    def h(lw, args, kwargs, node):
        x = operand(lw, bind(lw, fname, args, kwargs, node, [("x", REQUIRED)])["x"], node)
        t = _real_float(lw, sdtype(x).type, fname, node)
        return elementwise(lw, x, lambda v: build(lw.b, lw.b.cast(v.value, t), t), t, node)

    return h


def _real_float(lw, t, fname, node):
    if t.is_complex:
        raise lw.err(UnsupportedError, f"{fname}() of complex numbers is not supported in "
                     "compiled code", node)
    return float_type(t)


def _op(kind):
    return lambda b, x, t: b.op(kind, x)


def _expit(b, x, t):
    """1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) below: e^-|x| never overflows, so neither
    branch (nor its derivative) is inf or NaN; below -709 (float32: -88) this gives the
    subnormal e^x where SciPy's 1 / (1 + e^-x) rounds to 0."""
    pos = b.op(CmpF, x, b.const(0.0, t), pred="ge")
    e = b.op(Exp, b.op(Select, pos, b.op(NegF, x), x))
    d = b.op(AddF, b.const(1.0, t), e)
    return b.op(Select, pos, b.op(DivF, b.const(1.0, t), d), b.op(DivF, e, d))


def _log_expit(b, x, t):
    """log(expit(x)): x - log1p(e^x) below 0, -log1p(e^-x) from 0 (SciPy's formulas)."""
    neg = b.op(CmpF, x, b.const(0.0, t), pred="lt")
    lp = b.op(Log1p, b.op(Exp, b.op(Select, neg, x, b.op(NegF, x))))
    return b.op(Select, neg, b.op(SubF, x, lp), b.op(NegF, lp))


def _logit(b, x, t):
    """log(p / (1 - p)), or log1p(2 (p - 1/2) / (1 - p)) for 0.3 < p < 0.65, where the quotient
    is near 1 (SciPy's formulas)."""
    one = b.const(1.0, t)
    q = b.op(SubF, one, x)
    mid = b.op(AndI, b.op(CmpF, x, b.const(0.3, t), pred="gt"),
               b.op(CmpF, x, b.const(0.65, t), pred="lt"))
    near = b.op(Log1p, b.op(DivF, b.op(MulF, b.const(2.0, t),
                                       b.op(SubF, x, b.const(0.5, t))), q))
    return b.op(Select, mid, near, b.op(Log, b.op(DivF, x, q)))


def _xlog(log_op, low):
    """x * log(y) (``log_op``: Log, or Log1p with ``low`` -1), and 0 where x == 0 unless y is
    NaN (SciPy's convention: xlogy(0, 0) = 0).  Where x == 0 and the log is not finite
    (y <= ``low`` or inf), y is replaced by ``low + 1`` (log 0) before the log, so the product
    is 0 and its derivative in x is log(y) where that is finite (0 elsewhere), as central
    differences give."""

    def build(b, x, y, t):
        zero = b.const(0.0, t)
        at_zero = b.op(AndI, b.op(CmpF, x, zero, pred="eq"), b.op(Not, b.op(IsNan, y)))
        ok = b.op(AndI, b.op(CmpF, y, b.const(low, t), pred="gt"),
                  b.op(CmpF, y, b.const(math.inf, t), pred="lt"))
        safe_y = b.op(Select, b.op(AndI, at_zero, b.op(Not, ok)), b.const(1.0 + low, t), y)
        r = b.op(MulF, x, b.op(log_op, safe_y))
        return b.op(Select, at_zero, b.op(AddF, r, zero), r)  # (+0.0, not -0.0, as SciPy)

    return build


def _binary(name, build):
    """``scipy.special.<name>(x, y)`` over the broadcast of ``x`` and ``y``.  SciPy's ufuncs
    promote Python numbers as float64/int64 (``xlogy(float32 array, 2.5)`` is float64), not
    weakly as NumPy's do."""
    fname = f"{MODULE}.{name}"

    def h(lw, args, kwargs, node):
        p = bind(lw, fname, args, kwargs, node, [("x", REQUIRED), ("y", REQUIRED)])

        def elem(x, y, t):
            ft = _real_float(lw, t, fname, node)
            return build(lw.b, lw.b.cast(x.value, ft), lw.b.cast(y.value, ft), ft)

        x, y = (_strong(operand(lw, p[k], node)) for k in ("x", "y"))
        return elementwise2(lw, x, y, elem, float_type, node)

    return h


def _strong(v):
    return Scalar(v.value, False) if isinstance(v, Scalar) else v


# ---------------------------------------------------------------------- reductions


def _float_operand(lw, v, fname, node):
    """``v`` as a scalar or an array of its float type (integers and booleans converted to
    float64, as SciPy computes them)."""
    v = operand(lw, v, node)
    t = _real_float(lw, sdtype(v).type, fname, node)
    if isinstance(v, Array) and v.type.dtype == t:
        return v, t
    return elementwise(lw, v, lambda x: lw.b.cast(x.value, t), t, node), t


def _axis(lw, v, ndim, fname, node):
    """The axis argument: None, or a constant integer normalized for ``ndim`` dimensions."""
    if is_none(v):
        return None
    if isinstance(v, Tup):
        raise lw.err(UnsupportedError, f"{fname}(axis=...) must be None or one constant "
                     "integer in compiled code (a tuple of axes is not supported)", node)
    return norm_axis(lw, const_int(lw, v, f"{fname}(axis=...)", node), ndim, node)


def _np(lw, fn, node, *args, **kwargs):
    """NumPy's ``fn(*args, **kwargs)`` by its handler (keyword values are Python constants)."""
    kw = {k: lw.pyvalue(v, node) for k, v in kwargs.items()}
    return CALLS[fn](lw, list(args), kw, node)


def _shift(lw, x, axis, t, node, finite_only):
    """The maximum of ``x`` (over ``axis``, kept as a length-1 axis), the value subtracted
    before ``exp``; with ``finite_only`` an infinite or NaN maximum is replaced by 0."""
    kw = {"keepdims": True} if axis is None else {"axis": axis, "keepdims": True}
    m = _np(lw, np.max, node, x, **kw)
    if finite_only:
        b = lw.b
        m = elementwise(lw, m, lambda v: b.op(Select, b.op(IsFinite, v.value), v.value,
                                              b.const(0.0, t)), t, node)
    return m, kw


def _softmax(log):
    fname = f"{MODULE}.{'log_softmax' if log else 'softmax'}"

    def h(lw, args, kwargs, node):
        """SciPy's formulas: ``e = exp(x - max(x))``, ``e / sum(e)``; for ``log_softmax``
        ``(x - m) - log(sum(exp(x - m)))`` with ``m`` the maximum, or 0 where that is not
        finite."""
        p = bind(lw, fname, args, kwargs, node, [("x", REQUIRED), ("axis", None)])
        x, t = _float_operand(lw, p["x"], fname, node)
        ndim = x.type.ndim if isinstance(x, Array) else 0
        axis = _axis(lw, p["axis"], ndim, fname, node)
        m, kw = _shift(lw, x, axis, t, node, finite_only=log)
        shifted = lw.binop(ast.Sub(), x, m, node)
        e = _np(lw, np.exp, node, shifted)
        total = _np(lw, np.sum, node, e, **kw)
        if log:
            return lw.binop(ast.Sub(), shifted, _np(lw, np.log, node, total), node)
        return lw.binop(ast.Div(), e, total, node)

    return h


LSE = f"{MODULE}.logsumexp"


def _logsumexp(lw, args, kwargs, node):
    """``logsumexp(a, axis=None, b=None, keepdims=False)`` as SciPy 1.15+ computes it: with
    ``k`` the (first) largest element, ``a[k] + log(b[k]) + log1p(sum_{j != k} b[j]
    e^(a[j] - a[k]) / b[k])``, accurate where the result is near 0 (``log`` of a sum near 1
    would lose it); ``log(sum(b e^a))`` where ``a[k]`` is not finite (all -inf gives -inf, an
    inf gives inf); NaN where the weighted sum is negative.  Elements with ``b == 0`` count as
    ``-inf``.  ``return_sign=True`` is refused."""
    p = bind(lw, LSE, args, kwargs, node, [("a", REQUIRED), ("axis", None), ("b", None),
                                           ("keepdims", False), ("return_sign", False)])
    if static(lw, p["return_sign"]) is not False:
        raise lw.err(UnsupportedError, f"{LSE}(return_sign=...) must be False in compiled "
                     "code (the sign of a weighted sum is not supported)", node)
    keep = static(lw, p["keepdims"])
    if not isinstance(keep, (bool, np.bool_)):
        raise lw.err(UnsupportedError, f"{LSE}(keepdims=...) must be True or False, known at "
                     "compile time", node)
    a = operand(lw, p["a"], node)
    w = None if is_none(p["b"]) else operand(lw, p["b"], node)
    st = sdtype(a) if w is None else result_type(sdtype(a), sdtype(w))
    t = _real_float(lw, st.type, LSE, node)
    if isinstance(a, Scalar):  # (SciPy makes a number a 1-element array)
        a = array_from_sequence(lw, Tup((a,)), node)
    if isinstance(w, Array):
        w = _weights_like(lw, w, a, node)
    axis = _axis(lw, p["axis"], a.type.ndim, LSE, node)
    line_axis = None if a.type.ndim == 1 else axis
    r = over_lines(lw, a, line_axis, t, lambda dims, to_index: _lse_line(
        lw, a, w, t, dims, to_index))
    return keep_dims(lw, r, a, p["axis"], node) if keep else r


def _weights_like(lw, w: Array, a: Array, node) -> Array:
    """``b`` viewed with ``a``'s shape; it must broadcast to it (checked at run time)."""
    if w.type.ndim > a.type.ndim:
        raise lw.err(UnsupportedError, f"{LSE}(a, b=...): b has more dimensions than a; in "
                     "compiled code b must broadcast to a's shape", node)
    b, one = lw.b, lw.b.i64(1)
    dims = lw.dims(a)
    for d, want in zip(lw.dims(w), dims[len(dims) - w.type.ndim:]):
        ok = b.op(OrI, b.op(CmpI, d, want, pred="eq"), b.op(CmpI, d, one, pred="eq"))
        check(lw, ok, "ValueError", f"{LSE}(a, b=...): b does not broadcast to the shape of a")
    return broadcast_to(lw, w, dims)


def _lse_line(lw, a, w, t, dims, to_index):
    b = lw.b
    at = F64 if t == F32 else t  # (float32 sums accumulate in float64, as reductions.py's)
    zero, one = b.const(0.0, t), b.const(1.0, t)

    def read(idx):
        x = b.cast(load(lw, a, to_index(idx)), t)
        if w is None:
            return x, None
        wv = w.value if isinstance(w, Scalar) else load(lw, w, to_index(idx))
        return x, b.cast(wv, t)

    def arg_max(idx, acc):  # the first largest element (a NaN if there is one), its weight
        best, best_w, *k = acc
        x, wv = read(idx)
        if wv is not None:
            x = b.op(Select, b.op(CmpF, wv, zero, pred="eq"), b.const(-math.inf, t), x)
        better = b.op(OrI, b.op(CmpF, x, best, pred="gt"),
                      b.op(AndI, b.op(IsNan, x), b.op(Not, b.op(IsNan, best))))
        return [b.op(Select, better, x, best),
                best_w if wv is None else b.op(Select, better, wv, best_w),
                *(b.op(Select, better, i, j) for i, j in zip(idx, k))]

    init = [b.const(-math.inf, t), one, *(b.i64(0) for _ in dims)]
    amax, m, *k = nest(lw, dims, arg_max, init)
    finite = b.op(IsFinite, amax)
    shift = b.op(Select, finite, amax, zero)

    def add(idx, acc):  # sum of b e^(a - shift), without the largest element when finite
        x, wv = read(idx)
        term = b.op(Exp, b.op(SubF, x, shift))
        skip = finite
        for i, j in zip(idx, k):
            skip = b.op(AndI, skip, b.op(CmpI, i, j, pred="eq"))
        if wv is not None:
            term = b.op(MulF, wv, term)
            skip = b.op(OrI, skip, b.op(CmpF, wv, zero, pred="eq"))
        term = b.op(Select, skip, b.const(0.0, t), term)
        return [b.op(AddF, acc[0], b.cast(term, at))]

    s = b.cast(nest(lw, dims, add, [b.const(0.0, at)])[0], t)
    if w is None:
        out = b.op(AddF, b.op(Log1p, s), amax)
    else:
        q = b.op(DivF, s, m)
        neg = b.op(CmpF, b.op(MulF, b.op(Sign, b.op(AddF, q, one)), b.op(Sign, m)), zero,
                   pred="lt")
        below = b.op(CmpF, q, b.const(-1.0, t), pred="lt")
        q = b.op(Select, below, b.op(SubF, b.op(NegF, q), b.const(2.0, t)), q)
        out = b.op(AddF, b.op(AddF, b.op(Log1p, q), b.op(Log, b.op(AbsF, m))), amax)
        out = b.op(Select, neg, b.const(math.nan, t), out)
    return b.op(Select, finite, out, b.op(Log, s))


# ---------------------------------------------------------------------- the table

_digamma = _unary("digamma", _op(Digamma))

register_lazy(MODULE, {
    "expit": _unary("expit", _expit),
    "logit": _unary("logit", _logit),
    "log_expit": _unary("log_expit", _log_expit),
    "erf": _unary("erf", _op(Erf)),
    "erfc": _unary("erfc", _op(Erfc)),
    "gammaln": _unary("gammaln", _op(Lgamma)),
    "digamma": _digamma,
    "psi": _digamma,  # (the same ufunc as digamma)
    "xlogy": _binary("xlogy", _xlog(Log, 0.0)),
    "xlog1py": _binary("xlog1py", _xlog(Log1p, -1.0)),
    "logsumexp": _logsumexp,
    "softmax": _softmax(False),
    "log_softmax": _softmax(True),
})
