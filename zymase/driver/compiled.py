"""What the pipeline hands the transforms: a compiled specialization of the primal
(``Specialization``, for ``jit``) or of a derivative (``Derivative``), each wrapping the backend's
executable with what the transforms need to call it on user values."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..backends.base import Executable
from ..errors import DifferentiationError, UnsupportedError, caller_loc
from ..frontend.args import flatten_arg
from .signature import rebuild_result


@dataclass
class Specialization:
    """Compiled code of the primal for one argument signature."""

    entry: Executable
    templates: list
    result: Any  # description of the returned value (signature.describe_result)
    module: Any  # the optimized IR (None when loaded from the disk cache)
    llvm_ir: str  # the backend's listing ("" when it has none)
    fast: int | None = None  # address of the fast C entry, when this signature has one
    captures: Any = None  # what the code read from outside its arguments (frontend/captures.py)
    names: list = field(default_factory=list)  # how messages name each user argument

    def __call__(self, args):
        flat = [v for a, t in zip(args, self.templates) for v in flatten_arg(a, t)]
        out = self.entry.call(flat, outer_arrays(self.captures, flat, self.entry.written))
        return rebuild_result(self.result, out)

    def holds(self) -> bool:
        """Whether the names the code read still hold what it was compiled for."""
        return self.captures is None or self.captures.holds()


@dataclass
class Derivative:
    """Compiled code of a derivative for one argument signature, called with flat argument
    lists (``api/`` builds those from user values)."""

    entry: Executable
    templates: list  # FVal templates of the user's arguments
    result: Any  # describe_result of the primal's return value
    flat_active: list  # flat IR argument indices that are active
    leaf_of: dict  # flat index -> (user argument position, leaf path)
    module: Any  # the IR (None when loaded from the disk cache)
    func_name: str
    n_flat_args: int
    n_flat_results: int
    fast: Any = None  # dispatcher of the C entry (at most one scalar result), or None
    adjoint: Any = None  # "rev-split": the adjoint function's executable (``entry`` is forward's)
    written: tuple = ()  # reverse modes: flat argument positions the primal writes
    artifact: Any = None  # the backend's artifact (tape counters, listings)
    keeps_refs: bool = False  # the tape holds arrays by reference (compile.keeps_references)
    captures: Any = None  # what the code read from outside its arguments (frontend/captures.py)

    def holds(self) -> bool:
        """Whether the names the code read still hold what it was compiled for."""
        return self.captures is None or self.captures.holds()

    def outer(self, flat: list) -> list:
        """The arrays the code reads by reference, for a call on ``flat``."""
        return outer_arrays(self.captures, flat, self.written)

    def check_distinct(self, flat: list, shadows: dict | None = None) -> None:
        """Reverse mode is compiled for arrays that do not share memory: a value the adjoint
        sweep needs is kept from being overwritten only through its own array.  Refuse a call
        where an array the function writes (or a shadow it accumulates into) overlaps another
        array it is given, rather than return a wrong derivative."""
        if not self.written and not shadows:
            return
        arrays = [(k, x) for k, x in enumerate(flat[:self.n_flat_args])
                  if isinstance(x, np.ndarray)]
        arrays += [(("shadow", i), x) for i, x in (shadows or {}).items()]
        if len(arrays) < 2:
            return
        written = set(self.written) | {k for k, _ in arrays if isinstance(k, tuple)}
        for i, (ki, x) in enumerate(arrays):
            for kj, y in arrays[i + 1:]:
                if (ki in written or kj in written) and _overlap(x, y):
                    w, other = (ki, kj) if ki in written else (kj, ki)
                    raise DifferentiationError(
                        f"{self._describe(w)} and {self._describe(other)} share memory, and "
                        f"the derivative writes {self._describe(w)}: reverse mode needs arrays "
                        "that do not overlap (pass a copy, e.g. f(a, a.copy()))", caller_loc())

    def _describe(self, k) -> str:
        if isinstance(k, tuple):
            return "the shadow of " + self._describe(k[1])
        pos, path = self.leaf_of[k]
        name = self.names[pos].split(" of ")[0] if pos < len(self.names) else f"argument {pos}"
        return name + "".join(f"[{p!r}]" for p in path)

    def call(self, flat: list) -> list:
        return self.entry.call(flat, self.outer(flat))

    def call_fast(self, flat: list):
        """For derivatives with float/int results only: the C entry that checks argument
        types itself, else the general path.  Returns None, the one result, or a tuple."""
        if self.fast is None:
            return fast_results(self.call(flat))
        return self.fast.builtin(*flat)


def fast_results(out: list):
    """Results as the fast C entry returns them: None, the one result, or a tuple."""
    return None if not out else out[0] if len(out) == 1 else tuple(out)


def outer_arrays(captures, flat: list, written) -> list:
    """The arrays bound now to the names the code reads by reference; refused when one of them
    shares memory with an argument the code writes (the code assumes they are distinct)."""
    if not captures or not captures.n_slots:
        return []
    arrays = captures.arrays()
    for k in written:
        x = flat[k] if k < len(flat) else None
        if isinstance(x, np.ndarray):
            for c, g in zip([c for c in captures.items if c.slot is not None], arrays):
                if _overlap(x, g):
                    raise UnsupportedError(
                        f"the global array {c.where()} shares memory with an array argument "
                        "that the function writes: compiled code assumes they are distinct "
                        "(pass a copy, or pass the array once as an argument)", caller_loc())
    return arrays


def _overlap(x, y) -> bool:
    """Whether two arrays share an element (interleaved or side-by-side views of one buffer do
    not); a problem too hard to settle quickly counts as overlapping."""
    if not np.may_share_memory(x, y):
        return False
    try:
        return bool(np.shares_memory(x, y, max_work=10_000))
    except getattr(np, "exceptions", np).TooHardError:  # (np.TooHardError before NumPy 1.25)
        return True
