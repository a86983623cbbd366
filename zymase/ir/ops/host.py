"""``host``: calls from compiled code back into Python, for what a well-kept library does and
compiled code should not copy: NumPy's FFT (pocketfft), NumPy's random generators (the same
streams as NumPy's), ``print``.  The functions themselves are in ``zymase/ir/host.py``."""

from __future__ import annotations

from ..core import MAY_RAISE, READS, WRITES
from ..types import ArrayType
from .base import SimpleOp, VerifyError


class HostCall(SimpleOp):
    """``host.call %x, %out {fn = "fft", writes = [1], kw = "{...}", state = false}``: run the
    Python function ``fn`` of ``ir/host.py`` on the operands (arrays as NumPy views of their
    memory, scalars as NumPy scalars) and the keywords ``kw`` (JSON); it writes into the array
    operands listed in ``writes`` and nothing else.  ``state``: it advances a state outside the
    program (a random generator), so running it again would not give the same values (reverse
    mode must not recompute it).  An exception it raises stops the program, at the op's line."""

    name = "host.call"
    n_operands = None
    n_results = 0
    traits = frozenset({READS, WRITES, MAY_RAISE})
    __slots__ = ()

    def written(self):
        return [self.operands[i] for i in self.attrs.get("writes", ())]

    def verify(self):
        super().verify()
        if not isinstance(self.attrs.get("fn"), str):
            raise VerifyError("host.call needs the name of its function (fn)")
        for i in self.attrs.get("writes", ()):
            if not (isinstance(i, int) and 0 <= i < len(self.operands)
                    and isinstance(self.operands[i].type, ArrayType)):
                raise VerifyError("host.call: writes names array operands")
        if not isinstance(self.attrs.get("kw", "{}"), str):
            raise VerifyError("host.call: kw is a JSON string")
