"""The interpreter backend: ``backend="interp"`` runs the same optimized IR as the CPU backend
through ``zymase.ir.interp`` (NumPy scalars and arrays, Python loops), with no machine code.

It is slow (a Python call per op) and exact to the same semantics, so it serves to debug a
program (a run-time error is a Python exception at the user's line; ``pdb`` steps through the
interpreter) and as an oracle for the compiled backends.

    >>> import zymase
    >>> def f(x):
    ...     return 3.0 * x * x
    >>> zymase.grad(f, backend="interp")(2.0)
    12.0
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...errors import RUNTIME_ERRORS, ZymaseError
from ...ir.core import Module
from ...ir.interp import Interpreter, release_exported
from ...ir.types import ArrayType
from ...options import Options
from ...passes.licm import written_arguments
from ..base import Backend, Capabilities, Executable, SimpleArtifact, convention_scalar


class InterpExecutable(Executable):
    def __init__(self, module: Module, name: str):
        f = module[name]
        self.module, self.name = module, name
        self.arg_types, self.result_types = list(f.arg_types), list(f.result_types)
        self.written = tuple(written_arguments(f, module))

    def call(self, flat: list, globals_: list = ()) -> list:
        self.refuse_read_only(flat)
        args = [a if isinstance(t, ArrayType) else t.np_dtype.type(a)
                for t, a in zip(self.arg_types, flat)]
        with np.errstate(all="ignore"):
            try:
                out = Interpreter(self.module, globals_).call(self.name, args)
            except ZymaseError:
                raise
            except Exception as e:
                loc = getattr(e, "loc", None)  # a failed rt.assert (ir/interp.py tags it)
                if loc is None:
                    raise
                kind = "ShapeError" if type(e).__name__ == "ShapeError" else type(e).__name__
                cls = RUNTIME_ERRORS.get(kind, ZymaseError)
                raise cls(str(e), loc) from None
        arrays = [a for a in flat if isinstance(a, np.ndarray)]
        return [_result(t, v, arrays) for t, v in zip(self.result_types, out)]

    def free_tape(self, token: int) -> None:
        release_exported(token)


def _result(t, v, arrays):
    """A result as the calling convention gives it (``backends/base.py``)."""
    if isinstance(t, ArrayType):
        if not v.flags.writeable and not any(np.may_share_memory(v, a) for a in arrays):
            return v.copy()  # a constant of the program: the caller gets its own
        return v
    return convention_scalar(t, v)


class InterpBackend(Backend):
    """Runs the optimized IR in the interpreter (every op, every dtype; no fast calls)."""

    name = "interp"
    capabilities = Capabilities()

    def compile(self, module: Module, entries: Sequence[str], options: Options, *,
                count_tape: bool = False) -> SimpleArtifact:
        return SimpleArtifact({name: InterpExecutable(module, name) for name in entries})
