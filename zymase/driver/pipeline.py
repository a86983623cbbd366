"""The compile pipeline as data: one list of named stages per request mode, run in order.

    Python function + argument types + Request
      frontend     ast -> typed IR (frontend/)                          -> Compilation.module
      rules        keep the functions whose custom rule this mode uses out of inlining
      optimize     passes.pipeline.PIPELINE ("optimize before AD"; each pass dumps by its name)
      activity     which flat arguments are active (derivatives)
      forward | reverse | split                 AD on the optimized IR (autodiff/)
      entries      mark the derivative's entry functions
      optimize     the same passes again ("optimize after AD")
      lifetime     frees of the buffers nothing reads any more
      backend      the selected backend compiles the entries     -> Compilation.artifact

``STAGES[mode]`` is the list for each mode; ``run_stages`` runs one, hands the IR to ``dump``
after each stage (``zymase.explain``, ``ZYMASE_DUMP=after:reverse``) and skips the stages named
in ``Options.disable`` (as it skips passes of that name).  Stages talk only through the
``Compilation`` record: each reads what earlier stages left and adds its own part.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..autodiff.forward import jvp_function
from ..autodiff.plan import OPTIMIZATIONS
from ..autodiff.reverse import PARALLEL_ADJOINT, grad_function
from ..autodiff.split import split_function
from ..backends.base import Artifact, Backend
from ..errors import DifferentiationError, UnsupportedError
from ..frontend.module import ModuleLowerer
from ..frontend.source import source_loc
from ..ir.core import Module
from ..ir.printer import print_module
from ..ir.types import ArrayType
from ..options import Options
from ..passes.inline import inline, remove_unreachable
from ..passes.licm import constant_writes, written_arguments
from ..passes.lifetime import lifetime
from ..passes.pipeline import PIPELINE, run_pipeline
from .request import Request
from .signature import flat_leaves, is_inexact, templates

Dump = Callable[[str, Any], None]


@dataclass
class Compilation:
    """What flows between the stages of one compilation."""

    fn: Callable
    templates: list
    options: Options
    request: Request
    backend: Backend
    noalias: bool = False
    count_tape: bool = False
    dump: Dump | None = None
    # frontend
    module: Module | None = None
    func: str = ""  # the primal's entry function
    result: Any = None  # template of the value it returns
    functions: list = field(default_factory=list)  # the Python functions compiled
    captures: Any = None  # what they read from outside their arguments (frontend/captures.py)
    # AD
    flat_active: list = field(default_factory=list)
    leaf_of: dict = field(default_factory=dict)
    n_flat_args: int = 0
    written: tuple = ()  # reverse modes: flat argument positions the primal writes
    entries: list = field(default_factory=list)  # functions Python calls; the first is main
    # backend
    artifact: Artifact | None = None


@dataclass(frozen=True)
class Stage:
    name: str
    run: Callable[[Compilation], None]
    dumps: bool = True  # hand the IR to the dump hook afterwards (else the stage does it)


# ---------------------------------------------------------------------- stages


def lower(c: Compilation) -> None:
    ml = ModuleLowerer(c.options)
    func = ml.lower_entry(c.fn, c.templates)
    if c.noalias:
        func.attrs["noalias"] = True
    c.module, c.func = ml.module, func.sym_name
    c.captures = ml.captures
    c.module.meta["captures"] = ml.captures.layout()
    c.result = next(spec[1] for spec in ml.specs.values() if spec[0] == func.sym_name)
    c.functions = [k[0] for k in ml.specs]
    c.entries = [func.sym_name]


def keep_rules(c: Compilation) -> None:
    """Functions with a custom rule for this mode (and checkpointed helpers in reverse mode)
    keep ``noinline``; every other function may be inlined."""
    mode = c.request.mode
    if mode == "primal":
        allow_inlining(c.module)
    elif mode == "fwd":
        allow_inlining(c.module, keep=lambda f: "custom_jvp" in f.attrs)
    else:
        allow_inlining(c.module, keep=lambda f: "custom_vjp_fwd" in f.attrs or
                       "checkpoint_call" in f.attrs)


def optimize(c: Compilation) -> None:
    run_pipeline(c.module, PIPELINE, disable=c.options.disable, dump=c.dump)
    writes = constant_writes(c.module)
    if writes:
        raise UnsupportedError("writing into a NumPy array read from a global or closure "
                               "variable is not supported: compiled code reads such arrays "
                               "but does not write them (pass the array as an argument)",
                               writes[0].loc)


def optimize_before_ad(c: Compilation) -> None:
    if c.request.optimize_before_ad:
        optimize(c)
    else:  # the ablation: differentiate unoptimized IR (calls still inlined: reverse mode
        inline(c.module)  # supports calls only for recursion)


def activity(c: Compilation) -> None:
    """Which flat IR arguments are active, and which user argument each one comes from."""
    pos = 0
    for k, tpl in enumerate(c.templates):
        for path, leaf in flat_leaves(tpl):
            c.leaf_of[pos] = (k, path)
            if k in c.request.active and is_inexact(leaf):
                c.flat_active.append(pos)
            pos += 1
    c.n_flat_args = pos
    func = c.module[c.func]
    func.attrs.pop("entry", None)
    if c.request.mode != "fwd":
        c.written = tuple(written_arguments(func, c.module))


def forward(c: Compilation) -> None:
    """Forward mode (``f.jvp``), or forward mode over the gradient for "fwd-rev"."""
    func = c.module[c.entries[0]]
    active = list(c.flat_active)
    if c.request.mode == "fwd-rev":  # the gradient's shadows carry tangents too
        primal = c.module[c.func]
        active += [len(primal.args) + j for j, i in enumerate(
            a for a in c.flat_active if isinstance(primal.args[a].type, ArrayType))]
    c.entries = [jvp_function(c.module, func, active, c.request.width).sym_name]


def lower_library(fn, example_args):
    """A routine written in Python that a transform calls (the checkpointing schedule,
    ``autodiff/revolve.py``), lowered by the frontend with bounds checks off."""
    ml = ModuleLowerer(Options(boundscheck=False))
    return ml.lower_entry(fn, templates(fn, example_args))


def reverse(c: Compilation) -> None:
    """Reverse mode (``f.grad``).  For "fwd-rev" without tape snapshots (forward mode cannot
    follow a buffer's contents onto the tape) and re-running recursive callees (it cannot
    follow a tape between calls); "rev-split" keeps no memory limit (``split`` needs the whole
    tape)."""
    req, opts = c.request, c.options
    func = c.module[c.func]
    if any(r >= len(func.result_types) for r in req.results):
        what = "None (no `return` of a value)" if c.result is None or \
            getattr(c.result, "obj", 0) is None else "no number or array"
        raise DifferentiationError(
            f"{getattr(c.fn, '__name__', 'the function')}() returns {what}: reverse mode "
            "differentiates a returned float (grad, hessian) or float arrays (vjp, jacrev)",
            source_loc(c.fn))
    how = {"disable": opts.disable, "memory_limit": opts.memory_limit, "lower": lower_library}
    if req.mode == "fwd-rev":
        how.update(disable=opts.disable | {"snapshot"}, split_calls=False)
    elif req.mode == "rev-split":  # (a pullback may never run: nothing may depend on it to
        # free the tapes of parallel loops' iterations)
        how.update(memory_limit=None, disable=opts.disable | {PARALLEL_ADJOINT})
    else:
        how.update(keep_primal=req.primal)
    if not c.backend.capabilities.tape_sets:  # (no per-iteration tapes: reverse serially)
        how.update(disable=how["disable"] | {PARALLEL_ADJOINT})
    g = grad_function(c.module, c.module[c.func], c.flat_active, list(req.results), **how)
    c.entries = [g.sym_name]


def split(c: Compilation) -> None:
    """The gradient as a forward entry and an adjoint entry (``vjp``), its tape in between."""
    func, g = c.module[c.func], c.module[c.entries[0]]
    n_shadows = sum(isinstance(func.args[a].type, ArrayType) for a in c.flat_active)
    fwd, adj = split_function(c.module, g, c.module.meta["last_forward"][g.sym_name],
                              len(func.result_types), len(c.request.results), n_shadows)
    c.entries = [fwd.sym_name, adj.sym_name]


def after_ad(c: Compilation) -> None:
    """Mark the derivative's entries and drop what they do not call (the primal)."""
    for name in c.entries:
        c.module[name].attrs["entry"] = True
    remove_unreachable(c.module, c.entries)
    allow_inlining(c.module)


