"""IR module -> LLVM module text: every function, the runtime, and one C-ABI entry wrapper."""

from __future__ import annotations

from ...ir.core import Module
from ...passes.licm import written_arguments
from . import pyentry
from .emit import FunctionEmitter, ModuleEmitter
from .entry import entry_ir
from .runtime import runtime_ir


def generate(module: Module, entry: str, fastmath: bool = False, counting: bool = False,
             more=()):
    """(LLVM IR text, error table, entry symbol, fast-entry symbol or None) for ``module``
    called through ``entry``.  ``counting`` counts tape slots per push site into the global
    ``zy.tape_counts`` (the sites are then in ``module.meta["tape_sites"]``).  ``more``: names of
    other functions that get a C-ABI entry (``zy.entry.<name>``) too."""
    me = ModuleEmitter(fastmath, counting)
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
                                              written_arguments(func, module)))
        fast = f"zy.fast.{entry}"
    if counting:
        module.meta["tape_sites"] = me.sites
    return me.text(runtime_ir()), me.errors, f"zy.entry.{entry}", fast
