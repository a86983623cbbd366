"""``func``: functions, calls and returns.  ``func.func`` itself is ``zymase.ir.core.Func`` (the
IR core builds on it); its text name is given here, with its dialect."""

from __future__ import annotations

from ..core import OPS, TERMINATOR, Func
from .base import SimpleOp, VerifyError

Func.name = "func.func"
OPS[Func.name] = Func


class Call(SimpleOp):
    """``%r = func.call %a, %b {callee = @g} : f64``: effects are those of the callee."""

    name = "func.call"
    n_results = None
    __slots__ = ()

    @property
    def callee(self) -> str:
        return self.attrs["callee"]


class Return(SimpleOp):
    """``func.return %a, %b``: the terminator of a function body."""

    name = "func.return"
    n_results = 0
    traits = frozenset({TERMINATOR})
    __slots__ = ()

    def verify(self):
        super().verify()
        f = self.parent_op
        if not isinstance(f, Func):
            raise VerifyError("func.return outside a function body")
        got = [v.type for v in self.operands]
        if got != list(f.result_types):
            raise VerifyError(f"func.return types {[str(t) for t in got]} != function results "
                              f"{[str(t) for t in f.result_types]}")
