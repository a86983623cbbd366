"""Vector math for loops: glibc's libmvec behind LLVM's vectorized math intrinsics.

LLVM's loop vectorizer widens calls to math intrinsics (``llvm.exp.f64`` becomes
``llvm.exp.v8f64``), but code generation splits those back into one scalar libm call per lane.
glibc ships vector versions of the same functions (libmvec, named by the x86 vector ABI:
``_ZGVeN8v_exp`` takes and returns 8 doubles in an AVX-512 register; ``b``/``c``/``d``/``e``
are SSE, AVX, AVX2 and AVX-512), documented accurate to 4 ulp.  After optimization,
``map_vector_calls`` renames each widened intrinsic whose width the host's vector registers hold
to its libmvec function, so a loop over ``np.exp(a)`` runs 8 lanes at a time.  Scalar calls
(remainder iterations, code that is not vectorized) still go to libm.

Where libmvec is missing (another C library, another architecture), nothing is renamed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import re

import llvmlite.binding as llvm

# the intrinsics with a libmvec function of the same name (one argument, or two: ``vv``)
UNARY = ("exp", "exp2", "exp10", "log", "log2", "log10", "sin", "cos", "tan", "asin", "acos",
         "atan", "sinh", "cosh", "tanh")
BINARY = ("pow", "atan2")
_CALL = re.compile(r"@llvm\.(" + "|".join(UNARY + BINARY) + r")\.v(\d+)f(32|64)\b")

@functools.cache
def library() -> str | None:
    """libmvec's path, loaded into the process for MCJIT's symbol lookup (None: not found)."""
    path = ctypes.util.find_library("mvec")
    if path is None or not llvm.get_process_triple().startswith("x86_64"):
        return None
    try:
        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        llvm.load_library_permanently(path)
    except OSError:
        return None
    return path


@functools.cache
def host_letters() -> dict:
    return isa_letters(llvm.get_host_cpu_features().flatten())


def isa_letters(features: str) -> dict:
    """Vector register width in bits -> the x86 vector ABI letter of the widest ISA that
    ``features`` (LLVM's ``+avx2,...``) have for it."""
    have = {f[1:] for f in features.split(",") if f.startswith("+")}
    out = {128: "b"}
    if "avx2" in have:
        out[256] = "d"
    elif "avx" in have:
        out[256] = "c"
    if "avx512f" in have:
        out[512] = "e"
    return out


def map_vector_calls(text: str, letters: dict | None = None) -> str | None:
    """``text`` (optimized LLVM IR) with widened math intrinsics renamed to libmvec functions
    (``letters``: ``isa_letters``, default the host's), or None when it has none to rename."""
    if "@llvm." not in text or library() is None:
        return None
    letters = host_letters() if letters is None else letters
    found = False

    def rename(m):
        nonlocal found
        name, lanes, bits = m.group(1), int(m.group(2)), int(m.group(3))
        letter = letters.get(lanes * bits)
        if letter is None:
            return m.group(0)
        found = True
        args = "vv" if name in BINARY else "v"
        return f"@_ZGV{letter}N{lanes}{args}_{name}{'f' if bits == 32 else ''}"

    out = _CALL.sub(rename, text)
    return out if found else None
