"""NumPy's math ufuncs on scalars and arrays: ``np.sqrt``/``exp``/``sin``/... (one ``math`` op
each), ``abs``/``square``, ``maximum``/``minimum``/``power``/``arctan2``/``hypot``/``exp2``,
``reciprocal``/``negative``/``sign``, ``floor``/``ceil``/``trunc`` and ``round``.  Scalars given
to a NumPy function give NumPy scalars (strong types), as in NumPy."""

from __future__ import annotations

import math

import numpy as np

from ...errors import UnsupportedError, ZymaseTypeError
from ...ir.ops import (
    AbsF,
    AbsI,
    Acos,
    Acosh,
    Asin,
    Asinh,
    Atan,
    Atan2,
    Atanh,
    Ceil,
    CmpF,
    CmpI,
    ComplexAbs,
    Copysign,
    Cos,
    Cosh,
    DivF,
    Exp,
    Expm1,
    Floor,
    Fmod,
    Hypot,
    IsNan,
    Log,
    Log1p,
    Log2,
    Log10,
    MaxI,
    MaximumF,
    MinI,
    MinimumF,
    MulF,
    MulI,
    Pow,
    RoundEven,
    Select,
    Sign,
    Sin,
    Sinh,
    Sqrt,
    SubI,
    Tan,
    Tanh,
    Trunc,
)
from ...ir.types import F32, I1, I64
from ..typing import Array, Scalar, SType, result_type
from .arrays import as_operand, elementwise, elementwise2, float_type, map_elements, operand, sdtype
from .params import REQUIRED, bind, const_int, is_none
from .registry import add_methods, register_all

# ---------------------------------------------------------------------- one op per element


UFUNC_OPS = {
    np.sqrt: Sqrt, np.exp: Exp, np.log: Log, np.sin: Sin,
    np.cos: Cos, np.tan: Tan, np.tanh: Tanh, np.arcsin: Asin,
    np.arccos: Acos, np.arctan: Atan, np.sinh: Sinh, np.cosh: Cosh,
    np.log1p: Log1p, np.expm1: Expm1, np.log10: Log10, np.log2: Log2,
    np.rint: RoundEven, np.arcsinh: Asinh, np.arccosh: Acosh,
    np.arctanh: Atanh,
}  # np.floor/ceil/trunc and np.sign are below: integers keep their type
COMPLEX_OK = {Sqrt, Exp, Log, Sin, Cos, Tanh}


def scalar_ufunc(lw, op, x: Scalar, node) -> Scalar:
    t = float_type(x.type)
    if t.is_complex and op not in COMPLEX_OK:
        raise lw.err(UnsupportedError, f"{op.name} of a complex number is not supported", node)
    return Scalar(lw.b.op(op, lw.b.cast(x.value, t)), False)


def elementwise_unary(lw, kind, v, node):
    """np.<kind>(v) for ``kind`` an op class of the table, "abs" or "square"; on a scalar or an
    array."""
    fn = {"abs": _abs_elem, "square": _square_elem}.get(kind)
    if fn is None:
        op = kind

        def fn(lw_, x, node_):
            return scalar_ufunc(lw_, op, x, node_)
    if isinstance(v, Scalar):
        return fn(lw, v, node)
    if not isinstance(v, Array):
        name = kind if isinstance(kind, str) else kind.name
        raise lw.err(ZymaseTypeError, f"{name}() needs a number or an array, not "
                     f"{lw.describe(v)}", node)
    sample = fn(lw, Scalar(lw.b.const(0, v.type.dtype)), node).type
    return map_elements(lw, [v], lambda x: fn(lw, x, node), sample, node)


def _abs_elem(lw, x, node):
    if x.type.is_complex:
        return Scalar(lw.b.op(ComplexAbs, x.value), False)
    if x.type.is_inexact:
        return Scalar(lw.b.op(AbsF, x.value), False)
    t = I64 if x.type == I1 else x.type
    return Scalar(lw.b.op(AbsI, lw.b.cast(x.value, t)), False)


def _square_elem(lw, x, node):
    t = I64 if x.type == I1 else x.type
    v = lw.b.cast(x.value, t)
    return Scalar(lw.b.op(MulF if t.is_inexact else MulI, v, v), False)


