"""IR module -> LLVM module text for this CPU: every function, the runtime, one C-ABI entry
wrapper per entry and a fast Python entry for the first."""

from __future__ import annotations

from ...ir.core import Module
from ...passes.licm import written_arguments
from ..llvm.emit import FunctionEmitter, ModuleEmitter
from ..llvm.runtime import runtime_ir
from ..llvm.target import Target
from . import pyentry
from .entry import entry_ir


def generate(module: Module, entry: str, fastmath: bool = False, counting: bool = False,
             more=(), target: Target | None = None, deterministic: bool = False,
             vector_math: bool = True):
    """(LLVM IR text, error table, entry symbol, fast-entry symbol or None) for ``module``
    called through ``entry``.  ``counting`` counts tape slots per push site into the global
    ``zy.tape_counts`` (the sites are then in ``module.meta["tape_sites"]``).  ``more``: names of
    other functions that get a C-ABI entry (``zy.entry.<name>``) too."""
    me = ModuleEmitter(fastmath, counting, target or Target(), deterministic, vector_math)
    for f in module:
        me.funcs.append(FunctionEmitter(me, f, module).emit_function())
    func = module[entry]
    me.funcs.append(entry_ir(func))
    for name in more:
        me.funcs.append(entry_ir(module[name]))
    fast = None
    if pyentry.supported(func):
        me.globals.append(pyentry.declarations())
        me.funcs.append(pyentry.fast_entry_ir(func, bool(func.attrs.get("noalias")),
                                              written_arguments(func, module),
                                              module.meta.get("captures", ())))
        fast = f"zy.fast.{entry}"
    if counting:
        module.meta["tape_sites"] = me.sites
    return me.text(runtime_ir()), me.errors, f"zy.entry.{entry}", fast
