"""Records for ``arith`` ops."""

from __future__ import annotations

from ...ir.ops import (
    AbsI,
    AddF,
    AddI,
    AndI,
    Cast,
    CmpF,
    CmpI,
    ComplexRe,
    Constant,
    DivF,
    FloorDivF,
    FloorDivI,
    MaxI,
    MaximumF,
    MinI,
    MinimumF,
    ModF,
    ModI,
    MulF,
    MulI,
    NegF,
    NegI,
    Not,
    OrI,
    PowI,
    Select,
    ShlI,
    ShrI,
    SubF,
    SubI,
    XorI,
)
from .registry import linear, partials, zero


@partials(AddF, uses="")
def _add(b, x, y, *, out, need):  # d(x+y) = dx + dy
    return b.c(1.0, x), b.c(1.0, y)


@partials(SubF, uses="")
def _sub(b, x, y, *, out, need):  # d(x-y) = dx - dy
    return b.c(1.0, x), b.c(-1.0, y)


@partials(MulF, uses="y")
def _mul(b, x, y, *, out, need):  # d(xy) = y dx + x dy
    return y, x


@partials(DivF, uses="xo", strong=True)
def _div(b, x, y, *, out, need):  # d(x/y) = dx/y - (x/y) dy/y
    inv = b.recip(y)
    return inv, (b.neg(b.mul(out, inv)) if need[1] else None)


@partials(NegF, uses="")
def _neg(b, x, *, out, need):
    return (b.c(-1.0, x),)


@partials(ModF)
def _mod(b, x, y, *, out, need):  # x % y = x - floor(x/y) y
    return b.c(1.0, x), (b.neg(b.op(FloorDivF, x, y)) if need[1] else None)


def _chosen(pred):
    def rule(b, x, y, *, out, need):  # the chosen operand gets the derivative (x on ties)
        first = b.cmp(pred, x, y)
        one, zero_ = b.c(1.0, x), b.c(0.0, x)
        return b.select(first, one, zero_), b.select(first, zero_, one)
    return rule


partials(MaximumF)(_chosen("ge"))
partials(MinimumF)(_chosen("le"))


@linear(Select, uses="c")
class _Select:
    @staticmethod
    def jvp(b, attrs, x, out, t):  # t_out = c ? t_a : t_b
        z = b.c(0.0, out)
        return b.select(x[0], t[1] or z, t[2] or z)

    @staticmethod
    def vjp(b, attrs, x, out, ct):
        z = b.c(0.0, ct)
        return [None, b.select(x[0], ct, z), b.select(x[0], z, ct)]


@linear(Cast)
class _Cast:
    """Float/complex conversions are linear; from ints nothing flows."""

    @staticmethod
    def jvp(b, attrs, x, out, t):
        return b.cast(t[0], out.type)

    @staticmethod
    def vjp(b, attrs, x, out, ct):
        src = x[0].type
        if src.is_complex or not ct.type.is_complex:
            return [b.cast(ct, src)]
        return [b.cast(b.op(ComplexRe, ct), src)]  # real -> complex: only the real part


zero(FloorDivF, CmpF, CmpI, AddI, SubI, MulI, NegI, AbsI, MaxI, MinI, FloorDivI, ModI, PowI, AndI,
     OrI, XorI, ShlI, ShrI, Not, Constant)