def _register_ufuncs():
    for f, op in UFUNC_OPS.items():
        def h(lw, args, kwargs, node, op=op):
            _only_args(lw, args, kwargs, 1, node)
            return elementwise_unary(lw, op, as_operand(lw, args[0], node), node)
        register_all({f: h})
    for f, name in ((np.abs, "abs"), (np.fabs, "abs"),  # (np.absolute is np.abs)
                    (np.square, "square")):
        def h(lw, args, kwargs, node, name=name):
            _only_args(lw, args, kwargs, 1, node)
            return elementwise_unary(lw, name, as_operand(lw, args[0], node), node)
        register_all({f: h})


def _only_args(lw, args, kwargs, n, node):
    if kwargs:
        raise lw.err(UnsupportedError, f"keyword arguments {sorted(kwargs)} are not supported "
                     "here", node)
    if len(args) != n:
        raise lw.err(ZymaseTypeError, f"expected {n} argument(s), got {len(args)}", node)


_register_ufuncs()


def _binary_ufunc(fn_elem, dtype_fn):
    def h(lw, args, kwargs, node):
        _only_args(lw, args, kwargs, 2, node)
        a, b = (as_operand(lw, x, node) for x in args)
        st = result_type(sdtype(a), sdtype(b))
        if isinstance(a, Scalar) and isinstance(b, Scalar):
            return fn_elem(lw, a, b, st.type)
        return map_elements(lw, [a, b], lambda x, y: fn_elem(lw, x, y, st.type), dtype_fn(st.type),
                            node)
    return h


def _maximum(float_op, int_op):
    def elem(lw, x, y, t):
        x, y = lw.b.cast(x.value, t), lw.b.cast(y.value, t)
        return Scalar(lw.b.op(float_op if t.is_inexact else int_op, x, y), False)
    return elem


def _power(lw, x, y, t):
    return lw.scalar_pow(Scalar(x.value, False), Scalar(y.value, False), SType(t, False))


def _arctan2(lw, x, y, t):
    t = float_type(t)
    return Scalar(lw.b.op(Atan2, lw.b.cast(x.value, t), lw.b.cast(y.value, t)), False)


register_all({
    np.maximum: _binary_ufunc(_maximum(MaximumF, MaxI), lambda t: t),
    np.minimum: _binary_ufunc(_maximum(MinimumF, MinI), lambda t: t),
    np.power: _binary_ufunc(_power, lambda t: t),
    np.arctan2: _binary_ufunc(_arctan2, float_type),
})

# ---------------------------------------------------------------------- more elementwise functions


def _real_ufunc(opname, fname):
    """A float ufunc (ints give float64) built from one ``math`` op and constant operands."""

    def h(lw, args, kwargs, node):
        b = bind(lw, fname, args, kwargs, node, [("x", REQUIRED)])
        x = operand(lw, b["x"], node)
        t = float_type(sdtype(x).type)
        if t.is_complex and opname is not Pow:
            raise lw.err(UnsupportedError, f"{fname}() of complex numbers is not supported", node)

        def elem(v):
            if opname is Pow:  # exp2
                return lw.b.op(Pow, lw.b.const(2, t), lw.b.cast(v.value, t))
            return lw.b.op(opname, lw.b.cast(v.value, t))

        return elementwise(lw, x, elem, t, node)

    return h


def _hypot(lw, args, kwargs, node):
    b = bind(lw, "np.hypot", args, kwargs, node, [("x1", REQUIRED), ("x2", REQUIRED)])

    def elem(x, y, t):
        ft = float_type(t)
        if ft.is_complex:
            raise lw.err(ZymaseTypeError, "np.hypot() of complex numbers is not defined", node)
        return lw.b.op(Hypot, lw.b.cast(x.value, ft), lw.b.cast(y.value, ft))

    return elementwise2(lw, b["x1"], b["x2"], elem, float_type, node)


