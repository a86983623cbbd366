"""``math``: the functions of Python's ``math`` module on scalars (C libm semantics).

``math.exp``, ``math.log``, ``math.sqrt``, ``math.sin``, ``math.cos`` and ``math.tanh`` also accept
complex operands.
"""

from __future__ import annotations

from ..core import EXPENSIVE, PURE
from .base import PredicateOp, binary, unary

_COSTLY = frozenset({PURE, EXPENSIVE})  # reverse mode stores these rather than run them again

Sqrt = unary("math.sqrt", "fc", _COSTLY)
Exp = unary("math.exp", "fc", _COSTLY)
Log = unary("math.log", "fc", _COSTLY)
Log1p = unary("math.log1p", "f", _COSTLY)
Expm1 = unary("math.expm1", "f", _COSTLY)
Log10 = unary("math.log10", "f", _COSTLY)
Log2 = unary("math.log2", "f", _COSTLY)
Sin = unary("math.sin", "fc", _COSTLY)
Cos = unary("math.cos", "fc", _COSTLY)
Tan = unary("math.tan", "f", _COSTLY)
Asin = unary("math.asin", "f", _COSTLY)
Acos = unary("math.acos", "f", _COSTLY)
Atan = unary("math.atan", "f", _COSTLY)
Sinh = unary("math.sinh", "f", _COSTLY)
Cosh = unary("math.cosh", "f", _COSTLY)
Tanh = unary("math.tanh", "fc", _COSTLY)
Asinh = unary("math.asinh", "f", _COSTLY)
Acosh = unary("math.acosh", "f", _COSTLY)
Atanh = unary("math.atanh", "f", _COSTLY)
AbsF = unary("math.absf")
Floor = unary("math.floor")
Ceil = unary("math.ceil")
Trunc = unary("math.trunc")
RoundEven = unary("math.roundeven")
Erf = unary("math.erf", "f", _COSTLY)
Erfc = unary("math.erfc", "f", _COSTLY)
Lgamma = unary("math.lgamma", "f", _COSTLY)
Tgamma = unary("math.tgamma", "f", _COSTLY)
Sign = unary("math.sign")  # np.sign: -1, 0, +1 (NaN stays NaN)
# d/dx lgamma and its derivative (no libm counterpart: see ir/special.py)
Digamma = unary("math.digamma", "f", _COSTLY)
Trigamma = unary("math.trigamma", "f", _COSTLY)
Atan2 = binary("math.atan2", "f", _COSTLY)
Pow = binary("math.pow", "fc", _COSTLY)
Hypot = binary("math.hypot", "f", _COSTLY)
Copysign = binary("math.copysign")
Fmod = binary("math.fmod", "f", _COSTLY)


class IsNan(PredicateOp):
    name = "math.isnan"
    __slots__ = ()


class IsInf(PredicateOp):
    name = "math.isinf"
    __slots__ = ()


class IsFinite(PredicateOp):
    name = "math.isfinite"
    __slots__ = ()
