"""Which primal values are cheap enough to recompute in the adjoint sweep (rather than store).

``Policy.recompute(v)`` says whether a primal value needed in the adjoint sweep, and not visible
there, is recomputed rather than taken from the tape:

* cheap pure ops (integer and float arithmetic, comparisons, casts, selects, index math, array
  dims and views) are recomputed from their operands (which are themselves recomputed or cached);
* a load is recomputed when nothing in the function writes the buffer it reads (alias roots as in
  the activity analysis): the memory still holds the value (``read_only``; ``memory.py`` finds
  more loads that can be reloaded);
* transcendental functions (the ``EXPENSIVE`` trait), loop-carried values, loads from buffers
  that are written, and results of loops and calls are cached.
"""

from __future__ import annotations

from ...ir.core import EXPENSIVE, PURE, Value
from ...ir.ops import Constant, FloorDivI, Index, Load, ModI, PowI
from .memory import written_roots

# the cache optimizations ``disable`` can switch off (ablations: ``zymase.grad(disable=...)``)
OPTIMIZATIONS = ("recompute", "recompute_expensive", "reload", "snapshot", "carried", "mincut")

# index arithmetic the adjoint sweep always recomputes (even under disable={"recompute"})
ALWAYS_RECOMPUTE = (Index, FloorDivI, ModI, PowI)


class Policy:
    """Recompute-or-cache rules for one function (see the module docstring)."""

    def __init__(self, func, act, disable: frozenset = frozenset()):
        self.act = act
        self.disable = disable
        self.written = set().union(*(written_roots(op, act.roots) for op in func.walk()))

    def read_only(self, array: Value) -> bool:
        roots = self.act.roots.get(array)
        return roots is not None and not (roots & self.written)

    def recompute(self, v: Value) -> bool:
        """Cheap pure ops (not loads: see ``Plan.how``)."""
        op = v.op
        if op is None or op.regions or isinstance(op, Load):
            return False
        if isinstance(op, ALWAYS_RECOMPUTE):
            return True
        if "recompute" in self.disable and not isinstance(op, Constant):
            return False
        return op.has_trait(PURE) and not op.has_trait(EXPENSIVE)