def insert_frees(c: Compilation) -> None:
    lifetime(c.module)


def compile_backend(c: Compilation) -> None:
    c.backend.check(c.module, c.entries)
    count = c.count_tape and c.backend.capabilities.tape_counts
    c.artifact = c.backend.compile(c.module, c.entries, c.options, count_tape=count)
    if c.dump is not None:
        for name, text in c.artifact.listings.items():
            c.dump(name, text)


def allow_inlining(module: Module, keep=lambda f: False) -> None:
    """Drop ``noinline`` (set on functions with custom derivative rules) except where ``keep``
    and on ``outlined`` routines (``lang.outline``: large, called from many places)."""
    for f in module:
        if f.attrs.get("noinline") and not keep(f) and not f.attrs.get("outlined"):
            del f.attrs["noinline"]


# ---------------------------------------------------------------------- the lists

FRONTEND = [Stage("frontend", lower), Stage("rules", keep_rules, dumps=False)]
BEFORE_AD = [Stage("optimize", optimize_before_ad, dumps=False),
             Stage("activity", activity, dumps=False)]
AFTER_AD = [Stage("entries", after_ad, dumps=False), Stage("optimize", optimize, dumps=False)]
BACKEND = [Stage("lifetime", insert_frees), Stage("backend", compile_backend, dumps=False)]

