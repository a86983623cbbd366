"""BLAS for matrix products: NumPy's bundled OpenBLAS (``scipy_cblas_dgemm64_``, 64-bit
integers) when it can be found, its gemm and gemv for float64, float32, complex128 and complex64
bound for MCJIT as ``zy.cblas_<x>gemm`` / ``zy.cblas_<x>gemv`` (x in d, s, z, c).  Without it the
matmul kernels use their loops only."""

from __future__ import annotations

import ctypes
import glob
import os

from ..llvm.matmul import BLAS_NAMES

ROUTINES = ("gemm", "gemv")
_FOUND: dict | None = None


def symbols() -> dict[str, int]:
    """{"zy.cblas_dgemm": address, ...} for the routines found, or {} when none is."""
    global _FOUND
    if _FOUND is None:
        _FOUND = {}
        try:
            import numpy
            libdir = os.path.join(os.path.dirname(numpy.__file__), "..", "numpy.libs")
            for path in glob.glob(os.path.join(libdir, "libscipy_openblas*.so*")):
                lib = ctypes.CDLL(path)
                for x in BLAS_NAMES.values():
                    for routine in ROUTINES:
                        fn = getattr(lib, f"scipy_cblas_{x}{routine}64_", None)
                        if fn is not None:
                            addr = ctypes.cast(fn, ctypes.c_void_p).value
                            _FOUND[f"zy.cblas_{x}{routine}"] = addr
                if _FOUND:
                    break
        except OSError:
            _FOUND = {}
    return _FOUND


def available() -> frozenset[str]:
    """The element types with both a gemm and a gemv (``backends.llvm.target.Target.blas``)."""
    found = symbols()
    return frozenset(t for t, x in BLAS_NAMES.items()
                     if all(f"zy.cblas_{x}{r}" in found for r in ROUTINES))
