"""Reverse mode: ``f`` -> ``f.grad``, one function running the augmented primal (forward sweep)
and then the adjoint sweep.

    f.grad(args..., [shadow of each active array argument], [seed of each active result])
        -> (results..., [adjoint of each active scalar argument])

Expects optimized IR; leaves the new function in the module (optimize it again afterwards).
``grad_function`` decides first and builds after (``build`` runs ``BUILD_STAGES``):

* **plan** (``plan/``): activity, what is recomputed, reloaded, read from a snapshot or stored;
* **sweeps**: the forward sweep (``sweep.py``), then the adjoint sweep op by op
  (``adjoint.py``, reading primal values and shadows through ``values.py``; calls: ``calls.py``);
* **checkpoint** (``checkpoint.py``): loops under ``memory_limit`` or marked with
  ``zymase.checkpoint`` rearranged to keep one iteration's tape at a time;
* **finish**: the adjoint placed after the forward sweep, tape capacity reserved (``tape.py``).

When the min-cut applies (``plan/mincut.py``), a first build records which values each block's
adjoint needs; if storing a cut beats what that build stored, it is replaced by a build whose
plan stores the cut.  Split forward/adjoint pairs (``split.py``) are built from ``f.grad``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from ...ir.core import Func, Module, Value
from ...ir.ops import Call, Return, TapeFree
from ...ir.roots import summarize_calls
from ..activity import Activity, is_float, is_float_array
from ..plan import OPTIMIZATIONS, Here, Plan, choose_stores, make_plan
from ..split import split_function
from .adjoint import reverse_block
from .checkpoint import checkpoint_loops
from .parallel import SWITCH as PARALLEL_ADJOINT
from .state import Scope, Settings
from .sweep import ForwardSweep
from .tape import reserve
from .values import Adjoint
from .while_loops import rewrite_while_loops

__all__ = ["BUILD_STAGES", "OPTIMIZATIONS", "PARALLEL_ADJOINT", "Built", "Job", "Settings", "build",
           "grad_function", "split_pair"]


def grad_function(module: Module, func: Func, active_args, active_results,
                  registry: dict | None = None, keep_primal: bool = True,
                  disable=frozenset(), memory_limit: int | None = None,
                  split_calls: bool = True, lower: Callable | None = None) -> Func:
    """``keep_primal=False`` drops the primal results from the returned values, so that a
    forward sweep nothing else needs can be removed (``grad`` without the value).
    ``memory_limit`` (bytes) checkpoints the top-level loops (``checkpoint.py``).
    ``split_calls=False``: recursive calls re-run the callee in the adjoint sweep instead of
    passing its tape (forward mode over this function cannot follow a tape between calls).
    ``lower(py_function, example_args) -> Func`` compiles a helper written in Python (the
    checkpointing schedule, ``revolve.py``) with bounds checks off; needed only when a loop is
    checkpointed (``memory_limit``, ``zymase.checkpoint``).  ``registry`` holds the
    derivatives built so far (``f.grad`` of callees, split pairs), shared across calls."""
    registry = {} if registry is None else registry
    key = (func.sym_name, tuple(sorted(active_args)), tuple(active_results), keep_primal)
    if key in registry:
        return registry[key]
    settings = Settings(keep_primal, frozenset(disable), memory_limit, split_calls, lower)
    summarize_calls(module)  # what each call returns and writes, for the alias roots
    if memory_limit is not None:  # while loops get a trip count, to be checkpointed as fors
        rewrite_while_loops(func, Activity(func, sorted(active_args), list(active_results)))
    plan = make_plan(func, active_args, active_results, settings.disable)
    job = Job(module, func, sorted(active_args), list(active_results), registry)
    if "mincut" in disable or any(isinstance(op, Call) for op in func.walk()):
        built = build(job, plan, settings)
    else:
        built = build(job, plan, replace(settings, record_needs=True))
        stores = choose_stores(built.needs, plan, built.here)
        if stores:  # build again, storing the cut (the first build only told what is needed)
            del module.funcs[built.func.sym_name]
            del registry[key]
            built = build(job, plan.storing(stores), settings)
    module.meta.setdefault("decisions", {})[built.func.sym_name] = built.decisions
    module.meta.setdefault("last_forward", {})[built.func.sym_name] = built.last_forward
    return built.func


def split_pair(module: Module, callee: Func, acts, res, registry: dict, disable,
               lower: Callable | None) -> tuple:
    """Names of ``callee``'s split forward and adjoint functions for these active arguments and
    results, built on first request (``split.py``, residuals on the tape).  The names are fixed
    before building, so a recursive callee's forward function calls itself."""
    key = ("split", callee.sym_name, tuple(acts), tuple(res))
    if key in registry:
        return registry[key]
    tag = f"{callee.sym_name}.vjp{'_'.join(map(str, acts))}r{'_'.join(map(str, res))}"
    names = registry[key] = (f"{tag}.fwd", f"{tag}.adj")
    # (the caller may fail between the two halves: no tapes of parallel loops' iterations)
    settings = Settings(disable=frozenset(disable) | {PARALLEL_ADJOINT}, lower=lower, name=tag)
    job = Job(module, callee, sorted(acts), list(res), registry)
    built = build(job, make_plan(callee, acts, res, settings.disable), settings)
    n_shadows = sum(is_float_array(callee.args[i]) for i in acts)
    split_function(module, built.func, built.last_forward, len(callee.result_types), len(res),
                   n_shadows, "tape", names)
    return names


