"""The reverse-mode plan: for every primal value the adjoint sweep needs, whether it is stored
on the tape, recomputed, reloaded from memory or read from a snapshot.  Analyses only; these
modules build no IR.

* ``policy.py``: which ops are cheap enough to recompute;
* ``memory.py``: mod/ref over buffers (reloads, snapshots);
* ``flows.py``: arrays passed on by loops and branches, and whether each may have a shadow of
  its own;
* ``values.py``: ``Plan``, the decision per value (``Plan.how``);
* ``mincut.py``: the values to store instead, chosen by a minimum cut.
"""

from __future__ import annotations

from .mincut import choose_stores
from .policy import OPTIMIZATIONS
from .values import Here, Plan, make_plan

__all__ = ["OPTIMIZATIONS", "Here", "Plan", "choose_stores", "make_plan"]
