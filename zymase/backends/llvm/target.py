"""What emitted LLVM code may assume about the machine it will run on.

The emitters are target-neutral; a backend that compiles their output says, through a
``Target``, what its machine adds: which element types have a BLAS ``gemm`` bound as
``zy.cblas_dgemm`` / ``zy.cblas_sgemm`` (matrix products call it when the layout allows).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    name: str = "generic"
    blas: frozenset[str] = frozenset()  # element types ("f64", "f32") with a bound gemm


GENERIC = Target()