# ---------------------------------------------------------------------- one build


@dataclass(frozen=True)
class Job:
    """What is differentiated, and where derivatives built on the way are kept."""

    module: Module
    func: Func
    active_args: list
    active_results: list
    registry: dict


@dataclass(frozen=True)
class Sweeps:
    """What the sweeps stage hands on: the forward sweep, the adjoint sweep built after it and
    the adjoint's top region (not yet placed in the function)."""

    sweep: ForwardSweep
    adjoint: Adjoint
    top: Scope


@dataclass(frozen=True)
class Built:
    """A finished derivative: the function, what its adjoint decided per value (for
    ``tape_report``), where its forward sweep ends (``split.py`` cuts there), and for the
    min-cut the values each block needed and what the adjoint held at its top level."""

    func: Func
    decisions: list
    last_forward: object
    needs: dict | None
    here: Here


def sweeps(job: Job, plan: Plan, settings: Settings, _start=None) -> Sweeps:
    """The forward sweep, then the adjoint sweep of the function's body."""
    def split(callee, acts, res):
        return split_pair(job.module, callee, acts, res, job.registry, settings.disable,
                          settings.lower)

    def callee_grad(callee, acts, res):
        return grad_function(job.module, callee, acts, res, job.registry,
                             split_calls=settings.split_calls, lower=settings.lower)

    sweep = ForwardSweep(job.module, job.func, plan.act, settings, split)
    seeds = sweep.run(job.active_args, job.active_results, job.registry)
    adjoint = Adjoint(plan, settings, sweep, callee_grad)
    top = adjoint.open_top()
    ret = job.func.body.terminator
    for k, seed in zip(job.active_results, seeds):
        adjoint.seed(ret.operands[k], seed)
    reverse_block(adjoint, job.func.body)
    return Sweeps(sweep, adjoint, top)


def checkpoint(job: Job, plan: Plan, settings: Settings, done: Sweeps) -> Sweeps:
    """Rearrange the loops to checkpoint (``checkpoint.py``)."""
    checkpoint_loops(done.sweep, done.adjoint, done.top, settings)
    return done


def finish(job: Job, plan: Plan, settings: Settings, done: Sweeps) -> Built:
    """Place the adjoint sweep after the forward sweep, return the results and the adjoints of
    the active scalar arguments, and reserve the tape's capacity."""
    f, sweep, adjoint, top = job.func, done.sweep, done.adjoint, done.top
    new, b = sweep.new, adjoint.b
    for op in list(top.rblock.ops):
        op.detach()
        new.body.append(op)
    ret = f.body.terminator
    outs: list[Value] = [sweep.fmap[v] for v in ret.operands] if settings.keep_primal else []
    with b.at(new.body):
        for i in job.active_args:
            if is_float(f.args[i]):
                outs.append(top.ct.get(f.args[i]) or b.const(0, f.args[i].type))
        reserve(new, sweep.tape, sweep.pushes)
        b.create(TapeFree, [sweep.tape], [])
        b.create(Return, outs, [])
    here = Here(has=lambda v: any(v in s.env for s in adjoint.scopes))
    return Built(new, adjoint.decisions, sweep.last_forward, adjoint.needs, here)


# the build, stage by stage: each takes (job, plan, settings) and the previous stage's result
BUILD_STAGES = (("sweeps", sweeps), ("checkpoint", checkpoint), ("finish", finish))


def build(job: Job, plan: Plan, settings: Settings) -> Built:
    """Build the derivative ``plan`` and ``settings`` describe, running ``BUILD_STAGES``."""
    done = None
    for _name, stage in BUILD_STAGES:
        done = stage(job, plan, settings, done)
    return done