def _reciprocal(lw, args, kwargs, node):
    """1/x; on integers NumPy's C division: 1 and -1 map to themselves, 0 to the minimum int."""
    b = bind(lw, "np.reciprocal", args, kwargs, node, [("x", REQUIRED)])
    x = operand(lw, b["x"], node)
    t = sdtype(x).type
    if t.is_bool:
        raise lw.err(ZymaseTypeError, "np.reciprocal() of booleans is not supported", node)

    def elem(v):
        if t.is_inexact:
            return lw.b.op(DivF, lw.b.const(1, t), v.value)

        def eq(k):
            return lw.b.op(CmpI, v.value, lw.b.const(k, t), pred="eq")

        out = lw.b.op(Select, eq(0), lw.b.const(-(2 ** (t.bits - 1)), t), lw.b.const(0, t))
        for k in (1, -1):
            out = lw.b.op(Select, eq(k), lw.b.const(k, t), out)
        return out

    return elementwise(lw, x, elem, t, node)


def _negative(lw, args, kwargs, node):
    b = bind(lw, "np.negative", args, kwargs, node, [("x", REQUIRED)])
    x = operand(lw, b["x"], node)
    if sdtype(x).type.is_bool:
        raise lw.err(
            ZymaseTypeError,
            "the numpy boolean negative is not supported; use `~` or np.logical_not",
            node,
        )
    return elementwise(lw, x, lambda v: lw.expr_neg(v).value, sdtype(x).type, node)


def _sign(lw, args, kwargs, node):
    """np.sign: -1/0/+1 in the operand's type (ints stay ints); NaN stays NaN."""
    b = bind(lw, "np.sign", args, kwargs, node, [("x", REQUIRED)])
    x = operand(lw, b["x"], node)
    t = sdtype(x).type
    if t.is_bool or t.is_complex:
        raise lw.err(ZymaseTypeError, f"np.sign() of {t.np_dtype.name} is not supported", node)

    def elem(v):
        if t.is_inexact:
            return lw.b.op(Sign, v.value)
        pos = lw.b.cast(lw.b.op(CmpI, v.value, lw.b.const(0, t), pred="gt"), t)
        neg = lw.b.cast(lw.b.op(CmpI, v.value, lw.b.const(0, t), pred="lt"), t)
        return lw.b.op(SubI, pos, neg)

    return elementwise(lw, x, elem, t, node)


def _rounding(opname, fname):
    """np.floor/ceil/trunc: integers and booleans keep their type (NumPy 2.3+)."""

    def h(lw, args, kwargs, node):
        b = bind(lw, fname, args, kwargs, node, [("x", REQUIRED)])
        x = operand(lw, b["x"], node)
        t = sdtype(x).type
        if t.is_complex:
            raise lw.err(ZymaseTypeError, f"{fname}() of complex numbers is not defined", node)
        if t.is_inexact:
            return elementwise(lw, x, lambda v: lw.b.op(opname, v.value), t, node)
        return elementwise(lw, x, lambda v: v.value, t, node)

    return h


def _np_round(lw, args, kwargs, node):
    """``np.round(a, decimals=0)`` / ``np.around`` / ``a.round()``, NumPy's way (not Python's
    correctly rounded ``round``): ``rint(a * 10**d) / 10**d``, or ``rint(a / 10**-d) * 10**-d``
    for negative ``d``; integers are returned as they are for ``d >= 0``."""
    b = bind(lw, "np.round", args, kwargs, node, [("a", REQUIRED), ("decimals", 0),
                                                     ("out", None)])
    if not is_none(b["out"]):
        raise lw.err(UnsupportedError, "np.round(out=...) is not supported", node)
    d = const_int(lw, b["decimals"], "np.round(decimals=...)", node)
    x = operand(lw, b["a"], node)
    t = sdtype(x).type
    if t.is_complex:
        raise lw.err(UnsupportedError, "np.round() of complex numbers is not supported", node)
    if t.is_bool:
        raise lw.err(UnsupportedError, "np.round() of booleans is not supported (NumPy gives "
                     "float16)", node)
    if not t.is_inexact:
        if d < 0:
            raise lw.err(UnsupportedError, "np.round() of integers with negative decimals is "
                         "not supported", node)
        return elementwise(lw, x, lambda v: v.value, t, node)
    ops = lw.b

    def rnd(v):
        if d == 0:
            return ops.op(RoundEven, v.value)
        try:
            scale = 10.0 ** abs(d)
        except OverflowError:
            scale = math.inf
        if t == F32 and scale > float(np.finfo(np.float32).max):
            scale = math.inf  # NumPy's factor in float32: inf (and the result nan, as there)
        f = ops.const(scale, t)
        scale, back = (MulF, DivF) if d > 0 else (DivF, MulF)
        return ops.op(back, ops.op(RoundEven, ops.op(scale, v.value, f)), f)

    return elementwise(lw, x, rnd, t, node)


