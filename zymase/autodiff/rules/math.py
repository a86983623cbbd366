"""Records for ``math`` ops.  Conventions at non-differentiable points: |x|' = sign(x) (0 at 0),
the piecewise-constant functions (floor, ceil, trunc, round, sign) have derivative 0, and
pow(x, y) w.r.t. x at x = 0 is y * 0**(y-1) and w.r.t. y at x = 0 is 0."""

from __future__ import annotations

import math

from ...ir.ops import (
    AbsF,
    Acos,
    Acosh,
    Asin,
    Asinh,
    Atan,
    Atan2,
    Atanh,
    Ceil,
    CmpF,
    Copysign,
    Cos,
    Cosh,
    Digamma,
    Erf,
    Erfc,
    Exp,
    Expm1,
    Floor,
    Fmod,
    Hypot,
    IsFinite,
    IsInf,
    IsNan,
    Lgamma,
    Log,
    Log1p,
    Log2,
    Log10,
    Pow,
    RoundEven,
    Sign,
    Sin,
    Sinh,
    Sqrt,
    Tan,
    Tanh,
    Tgamma,
    Trunc,
)
from .registry import partials, zero


def _unary(op, uses="x", strong=False):
    """Register ``fn(b, x, out)``, the derivative of one-operand ``op`` (``strong``: the partial
    can be infinite, see ``registry.py``)."""
    def deco(fn):
        partials(op, uses=uses, strong=strong)(lambda b, x, *, out, need: (fn(b, x, out),))
        return fn
    return deco


_unary(Sqrt, "o", strong=True)(lambda b, x, out: b.div(b.c(0.5, x), out))  # 1 / (2 sqrt x)
_unary(Exp, "o")(lambda b, x, out: out)  # exp
_unary(Log, strong=True)(lambda b, x, out: b.recip(x))  # 1/x
_unary(Log1p, strong=True)(lambda b, x, out: b.recip(b.add(b.c(1.0, x), x)))  # 1/(1+x)
_unary(Expm1, "o")(lambda b, x, out: b.add(out, b.c(1.0, x)))  # exp(x) = expm1 + 1
_unary(Log10, strong=True)(lambda b, x, out: b.recip(b.mul(x, b.c(math.log(10.0), x))))
_unary(Log2, strong=True)(lambda b, x, out: b.recip(b.mul(x, b.c(math.log(2.0), x))))
_unary(Sin)(lambda b, x, out: b.cos(x))
_unary(Cos)(lambda b, x, out: b.neg(b.sin(x)))
_unary(Tan, "o")(lambda b, x, out: b.add(b.c(1.0, x), b.square(out)))  # 1 + tan^2
_unary(Asin, strong=True)(lambda b, x, out: b.recip(b.sqrt(b.sub(b.c(1.0, x), b.square(x)))))
_unary(Acos, strong=True)(lambda b, x, out: b.neg(b.recip(b.sqrt(b.sub(b.c(1.0, x), b.square(x))))))
_unary(Atan)(lambda b, x, out: b.recip(b.add(b.c(1.0, x), b.square(x))))
_unary(Sinh)(lambda b, x, out: b.cosh(x))
_unary(Cosh)(lambda b, x, out: b.sinh(x))
_unary(Tanh, "o")(lambda b, x, out: b.sub(b.c(1.0, x), b.square(out)))  # 1 - tanh^2
_unary(Asinh)(lambda b, x, out: b.recip(b.sqrt(b.add(b.square(x), b.c(1.0, x)))))
_unary(Acosh, strong=True)(lambda b, x, out: b.recip(b.sqrt(b.sub(b.square(x), b.c(1.0, x)))))
_unary(Atanh, strong=True)(lambda b, x, out: b.recip(b.sub(b.c(1.0, x), b.square(x))))
_unary(AbsF)(lambda b, x, out: b.sign(x))
_unary(Erf)(lambda b, x, out: b.mul(b.c(2.0 / math.sqrt(math.pi), x),
                                           b.exp(b.neg(b.square(x)))))
_unary(Erfc)(lambda b, x, out: b.mul(b.c(-2.0 / math.sqrt(math.pi), x),
                                            b.exp(b.neg(b.square(x)))))
_unary(Lgamma, strong=True)(lambda b, x, out: b.digamma(x))
_unary(Tgamma, "xo", strong=True)(lambda b, x, out: b.mul(out, b.digamma(x)))
_unary(Digamma, strong=True)(lambda b, x, out: b.trigamma(x))


@partials(Pow, uses="xo", strong=True)
def _pow(b, x, y, *, out, need):
    """d x^y = y x^(y-1) dx + log(x) x^y dy; y x^(y-1) is computed as y out / x away from 0."""
    dx = dy = None
    if need[0]:
        dx = b.pow_base_partial(x, y, out)
    if need[1]:  # log(x) x^y, and 0 at x = 0 (0^y is constant in y there, as in JAX)
        at_zero = b.op(CmpF, x, b.c(0.0, x), pred="eq")
        dy = b.mul(b.log(b.select(at_zero, b.c(1.0, x), x)), out)
    return dx, dy


@partials(Atan2, strong=True)
def _atan2(b, y, x, *, out, need):  # atan2(y, x): (x, -y) / (x^2 + y^2)
    r2 = b.add(b.square(x), b.square(y))
    return b.div(x, r2), b.neg(b.div(y, r2))


@partials(Hypot, uses="xo")
def _hypot(b, x, y, *, out, need):  # x / h, y / h; 0 at the origin (as |x|' = sign(x) at 0)
    zero = b.c(0.0, out)
    pos = b.cmp("gt", out, zero)
    return (b.select(pos, b.div(x, out), zero) if need[0] else None,
            b.select(pos, b.div(y, out), zero) if need[1] else None)


@partials(Copysign)
def _copysign(b, x, y, *, out, need):  # |x| sign(y): d = sign(x) sign(y) dx
    return b.mul(b.sign(x), b.op(Copysign, b.c(1.0, y), y)), None


@partials(Fmod)
def _fmod(b, x, y, *, out, need):  # x - trunc(x/y) y
    return b.c(1.0, x), (b.neg(b.trunc(b.div(x, y))) if need[1] else None)


zero(Floor, Ceil, Trunc, RoundEven, Sign, IsNan, IsInf, IsFinite)
