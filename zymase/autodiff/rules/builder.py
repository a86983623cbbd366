"""RuleBuilder: the small vocabulary derivative rules are written in (``b.mul(x, y)``,
``b.cos(x)``, ``b.c(2.0, like=x)``); every op is built at the builder's insertion point."""

from __future__ import annotations

from ...ir.builder import Builder
from ...ir.core import Value

_BINARY = {"add": "arith.addf", "sub": "arith.subf", "mul": "arith.mulf", "div": "arith.divf"}
_UNARY = {"neg": "arith.negf", "sqrt": "math.sqrt", "exp": "math.exp", "log": "math.log",
          "sin": "math.sin", "cos": "math.cos", "cosh": "math.cosh", "sinh": "math.sinh",
          "floor": "math.floor", "trunc": "math.trunc", "conj": "complex.conj",
          "abs": "math.absf", "sign": "math.sign", "digamma": "math.digamma",
          "trigamma": "math.trigamma"}


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
        return self.op("arith.mulf", x, x)

    def recip(self, x: Value) -> Value:
        return self.op("arith.divf", self.c(1.0, x), x)

    def select(self, cond: Value, a: Value, b: Value) -> Value:
        return self.op("arith.select", cond, a, b)

    def cmp(self, pred: str, x: Value, y: Value) -> Value:
        return self.op("arith.cmpf", x, y, pred=pred)

    def conj_if_complex(self, x: Value) -> Value:
        return self.op("complex.conj", x) if x.type.is_complex else x

    def pow_base_partial(self, x: Value, y: Value, out: Value) -> Value:
        """y * x**(y-1), as y * out / x away from x = 0 (no second pow on the hot path)."""
        from ...ir.core import Block, Region
        zero = self.c(0.0, x)
        nz = self.op("arith.cmpf", x, zero, pred="ne")
        then, other = Block(), Block()
        with self.at(then):
            self.yield_(self.div(self.mul(y, out), x))
        with self.at(other):
            self.yield_(self.mul(y, self.op("math.pow", x, self.sub(y, self.c(1.0, y)))))
        return self.create("scf.if", [nz], [x.type], regions=[Region([then]),
                                                             Region([other])]).result
