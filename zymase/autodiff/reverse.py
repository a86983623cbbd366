"""Reverse mode: ``f`` -> ``f.grad``, one function running the augmented primal (forward sweep)
and then the adjoint sweep.

    f.grad(args..., [shadow of each active array argument], [seed of each active result])
        -> (results..., [adjoint of each active scalar argument])

Expects optimized IR; leaves the new function in the module (optimize it again afterwards).

* **Forward sweep**: the primal, cloned, plus what the adjoint sweep will need: a zeroed shadow
  for every active buffer made outside loops, and an iteration counter on each ``scf.while``.
* **Adjoint sweep**: the ops in reverse.  A loop becomes a loop running backwards that carries
  the adjoints of its carried values and of the outer values it uses; an ``scf.if`` becomes an
  ``scf.if`` on the same condition; loads add into shadows, stores move the shadow into the
  stored value's adjoint and zero it.  Scalar adjoints follow the rule records.
* **Primal values in the adjoint sweep** (``Scopes.get``): values of the function's top level are
  used as they are; cheap pure ops, loop counters and loads from buffers nothing writes are
  recomputed; anything else is pushed on the tape at the end of its block in the forward sweep
  and popped at the start of the matching reverse block (exact LIFO order, so ``while`` loops
  and data-dependent trip counts need nothing special).  ``cache.py`` holds the policy and
  reserves tape capacity before loop nests.
"""

from __future__ import annotations

from ..errors import DifferentiationError
from ..ir.builder import Builder
from ..ir.core import EXPENSIVE, PURE, VIEW, Block, Func, Module, Region, Value
from ..ir.ops import (
    AddF,
    AddI,
    Alloc,
    ArrayConst,
    Call,
    CmpI,
    DataPtr,
    Dim,
    FloorDivI,
    For,
    If,
    Index,
    Load,
    MulI,
    Offset,
    Relayout,
    Return,
    Select,
    Stride,
    SubI,
    TapeDrop,
    TapeFree,
    TapeMark,
    TapeNew,
    TapePop,
    TapePopRef,
    TapePush,
    TapePushArray,
    TapePushRef,
    TapeRead,
    While,
)
from ..ir.printer import Symbol
from ..ir.roots import array_flows
from ..ir.types import I64, TAPE, ArrayType
from ..passes.rewrite import clone_op
from . import cache
from .activity import Activity, is_float, is_float_array
from .arrays import add_into, copy
from .checkpoint import checkpoint_loops, rewrite_while_loops
from .memory import Memory, renewed_array
from .mincut import choose_stores
from .reverse_ops import Scope, reverse_block
from .rules import RuleBuilder
from .split import split_function

# cache optimizations that ``disable`` can switch off (ablations), see cache.py / memory.py
OPTIMIZATIONS = ("recompute", "recompute_expensive", "reload", "snapshot", "carried", "mincut")


def grad_function(module: Module, func: Func, active_args, active_results,
                  registry: dict | None = None, keep_primal: bool = True,
                  disable=frozenset(), memory_limit: int | None = None,
                  split_calls: bool = True, lower=None) -> Func:
    """``keep_primal=False`` drops the primal results from the returned values, so that a
    forward sweep nothing else needs can be removed (``grad`` without the value).
    ``memory_limit`` (bytes) checkpoints the top-level loops (``checkpoint.py``).
    ``split_calls=False``: recursive calls re-run the callee in the adjoint sweep instead of
    passing its tape (forward mode over this function cannot follow a tape between calls).
    ``lower(py_function, example_args) -> Func`` compiles a helper written in Python (the
    checkpointing schedule, ``revolve.py``) with bounds checks off; needed only when a loop is
    checkpointed (``memory_limit``, ``zymase.checkpoint``)."""
    registry = {} if registry is None else registry
    key = (func.sym_name, tuple(sorted(active_args)), tuple(active_results), keep_primal)
    if key in registry:
        return registry[key]
    if memory_limit is not None:  # while loops get a trip count, to be checkpointed as fors
        rewrite_while_loops(func, Activity(func, sorted(active_args), list(active_results)))
    two_pass = "mincut" not in disable and not any(isinstance(op, Call) for op in func.walk())
    rt = _transform(module, func, active_args, active_results, registry, keep_primal, disable,
                    memory_limit, lower, needs={} if two_pass else None)
    rt.split = split_calls
    new = rt.build()
    if two_pass:
        stores = choose_stores(rt)
        if stores:  # build again, storing the cut (the first build only told what is needed)
            del module.funcs[new.sym_name]
            del registry[key]
            rt = _transform(module, func, active_args, active_results, registry, keep_primal,
                            disable, memory_limit, lower, stores=stores)
            rt.split = split_calls
            new = rt.build()
    module.meta.setdefault("decisions", {})[new.sym_name] = rt.decisions
    module.meta.setdefault("last_forward", {})[new.sym_name] = rt.last_forward
    return new


