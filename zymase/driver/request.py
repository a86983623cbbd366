"""What to compile: ``Request`` names the transform (the primal for ``jit``, or a derivative
mode), the active arguments and the differentiated results.  With the argument signature, the
options and the backend it keys every compiled specialization (``cache.py``)."""

from __future__ import annotations

from dataclasses import dataclass

MODES = ("primal", "fwd", "rev", "rev-split", "fwd-rev")


@dataclass(frozen=True)
class Request:
    """``mode``: "primal" (``jit``), "fwd" (forward mode, ``width`` directions per pass), "rev"
    (reverse mode: one function running the forward and adjoint sweeps), "rev-split" (separate
    forward and adjoint entries, ``vjp``) or "fwd-rev" (forward over reverse, Hessians).
    ``active``: the user's active argument positions; ``results``: the differentiated result
    positions (reverse); ``primal``: reverse mode also returns the primal results;
    ``optimize_before_ad=False`` differentiates unoptimized IR (an ablation)."""

    mode: str
    active: tuple = ()
    width: int = 1
    results: tuple = (0,)
    optimize_before_ad: bool = True
    primal: bool = True

    def __post_init__(self):
        if self.mode not in MODES:
            raise ValueError(f"unknown mode {self.mode!r}")


PRIMAL = Request("primal")
