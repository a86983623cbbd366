"""``math``: the functions of Python's ``math`` module on scalars (C libm semantics).

``math.exp``, ``math.log``, ``math.sqrt``, ``math.sin``, ``math.cos`` and ``math.tanh`` also accept
complex operands.
"""

from __future__ import annotations

from .base import PredicateOp, binary, unary

Sqrt = unary("math.sqrt", "fc")
Exp = unary("math.exp", "fc")
Log = unary("math.log", "fc")
Log1p = unary("math.log1p")
Expm1 = unary("math.expm1")
Log10 = unary("math.log10")
Log2 = unary("math.log2")
Sin = unary("math.sin", "fc")
Cos = unary("math.cos", "fc")
Tan = unary("math.tan")
Asin = unary("math.asin")
Acos = unary("math.acos")
Atan = unary("math.atan")
Sinh = unary("math.sinh")
Cosh = unary("math.cosh")
Tanh = unary("math.tanh", "fc")
Asinh = unary("math.asinh")
Acosh = unary("math.acosh")
Atanh = unary("math.atanh")
AbsF = unary("math.absf")
Floor = unary("math.floor")
Ceil = unary("math.ceil")
Trunc = unary("math.trunc")
RoundEven = unary("math.roundeven")
Erf = unary("math.erf")
Erfc = unary("math.erfc")
Lgamma = unary("math.lgamma")
Tgamma = unary("math.tgamma")
Sign = unary("math.sign")
Digamma = unary("math.digamma")  # d/dx lgamma (no libm counterpart: see ir/special.py)
Trigamma = unary("math.trigamma")  # np.sign: -1, 0, +1 (NaN stays NaN)
Atan2 = binary("math.atan2")
Pow = binary("math.pow", "fc")
Hypot = binary("math.hypot")
Copysign = binary("math.copysign")
Fmod = binary("math.fmod")


class IsNan(PredicateOp):
    name = "math.isnan"
    __slots__ = ()


class IsInf(PredicateOp):
    name = "math.isinf"
    __slots__ = ()


class IsFinite(PredicateOp):
    name = "math.isfinite"
    __slots__ = ()
