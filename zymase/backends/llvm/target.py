"""What emitted LLVM code may assume about the machine it will run on.

The emitters are target-neutral; a backend that compiles their output says, through a
``Target``, what its machine adds: which element types have a BLAS ``gemm`` and ``gemv`` bound as
``zy.cblas_<x>gemm`` / ``zy.cblas_<x>gemv`` (matrix products call them when big enough).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    name: str = "generic"
    blas: frozenset[str] = frozenset()  # element types ("f64", "c64", ...) with gemm and gemv


GENERIC = Target()
