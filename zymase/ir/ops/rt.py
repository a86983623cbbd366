"""``rt``: run-time checks that stop the program with a user-visible Python exception."""

from __future__ import annotations

from ..core import MAY_RAISE
from ..types import I1
from .base import SimpleOp, VerifyError

EXCEPTIONS = ("IndexError", "ValueError", "ShapeError", "ZeroDivisionError", "OverflowError",
              "AssertionError", "MemoryError",
              "UnboundLocalError", "TypeError", "RuntimeError", "NotImplementedError",
              "ArithmeticError", "FloatingPointError", "LinAlgError")


class ShapeError(ValueError):
    """Array shapes do not match (the ``ShapeError`` kind of ``rt.assert``)."""


class Assert(SimpleOp):
    """``rt.assert %ok [, %a [, %b]] {kind = "IndexError", msg = "..."}``: raise ``kind(msg)``
    when ``%ok`` is 0; ``{a}`` and ``{b}`` in the message are replaced by the i64 operands.

    The op's location names the user's line; the message is shown with it.
    """

    name = "rt.assert"
    n_operands = None
    n_results = 0
    traits = frozenset({MAY_RAISE})
    __slots__ = ()

    def verify(self):
        super().verify()
        if not 1 <= len(self.operands) <= 3 or self.operands[0].type != I1:
            raise VerifyError("rt.assert needs an i1 condition (and at most two i64 values)")
        if self.attrs.get("kind") not in EXCEPTIONS:
            raise VerifyError(f"rt.assert: unknown exception kind {self.attrs.get('kind')!r}")
