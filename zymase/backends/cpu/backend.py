"""The CPU backend: optimized IR -> LLVM IR text (``backends/llvm``) with C-ABI entries
(``entry.py``) and fast Python entries (``pyentry.py``) -> llvmlite at O3 for this CPU ->
machine code loaded with MCJIT (``engine.py``), called through ctypes (``abi.py``).
Vectorized loops call glibc's vector math (``veclib.py``) unless ``disable={"vector-math"}``.

Matrix products call NumPy's bundled OpenBLAS where it is found (``blas.py``); reverse-mode tapes
of 1 MiB or more are kept between calls (``tape_pool.py``).  Artifacts can be saved (the object
code) and loaded in another process without LLVM passes (``jit(cache=True)``).
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from typing import Any

import llvmlite
import llvmlite.binding as llvm

from ...ir.core import Module
from ...options import Options
from ...passes.licm import written_arguments
from ..base import Artifact, Backend, Capabilities
from ..llvm.target import Target
from . import blas
from .abi import EntryPoint
from .codegen import generate
from .dispatch import Dispatcher
from .engine import compile_ir, load_object

VECTOR_MATH = "vector-math"  # ``disable={"vector-math"}``: libm in vectorized loops too


def host_target() -> Target:
    return Target("host", blas.available())


class CpuArtifact(Artifact):
    def __init__(self, compiled, payload: dict):
        self.compiled = compiled
        self.payload = payload
        self.listings = {"llvm": compiled.llvm_ir} if compiled.llvm_ir else {}
        self.entries: dict[str, EntryPoint] = {}
        for name, (symbol, fast, arg_types, result_types, written) in payload["entries"].items():
            self.entries[name] = EntryPoint(
                compiled, symbol, arg_types, result_types, payload["errors"], written,
                compiled.address(fast) if fast else None)

    def entry(self, name: str) -> EntryPoint:
        return self.entries[name]

    def save(self) -> dict:
        return {**self.payload, "object": self.compiled.object_code}

    def tape_counts(self, n: int):
        return (ctypes.c_int64 * max(1, n)).from_address(
            self.compiled.global_address("zy.tape_counts"))


class CpuBackend(Backend):
    """Machine code for the CPU this process runs on (the default backend)."""

    name = "cpu"
    capabilities = Capabilities(fast_calls=True, disk_cache=True, tape_counts=True,
                                switches=frozenset({VECTOR_MATH}))

    def compile(self, module: Module, entries: Sequence[str], options: Options, *,
                count_tape: bool = False) -> CpuArtifact:
        first, *more = entries
        vector_math = VECTOR_MATH not in options.disable
        text, errors, symbol, fast = generate(module, first, options.fastmath, count_tape, more,
                                              host_target(), options.deterministic, vector_math)
        table = {}
        for name in entries:
            f = module[name]
            table[name] = (symbol if name == first else f"zy.entry.{name}",
                           fast if name == first else None, f.arg_types, f.result_types,
                           written_arguments(f, module))
        return CpuArtifact(compile_ir(text, vector_math=vector_math),
                           {"entries": table, "errors": errors})

    def identity(self) -> tuple:
        return (llvmlite.__version__, llvm.get_host_cpu_name(),
                llvm.get_host_cpu_features().flatten())

    def load(self, payload: Any) -> CpuArtifact:
        return CpuArtifact(load_object(payload["object"]), payload)

    def dispatcher(self, fallback) -> Dispatcher:
        return Dispatcher(fallback)
