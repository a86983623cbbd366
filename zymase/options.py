"""Compilation options shared by ``jit`` and the derivative transforms."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Options:
    """``fastmath``: allow reassociation and contraction of float ops (reductions vectorize).
    ``boundscheck``: out-of-range indices raise IndexError (checks the compiler proves
    unnecessary are removed).  ``cache``: keep compiled code on disk across processes.
    ``disable``: names of optimization passes to skip (ablations).  ``memory_limit``: bytes
    the reverse-mode tape and checkpoints may use (None: unlimited; see autodiff/checkpoint.py)."""

    fastmath: bool = False
    boundscheck: bool = True
    cache: bool = False
    disable: frozenset = field(default_factory=frozenset)
    memory_limit: int | None = None
