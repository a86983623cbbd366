"""The compile pipeline for one specialization, as a straight list of stages:

    Python function + argument types
      -> frontend (typed IR)  -> optimize (passes.pipeline)  -> lifetime (frees)
      -> LLVM IR text (backends/llvm)  -> machine code (llvmlite)  -> EntryPoint (runtime/abi)

``explain`` hooks receive the IR after each stage.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .backends.llvm.codegen import generate
from .backends.llvm.engine import compile_ir, load_object
from .errors import UnsupportedError
from .frontend.args import flatten_arg, param_template
from .frontend.module import ModuleLowerer
from .frontend.source import captured_digests, captured_unchanged
from .frontend.typing import Array, PyObj, Scalar, Struct, Tup
from .ir.core import Module
from .ir.printer import print_module
from .options import Options
from .passes.licm import constant_writes, written_arguments
from .passes.lifetime import lifetime
from .runtime import compile_cache
from .runtime.abi import EntryPoint


@dataclass
class Specialization:
    """Compiled code for one argument signature."""

    entry: EntryPoint
    templates: list
    result: Any  # description of the returned value (see ``describe_result``)
    module: Module | None  # the optimized IR (None when loaded from the disk cache)
    llvm_ir: str
    fast: int | None = None  # address of the fast C entry, when this signature has one

    def __call__(self, args):
        flat = [v for a, t in zip(args, self.templates) for v in flatten_arg(a, t)]
        out = self.entry.call(flat)
        return rebuild_result(self.result, out)


def describe_result(tpl):
    """A picklable description of a returned FVal template."""
    if tpl is None or isinstance(tpl, PyObj):
        return ("p", None if tpl is None else tpl.obj)
    if isinstance(tpl, Scalar):
        return ("s", tpl.type, tpl.weak)
    if isinstance(tpl, Array):
        return ("a", tpl.type)
    if isinstance(tpl, Tup):
        return ("t", [describe_result(x) for x in tpl.items])
    if isinstance(tpl, Struct):
        return ("r", tpl.pytype, {k: describe_result(x) for k, x in tpl.fields.items()})
    raise TypeError(tpl)


def rebuild_result(desc, values: list):
    """Python results shaped like the described return value (values are consumed)."""
    kind = desc[0]
    if kind == "p":
        return desc[1]
    if kind == "s":
        v = values.pop(0)
        return v if desc[2] else desc[1].np_dtype.type(v)
    if kind == "a":
        return values.pop(0)
    if kind == "t":
        return tuple(rebuild_result(x, values) for x in desc[1])
    return desc[1](**{k: rebuild_result(x, values) for k, x in desc[2].items()})


def optimize(module: Module, options: Options, dump: Callable | None = None) -> None:
    try:
        from .passes.pipeline import PIPELINE, run_pipeline
    except ImportError:
        return
    run_pipeline(module, PIPELINE, disable=options.disable, dump=dump)
    writes = constant_writes(module)
    if writes:
        raise UnsupportedError("writing into a NumPy array captured from a global or closure "
                               "variable is not supported: zymase compiles it as a constant "
                               "(pass the array as an argument)", writes[0].loc)


def compile_specialization(fn, args, options: Options, noalias: bool, key=None,
                           dump: Callable | None = None) -> Specialization:
    """Compile ``fn`` for the types of ``args`` (through the disk cache when enabled)."""
    name = getattr(fn, "__name__", "function")
    templates = [param_template(a, f"argument {k} of {name}()") for k, a in enumerate(args)]
    dump = dump or env_dump()
    path = None
    if options.cache and key is not None and dump is None:
        path = compile_cache.entry_path(fn, (key, noalias), options)
        payload = compile_cache.load(path, lambda p: captured_unchanged(fn, p["captured"]))
        if payload is not None:
            return _from_payload(payload, templates)
    spec, payload, functions = _compile(fn, templates, options, noalias, dump)
    if path is not None:
        # constants read from globals and closures are checked on load (never stale code);
        # code that read one without a digest is not kept
        payload["captured"] = captured_digests(fn, functions)
        if payload["captured"] is not None:
            compile_cache.store(path, payload, functions)
    return spec


def _from_payload(p, templates) -> Specialization:
    compiled = load_object(p["object"])
    entry = EntryPoint(compiled, p["symbol"], p["arg_types"], p["result_types"], p["errors"],
                       p["written"])
    fast = compiled.address(p["fast"]) if p["fast"] else None
    return Specialization(entry, templates, p["result"], None, "", fast)


def _compile(fn, templates, options, noalias, dump):
    ml = ModuleLowerer(options)
    func = ml.lower_entry(fn, templates)
    if noalias:
        func.attrs["noalias"] = True
    result = ml.specs[next(k for k in ml.specs if ml.specs[k][0] == func.sym_name)][1]
    if dump:
        dump("frontend", ml.module)
    allow_inlining(ml.module)
    optimize(ml.module, options, dump)
    lifetime(ml.module)
    if dump:
        dump("lifetime", ml.module)
    text, errors, symbol, fast_symbol = generate(ml.module, func.sym_name, options.fastmath)
    if dump:
        dump("llvm", text)
    compiled = compile_ir(text)
    entry_func = ml.module[func.sym_name]
    written = written_arguments(entry_func, ml.module)
    entry = EntryPoint(compiled, symbol, entry_func.arg_types, entry_func.result_types, errors,
                       written)
    if fast_symbol is not None and not _plain_result(result):
        fast_symbol = None
    spec = Specialization(entry, templates, describe_result(result), ml.module, text,
                          compiled.address(fast_symbol) if fast_symbol else None)
    payload = {"object": compiled.object_code, "symbol": symbol, "fast": fast_symbol,
               "arg_types": entry_func.arg_types, "result_types": entry_func.result_types,
               "errors": errors, "result": spec.result, "written": written}
    return spec, payload, [k[0] for k in ml.specs]


def _plain_result(tpl) -> bool:
    """Results the fast entry boxes exactly as the general path does."""
    return tpl is None or isinstance(tpl, PyObj) or (isinstance(tpl, Scalar) and tpl.weak)


def allow_inlining(module: Module, keep=lambda f: False) -> None:
    """Drop ``noinline`` (set on functions with custom derivative rules) except where ``keep``."""
    for f in module:
        if f.attrs.get("noinline") and not keep(f):
            del f.attrs["noinline"]


def env_dump():
    """A dump hook from ``ZYMASE_DUMP`` (``all``, or ``after:stage1,stage2``): IR to stderr."""
    spec = os.environ.get("ZYMASE_DUMP")
    if not spec:
        return None
    stages = None if spec in ("all", "after:all") else set(spec.split(":", 1)[-1].split(","))

    def dump(stage, module):
        if stages is None or stage in stages:
            text = module if isinstance(module, str) else print_module(module, locs=True)
            print(f"// ---- after {stage} ----\n{text}", file=sys.stderr)

    return dump


def array_leaves(x, out: list | None = None) -> list:
    """Every NumPy array an argument hands the compiled code: ``x`` itself, or the arrays inside
    the tuples, lists, dicts, dataclasses and namedtuples it is made of (the code receives each
    as an argument of its own)."""
    out = [] if out is None else out
    if isinstance(x, np.ndarray):
        out.append(x)
    elif isinstance(x, (tuple, list)):
        for item in x:
            array_leaves(item, out)
    elif isinstance(x, dict):
        for item in x.values():
            array_leaves(item, out)
    elif dataclasses.is_dataclass(x) and not isinstance(x, type):
        for f in dataclasses.fields(x):
            array_leaves(getattr(x, f.name), out)
    return out


def arrays_disjoint(args) -> bool:
    """True when no two arrays the code receives share memory (so the compiler may assume
    noalias), counting the arrays inside tuples, lists, dicts and dataclasses: ``f((a, a))``
    hands the code two views of one buffer."""
    arrs = array_leaves(args)
    for i in range(len(arrs)):
        for j in range(i + 1, len(arrs)):
            if np.may_share_memory(arrs[i], arrs[j]):
                return False
    return True
