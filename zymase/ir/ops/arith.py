"""``arith``: constants, scalar arithmetic with Python semantics, comparisons, select, casts.

Float ops also accept complex operands.  Integer division and modulo follow Python (floor),
float ``modf``/``floordivf`` follow CPython's ``float.__mod__``/``__floordiv__`` except that a zero
divisor gives NaN (the frontend inserts an ``rt.assert`` where Python would raise).
"""

from __future__ import annotations

from ..core import COMMUTATIVE, MAY_RAISE, PURE
from ..types import I1, ScalarType
from .base import SimpleOp, VerifyError, binary, unary

_PURE = frozenset({PURE})
_PURE_COMM = frozenset({PURE, COMMUTATIVE})
FLOAT_PREDICATES = ("eq", "ne", "lt", "le", "gt", "ge")


class Constant(SimpleOp):
    """``%c = arith.constant {value = 1.5} : f64``"""

    name = "arith.constant"
    n_operands = 0
    traits = _PURE
    __slots__ = ()

    @property
    def value(self):
        return self.attrs["value"]

    def verify(self):
        super().verify()
        t = self.results[0].type
        if not isinstance(t, ScalarType):
            raise VerifyError("arith.constant must have a scalar type")


AddF = binary("arith.addf", "fc", _PURE_COMM)
SubF = binary("arith.subf", "fc")
MulF = binary("arith.mulf", "fc", _PURE_COMM)
DivF = binary("arith.divf", "fc")
ModF = binary("arith.modf")  # Python float %
FloorDivF = binary("arith.floordivf")  # Python float //
NegF = unary("arith.negf", "fc")
MaximumF = binary("arith.maximumf", "f", _PURE_COMM)  # np.maximum: NaN-propagating
MinimumF = binary("arith.minimumf", "f", _PURE_COMM)

AddI = binary("arith.addi", "i", _PURE_COMM)
SubI = binary("arith.subi", "i")
MulI = binary("arith.muli", "i", _PURE_COMM)
NegI = unary("arith.negi", "i")
AbsI = unary("arith.absi", "i")
MaxI = binary("arith.maxi", "i", _PURE_COMM)
MinI = binary("arith.mini", "i", _PURE_COMM)
# Python // and % on ints; division by zero raises ZeroDivisionError
FloorDivI = binary("arith.floordivi", "i", frozenset({MAY_RAISE}))
ModI = binary("arith.modi", "i", frozenset({MAY_RAISE}))
# int ** int with a non-negative exponent (a negative one raises ValueError)
PowI = binary("arith.powi", "i", frozenset({MAY_RAISE}))

AndI = binary("arith.andi", "ib", _PURE_COMM)
OrI = binary("arith.ori", "ib", _PURE_COMM)
XorI = binary("arith.xori", "ib", _PURE_COMM)
ShlI = binary("arith.shli", "i", frozenset({MAY_RAISE}))  # (a negative count raises)
ShrI = binary("arith.shri", "i", frozenset({MAY_RAISE}))  # arithmetic, logical when unsigned
Not = unary("arith.not", "b")


class _Compare(SimpleOp):
    """A comparison ``{pred = "lt"}`` of two scalars giving ``i1`` (the base of ``CmpF`` and
    ``CmpI``, which stay unrelated classes: ``isinstance(op, CmpF)`` never means an int one)."""

    n_operands = 2
    traits = _PURE
    kinds = ""  # the scalar kinds compared
    __slots__ = ()

    @classmethod
    def infer(cls, operand_types, attrs):
        return [I1]

    def verify(self):
        super().verify()
        if self.attrs.get("pred") not in FLOAT_PREDICATES:
            raise VerifyError(f"{self.name}: bad predicate {self.attrs.get('pred')!r}")
        a, b = (v.type for v in self.operands)
        if a != b or not isinstance(a, ScalarType) or a.kind not in self.kinds:
            raise VerifyError(f"{self.name}: operand types {a}, {b}")


class CmpF(_Compare):
    """``%b = arith.cmpf %x, %y {pred = "lt"} : i1`` (ordered; ``ne`` is true for NaN)."""

    name = "arith.cmpf"
    kinds = "fc"
    __slots__ = ()

    def verify(self):
        super().verify()
        if self.operands[0].type.is_complex and self.attrs["pred"] not in ("eq", "ne"):
            raise VerifyError("arith.cmpf: complex numbers are only compared for (in)equality")


class CmpI(_Compare):
    """``%b = arith.cmpi %x, %y {pred = "lt"} : i1`` (signed; on ``i1`` false < true)."""

    name = "arith.cmpi"
    kinds = "ib"
    __slots__ = ()


class Select(SimpleOp):
    """``%r = arith.select %cond, %a, %b : T``"""

    name = "arith.select"
    n_operands = 3
    traits = _PURE
    __slots__ = ()

    @classmethod
    def infer(cls, operand_types, attrs):
        return [operand_types[1]]

    def verify(self):
        super().verify()
        c, a, b = (v.type for v in self.operands)
        if c != I1 or a != b or self.results[0].type != a:
            raise VerifyError(f"arith.select: types {c}, {a}, {b}")


class Cast(SimpleOp):
    """``%r = arith.cast %x : f64``: a numeric conversion chosen by the two types.

    int->float rounds, float->int truncates toward zero (Python's ``int()``; saturating, NaN gives
    0: the frontend checks finiteness where Python would raise), x->i1 tests ``!= 0``,
    i1->x gives 0/1, real->complex has a zero imaginary part; complex->real is not allowed.
    """

    name = "arith.cast"
    n_operands = 1
    traits = _PURE
    __slots__ = ()

    def verify(self):
        super().verify()
        src, dst = self.operands[0].type, self.results[0].type
        if not (isinstance(src, ScalarType) and isinstance(dst, ScalarType)):
            raise VerifyError("arith.cast works on scalars")
        if src.is_complex and not dst.is_complex and not dst.is_bool:  # (bool: nonzero)
            raise VerifyError("arith.cast cannot drop an imaginary part")