register_all(
    {
        np.hypot: _hypot,
        np.exp2: _real_ufunc(Pow, "np.exp2"),
        np.reciprocal: _reciprocal,
        np.negative: _negative,
        np.sign: _sign,
        np.round: _np_round,
        np.around: _np_round,
        np.floor: _rounding(Floor, "np.floor"),
        np.ceil: _rounding(Ceil, "np.ceil"),
        np.trunc: _rounding(Trunc, "np.trunc"),
    }
)
add_methods({"round": lambda lw, a, args, kwargs, node: _np_round(lw, [a, *args], kwargs, node)})


# ---------------------------------------------------------------------- float-only extras


def _float_binary(fname, build, ints=True):
    """A float ufunc of two operands (ints are promoted to float64, as NumPy does; with
    ``ints=False`` NumPy keeps ints as ints, which is refused here)."""

    def h(lw, args, kwargs, node):
        b = bind(lw, fname, args, kwargs, node, [("x1", REQUIRED), ("x2", REQUIRED)])

        def elem(x, y, t):
            if not ints and not t.is_inexact:
                raise lw.err(ZymaseTypeError, f"{fname}() of integers is not supported in "
                             "compiled code: use np.mod, or float operands", node)
            ft = float_type(t)
            if ft.is_complex:
                raise lw.err(ZymaseTypeError, f"{fname}() of complex numbers is not defined",
                             node)
            return build(lw, lw.b.cast(x.value, ft), lw.b.cast(y.value, ft), ft)

        return elementwise2(lw, b["x1"], b["x2"], elem, float_type, node)

    return h


def _heaviside(lw, x, h0, t):
    """0 below zero, 1 above, ``h0`` at zero, NaN for NaN (as NumPy)."""
    b = lw.b
    zero = b.const(0.0, t)
    r = b.op(Select, b.op(CmpF, x, zero, pred="gt"), b.const(1.0, t), h0)
    r = b.op(Select, b.op(CmpF, x, zero, pred="lt"), zero, r)
    return b.op(Select, b.op(IsNan, x), x, r)


def _scaled(fname, factor):
    def h(lw, args, kwargs, node):
        b = bind(lw, fname, args, kwargs, node, [("x", REQUIRED)])
        x = operand(lw, b["x"], node)
        t = float_type(sdtype(x).type)
        return elementwise(lw, x, lambda v: lw.b.op(MulF, lw.b.cast(v.value, t),
                                                     lw.b.const(factor, t)), t, node)
    return h


def _sinc(lw, args, kwargs, node):
    """sin(pi x) / (pi x), 1 at 0."""
    b = bind(lw, "np.sinc", args, kwargs, node, [("x", REQUIRED)])
    x = operand(lw, b["x"], node)
    t = float_type(sdtype(x).type)

    def elem(v):
        px = lw.b.op(MulF, lw.b.cast(v.value, t), lw.b.const(math.pi, t))
        is0 = lw.b.op(CmpF, px, lw.b.const(0.0, t), pred="eq")
        safe = lw.b.op(Select, is0, lw.b.const(1.0, t), px)
        return lw.b.op(Select, is0, lw.b.const(1.0, t), lw.b.op(DivF, lw.b.op(Sin, safe), safe))

    return elementwise(lw, x, elem, t, node)


register_all({
    np.fmod: _float_binary("np.fmod", lambda lw, x, y, t: lw.b.op(Fmod, x, y), ints=False),
    np.copysign: _float_binary("np.copysign", lambda lw, x, y, t: lw.b.op(Copysign, x, y)),
    np.heaviside: _float_binary("np.heaviside", _heaviside),
    np.deg2rad: _scaled("np.deg2rad", math.pi / 180.0),
    np.radians: _scaled("np.radians", math.pi / 180.0),
    np.rad2deg: _scaled("np.rad2deg", 180.0 / math.pi),
    np.degrees: _scaled("np.degrees", 180.0 / math.pi),
    np.sinc: _sinc,
})
