"""llvmlite: LLVM IR text -> optimized machine code for the host CPU, loaded with MCJIT.

One target machine for the process (host CPU name and features, so loops become AVX code); the
new pass manager at O3, with the few LLVM options of ``LLVM_OPTIONS`` set while zymase compiles.
``compile_ir(text)`` returns a handle whose ``address(name)`` gives function pointers;
``object_code`` is kept so the disk cache can reload it without LLVM passes.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

import llvmlite.binding as llvm

from . import hostcall, threads, veclib
from .blas import symbols
from .pybox import FREE_CAPSULE_IR
from .pyentry import python_symbols
from .tape_pool import pool_symbols

_LOCK = threading.RLock()
_TM = None


def _new_target_machine():
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(),
        opt=3, jit=True)


def target_machine():
    """The shared target machine used to optimize and emit objects (never given to an engine,
    since an MCJIT engine takes ownership of its target machine)."""
    global _TM
    with _LOCK:
        if _TM is None:
            _TM = _new_target_machine()
        return _TM


class Compiled:
    """Machine code loaded in this process (kept alive as long as this object)."""

    def __init__(self, engine, object_code: bytes, llvm_ir: str = ""):
        self._engine = engine
        self.object_code = object_code
        self.llvm_ir = llvm_ir

    def address(self, name: str) -> int:
        return self._engine.get_function_address(name)

    def global_address(self, name: str) -> int:
        return self._engine.get_global_value_address(name)


# LLVM options (global to the process) set while zymase optimizes and emits, then put back:
# name -> (ours, LLVM's default).  Each cost much compile time and bought no run time on the
# corpus (medium and large sizes):
LLVM_OPTIONS = {
    # Loop Strength Reduction: 40-45% of code generation on reverse-mode functions (dozens of
    # loops, many addresses from the tape and array indices); heat1d's primal at large size ran
    # 27% faster without it
    "disable-lsr": ("true", "false"),
    # O3's loop unswitching on injected invariant conditions (versioning a loop on `i < n`):
    # half of nbody's gradient optimization time, while the boundscheck pass versions loops
    "simple-loop-unswitch-inject-invariant-conditions": ("false", "true"),
}


def compile_ir(text: str, optimize: bool = True, vector_math: bool = True) -> Compiled:
    """``vector_math``: vectorized loops call libmvec (``veclib.py``; 4 ulp) rather than libm
    once per lane."""
    tm = target_machine()
    with _LOCK, _llvm_options():
        mod = llvm.parse_assembly(text)
        mod.verify()
        if optimize:
            pto = llvm.create_pipeline_tuning_options(speed_level=3)
            pb = llvm.create_pass_builder(tm, pto)
            pb.getModulePassManager().run(mod, pb)
        listing = str(mod)
        vector = veclib.map_vector_calls(listing) if optimize and vector_math else None
        if vector is not None:  # vectorized math: libmvec instead of a libm call per lane
            mod, listing = llvm.parse_assembly(vector), vector
        obj = tm.emit_object(mod)
        return _load(obj, listing)


@contextmanager
def _llvm_options():
    for name, (ours, _) in LLVM_OPTIONS.items():
        llvm.set_option("zymase", f"-{name}={ours}")
    try:
        yield
    finally:
        for name, (_, default) in LLVM_OPTIONS.items():
            llvm.set_option("zymase", f"-{name}={default}")


def load_object(obj: bytes) -> Compiled:
    with _LOCK:
        return _load(obj, "")


_BOUND = False
_FOREVER = []  # code that lives as long as the process: the destructor of returned arrays


def _bind_python_symbols():
    """Give MCJIT the addresses of the Python objects and C-API functions the fast entry uses,
    of BLAS, of the process's kept tape (``tape_pool.pool_symbols``), of the thread pool
    (``threads.pool_symbols``: compiled once, never unloaded) and of the destructor of the
    memory of returned arrays (``pybox.FREE_CAPSULE_IR``: compiled here, never unloaded, since
    arrays outlive the code that made them)."""
    global _BOUND
    if not _BOUND:
        for name, addr in {**python_symbols(), **symbols(), **pool_symbols(),
                           **threads.pool_symbols(), **hostcall.symbols()}.items():
            llvm.add_symbol(name, addr)
        _BOUND = True
        owner = _load(target_machine().emit_object(llvm.parse_assembly(FREE_CAPSULE_IR)), "")
        _FOREVER.append(owner)
        llvm.add_symbol("zy.py.free_capsule", owner.address("zy.free_capsule"))


def _load(obj: bytes, text: str) -> Compiled:
    _bind_python_symbols()
    veclib.library()  # (code from the disk cache may call it too)
    tm = _new_target_machine()
    empty = llvm.parse_assembly("")
    engine = llvm.create_mcjit_compiler(empty, tm)
    engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
    engine.finalize_object()
    return Compiled(engine, obj, text)