def split_pair(module: Module, callee: Func, acts, res, registry: dict, disable, lower) -> tuple:
    """Names of ``callee``'s split forward and adjoint functions for these active arguments and
    results, built on first request (``split.py``, residuals on the tape).  The names are fixed
    before building, so a recursive callee's forward function calls itself."""
    key = ("split", callee.sym_name, tuple(acts), tuple(res))
    if key in registry:
        return registry[key]
    tag = f"{callee.sym_name}.vjp{'_'.join(map(str, acts))}r{'_'.join(map(str, res))}"
    names = registry[key] = (f"{tag}.fwd", f"{tag}.adj")
    rt = _transform(module, callee, acts, res, registry, True, disable, None, lower)
    rt.name = tag
    g = rt.build()
    n_shadows = sum(is_float_array(callee.args[i]) for i in acts)
    split_function(module, g, rt.last_forward, len(callee.result_types), len(res), n_shadows,
                   "tape", names)
    return names


def _transform(module, func, active_args, active_results, registry, keep_primal, disable,
               memory_limit, lower, needs=None, stores=frozenset()):
    rt = ReverseTransform(module, func, active_args, active_results, registry)
    rt.keep_primal, rt.disable = keep_primal, frozenset(disable)
    rt.memory_limit, rt.lower = memory_limit, lower
    rt.policy.disable = rt.memory.disable = rt.disable
    rt.needs, rt.stores = needs, frozenset(stores)
    return rt


