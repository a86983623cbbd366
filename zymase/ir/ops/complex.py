"""``complex``: building complex scalars and taking them apart."""

from __future__ import annotations

from ..core import EXPENSIVE, PURE
from ..types import ScalarType
from .base import SimpleOp, VerifyError, unary

_PURE = frozenset({PURE})


class ComplexCreate(SimpleOp):
    """``%z = complex.create %re, %im : c128``"""

    name = "complex.create"
    n_operands = 2
    traits = _PURE
    __slots__ = ()

    @classmethod
    def infer(cls, operand_types, attrs):
        return [ScalarType("c", operand_types[0].bits * 2)]

    def verify(self):
        super().verify()
        a, b = (v.type for v in self.operands)
        if a != b or not a.is_float or self.results[0].type.real_type != a:
            raise VerifyError(f"complex.create: types {a}, {b} -> {self.results[0].type}")


class _Part(SimpleOp):
    n_operands = 1
    traits = _PURE
    __slots__ = ()

    @classmethod
    def infer(cls, operand_types, attrs):
        return [operand_types[0].real_type]

    def verify(self):
        super().verify()
        if not self.operands[0].type.is_complex:
            raise VerifyError(f"{self.name} needs a complex operand")


class ComplexRe(_Part):
    name = "complex.re"
    __slots__ = ()


class ComplexIm(_Part):
    name = "complex.im"
    __slots__ = ()


class ComplexAbs(_Part):
    name = "complex.abs"
    traits = frozenset({PURE, EXPENSIVE})
    __slots__ = ()


Conj = unary("complex.conj", "c")
