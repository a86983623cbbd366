"""Shared machinery for op classes: arity declarations, type inference and verification hooks."""

from __future__ import annotations

from ..core import PURE, Op
from ..types import I1, ScalarType, Type


class VerifyError(Exception):
    """The IR breaks an invariant (raised by the verifier and by op ``verify`` hooks)."""


class SimpleOp(Op):
    """An op with a fixed number of operands/results/regions (``None`` means variadic)."""

    n_operands: int | None = None
    n_results: int | None = 1
    n_regions: int = 0
    __slots__ = ()

    @classmethod
    def infer(cls, operand_types: list[Type], attrs: dict) -> list[Type]:
        """Result types from operand types; ops whose results cannot be inferred raise."""
        if cls.n_results == 0:
            return []
        raise TypeError(f"{cls.name}: result types must be given")

    def verify(self) -> None:
        """Check this op's local invariants (arity, types); raise VerifyError."""
        cls = type(self)
        if cls.n_operands is not None and len(self.operands) != cls.n_operands:
            raise VerifyError(f"{self.name} expects {cls.n_operands} operands")
        if cls.n_results is not None and len(self.results) != cls.n_results:
            raise VerifyError(f"{self.name} expects {cls.n_results} results")
        if len(self.regions) != cls.n_regions:
            raise VerifyError(f"{self.name} expects {cls.n_regions} regions")


class ElementwiseOp(SimpleOp):
    """A pure op on scalars whose operands and result share one type (``arith.addf``, ``math.sin``).

    ``kinds`` lists the scalar kinds accepted (``f`` float, ``i`` int, ``b`` bool, ``c`` complex).
    """

    kinds = "f"
    traits = frozenset({PURE})
    __slots__ = ()

    @classmethod
    def infer(cls, operand_types, attrs):
        return [operand_types[0]]

    def verify(self):
        super().verify()
        t = self.operands[0].type
        if not isinstance(t, ScalarType) or t.kind not in self.kinds:
            raise VerifyError(f"{self.name}: operand type {t} is not one of kinds {self.kinds!r}")
        for v in self.operands[1:]:
            if v.type != t:
                raise VerifyError(f"{self.name}: operand types differ ({t} vs {v.type})")
        if self.results[0].type != t:
            raise VerifyError(f"{self.name}: result type {self.results[0].type} != {t}")


class PredicateOp(SimpleOp):
    """A pure test on one scalar that returns ``i1`` (``math.isnan``)."""

    n_operands = 1
    traits = frozenset({PURE})
    __slots__ = ()

    @classmethod
    def infer(cls, operand_types, attrs):
        return [I1]


def unary(name: str, kinds: str = "f", traits=frozenset({PURE})) -> type[ElementwiseOp]:
    """Declare a one-operand elementwise op class."""
    return type(_cls_name(name), (ElementwiseOp,), {
        "name": name, "n_operands": 1, "kinds": kinds, "traits": traits, "__slots__": ()})


def binary(name: str, kinds: str = "f", traits=frozenset({PURE})) -> type[ElementwiseOp]:
    """Declare a two-operand elementwise op class."""
    return type(_cls_name(name), (ElementwiseOp,), {
        "name": name, "n_operands": 2, "kinds": kinds, "traits": traits, "__slots__": ()})


def _cls_name(name: str) -> str:
    return "".join(p.capitalize() for p in name.split(".")[1].split("_"))
