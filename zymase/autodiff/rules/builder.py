"""RuleBuilder: the small vocabulary derivative rules are written in (``b.mul(x, y)``,
``b.cos(x)``, ``b.c(2.0, like=x)``); every op is built at the builder's insertion point."""

from __future__ import annotations

from ...ir.builder import Builder
from ...ir.core import Block, Region, Value
from ...ir.ops import (
    AbsF,
    AddF,
    CmpF,
    Conj,
    Cos,
    Cosh,
    Digamma,
    DivF,
    Exp,
    Floor,
    If,
    Log,
    MulF,
    NegF,
    Pow,
    Select,
    Sign,
    Sin,
    Sinh,
    Sqrt,
    SubF,
    Trigamma,
    Trunc,
)

_BINARY = {"add": AddF, "sub": SubF, "mul": MulF, "div": DivF}
_UNARY = {"neg": NegF, "sqrt": Sqrt, "exp": Exp, "log": Log, "sin": Sin, "cos": Cos, "cosh": Cosh,
          "sinh": Sinh, "floor": Floor, "trunc": Trunc, "conj": Conj, "abs": AbsF, "sign": Sign,
          "digamma": Digamma, "trigamma": Trigamma}


class RuleBuilder(Builder):
    """A Builder with arithmetic shorthands for writing derivative rules."""

    def c(self, value, like: Value) -> Value:
        """A constant of ``like``'s type."""
        return self.const(value, like.type)

    def __getattr__(self, name):
        if name in _BINARY:
            return lambda x, y: self.op(_BINARY[name], x, y)
        if name in _UNARY:
            return lambda x: self.op(_UNARY[name], x)
        raise AttributeError(name)

    def square(self, x: Value) -> Value:
        return self.op(MulF, x, x)

    def mul_strong(self, t: Value, p: Value) -> Value:
        """``t * p``, and 0 where the (co)tangent ``t`` is 0 even if ``p`` is infinite or NaN (the
        ``strong`` rules of ``registry.py``).  Complex values multiply plainly."""
        prod = self.op(MulF, t, p)
        if t.type.is_complex or p.type.is_complex:
            return prod
        zero = self.c(0.0, prod)
        return self.select(self.cmp("eq", t, self.c(0.0, t)), zero, prod)

    def recip(self, x: Value) -> Value:
        return self.op(DivF, self.c(1.0, x), x)

    def select(self, cond: Value, a: Value, b: Value) -> Value:
        return self.op(Select, cond, a, b)

    def cmp(self, pred: str, x: Value, y: Value) -> Value:
        return self.op(CmpF, x, y, pred=pred)

    def conj_if_complex(self, x: Value) -> Value:
        return self.op(Conj, x) if x.type.is_complex else x

    def pow_base_partial(self, x: Value, y: Value, out: Value) -> Value:
        """y * x**(y-1), as y * out / x away from x = 0 (no second pow on the hot path)."""
        zero = self.c(0.0, x)
        nz = self.op(CmpF, x, zero, pred="ne")
        then, other = Block(), Block()
        with self.at(then):
            self.yield_(self.div(self.mul(y, out), x))
        with self.at(other):
            self.yield_(self.mul(y, self.op(Pow, x, self.sub(y, self.c(1.0, y)))))
        return self.create(If, [nz], [x.type], regions=[Region([then]), Region([other])]).result
