"""IR module -> LLVM module text: every function, the runtime, and one C-ABI entry wrapper."""

from __future__ import annotations

from ...ir.core import Module
from .emit import FunctionEmitter, ModuleEmitter
from .entry import entry_ir
from .runtime import runtime_ir


def generate(module: Module, entry: str, fastmath: bool = False):
    """(LLVM IR text, error table, entry symbol) for ``module`` called through ``entry``."""
    me = ModuleEmitter(fastmath)
    for f in module:
        me.funcs.append(FunctionEmitter(me, f, module).emit_function())
    me.funcs.append(entry_ir(module[entry]))
    return me.text(runtime_ir()), me.errors, f"zy.entry.{entry}"
