"""``linalg``: matrix products, lowered to BLAS where the backend has it.

``linalg.matmul %a, %b, %out`` writes ``out = a @ b`` for ranks (2,2), (2,1) and (1,2) of one
float or complex type; ``out`` does not overlap ``a`` or ``b``.  Operands of one rank r > 2 are
stacks: their first r - 2 dims (equal in all three) index the batch, a product per matrix.  With
``{acc = true}`` it adds the product to ``out`` (``out += a @ b``, which then reads ``out`` too):
what reverse mode accumulates into a shadow, with BLAS's beta = 1 and no temporary.
"""

from __future__ import annotations

from ..core import READS, WRITES
from .base import SimpleOp, VerifyError


class Matmul(SimpleOp):
    name = "linalg.matmul"
    n_operands = 3
    n_results = 0
    traits = frozenset({READS, WRITES})
    written_operands = (2,)  # the output; the two inputs are only read
    __slots__ = ()

    def verify(self):
        super().verify()
        a, b, out = (v.type for v in self.operands)
        stacks = a.ndim == b.ndim == out.ndim > 2
        if (a.ndim, b.ndim) not in ((2, 2), (2, 1), (1, 2)) and not stacks:
            raise VerifyError("linalg.matmul: ranks must be (2,2), (2,1), (1,2) or (r,r,r) for "
                              "stacks, r > 2")
        if not (a.dtype == b.dtype == out.dtype) or not a.dtype.is_inexact:
            raise VerifyError("linalg.matmul: operands must share a float type")
        if not isinstance(self.attrs.get("acc", False), bool):
            raise VerifyError("linalg.matmul: acc must be a boolean")
