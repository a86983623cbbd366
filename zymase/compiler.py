"""The compile pipeline for one specialization, as a straight list of stages:

    Python function + argument types
      -> frontend (typed IR)  -> optimize (passes.pipeline)  -> lifetime (frees)
      -> LLVM IR text (backends/llvm)  -> machine code (llvmlite)  -> EntryPoint (runtime/abi)

``explain`` hooks receive the IR after each stage.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .backends.llvm.codegen import generate
from .backends.llvm.engine import compile_ir
from .frontend.args import flatten_arg, param_template
from .frontend.module import ModuleLowerer
from .frontend.typing import Array, PyObj, Scalar, Struct, Tup
from .ir.core import Module
from .options import Options
from .passes.lifetime import lifetime
from .runtime.abi import EntryPoint


@dataclass
class Specialization:
    """Compiled code for one argument signature."""

    entry: EntryPoint
    templates: list
    result: Any
    module: Module
    llvm_ir: str
    fast: int | None = None  # address of the fast C entry, when this signature has one

    def __call__(self, args):
        flat = [v for a, t in zip(args, self.templates) for v in flatten_arg(a, t)]
        out = self.entry.call(flat)
        return rebuild_result(self.result, out)


def rebuild_result(tpl, values: list):
    """Python results shaped like the returned FVal template."""
    if tpl is None or isinstance(tpl, PyObj):
        return None if tpl is None else tpl.obj
    if isinstance(tpl, Scalar):
        v = values.pop(0)
        if tpl.weak or isinstance(v, (bool, complex)):
            return v
        return tpl.type.np_dtype.type(v)
    if isinstance(tpl, Array):
        return values.pop(0)
    if isinstance(tpl, Tup):
        return tuple(rebuild_result(x, values) for x in tpl.items)
    if isinstance(tpl, Struct):
        fields = {k: rebuild_result(x, values) for k, x in tpl.fields.items()}
        return tpl.pytype(**fields)
    raise TypeError(tpl)


def optimize(module: Module, options: Options, dump: Callable | None = None) -> None:
    try:
        from .passes.pipeline import PIPELINE, run_pipeline
    except ImportError:
        return
    run_pipeline(module, PIPELINE, disable=options.disable, dump=dump)


def compile_specialization(fn, args, options: Options, noalias: bool,
                           dump: Callable | None = None) -> Specialization:
    name = getattr(fn, "__name__", "function")
    templates = [param_template(a, f"argument {k} of {name}()") for k, a in enumerate(args)]
    ml = ModuleLowerer(options)
    func = ml.lower_entry(fn, templates)
    if noalias:
        func.attrs["noalias"] = True
    result = ml.specs[next(k for k in ml.specs if ml.specs[k][0] == func.sym_name)][1]
    if dump:
        dump("frontend", ml.module)
    optimize(ml.module, options, dump)
    lifetime(ml.module)
    if dump:
        dump("lifetime", ml.module)
    text, errors, symbol, fast_symbol = generate(ml.module, func.sym_name, options.fastmath)
    compiled = compile_ir(text)
    entry = EntryPoint(compiled, symbol, ml.module[func.sym_name], errors)
    spec = Specialization(entry, templates, result, ml.module, text)
    if fast_symbol is not None and _plain_result(result):
        spec.fast = compiled.address(fast_symbol)
    return spec


def _plain_result(tpl) -> bool:
    """Results the fast entry boxes exactly as the general path does."""
    return tpl is None or isinstance(tpl, PyObj) or (isinstance(tpl, Scalar) and tpl.weak)


def arrays_disjoint(args) -> bool:
    """True when no two array arguments share memory (so the compiler may assume noalias)."""
    arrs = [a for a in args if isinstance(a, np.ndarray)]
    for i in range(len(arrs)):
        for j in range(i + 1, len(arrs)):
            if np.may_share_memory(arrs[i], arrs[j]):
                return False
    return True
