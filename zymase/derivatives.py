"""Compiling derivative functions: the pipeline of ``jit`` with a transform in the middle.

    Python function + argument types + which arguments are active
      -> frontend -> optimize ("optimize before AD"; skipped with optimize_before_ad=False)
      -> forward (jvp) or reverse (grad) transform on the optimized IR
      -> optimize again -> lifetime -> LLVM -> machine code

A ``Derivative`` is one compiled specialization; it is called with flat argument lists and
returns flat result lists (``ad.py`` and ``enzyme.py`` build those from user values).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .backends.llvm.codegen import generate
from .backends.llvm.engine import compile_ir
from .compiler import allow_inlining, describe_result, env_dump, optimize
from .errors import DifferentiationError, caller_loc
from .frontend.args import param_template
from .frontend.module import ModuleLowerer
from .frontend.typing import flatten, ir_types
from .ir.types import ArrayType
from .options import Options
from .passes.licm import written_arguments
from .passes.lifetime import lifetime
from .runtime.abi import EntryPoint


@dataclass(frozen=True)
class Request:
    """What to differentiate: ``mode`` "fwd", "rev" or "fwd-rev" (forward over reverse, for
    Hessians), the user's active argument positions,
    the vector width (forward), and the differentiated result positions (reverse)."""

    mode: str  # "fwd", "rev", "rev-split" (split.py: forward and adjoint entries) or "fwd-rev"
    active: tuple
    width: int = 1
    results: tuple = (0,)
    optimize_before_ad: bool = True
    primal: bool = True  # reverse mode: also return the primal results


@dataclass
class Derivative:
    entry: EntryPoint
    templates: list  # FVal templates of the user's arguments
    result: Any  # describe_result of the primal's return value
    flat_active: list  # flat IR argument indices that are active
    leaf_of: dict  # flat index -> (user argument position, leaf path)
    module: Any
    func_name: str
    n_flat_args: int
    n_flat_results: int
    fast: Any = None  # Dispatcher of the C entry (at most one scalar result), or None
    adjoint: Any = None  # "rev-split": the adjoint function's EntryPoint (``entry`` is forward's)
    written: tuple = ()  # reverse modes: flat argument positions the primal writes

    def check_distinct(self, flat: list, shadows: dict | None = None) -> None:
        """Reverse mode is compiled for arrays that do not share memory: a value the adjoint
        sweep needs is kept from being overwritten only through its own array.  Refuse a call
        where an array the function writes (or a shadow it accumulates into) overlaps another
        array it is given, rather than return a wrong derivative."""
        if not self.written and not shadows:
            return
        arrays = [(k, x) for k, x in enumerate(flat[:self.n_flat_args])
                  if isinstance(x, np.ndarray)]
        arrays += [(("shadow", i), x) for i, x in (shadows or {}).items()]
        if len(arrays) < 2:
            return
        written = set(self.written) | {k for k, _ in arrays if isinstance(k, tuple)}
        for i, (ki, x) in enumerate(arrays):
            for kj, y in arrays[i + 1:]:
                if (ki in written or kj in written) and _overlap(x, y):
                    w, other = (ki, kj) if ki in written else (kj, ki)
                    raise DifferentiationError(
                        f"{self._describe(w)} and {self._describe(other)} share memory, and "
                        f"the derivative writes {self._describe(w)}: reverse mode needs arrays "
                        "that do not overlap (pass a copy, e.g. f(a, a.copy()))", caller_loc())

    def _describe(self, k) -> str:
        if isinstance(k, tuple):
            return "the shadow of " + self._describe(k[1])
        pos, path = self.leaf_of[k]
        return f"argument {pos}" + "".join(f"[{p!r}]" for p in path)

    def call(self, flat: list) -> list:
        return self.entry.call(flat)

    def call_fast(self, flat: list):
        """For derivatives with no result or one float/int result (returned as a Python
        object): the C entry that checks argument types itself (``runtime/dispatch.py``), else
        the general path."""
        if self.fast is None:
            out = self.entry.call(flat)
            return out[0] if out else None
        return self.fast.builtin(*flat)


def _overlap(x, y) -> bool:
    """Whether two arrays share an element (interleaved or side-by-side views of one buffer do
    not); a problem too hard to settle quickly counts as overlapping."""
    if not np.may_share_memory(x, y):
        return False
    try:
        return bool(np.shares_memory(x, y, max_work=10_000))
    except getattr(np, "exceptions", np).TooHardError:  # (np.TooHardError before NumPy 1.25)
        return True


def flat_leaves(tpl, prefix=()):
    """(path, leaf FVal) pairs of a template, in the order of its IR values."""
    from .frontend.typing import Array, Scalar, Struct, Tup
    if isinstance(tpl, (Scalar, Array)):
        return [(prefix, tpl)]
    if isinstance(tpl, Tup):
        return [x for k, item in enumerate(tpl.items) for x in flat_leaves(item, prefix + (k,))]
    if isinstance(tpl, Struct):
        return [x for k, item in tpl.fields.items() for x in flat_leaves(item, prefix + (k,))]
    return []


def compile_derivative(fn, args, req: Request, options: Options,
                       counting: bool = False) -> Derivative:
    name = getattr(fn, "__name__", "function")
    templates = [param_template(a, f"argument {k} of {name}()") for k, a in enumerate(args)]
    ml = ModuleLowerer(options)
    func = ml.lower_entry(fn, templates)
    result = ml.specs[next(k for k in ml.specs if ml.specs[k][0] == func.sym_name)][1]
    dump = env_dump()
    if dump:
        dump("frontend", ml.module)
    rule = "custom_jvp" if req.mode == "fwd" else "custom_vjp_fwd"
    allow_inlining(ml.module, keep=lambda f: rule in f.attrs or (
        "checkpoint_call" in f.attrs and req.mode != "fwd"))
    if req.optimize_before_ad:
        optimize(ml.module, options, dump)
    else:  # the ablation: differentiate unoptimized IR (calls still inlined: reverse mode
        from .passes.inline import inline  # supports calls only for recursion)
        inline(ml.module)
    flat_active, leaf_of, pos = [], {}, 0
    for k, tpl in enumerate(templates):
        for path, leaf in flat_leaves(tpl):
            leaf_of[pos] = (k, path)
            if k in req.active and _inexact(leaf):
                flat_active.append(pos)
            pos += 1
    func = ml.module[func.sym_name]
    func.attrs.pop("entry", None)
    written = ()
    if req.mode != "fwd":
        written = tuple(written_arguments(func, ml.module))
    from .autodiff.forward import jvp_function
    from .autodiff.reverse import grad_function
    more = []
    if req.mode == "fwd":
        dfunc = jvp_function(ml.module, func, flat_active, req.width)
    elif req.mode == "rev":
        dfunc = grad_function(ml.module, func, flat_active, list(req.results),
                              keep_primal=req.primal, disable=options.disable,
                              memory_limit=options.memory_limit)
    elif req.mode == "rev-split":
        from .autodiff.split import split_function
        g = grad_function(ml.module, func, flat_active, list(req.results),
                          disable=options.disable)
        n_shadows = sum(isinstance(func.args[a].type, ArrayType) for a in flat_active)
        dfunc, adj = split_function(ml.module, g, ml.module.meta["last_forward"][g.sym_name],
                                    len(func.result_types), len(req.results), n_shadows)
        adj.attrs["entry"] = True
        more = [adj.sym_name]
    else:  # "fwd-rev": forward mode over the gradient (Hessian-vector products)
        # no snapshots: forward mode cannot follow a buffer's contents onto the tape
        # (tape.push_array / tape.read carry no tangents)
        g = grad_function(ml.module, func, flat_active, list(req.results),
                          disable=options.disable | {"snapshot"},
                          memory_limit=options.memory_limit, split_calls=False)
        n = len(func.args)
        shadows = [n + j for j, i in enumerate(a for a in flat_active
                                                 if isinstance(func.args[a].type, ArrayType))]
        dfunc = jvp_function(ml.module, g, flat_active + shadows, req.width)
    dfunc.attrs["entry"] = True
    if dump:
        dump(req.mode == "fwd" and "forward" or "reverse", ml.module)
    allow_inlining(ml.module)
    optimize(ml.module, options, dump)
    lifetime(ml.module)
    text, errors, symbol, fast_symbol = generate(ml.module, dfunc.sym_name, options.fastmath,
                                                 counting, more)
    compiled = compile_ir(text)
    d = ml.module[dfunc.sym_name]
    entry = EntryPoint(compiled, symbol, d.arg_types, d.result_types, errors,
                       written_arguments(d, ml.module))
    adjoint = None
    if more:
        a = ml.module[more[0]]
        adjoint = EntryPoint(compiled, f"zy.entry.{more[0]}", a.arg_types, a.result_types, errors,
                             written_arguments(a, ml.module))
    n_res = len(flatten(result)) if result is not None else 0
    if req.mode == "rev" and not req.primal:
        n_res = 0
    fast = None
    if fast_symbol is not None:
        fast = _fast_builtin(entry, compiled.address(fast_symbol))
    return Derivative(entry, templates, describe_result(result), flat_active, leaf_of,
                      ml.module, d.sym_name, pos, n_res, fast, adjoint, written)


def _fast_builtin(entry, address):
    """A Dispatcher whose builtin runs this derivative's fast C entry."""
    from .runtime.dispatch import Dispatcher

    def raise_error(err_id, a, b):
        raise entry.error(err_id, a, b).with_traceback(None)

    disp = Dispatcher(lambda *args: (entry.call(list(args)) or [None])[0])
    disp.install("only", address, raise_error)
    return disp


def _inexact(leaf) -> bool:
    t = leaf.value.type
    t = t.dtype if isinstance(t, ArrayType) else t
    return t.is_inexact


_ = (DifferentiationError, ir_types)