STAGES: dict[str, list[Stage]] = {
    "primal": [*FRONTEND, Stage("optimize", optimize, dumps=False), *BACKEND],
    "fwd": [*FRONTEND, *BEFORE_AD, Stage("forward", forward), *AFTER_AD, *BACKEND],
    "rev": [*FRONTEND, *BEFORE_AD, Stage("reverse", reverse), *AFTER_AD, *BACKEND],
    "rev-split": [*FRONTEND, *BEFORE_AD, Stage("reverse", reverse), Stage("split", split),
                  *AFTER_AD, *BACKEND],
    "fwd-rev": [*FRONTEND, *BEFORE_AD, Stage("reverse", reverse), Stage("forward", forward),
                *AFTER_AD, *BACKEND],
}
REQUIRED = {"frontend", "rules", "activity", "entries", "backend", "forward", "reverse", "split"}


def check_disable(disable, backend: Backend) -> None:
    """Refuse a name in ``disable=`` that names no part of the compiler (a typo would
    otherwise switch nothing off, silently): the optimization passes, the stages that may be
    skipped, reverse mode's ways of not storing values, and the backend's own switches."""
    known = ({name for name, _ in PIPELINE} | {st.name for sts in STAGES.values() for st in sts}
             - REQUIRED) | set(OPTIMIZATIONS) | {PARALLEL_ADJOINT} | \
        set(backend.capabilities.switches)
    unknown = sorted(set(disable) - known)
    if unknown:
        raise ValueError(f"disable= names no part of the compiler: {', '.join(map(repr, unknown))}"
                         f"; it takes {', '.join(sorted(known))}")


def run_stages(c: Compilation) -> Compilation:
    """Run the stages of ``c.request.mode`` on ``c`` (see the module docstring).  With
    ``ZYMASE_LOG=compile`` each compilation prints one line to stderr: what was compiled, its
    total time and the time of each stage."""
    log = "compile" in os.environ.get("ZYMASE_LOG", "").split(",")
    times: list[tuple[str, float]] = []
    start = time.perf_counter()
    for stage in STAGES[c.request.mode]:
        if stage.name in c.options.disable and stage.name not in REQUIRED:
            continue
        t0 = time.perf_counter()
        stage.run(c)
        times.append((stage.name, time.perf_counter() - t0))
        if c.dump is not None and stage.dumps:
            c.dump(stage.name, c.module)
    if log:
        _log_compile(c, time.perf_counter() - start, times)
    return c


def _log_compile(c: Compilation, total: float, times) -> None:
    name = getattr(c.fn, "__qualname__", getattr(c.fn, "__name__", "function"))
    what = "jit" if c.request.mode == "primal" else c.request.mode
    ops = sum(1 for f in c.module for _ in f.walk())
    parts = "  ".join(f"{n} {t * 1e3:.1f}" for n, t in times)
    print(f"zymase: compiled {what} {name} on {c.backend.name} in {total * 1e3:.1f} ms "
          f"({ops} ops; ms per stage: {parts})", file=sys.stderr)


def env_dump() -> Dump | None:
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