class ReverseTransform:
    def __init__(self, module, func, active_args, active_results, registry):
        self.module, self.func, self.registry = module, func, registry
        self.active_args = sorted(active_args)
        self.active_results = list(active_results)
        self.act = Activity(func, self.active_args, self.active_results)
        self.policy = cache.Policy(func, self.act)
        self.memory = Memory(func, self.act)
        self.snapshots: dict = {}  # (primal loop, root buffer) -> forward tape mark
        self.pair_of: dict = {}  # (forward block, value) -> pair of its push
        self.snapshot_roots: dict = {}  # primal loop -> roots snapshotted before it
        self.fmap: dict[Value, Value] = {}
        self.fblock: dict[Block, Block] = {}
        self.fwhile: dict = {}  # primal scf.while -> (forward op, counter result)
        self.fop: dict = {}  # primal top-level op -> its forward-sweep clone
        self.residuals: dict = {}  # primal call of a custom_vjp function -> forward residuals
        self.fshadow: dict[Value, Value] = {}
        self.scopes: list[Scope] = []
        self.b = RuleBuilder()
        self.keep_primal, self.disable = True, frozenset()
        self.decisions: list = []  # (value, how) for tape_report
        self.pushes: dict[Block, int] = {}  # forward block -> tape slots pushed per execution
        self.pairs = 0
        self.rloops: dict = {}  # primal scf.for -> its reverse loop (checkpoint.py rearranges)
        self.needs: dict | None = None  # block -> values its adjoint asks for (mincut.py)
        self.stores: frozenset = frozenset()  # values the min-cut chose to store
        self._recomputing: list[Block] = []
        self._static = False
        self.watched: list[dict] = []  # more {key: forward value} tables ``promote`` keeps valid
        self.memory_limit = None
        self.lower = None  # compiles Python helpers (grad_function's ``lower``)
        self._flow_sources = None  # array value -> [(sources, through a view/call)]
        self.name = None  # the function's name when not f.grad (split pairs)
        self.split_calls: dict = {}  # primal call -> (adjoint name, forward (buf, pos))
        # split calls and arrays kept by reference (off under forward mode over this function,
        # which can follow neither a tape handed between calls nor referenced arrays' tangents)
        self.split = True
        self.list_shadows: dict = {}  # a list's buffers (alias roots) -> their one shadow

    # ------------------------------------------------------------------ function
    def build(self) -> Func:
        f = self.func
        arrays = [i for i in self.active_args if is_float_array(f.args[i])]
        scalars = [i for i in self.active_args if is_float(f.args[i])]
        arg_types = list(f.arg_types) + [f.args[i].type for i in arrays]
        arg_types += [f.result_types[k] for k in self.active_results]
        primal_types = list(f.result_types) if self.keep_primal else []
        res_types = primal_types + [f.args[i].type for i in scalars]
        suffix = "" if self.keep_primal else ".noprimal"
        new = Func(self.name or f"{f.sym_name}.grad{suffix}", arg_types, res_types, loc=f.loc)
        if self.name is None:
            self.registry[(f.sym_name, tuple(self.active_args), tuple(self.active_results),
                           self.keep_primal)] = new
        self.module.add(new)
        self.new = new
        args = iter(new.args)
        for a in f.args:
            self.fmap[a] = next(args)
            self.fmap[a].hint = a.hint
        for i in arrays:
            self.fshadow[f.args[i]] = next(args)
        seeds = [next(args) for _ in self.active_results]
        self.b.block, self.b.index, self.b.loc = new.body, None, f.loc
        self.tape = self.b.create(TapeNew, [], [TAPE]).result
        for i, a in enumerate(f.args):  # a buffer argument not differentiated that active
            if i not in arrays and is_float_array(a) and self.act.active(a):  # values reach
                self.fshadow[a] = self._scratch_shadow(self.fmap[a])
        self.forward_sweep()
        # the split form cuts here (split.py); an op of its own, since promote() rebuilds ifs
        self.last_forward = self.b.create(TapeMark, [self.tape], [I64], {"split": True})
        top = Scope(f.body, new.body, Block())
        self.scopes.append(top)
        self.b.block, self.b.index = top.rblock, None
        ret = f.body.terminator
        for k, seed in zip(self.active_results, seeds):
            self.seed(ret.operands[k], seed)
        reverse_block(self, f.body)
        checkpoint_loops(self, self.memory_limit, self.lower)
        for op in list(top.rblock.ops):
            op.detach()
            new.body.append(op)
        outs = [self.fmap[v] for v in ret.operands] if self.keep_primal else []
        with self.b.at(new.body):
            for i in scalars:
                outs.append(top.ct.get(f.args[i]) or self.b.const(0, f.args[i].type))
            cache.reserve(self)
            self.b.create(TapeFree, [self.tape], [])
            self.b.create(Return, outs, [])
        return new

    def _scratch_shadow(self, a: Value) -> Value:
        """A zeroed shadow for buffer ``a`` whose adjoint the caller does not want."""
        b = self.b
        dims = [b.op(Dim, a, axis=k) for k in range(a.type.ndim)]
        s = b.create(Alloc, dims, [a.type.with_layout("C")], {"init": "zero"}).result
        return s if a.type.layout == "C" else b.op(Relayout, s, type=a.type)

    def callee_grad(self, callee: Func, acts, res) -> Func:
        """``callee.grad`` for these active arguments and results, which the adjoint sweep
        calls to re-run a call (``calls.py``)."""
        return grad_function(self.module, callee, acts, res, self.registry,
                             split_calls=self.split, lower=self.lower)

    def seed(self, v: Value, seed: Value) -> None:
        if isinstance(v.type, ArrayType):
            if self.act.active(v):
                add_into(self.b, self.shadow(v), seed)
            return
        if self.act.active(v):
            self.accumulate(v, seed)

    # ------------------------------------------------------------------ forward sweep
    def forward_sweep(self) -> None:
        for op in self.func.body.ops[:-1]:
            self.b.loc = op.loc
            new = clone_op(op, self.fmap)
            self.b.insert(new)
            for old_op, new_op in zip(op.walk(), new.walk()):
                self.fop[old_op] = new_op
            for old_op, new_op in zip(op.walk(), new.walk()):
                for ro, rn in zip(old_op.regions, new_op.regions):
                    self.fblock[ro.block] = rn.block
            for old_op, new_op in zip(list(op.walk()), list(new.walk())):
                if isinstance(old_op, While):
                    self.fwhile[old_op] = cache.count_iterations(new_op)
                    self._remap(dict(zip(new_op.results, self.fwhile[old_op][0].results)))
                elif isinstance(old_op, Call):
                    self._custom_forward(old_op, new_op) or self._split_forward(old_op, new_op)
            self.top_level_shadow(op)
        self.fblock[self.func.body] = self.new.body

    def _split_forward(self, call, clone) -> None:
        """A call kept through optimization (recursion) whose adjoint is needed runs the
        callee's split forward function, which also returns its tape; the adjoint sweep passes
        that tape to the split adjoint function (``split.py``), so nothing is recomputed."""
        callee = self.module[call.attrs["callee"]]
        acts = [k for k, v in enumerate(call.operands) if self.act.active(v)]
        res = [k for k, r in enumerate(call.results) if self.act.active(r)]
        if "checkpoint_call" in callee.attrs or self.memory_limit is not None or \
                not self.split or (not acts and not res) or \
                any(not is_float(call.results[k]) for k in res):
            return
        names = split_pair(self.module, callee, acts, res, self.registry, self.disable,
                           self.lower)
        new = Builder.before(clone).create(Call, list(clone.operands),
                                           list(callee.result_types) + [I64, I64],
                                           {"callee": Symbol(names[0])})
        self._replace_call(call, clone, new)
        self.split_calls[call] = (names[1], list(new.results[-2:]))

    def _replace_call(self, call, clone, new) -> None:
        for old, r in zip(clone.results, new.results):
            old.replace_all_uses_with(r)
        for k, v in list(self.fmap.items()):
            if v in clone.results:
                self.fmap[k] = new.results[clone.results.index(v)]
        clone.erase()
        self.fop[call] = new

    def _custom_forward(self, call, clone) -> bool:
        """A call to a custom_vjp function runs its forward rule, which also returns residuals
        for the backward rule."""
        callee = self.module[call.attrs["callee"]]
        if "custom_vjp_fwd" not in callee.attrs:
            return False
        fwd = self.module[callee.attrs["custom_vjp_fwd"]]
        new = Builder.before(clone).create(Call, list(clone.operands), fwd.result_types,
                                           {"callee": Symbol(fwd.sym_name)})
        n = len(clone.results)
        self._replace_call(call, clone, new)
        # array residuals are copied: the forward rule may hand back its arguments, which the
        # caller can write before the backward rule reads them
        b = Builder.before(new)
        b.index += 1
        res = []
        for r in new.results[n:]:
            if isinstance(r.type, ArrayType):
                c = copy(b, r)
                r = c if c.type == r.type else b.op(Relayout, c, type=r.type)
            res.append(r)
        self.residuals[call] = res
        return True

    def _remap(self, remap: dict) -> None:
        """Point the transform's tables at replacement values."""
        for table in (self.fmap, self.fshadow):
            for k, v in list(table.items()):
                if v in remap:
                    table[k] = remap[v]

    def top_level_shadow(self, op) -> None:
        """Shadows of active buffers created at the top level (zeroed, made in the forward
        sweep so that every reverse region can use them)."""
        if isinstance(op, Call) and op in self.residuals:  # a custom_vjp call's array results
            for r in op.results:  # (their shadows are the cotangents its backward rule gets)
                if is_float_array(r) and self.act.active(r):
                    fr = self.fmap[r]
                    dims = [self.b.op(Dim, fr, axis=k) for k in range(r.type.ndim)]
                    self.fshadow[r] = self._as(self.b.create(
                        Alloc, dims, [r.type.with_layout("C")], {"init": "zero"}).result,
                        r.type)
            return
        if len(op.results) != 1 or not is_float_array(op.result) or not self.act.active(op.result):
            return
        if isinstance(op, Alloc) and op.attrs.get("list"):
            return  # one shadow for all of a list's buffers: list_shadow()
        if isinstance(op, Alloc):
            dims = [self.fmap[d] for d in op.operands]
            self.fshadow[op.result] = self.b.create(Alloc, dims, [op.result.type],
                                                    {"init": "zero"}).result
        elif op.has_trait(VIEW) and op.operands[0] in self.fshadow:
            rest = [self.fmap[v] for v in op.operands[1:]]
            self.fshadow[op.result] = self.b.create(type(op), [self.fshadow[op.operands[0]], *rest],
                                                    [op.result.type], dict(op.attrs)).result

    # ------------------------------------------------------------------ primal values
    def scope_of(self, block: Block) -> Scope:
        for s in reversed(self.scopes):
            if s.pblock is block:
                return s
        raise AssertionError("value used outside the block that defines it")

    def get(self, v: Value) -> Value:
        """The primal value ``v`` usable at the current point of the adjoint sweep."""
        if self.needs is not None and v.block is not self.func.body and \
                not isinstance(v.type, ArrayType) and \
                (not self._recomputing or self._recomputing[-1] is not v.block):
            self.needs.setdefault(v.block, set()).add(v)
        for s in reversed(self.scopes):
            if v in s.env:
                return s.env[v]
        block = v.block
        if block is self.func.body:
            return self.fmap[v]
        op = v.op
        if isinstance(v.type, ArrayType):
            return self.get_array(v)
        how = self.how(v)
        self.decisions.append((v, how))
        if how == "recompute" or how == "reload":
            return self.recompute(v)
        if how == "snapshot":
            snap = self.memory.snapshot_for(op)
            idx = [self.get(i) for i in op.operands[1:]]
            return self._memo(v, self.snapshot_read(op.operands[0], idx, snap, v.type))
        if how == "induction":
            return self._memo(v, self.induction_value(v))
        if how == "carried":
            ly, dim, shift = self.memory.carried_load(v)
            idx = [self.get(i) for i in ly.operands[1:]]
            idx[dim] = self.b.op(AddI, idx[dim], self.b.i64(shift))
            snap = self.memory.snapshot_for(ly)
            return self._memo(v, self.snapshot_read(ly.operands[0], idx, snap, v.type))
        return self.pop(v, self.scope_of(block))

    def how(self, v: Value) -> str:
        """How the adjoint sweep obtains primal scalar ``v`` (not at the top level): "recompute",
        "reload", "snapshot", "carried" or "tape"."""
        if v in self.stores:
            return "tape"
        op = v.op
        if op is None:
            if "recompute" not in self.disable and self._induction(v) is not None:
                return "induction"
            if not {"carried", "snapshot"} & self.disable and \
                    self.memory.carried_load(v) is not None:  # read from the loop's snapshot
                return "carried"
            return "tape"
        if isinstance(op, Load):
            if not self.array_available(op.operands[0]):
                return "tape"
            if "reload" not in self.disable and (self.policy.read_only(op.operands[0]) or
                                                 self.memory.reload_safe(op)):
                return "reload"
            if "snapshot" not in self.disable and self.memory.snapshot_for(op) is not None:
                return "snapshot"
            return "tape"
        if any(isinstance(x.type, ArrayType) and not self.array_available(x) for x in op.operands):
            return "tape"  # e.g. the size of an array carried by a loop
        if self.policy.recompute(v):
            return "recompute"
        if (op.has_trait(EXPENSIVE) and "recompute_expensive" not in self.disable
                and self.tape_free(v)):
            return "recompute"
        return "tape"

    def how_static(self, v: Value) -> str:
        """``how(v)`` outside any reverse region (for the min-cut): values of blocks around
        ``v``'s count as available."""
        self._static = True
        try:
            return self.how(v)
        finally:
            self._static = False

    def _induction(self, v: Value):
        """(loop, init, step_value, AddI or SubI) when loop-carried ``v`` grows by a loop-invariant
        amount each iteration (``idx += 1``); it is then init + t * step at iteration t."""
        loop = v.block.parent_op
        if loop is None or not isinstance(loop, For) or v.index == 0 or not v.type.is_int:
            return None
        body = loop.regions[0].block
        y = body.terminator.operands[v.index - 1]
        op = y.op
        if op is None or not isinstance(op, (AddI, SubI)):
            return None
        a, b = op.operands
        if a is v and _outside(b, loop):
            return loop, loop.operands[3 + v.index - 1], b, type(op)
        if isinstance(op, AddI) and b is v and _outside(a, loop):
            return loop, loop.operands[3 + v.index - 1], a, type(op)
        return None

    def invertible(self, v: Value):
        """For an integer ``v`` carried by an ``scf.for`` whose next value is ``v`` plus an
        amount that does not depend on ``v`` (not a loop-invariant one: that is an induction),
        a function computing that amount in the adjoint sweep; else None.  The reverse loop
        then recovers ``v`` from the next iteration's value by subtracting it, instead of
        popping it: gmm's ``idx`` advanced by an inner loop's trip count each row."""
        loop = v.block.parent_op
        if loop is None or not isinstance(loop, For) or v.index == 0 or v.type != I64 or \
                self._induction(v) is not None:  # (i64 only: trip counts are i64)
            return None
        body = loop.regions[0].block
        y = body.terminator.operands[v.index - 1]
        op = y.op
        if op is None or op.parent is not body:
            return None
        if isinstance(op, For):  # y = an inner loop's induction started at v
            j = op.results.index(y)
            ind = self._induction(op.regions[0].block.args[1 + j])
            if op.operands[3 + j] is not v or ind is None or ind[3] is not AddI:
                return None
            inner, inc = op, ind[2]

            def amount():
                b = self.b
                lb, ub, st = (self.get(x) for x in inner.operands[:3])
                step = self.get(inc)
                step = b.cast(step, v.type) if step.type != v.type else step
                return b.op(MulI, cache._trip(b, lb, ub, st), step)
            return amount
        if isinstance(op, AddI) and v in op.operands:
            x = op.operands[1] if op.operands[0] is v else op.operands[0]
            if x is v or _depends_on(x, v, body):
                return None
            return lambda: self.get(x)
        return None

    def induction_value(self, v: Value) -> Value:
        loop, init, inc, kind = self._induction(v)
        b = self.b
        lb, step = self.get(loop.operands[0]), self.get(loop.operands[2])
        t = b.op(FloorDivI, b.op(SubI, self.get(loop.regions[0].block.args[0]), lb), step)
        delta = b.op(MulI, t, b.cast(self.get(inc), v.type) if inc.type != v.type
                     else self.get(inc))
        return b.op(kind, self.get(init), delta)

    def tape_free(self, v: Value, depth: int = 8, home: Block | None = None) -> bool:
        """Can ``v`` be had in the adjoint sweep without anything on the tape of its own block?

        A value of an enclosing block (a loop around ``v``'s loop, hoisted there by LICM)
        counts as free: it costs at most one slot per trip of that outer block, where storing
        ``v`` would cost one per trip of ``v``'s own."""
        if v.block is self.func.body or any(v in s.env for s in self.scopes):
            return True
        if home is None:
            home = v.block
        elif v.block is not home and (self._static or
                                      any(s.pblock is v.block for s in self.scopes)):
            return True
        op = v.op
        if op is None:
            p = v.block.parent_op
            return p is not None and isinstance(p, For) and v is p.regions[0].block.args[0]
        if depth == 0 or op.regions:
            return False
        if isinstance(op, Load):
            return self.array_available(op.operands[0]) and (
                self.policy.read_only(op.operands[0]) or self.memory.reload_safe(op))
        if not (op.has_trait(PURE) or isinstance(op, cache.ALWAYS_RECOMPUTE)):
            return False
        return all(self.tape_free(x, depth - 1, home) for x in op.operands)

    def array_available(self, a: Value) -> bool:
        """Can the adjoint sweep have primal array ``a`` (made at the top level or in
        branches, or a view of such an array)?"""
        if a.block is self.func.body:
            return True
        op = a.op
        if op is not None and op.has_trait(VIEW):
            return self.array_available(op.operands[0])
        p = a.block.parent_op if op is None else op.parent_op
        if op is None:
            return False  # carried by a loop or a block argument
        while p is not self.func:
            if not isinstance(p, If):
                return False
            p = p.parent_op
        return True

    def get_array(self, a: Value) -> Value:
        op = a.op
        if op is not None and op.has_trait(VIEW):
            return self.recompute(a)
        if not self.array_available(a):
            raise DifferentiationError("the adjoint sweep needs an array made inside a loop "
                                       "(not supported yet)", op.loc if op else self.func.loc)
        fv = self.promote(self.fmap[a], self.fblock[a.block])
        self.scopes[0].env[a] = fv
        return fv

    def _memo(self, v: Value, r: Value) -> Value:
        self.scopes[-1].env[v] = r
        return r

    def snapshot_read(self, array: Value, idx, snap, t) -> Value:
        """The element ``array[idx]`` as it was when the snapshot of its buffer was taken."""
        loop, root = snap
        mark = self.snapshots.get((loop, root))
        if mark is None:
            b = Builder.before(self.fop[loop])
            mark = b.create(TapeMark, [self.tape], None).result
            b.create(TapePushArray, [self.tape, self.fmap[root]], [])
            self.snapshots[(loop, root)] = mark
            self.snapshot_roots.setdefault(loop, []).append(root)
        p0 = self.forward_value(mark, loop.parent)
        b = self.b
        a = self.get(array)
        off = b.op(Offset, a, self.get(root))
        for k, i in enumerate(idx):
            off = b.op(AddI, off, b.op(MulI, i, b.op(Stride, a, axis=k)))
        if t.is_complex:
            off = b.op(MulI, off, b.i64(2))
        return b.create(TapeRead, [self.tape, b.op(AddI, p0, off)], [t]).result

    def drop_snapshots(self, loop) -> None:
        """After the adjoint of ``loop``: discard the snapshots taken before it (newest first)."""
        b = self.b
        for root in reversed(self.snapshot_roots.pop(loop, [])):
            r = self.get(root)
            n = b.i64(2 if r.type.dtype.is_complex else 1)
            for k in range(r.type.ndim):
                n = b.op(MulI, n, b.op(Dim, r, axis=k))
            b.create(TapeDrop, [self.tape, n], [])

    def recompute(self, v: Value) -> Value:
        op = v.op
        self._recomputing.append(v.block)
        try:
            operands = [self.get(x) for x in op.operands]
        finally:
            self._recomputing.pop()
        if isinstance(op, Index):  # it passed its check in the forward sweep: only wrap
            i, n = operands
            if not op.attrs.get("wrap"):
                r = i
            else:
                neg = self.b.op(CmpI, i, self.b.i64(0), pred="lt")
                r = self.b.op(Select, neg, self.b.op(AddI, i, n), i)
        else:
            r = self.b.create(type(op), operands, [x.type for x in op.results],
                              dict(op.attrs)).results[v.index]
        self.scopes[-1].env[v] = r
        return r

    def pop(self, v: Value, scope: Scope) -> Value:
        """Push ``v`` at the end of its forward block; pop it at the start of its reverse block."""
        return self._push_pop(scope, self.fmap[v], v, v.op.loc if v.op else self.func.loc)

    def _push_pop(self, scope: Scope, fwd: Value, key: Value, loc) -> Value:
        """Push forward value ``fwd`` at the end of ``scope``'s forward block and pop it at the
        start of its reverse block, where it stands for ``key`` (a scalar; an array goes by
        reference, ``tape.push_ref``)."""
        fb = scope.fblock
        ref = isinstance(fwd.type, ArrayType)
        pair = self.pair_of.get((fb, fwd))
        if pair is None:  # a block reversed twice (a while condition: after the last test,
            pair = self.pair_of[(fb, fwd)] = self.next_pair()  # and in each trip) pushes once
            Builder(fb, fb.ops.index(fb.terminator), loc).create(
                TapePushRef if ref else TapePush, [self.tape, fwd], [], {"pair": pair})
            slots = 2 + 2 * fwd.type.ndim if ref else 2 if fwd.type.is_complex else 1
            self.pushes[fb] = self.pushes.get(fb, 0) + slots
        popped = Builder(scope.rblock, 0, self.b.loc).create(
            TapePopRef if ref else TapePop, [self.tape], [fwd.type], {"pair": pair}).result
        self._inserted_at_start(scope)
        scope.env[key] = scope.head_env[key] = popped
        return popped

    def next_pair(self) -> int:
        """A fresh id linking a push to its pop (forward mode over this function uses it)."""
        self.pairs += 1
        return self.pairs

    def _inserted_at_start(self, scope: Scope) -> None:
        scope.head += 1
        if self.b.block is scope.rblock and self.b.index is not None:
            self.b.index += 1

    def promote(self, fwd: Value, fblock: Block) -> Value:
        """A top-level forward value equal to ``fwd`` (defined in forward block ``fblock``)
        whenever ``fblock`` ran: it is yielded out of each enclosing ``scf.if`` as an extra
        result (the other branch yields a placeholder).  Values inside loops cannot be."""
        while fblock is not self.new.body:
            parent = fblock.parent_op
            if not isinstance(parent, If):
                raise DifferentiationError("an array made inside a loop is needed by the adjoint "
                                           "sweep (not supported yet)", parent.loc)
            fwd = self._add_if_result(parent, fwd, fblock)
            fblock = fwd.block
        return fwd

    def _add_if_result(self, op, fwd: Value, branch: Block) -> Value:
        for region in op.regions:
            blk = region.block
            term = blk.terminator
            b = Builder.before(term)
            if blk is branch:
                v = fwd
            elif isinstance(fwd.type, ArrayType):
                zeros = [b.i64(0)] * fwd.type.ndim
                v = b.create(Alloc, zeros, [fwd.type.with_layout("C")],
                             {"init": "zero"}).result
                if fwd.type.layout != "C":
                    v = b.op(Relayout, v, type=fwd.type)
            else:
                v = b.const(0, fwd.type)
            term._add_operand(v)
        regions = list(op.regions)
        op.regions = []
        new = Builder.before(op).create(If, list(op.operands),
                                        [r.type for r in op.results] + [fwd.type], regions=regions)
        remap = dict(zip(op.results, new.results))
        for old, r in remap.items():
            old.replace_all_uses_with(r)
        for table in (self.fmap, self.fshadow, *(s.env for s in self.scopes),
                      *(s.head_env for s in self.scopes), *self.watched):
            for k, v in list(table.items()):
                if v in remap:
                    table[k] = remap[v]
        for k, v in list(self.fop.items()):
            if v is op:
                self.fop[k] = new
        op.erase()
        return new.results[-1]

    def forward_value(self, fwd: Value, pblock: Block) -> Value:
        """A value of the forward sweep (not of the primal) defined in ``pblock``'s clone."""
        if pblock is self.func.body:
            return fwd
        scope = self.scope_of(pblock)
        if fwd in scope.env:
            return scope.env[fwd]
        return self._push_pop(scope, fwd, fwd, self.func.loc)

    # ------------------------------------------------------------------ shadows
    def shadow(self, a: Value) -> Value:
        """The shadow of primal array ``a`` at the current point of the adjoint sweep."""
        for s in reversed(self.scopes):
            if a in s.shadows:
                return s.shadows[a]
        listed = self.list_shadow(a)
        if listed is not None:
            return listed
        if a in self.fshadow:
            return self.fshadow[a]
        op = a.op
        if op is not None and op.has_trait(VIEW):
            src = self.shadow(op.operands[0])
            rest = [self.get(x) for x in op.operands[1:]]
            r = self.b.create(type(op), [src, *rest], [a.type], dict(op.attrs)).result
            self.scopes[-1].shadows[a] = r
            return r
        if op is not None and isinstance(op, Alloc) and a.block is not self.func.body:
            scope = self.scope_of(a.block)
            r = self.at_head(scope, lambda: self.b.create(
                Alloc, [self.get(d) for d in op.operands], [a.type],
                {"init": "zero"}).result)
            scope.shadows[a] = r
            return r
        chosen = self.chosen_shadow(a)
        if chosen is not None:
            self.scopes[-1].shadows[a] = chosen
            return chosen
        if renewed_array(a) is not None:
            scope = self.scope_of(a.block)
            dims = self.forward_dims(a)
            r = self.at_head(scope, lambda: self.b.create(
                Alloc, dims, [a.type.with_layout("C")], {"init": "zero"}).result)
            r = self._as(r, a.type) if r.type != a.type else r
            scope.shadows[a] = r
            return r
        what = _ORIGINS.get(type(op), f"`{op.name}`") if op is not None else \
            "a value carried by a loop or chosen by a branch"
        raise DifferentiationError(
            f"reverse mode cannot follow an active array that comes from {what} here (arrays "
            "carried from one loop iteration to the next and written in place, renewed by a "
            "while loop, or chosen by a branch, are not supported in reverse mode yet)",
            op.loc if op is not None else self.func.loc)

    def list_shadow(self, a: Value):
        """The one shadow of all the buffers of a Python list (``frontend/lists.py``): ``append``
        moves the elements to a bigger buffer at the same positions, so every buffer's element
        k is the list's element k, and a single zeroed shadow the size of the list's last
        buffer serves them all (the adjoint of the copy into the bigger buffer is then the
        identity, as it should be).  None when ``a`` is not a list's buffer."""
        roots = self.act.roots.get(a, set())
        if not roots or not all(_is_list_buffer(r) for r in roots):
            return None
        family = set(roots)
        grew = True
        while grew:
            grew = False
            for rs in self.act.roots.values():
                if rs & family and not rs <= family and all(_is_list_buffer(r) for r in rs):
                    family |= rs
                    grew = True
        key = frozenset(family)
        if key in self.list_shadows:
            return self.list_shadows[key]
        last = None
        for op in self.func.body.ops[:-1]:
            for r in op.results:
                if isinstance(r.type, ArrayType) and self.act.roots.get(r) and \
                        self.act.roots[r] <= family:
                    last = r
        if last is None:
            return None
        fop = self.fwhile[last.op][0] if last.op in self.fwhile else self.fop[last.op]
        while fop.parent is not self.new.body:  # (a while loop's forward op, with its counter)
            fop = fop.parent.parent_op
        b = Builder(self.new.body, self.new.body.ops.index(fop) + 1, last.op.loc)
        dim = b.op(Dim, self.fmap[last], axis=0)
        shadow = b.create(Alloc, [dim], [last.type.with_layout("C")],
                          {"init": "zero"}).result
        self.list_shadows[key] = shadow
        return shadow

    def at_head(self, scope: Scope, emit):
        """Run ``emit`` with the builder at the head of ``scope``'s reverse block (after its
        pops), seeing only that scope and the ones around it."""
        saved = (self.scopes, self.b.block, self.b.index)
        self.scopes = self.scopes[:self.scopes.index(scope) + 1]
        self.b.block, self.b.index = scope.rblock, scope.head
        body_env, scope.env = scope.env, scope.head_env
        try:
            return emit()
        finally:
            scope.head = self.b.index
            scope.env = body_env
            scope.env.update(scope.head_env)
            self.scopes, (self.b.block, self.b.index) = saved[0], saved[1:]

    def chosen_shadow(self, a: Value):
        """The shadow of an array that is one of several top-level buffers (swapped in a loop,
        chosen by a branch): the forward sweep records which one by its address, and the
        adjoint sweep selects that buffer's shadow.  None when some candidate has no shadow."""
        roots = self.act.roots.get(a, set())
        if len(roots) < 2 or not all(r in self.fshadow and r.block is self.func.body
                                     for r in roots) or not self._whole_buffers(a, roots):
            return None
        ptr = self._data_ptr(a)
        b = self.b
        roots = sorted(roots, key=lambda r: r.index + (r.op.results.index(r) if r.op else 0))
        out = self._as(self.fshadow[roots[-1]], a.type)
        for r in roots[:-1]:
            same = b.op(CmpI, ptr, b.op(DataPtr, self.fmap[r]), pred="eq")
            out = b.op(Select, same, self._as(self.fshadow[r], a.type), out)
        return out

    def _whole_buffers(self, a: Value, roots: set) -> bool:
        """Whether every array ``a`` may be is one of ``roots`` itself, not a view into one
        (``a[1:] if c else b[:-1]``, views swapped in a loop): only then does its address name
        its buffer.  (A view's shadow chosen by address took the whole buffer's shadow as the
        view: wrong adjoints, silently.)"""
        if self._flow_sources is None:
            src: dict = {}
            for op in self.func.walk():
                opaque = op.has_trait(VIEW) or isinstance(op, Call)
                for dst, srcs in array_flows(op):
                    src.setdefault(dst, []).append((srcs, opaque))
            self._flow_sources = src
        seen, todo = set(), [a]
        while todo:
            v = todo.pop()
            if v in seen or v in roots:
                continue
            seen.add(v)
            entries = self._flow_sources.get(v)
            if not entries:
                return False
            for srcs, opaque in entries:
                if opaque or not srcs:
                    return False
                todo.extend(srcs)
        return True

    def renewed_value(self, a: Value) -> Value:
        """The buffer block argument ``a`` of a loop that renews it (``renewed_array``) held in
        the iteration being reversed: nothing writes a version after it is made, so a reference
        to it is pushed (``tape.push_ref``) instead of its elements."""
        scope = self.scope_of(a.block)
        if a in scope.env:
            return scope.env[a]
        return self._push_pop(scope, self.fmap[a], a, self.func.loc)

    def forward_dims(self, a: Value) -> list:
        """The dimensions of primal array ``a`` (defined in a block of the forward sweep) as
        values the adjoint sweep can use at the start of ``a``'s reverse block."""
        if a.block is self.func.body:
            b = Builder(self.new.body, self.new.body.ops.index(self.fop[a.op]) + 1
                        if a.op is not None else 0, self.func.loc)
            return [b.op(Dim, self.fmap[a], axis=k) for k in range(a.type.ndim)]
        fb = self.fblock[a.block]
        fa = self.fmap[a]
        at = 0 if fa.op is None else fb.ops.index(fa.op) + 1
        b = Builder(fb, at, self.func.loc)
        dims = [b.op(Dim, fa, axis=k) for k in range(a.type.ndim)]
        return [self.forward_value(d, a.block) for d in dims]

    def _as(self, v: Value, t) -> Value:
        return v if v.type == t else self.b.op(Relayout, v, type=t)

    def _data_ptr(self, a: Value) -> Value:
        """The address of primal array ``a`` at the current point of the adjoint sweep."""
        if a.block is self.func.body:
            return self.b.op(DataPtr, self.fmap[a])
        fb = self.fblock[a.block]
        fa = self.fmap[a]
        if fa.op is None:  # a block argument: take its address at the start of the block
            ptr = Builder(fb, 0, self.func.loc).op(DataPtr, fa)
        else:
            ptr = Builder(fb, fb.ops.index(fa.op) + 1, self.func.loc).op(DataPtr, fa)
        return self.forward_value(ptr, a.block)

    # ------------------------------------------------------------------ adjoints
    @property
    def ct(self) -> dict:
        return self.scopes[-1].ct

    def accumulate(self, v: Value, c: Value | None) -> None:
        if c is None or not self.act.active(v):
            return
        cur = self.ct.get(v)
        self.ct[v] = c if cur is None else self.b.op(AddF, cur, c, nsz=True)

    def zero(self, t):
        return self.b.const(0, t)


_ = Region


# where an array came from, in the user's terms (for refusals)
_ORIGINS = {If: "an if/else (or conditional expression)", For: "a for loop",
            While: "a while loop (or a for loop with break)", Call: "a function call",
            Select: "a conditional expression", ArrayConst: "a global or closure array"}


def _depends_on(x: Value, v: Value, body: Block) -> bool:
    """Whether ``x`` (defined in ``body`` or outside) is computed from ``v`` inside ``body``."""
    todo, seen = [x], set()
    while todo:
        u = todo.pop()
        if u is v:
            return True
        if u in seen or u.op is None or not body.parent_op.is_ancestor_of(u.op):
            continue
        seen.add(u)
        for inner in u.op.walk():
            todo.extend(inner.operands)
    return False


def _is_list_buffer(r: Value) -> bool:
    return r.op is not None and isinstance(r.op, Alloc) and bool(r.op.attrs.get("list"))


def _outside(v: Value, loop) -> bool:
    owner = v.op if v.op is not None else v.block.parent_op
    return owner is None or not loop.is_ancestor_of(owner)
