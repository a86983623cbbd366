"""The registry of derivative rules: one record per op, keyed by the op's text name (tests and
``has_rule`` look records up by name; the decorators take op classes).

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
* ``strong`` marks records whose partial can be infinite where the function is finite (sqrt and
  log at 0, 1/y at y = 0, asin at 1, ...): there a zero tangent or cotangent times the partial is
  0, not NaN (Enzyme's "strong zero").  A value that does not reach the result, such as the
  diagonal of ``sqrt(dx**2 + dy**2)`` cut away by ``np.triu(..., 1)``, then contributes nothing,
  as finite differences say; JAX and PyTorch give NaN there.
* ``ZERO`` names ops whose results are never active: comparisons, integer ops, piecewise
  constant functions (floor, sign, ...), predicates.
"""

from __future__ import annotations

from collections.abc import Callable

from ...ir.core import Op


class Rule:
    __slots__ = ("fn", "uses", "strong")

    def __init__(self, fn, uses: str, strong: bool = False):
        self.fn, self.uses, self.strong = fn, uses, strong


PARTIALS: dict[str, Rule] = {}
LINEAR: dict[str, Rule] = {}
ZERO: set[str] = set()


def partials(*ops: type[Op], uses: str = "x", strong: bool = False):
    """Register ``fn(b, *operands, out, need)`` as the partials record of ``ops``."""
    def deco(fn: Callable):
        for op in ops:
            PARTIALS[op.name] = Rule(fn, uses, strong)
        return fn
    return deco


def linear(*ops: type[Op], uses: str = ""):
    """Register a class with static ``jvp``/``vjp`` as the record of ``ops``."""
    def deco(cls):
        for op in ops:
            LINEAR[op.name] = Rule((cls.jvp, cls.vjp), uses)
        return cls
    return deco


def zero(*ops: type[Op]) -> None:
    """Mark ``ops`` as never carrying a derivative."""
    ZERO.update(op.name for op in ops)


def has_rule(name: str) -> bool:
    return name in PARTIALS or name in LINEAR or name in ZERO
