"""BLAS for matrix products: NumPy's bundled OpenBLAS (``scipy_cblas_dgemm64_``, 64-bit
integers) when it can be found, bound for MCJIT as ``zy.cblas_dgemm`` / ``zy.cblas_sgemm``.
Without it the matmul kernels use their loops only."""

from __future__ import annotations

import ctypes
import glob
import os

_FOUND: dict | None = None


def symbols() -> dict[str, int]:
    """{"zy.cblas_dgemm": address, "zy.cblas_sgemm": address} or {} when not found."""
    global _FOUND
    if _FOUND is None:
        _FOUND = {}
        try:
            import numpy
            libdir = os.path.join(os.path.dirname(numpy.__file__), "..", "numpy.libs")
            for path in glob.glob(os.path.join(libdir, "libscipy_openblas*.so*")):
                lib = ctypes.CDLL(path)
                for ours, theirs in (("zy.cblas_dgemm", "scipy_cblas_dgemm64_"),
                                     ("zy.cblas_sgemm", "scipy_cblas_sgemm64_")):
                    fn = getattr(lib, theirs, None)
                    if fn is not None:
                        _FOUND[ours] = ctypes.cast(fn, ctypes.c_void_p).value
                if _FOUND:
                    break
        except OSError:
            _FOUND = {}
    return _FOUND


def available() -> frozenset[str]:
    """The element types with a gemm (for ``backends.llvm.target.Target.blas``)."""
    found = symbols()
    return frozenset(t for t, name in (("f64", "zy.cblas_dgemm"), ("f32", "zy.cblas_sgemm"))
                     if name in found)
