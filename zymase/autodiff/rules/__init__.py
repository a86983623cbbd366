"""Derivative rules as data: one record per op, mirroring ``zymase/ir/ops``.

* ``PARTIALS[name] = Rule(fn, uses)`` with ``fn(b, *operands, out=..., need=...)`` giving the local
  partial derivative of the result with respect to each operand (``None`` where not needed or
  zero).  Forward mode forms ``t_out = sum(p_i * t_i)``, reverse mode ``ct_i += ct_out *
  conj(p_i)`` (the conjugate only matters for complex values: the PyTorch/JAX convention).
* ``LINEAR[name] = Rule((jvp, vjp), uses)`` for ops that are not written as partials (select,
  casts, complex parts, |z|): ``jvp(b, attrs, primals, out, tangents) -> tangent`` and
  ``vjp(b, attrs, primals, out, ct) -> [ct_i]``.
* ``uses`` says which primal values a rule reads: ``"x"`` the operands, ``"o"`` the result,
  ``"c"`` the first operand only (a condition), ``"y"`` each operand only when the other one is
  active (a product: ``0.5 * p`` needs nothing of ``p``); the reverse planner caches or
  recomputes exactly these.
* ``ZERO`` names ops whose results are never active: comparisons, integer ops, piecewise
  constant functions (floor, sign, ...), predicates.

Control flow, calls and memory are handled by the transforms, not by rules.
"""

from __future__ import annotations

from collections.abc import Callable

from .builder import RuleBuilder  # noqa: F401


class Rule:
    __slots__ = ("fn", "uses")

    def __init__(self, fn, uses: str):
        self.fn, self.uses = fn, uses


PARTIALS: dict[str, Rule] = {}
LINEAR: dict[str, Rule] = {}
ZERO: set[str] = set()


def partials(*names: str, uses: str = "x"):
    """Register ``fn(b, *operands, out, need)`` as the partials record of ops ``names``."""
    def deco(fn: Callable):
        for n in names:
            PARTIALS[n] = Rule(fn, uses)
        return fn
    return deco


def linear(*names: str, uses: str = ""):
    """Register a class with static ``jvp``/``vjp`` as the record of ops ``names``."""
    def deco(cls):
        for n in names:
            LINEAR[n] = Rule((cls.jvp, cls.vjp), uses)
        return cls
    return deco


def zero(*names: str) -> None:
    ZERO.update(names)


def has_rule(name: str) -> bool:
    return name in PARTIALS or name in LINEAR or name in ZERO


from . import arith, complex, math  # noqa: E402,F401  (register the records)
