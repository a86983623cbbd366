"""Derivative rules as data: one record per op, mirroring ``zymase/ir/ops`` (``arith.py``,
``complex.py``, ``math.py``), registered in ``registry.py`` (see there for the record format).
Control flow, calls and memory are handled by the transforms, not by rules."""

from __future__ import annotations

from . import arith, complex, math  # noqa: F401  (each registers its records)
from .builder import RuleBuilder
from .registry import LINEAR, PARTIALS, ZERO, Rule, has_rule, linear, partials, zero

__all__ = ["LINEAR", "PARTIALS", "ZERO", "Rule", "RuleBuilder", "has_rule", "linear", "partials",
           "zero"]
