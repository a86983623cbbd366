"""The forward sweep of ``f.grad``: the primal, cloned, plus what the adjoint sweep will need.

``ForwardSweep.run`` makes the derivative function and fills it with the augmented primal: a
zeroed shadow for every active buffer made at the top level, an iteration counter on each
``scf.while`` (``tape.py``), the forward functions of recursive calls (split, with their tape)
and of ``custom_vjp`` calls (with their residuals).  It ends at ``last_forward``, where the split
form cuts (``split.py``).

The adjoint sweep, built next, asks for more as it goes, through this object's methods:
``push`` a value at the end of its forward block (popped at the start of the matching reverse
block), ``snapshot`` a buffer before a loop, ``promote`` a value out of the ``scf.if`` ops around
it; the maps (``fmap``: primal value -> forward value, ``fop``, ``fblock``, ``fshadow``) are read
by the adjoint sweep and by checkpointing.
"""

from __future__ import annotations

from collections.abc import Callable

from ...errors import DifferentiationError
from ...ir.builder import Builder
from ...ir.core import VIEW, Block, Func, Module, Value
from ...ir.ops import (
    Alloc,
    Call,
    Dim,
    If,
    Relayout,
    TapeMark,
    TapeNew,
    TapePush,
    TapePushArray,
    TapePushRef,
    While,
)
from ...ir.printer import Symbol
from ...ir.types import I64, TAPE, ArrayType
from ...passes.rewrite import clone_op
from ..activity import Activity, is_float, is_float_array
from ..arrays import copy
from ..plan.flows import fresh_call_result
from .state import Settings
from .tape import count_iterations


