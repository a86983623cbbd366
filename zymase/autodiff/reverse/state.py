"""The settings one reverse-mode build runs under, and the reverse regions it opens."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ...ir.core import Block, Value


@dataclass(frozen=True)
class Settings:
    """Everything a build is told (``grad_function``'s options).

    ``keep_primal``: return the primal results too.  ``disable``: cache optimizations switched
    off (``plan.OPTIMIZATIONS``).  ``memory_limit``: bytes for the tape and checkpoints (None:
    unlimited).  ``split_calls``: recursive calls pass their tape to a split adjoint (False
    under forward mode over the result, which can follow neither a tape between calls nor
    arrays kept by reference).  ``lower(py_function, example_args) -> Func``: compiles a helper
    written in Python (checkpointing's schedule).  ``name``: the function's name when not
    ``f.grad`` (split pairs).  ``record_needs``: record which values each block's adjoint asks
    for (the min-cut's first build).
    """

    keep_primal: bool = True
    disable: frozenset = frozenset()
    memory_limit: int | None = None
    split_calls: bool = True
    lower: Callable | None = None
    name: str | None = None
    record_needs: bool = False


class Scope:
    """A reverse region under construction, mirroring one primal block."""

    __slots__ = ("pblock", "fblock", "rblock", "env", "head_env", "shadows", "ct", "head", "lead")

    def __init__(self, pblock: Block, fblock: Block, rblock: Block):
        self.pblock, self.fblock, self.rblock = pblock, fblock, rblock
        self.env: dict[Value, Value] = {}
        self.head_env: dict[Value, Value] = {}  # values defined at the head (usable anywhere)
        self.shadows: dict[Value, Value] = {}
        self.ct: dict[Value, Value] = {}
        self.head = 0  # ops at the start of rblock: pops and shadow allocations
        self.lead = 0  # ops before the pops (an iteration's own tape: parallel.py)