class ForwardSweep:
    """The derivative function under construction, up to the end of its forward sweep.

    ``split_pair(callee, acts, res) -> (forward name, adjoint name)`` gives the split functions
    of a called function (``grad_function`` passes it: building them is a derivative of its own).
    """

    def __init__(self, module: Module, func: Func, act: Activity, settings: Settings,
                 split_pair: Callable):
        self.module, self.func, self.act, self.settings = module, func, act, settings
        self.split_pair = split_pair
        self.b = Builder()
        self.fmap: dict[Value, Value] = {}
        self.fshadow: dict[Value, Value] = {}  # primal buffer -> its shadow (made here)
        self.copies: dict = {}  # (what, primal op, ...) -> a copy the adjoint sweep reads
        self.fblock: dict[Block, Block] = {}
        self.fop: dict = {}  # primal op -> its forward-sweep clone
        self.fwhile: dict = {}  # primal scf.while -> (forward op, counter result)
        self.residuals: dict = {}  # primal call of a custom_vjp function -> forward residuals
        self.split_calls: dict = {}  # primal call -> (adjoint name, forward (buf, pos))
        self.pushes: dict[Block, int] = {}  # forward block -> tape slots pushed per execution
        self.pair_of: dict = {}  # (forward block, value) -> pair of its push
        self.pairs = 0
        self.snapshots: dict = {}  # (primal loop, root buffer) -> forward tape mark
        self.snapshot_roots: dict = {}  # primal loop -> roots snapshotted before it
        self.local_tapes: dict[Block, Value] = {}  # a parallel loop's body -> its iteration's tape
        self.new: Func | None = None
        self.tape: Value | None = None
        self.last_forward = None

    # ------------------------------------------------------------------ the sweep
    def run(self, active_args, active_results, registry: dict) -> list[Value]:
        """Make the derivative function (registered in ``registry`` under its key) and build
        its forward sweep; returns its seed arguments."""
        f, keep = self.func, self.settings.keep_primal
        arrays = [i for i in active_args if is_float_array(f.args[i])]
        scalars = [i for i in active_args if is_float(f.args[i])]
        arg_types = list(f.arg_types) + [f.args[i].type for i in arrays]
        arg_types += [f.result_types[k] for k in active_results]
        res_types = (list(f.result_types) if keep else []) + [f.args[i].type for i in scalars]
        suffix = "" if keep else ".noprimal"
        new = Func(self.settings.name or f"{f.sym_name}.grad{suffix}", arg_types, res_types,
                   loc=f.loc)
        if self.settings.name is None:
            registry[(f.sym_name, tuple(active_args), tuple(active_results), keep)] = new
        self.module.add(new)
        self.new = new
        args = iter(new.args)
        for a in f.args:
            self.fmap[a] = next(args)
            self.fmap[a].hint = a.hint
        for i in arrays:
            self.fshadow[f.args[i]] = next(args)
        seeds = [next(args) for _ in active_results]
        self._clone_body(arrays)
        return seeds

    def _clone_body(self, arrays) -> None:
        f, b = self.func, self.b
        b.block, b.index, b.loc = self.new.body, None, f.loc
        self.tape = b.create(TapeNew, [], [TAPE]).result
        for i, a in enumerate(f.args):  # a buffer argument not differentiated that active
            if i not in arrays and is_float_array(a) and self.act.active(a):  # values reach
                self.fshadow[a] = self._scratch_shadow(self.fmap[a])
        for op in f.body.ops[:-1]:
            b.loc = op.loc
            self._clone(op)
            self._top_level_shadow(op)
        self.fblock[f.body] = self.new.body
        # the split form cuts here (split.py); an op of its own, since promote() rebuilds ifs
        self.last_forward = b.create(TapeMark, [self.tape], [I64], {"split": True})

    def _clone(self, op) -> None:
        new = clone_op(op, self.fmap)
        self.b.insert(new)
        for old_op, new_op in zip(op.walk(), new.walk()):
            self.fop[old_op] = new_op
        for old_op, new_op in zip(op.walk(), new.walk()):
            for ro, rn in zip(old_op.regions, new_op.regions):
                self.fblock[ro.block] = rn.block
        for old_op, new_op in zip(list(op.walk()), list(new.walk())):
            if isinstance(old_op, While):
                self.fwhile[old_op] = count_iterations(new_op)
                self._remap(dict(zip(new_op.results, self.fwhile[old_op][0].results)))
            elif isinstance(old_op, Call):
                self._custom_forward(old_op, new_op) or self._split_forward(old_op, new_op)

    def _scratch_shadow(self, a: Value) -> Value:
        """A zeroed shadow for buffer ``a`` whose adjoint the caller does not want."""
        b = self.b
        dims = [b.op(Dim, a, axis=k) for k in range(a.type.ndim)]
        s = b.create(Alloc, dims, [a.type.with_layout("C")], {"init": "zero"}).result
        return s if a.type.layout == "C" else b.op(Relayout, s, type=a.type)

    def _split_forward(self, call, clone) -> None:
        """A call kept through optimization (recursion) whose adjoint is needed runs the
        callee's split forward function, which also returns its tape; the adjoint sweep passes
        that tape to the split adjoint function (``split.py``), so nothing is recomputed."""
        callee = self.module[call.attrs["callee"]]
        acts = [k for k, v in enumerate(call.operands) if self.act.active(v)]
        res = [k for k, r in enumerate(call.results) if self.act.active(r)]
        if "checkpoint_call" in callee.attrs or self.settings.memory_limit is not None or \
                not self.settings.split_calls or (not acts and not res) or \
                any(not is_float(call.results[k]) and not fresh_call_result(call.results[k])
                    for k in res):
            return
        names = self.split_pair(callee, acts, res)
        new = Builder.before(clone).create(Call, list(clone.operands),
                                           list(callee.result_types) + [I64, I64],
                                           {"callee": Symbol(names[0])})
        self._replace_call(call, clone, new)
        self.split_calls[call] = (names[1], list(new.results[-2:]))

    def _replace_call(self, call, clone, new) -> None:
        self.replace_results(clone, new)
        clone.erase()
        self.fop[call] = new

    def replace_results(self, old, new) -> None:
        """Forward op ``new`` computes what ``old`` did (its first results): uses and ``fmap``
        move to it."""
        for o, r in zip(old.results, new.results):
            o.replace_all_uses_with(r)
        for k, v in list(self.fmap.items()):
            if v in old.results:
                self.fmap[k] = new.results[old.results.index(v)]

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
        """Point the sweep's tables at replacement values."""
        for table in (self.fmap, self.fshadow, self.copies):
            for k, v in list(table.items()):
                if v in remap:
                    table[k] = remap[v]

    def _top_level_shadow(self, op) -> None:
        """Shadows of active buffers created at the top level (zeroed, made in the forward
        sweep so that every reverse region can use them)."""
        b = self.b
        if isinstance(op, Call) and op in self.residuals:  # a custom_vjp call's array results
            for r in op.results:  # (their shadows are the cotangents its backward rule gets)
                if is_float_array(r) and self.act.active(r):
                    fr = self.fmap[r]
                    dims = [b.op(Dim, fr, axis=k) for k in range(r.type.ndim)]
                    s = b.create(Alloc, dims, [r.type.with_layout("C")], {"init": "zero"}).result
                    self.fshadow[r] = s if s.type == r.type else b.op(Relayout, s, type=r.type)
            return
        if len(op.results) != 1 or not is_float_array(op.result) or not self.act.active(op.result):
            return
        if isinstance(op, Alloc) and op.attrs.get("list"):
            return  # one shadow for all of a list's buffers: Adjoint.list_shadow()
        if isinstance(op, Alloc):
            dims = [self.fmap[d] for d in op.operands]
            self.fshadow[op.result] = b.create(Alloc, dims, [op.result.type],
                                               {"init": "zero"}).result
        elif op.has_trait(VIEW) and op.operands[0] in self.fshadow:
            rest = [self.fmap[v] for v in op.operands[1:]]
            self.fshadow[op.result] = b.create(type(op), [self.fshadow[op.operands[0]], *rest],
                                               [op.result.type], dict(op.attrs)).result

    # ------------------------------------------------------------------ asked for by the adjoint
    def push(self, fb: Block, fwd: Value, loc) -> int:
        """Push forward value ``fwd`` at the end of forward block ``fb`` (once: a block
        reversed twice, a while condition after the last test and in each trip, pushes once);
        returns the pair id that links the push to its pops.  An array goes by reference
        (``tape.push_ref``)."""
        pair = self.pair_of.get((fb, fwd))
        if pair is None:
            ref = isinstance(fwd.type, ArrayType)
            pair = self.pair_of[(fb, fwd)] = self._next_pair()
            Builder(fb, fb.ops.index(fb.terminator), loc).create(
                TapePushRef if ref else TapePush, [self.tape_of(fb), fwd], [], {"pair": pair})
            slots = 2 + 2 * fwd.type.ndim if ref else 2 if fwd.type.is_complex else 1
            self.pushes[fb] = self.pushes.get(fb, 0) + slots
        return pair

    def _next_pair(self) -> int:
        """A fresh id linking a push to its pop (forward mode over this function uses it)."""
        self.pairs += 1
        return self.pairs

    def snapshot(self, loop, root: Value) -> Value:
        """The tape position of a copy of buffer ``root`` pushed right before primal ``loop``
        runs (once per loop and buffer)."""
        mark = self.snapshots.get((loop, root))
        if mark is None:
            b = Builder.before(self.fop[loop])
            tape = self.tape_of(self.fop[loop].parent)
            mark = b.create(TapeMark, [tape], None).result
            b.create(TapePushArray, [tape, self.fmap[root]], [])
            self.snapshots[(loop, root)] = mark
            self.snapshot_roots.setdefault(loop, []).append(root)
        return mark

    def tape_of(self, fb: Block) -> Value:
        """The tape pushes in forward block ``fb`` go on: the function's, or inside a parallel
        loop reversed in parallel, the iteration's own (``parallel.py``)."""
        while fb is not self.new.body:
            if fb in self.local_tapes:
                return self.local_tapes[fb]
            fb = fb.parent_op.parent
        return self.tape

    def take_snapshots(self, loop) -> list:
        """The buffers snapshotted before primal ``loop`` (oldest first), which the adjoint
        sweep drops from the tape after reversing the loop."""
        return self.snapshot_roots.pop(loop, [])

    def copy_once(self, key, make: Callable[[], Value]) -> Value:
        """The forward-sweep value ``make()`` builds (a copy of a buffer the adjoint sweep
        reads), made once per ``key``; ``copies[key]`` stays valid through ``promote``."""
        if key not in self.copies:
            self.copies[key] = make()
        return self.copies[key]

    def promote(self, fwd: Value, fblock: Block, also=()) -> Value:
        """A top-level forward value equal to ``fwd`` (defined in forward block ``fblock``)
        whenever ``fblock`` ran: it is yielded out of each enclosing ``scf.if`` as an extra
        result (the other branch yields a placeholder).  Values inside loops cannot be.  The
        sweep's tables and the caller's tables in ``also`` ({key: forward value}) are kept
        pointing at the rebuilt ifs' results."""
        while fblock is not self.new.body:
            parent = fblock.parent_op
            if not isinstance(parent, If):
                raise DifferentiationError("an array made inside a loop is needed by the adjoint "
                                           "sweep after it: make the array before the loop "
                                           "and write into it", parent.loc)
            fwd = self._add_if_result(parent, fwd, fblock, also)
            fblock = fwd.block
        return fwd

    def _add_if_result(self, op, fwd: Value, branch: Block, also) -> Value:
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
        for table in (self.fmap, self.fshadow, self.copies, *also):
            for k, v in list(table.items()):
                if v in remap:
                    table[k] = remap[v]
        for k, v in list(self.fop.items()):
            if v is op:
                self.fop[k] = new
        op.erase()
        return new.results[-1]
