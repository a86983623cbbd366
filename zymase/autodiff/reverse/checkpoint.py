"""Checkpointing top-level loops of a reverse-mode derivative (``memory_limit=``, and loops the
user marks with ``zymase.checkpoint``): the "checkpoint" stage of ``grad_function``.

The sweeps stage first builds the ordinary derivative: a forward clone ``FL`` of loop ``L``
that pushes what each iteration's adjoint needs, and a reverse loop ``RL`` that pops it.  For a
checkpointed loop this stage then rearranges that structure, so that the tape only ever holds
one iteration:

* forward sweep: the state before the loop (the values it carries and every buffer it writes)
  is saved in slot 0; then the plain primal loop runs (a clone of ``L``, no tape).  Buffers the
  caller can see get their final contents back after the adjoint sweep.
* adjoint sweep: ``RL`` becomes a driver loop asking the Revolve state machine
  (``revolve.py``, compiled into the module by the caller's ``lower``) for the next action:
  advance the primal some steps (another clone of ``L``), save or restore a state slot, or run
  one iteration of ``FL`` followed by the same iteration of ``RL`` (``FL`` and ``RL`` are moved
  there with their bounds set to that one iteration, so their pushes and pops still pair).

``while`` loops (and ``for`` loops with ``break``/``return``) are first rewritten in the primal
(``while_loops.py``) into ``for`` loops over their trip count, checkpointed like any other.

With a memory limit, the first action is a probe: iteration 0 runs with its tape recorded and
measured, which fixes how many state slots fit next to one iteration's tape; a limit too small
for one saved state and one iteration raises ``MemoryError`` saying how many bytes are needed.
"""

from __future__ import annotations

import numpy as np

from ...errors import DifferentiationError
from ...ir.builder import Builder
from ...ir.core import Block, Region, Value
from ...ir.ops import (
    AddI,
    Alloc,
    AndI,
    Assert,
    Call,
    CmpI,
    Condition,
    DataPtr,
    FloorDivI,
    For,
    HostCall,
    If,
    Load,
    Matmul,
    MaxI,
    MinI,
    MulI,
    Relayout,
    Select,
    Sqrt,
    Store,
    SubI,
    TapeDrop,
    TapeMark,
    TapePush,
    TapePushArray,
    While,
)
from ...ir.printer import Symbol
from ...ir.types import F64, I1, I64, ArrayType
from ...passes.rewrite import clone_op
from ..arrays import dims, nest
from ..plan.memory import written_roots
from ..revolve import (
    ADVANCE,
    FINE,
    HEADER,
    RESTORE,
    RUN,
    SNAPS,
    TAKESHOT,
    VALID,
    A,
    B,
    revolve_next,
)
from .tape import trip_count
from .while_loops import outer_loops

PROBE = 5  # driver action (not revolve's): record iteration 0, measure its tape, drop it
PENDING = 7  # st[PENDING] = 1 until the probe has run (a slot revolve.py leaves spare)
# the most tape one run of recorded steps may use.  Chosen when fresh tape cost a page fault per
# 4 KiB (heat1d medium then: 3.3 ms with 1 MiB runs, 8-10 ms with 4-16 MiB runs); since big tapes
# are kept between calls, 4-16 MiB runs measure within 10% of 1 MiB ones (heat1d large, 100 MiB
# and 10 MiB limits: 181-195 ms against 196-216 ms), so the cap stays where it is
RUN_TAPE = 1 << 20
READS = {Load: (0,), Matmul: (0, 1)}  # operands an op reads array memory through (and the
# output of an accumulating matmul)


def loops_to_checkpoint(sweep, rloops, limit) -> list:
    """The top-level ``scf.for`` loops whose adjoint needs a tape per iteration (all of them
    under a memory limit; otherwise those marked with ``zymase.checkpoint``)."""
    out = []
    outer = list(outer_loops(sweep.func.body))
    for op in sweep.func.walk():
        if "checkpoint" in op.attrs and op not in outer:
            raise DifferentiationError("zymase.checkpoint marks a loop inside another loop; "
                                       "only outer loops can be checkpointed", op.loc)
    for op in outer:  # (under a limit, outer while loops were rewritten: rewrite_while_loops)
        if not isinstance(op, For) or op not in rloops:
            continue
        if "checkpoint" in op.attrs or (limit is not None and _pushes_inside(sweep, op)):
            out.append(op)
    return out


def _on_one_path(block, loops) -> int:
    """The most loops of ``loops`` one execution of ``block`` can run."""
    n = 0
    for op in block.ops:
        if op in loops:
            n += 1
        elif isinstance(op, If):
            n += max(_on_one_path(r.block, loops) for r in op.regions)
    return n


def _pushes_inside(sweep, loop) -> bool:
    return any(isinstance(inner, (TapePush, TapePushArray)) for inner in sweep.fop[loop].walk())


def checkpoint_loops(sweep, adjoint, top, settings) -> None:
    """Checkpoint the loops ``loops_to_checkpoint`` picks, in a derivative whose forward sweep
    ``sweep`` and adjoint sweep ``adjoint`` are built (the adjoint's top region ``top`` not yet
    placed in the function).  ``settings.lower`` compiles the Revolve helper into the module."""
    limit = settings.memory_limit
    loops = loops_to_checkpoint(sweep, adjoint.rloops, limit)
    if not loops:
        return
    for loop in loops:
        draw = _random_draw(loop, sweep.module, set())
        if draw is not None:
            raise DifferentiationError(
                "this loop is checkpointed (recomputed from snapshots in reverse mode), and a "
                "random draw in it would give other samples when it runs again: draw the "
                "samples before the loop (one array) and index them in it", draw.loc)
    helper = _revolve_helper(sweep.module, settings.lower, loops[0].loc)
    ways = _on_one_path(sweep.func.body, set(loops))  # loops one call may run (their slots add up)
    for loop in loops:
        Checkpointed(sweep, adjoint, top, loop, (limit, ways), helper).build()


def _random_draw(op, module, seen: set):
    """A ``host.call`` with a state (a random draw) run by ``op``, its callees included."""
    for inner in op.walk():
        if isinstance(inner, HostCall) and inner.attrs.get("state"):
            return inner
        if isinstance(inner, Call):
            name = str(inner.attrs["callee"])
            if name not in seen and name in module.funcs:
                seen.add(name)
                found = _random_draw(module[name], module, seen)
                if found is not None:
                    return found
    return None


def _revolve_helper(module, lower, loc) -> str:
    """The name of ``revolve_next`` compiled into ``module`` (by ``lower``, on first use)."""
    name = "zy.revolve_next"
    try:
        module[name]
        return name
    except KeyError:
        pass
    if lower is None:
        raise DifferentiationError("checkpointing a loop needs grad_function(lower=...) to "
                                   "compile its schedule (internal: the caller passes none)", loc)
    f = lower(revolve_next, [np.zeros(HEADER + 1, np.int64)])
    f.attrs.pop("entry", None)
    f.attrs["sym_name"] = name
    module.add(f)
    return name


class Checkpointed:
    """One checkpointed loop: its forward clone ``fl`` and reverse loop ``rl`` rearranged."""

    def __init__(self, sweep, adjoint, top, loop, limit, helper):
        """``limit``: (the user's memory limit, None when the slots are fixed by
        ``zymase.checkpoint``; the number of loops that may run in one call and share it)."""
        self.sweep, self.func, self.roots_of = sweep, sweep.func, adjoint.act.roots
        self.top, self.loop, self.helper = top, loop, helper
        self.user_limit, ways = limit
        self.ways = max(ways, 1)
        self.limit = None if self.user_limit is None else max(self.user_limit // self.ways, 1)
        self.fl, self.rl = sweep.fop[loop], adjoint.rloops[loop]
        body = loop.regions[0].block
        self.carried = list(body.args[1:])
        for v in self.carried:
            rs = self.roots_of.get(v, set())
            if isinstance(v.type, ArrayType) and rs and all(
                    r.op is not None and r.op.attrs.get("list") for r in rs):
                raise DifferentiationError("checkpointing a loop that grows a list from one "
                                           "iteration to the next is not supported: drop "
                                           "memory_limit, or fill a preallocated array",
                                           loop.loc)
        # a carried array's state is its contents (it keeps its shape: checked at each save),
        # or, when it is always one of the buffers made before the loop (buffers swapped), which
        # one (those buffers' contents are state anyway)
        self.candidates = {}  # carried position -> the buffers it may be
        for k, v in enumerate(self.carried):
            rs = self.roots_of.get(v, set())
            if isinstance(v.type, ArrayType) and rs and all(
                    r.block is self.func.body and not loop.is_ancestor_of(
                        r.op if r.op is not None else r.block.parent_op) for r in rs):
                self.candidates[k] = sorted(rs, key=lambda r: (
                    r.op is not None, r.index if r.op is None else
                    self.func.body.ops.index(r.op)))
        self.arrays = [k for k, v in enumerate(self.carried) if isinstance(v.type, ArrayType)
                       and k not in self.candidates]
        self.roots = self._state_roots()
        self.escaping = [r for r in self.roots if self._escapes(r)]
        snaps = loop.attrs.get("checkpoint")
        self.fixed = int(snaps) if snaps else None  # slots the user asked for
        self.probe = self.fixed is None and self.limit is not None  # measure a step's tape

    # ------------------------------------------------------------------ analysis
    def _state_roots(self) -> list:
        """Buffers an iteration may read or write whose contents are not the same at every
        iteration's start: those ``L`` writes, and those it reads that later code writes."""
        loop, roots = self.loop, self.roots_of
        written, read = set(), set()
        for op in loop.walk():
            written |= written_roots(op, roots)
            for i in READS.get(type(op), ()) + ((2,) if op.attrs.get("acc") else ()):
                read |= roots.get(op.operands[i], set())
        later = set()
        x = loop
        while x is not self.func:
            ops = x.parent.ops
            for op in ops[ops.index(x) + 1:]:
                for inner in op.walk():
                    later |= written_roots(inner, roots)
            x = x.parent_op
        out = []
        for r in written | (read & later):
            owner = r.op if r.op is not None else r.block.parent_op
            if owner is not None and loop.is_ancestor_of(owner):
                continue  # made inside the loop: fresh each iteration
            if r.block is not self.func.body:
                made = f" (made at line {owner.loc.line})" if owner is not None and \
                    owner.loc.line > 0 else ""
                raise DifferentiationError(
                    "checkpointing the loop here (memory_limit; array expressions and slice "
                    f"assignments are loops too) needs to save a buffer{made} that is made "
                    "inside a branch or another loop, which is not supported: make it "
                    "before the branch, or drop memory_limit", loop.loc)
            out.append(r)
        return sorted(out, key=lambda r: (r.op is not None, r.index if r.op is None else
                                          self.func.body.ops.index(r.op)))

    def _escapes(self, r: Value) -> bool:
        """Can the caller see buffer ``r`` (an argument, or returned)?"""
        if r.op is None:
            return True
        ret = self.func.body.terminator
        return any(r in self.roots_of.get(v, set()) for v in ret.operands
                   if isinstance(v.type, ArrayType))

    # ------------------------------------------------------------------ build
    def build(self) -> None:
        self.fwd = Builder.before(self.fl, self.loop.loc)
        self.forward_part()
        self.lift()
        self.rb = Builder.before(self.rl, self.loop.loc)
        self.reverse_part()

    def up(self, fwd: Value, watched: dict) -> Value:
        """Forward-sweep value ``fwd``, made next to the loop, as seen by the adjoint sweep (the
        loop may sit in branches: the value is yielded out of them, ``watched`` kept valid)."""
        block, body = self.fl_block, self.sweep.new.body
        if fwd.block is body or block is body:
            return fwd
        return self.sweep.promote(fwd, block, (self.top.env, self.top.head_env, watched))

    def forward_part(self) -> None:
        """Before the loop: slot storage and slot 0; the loop itself runs as the plain primal."""
        fmap, b = self.sweep.fmap, self.fwd
        lb, ub, step = (fmap[v] for v in self.loop.operands[:3])
        self.lb, self.step = lb, step
        self.trips = trip_count(b, lb, ub, step)
        self.sizes = [_size(b, fmap[r]) for r in self.roots]
        inits = [fmap.get(v, v) for v in self.loop.operands[3:]]
        self.asizes = [_size(b, inits[k]) for k in self.arrays]  # elements of each carried array
        state = b.i64(8 * (len(self.carried) - len(self.arrays)))
        for r, n in zip(self.roots, self.sizes):
            state = b.op(AddI, state, b.op(MulI, n, b.i64(_itemsize(r.type))))
        for k, n in zip(self.arrays, self.asizes):
            state = b.op(AddI, state, b.op(MulI, n, b.i64(_itemsize(self.carried[k].type))))
        state = b.op(MaxI, state, b.i64(1))
        self.state_bytes = state
        keep = b.i64(0)  # bytes of the final contents of buffers the caller sees
        for r, n in zip(self.escaping, (self.sizes[self.roots.index(r)] for r in self.escaping)):
            keep = b.op(AddI, keep, b.op(MulI, n, b.i64(_itemsize(r.type))))
        self.keep_bytes = keep
        slots = self.max_slots = self._slots(b, state, keep)
        self.stores = [b.create(Alloc, [b.op(MulI, slots, n)],
                                [ArrayType(r.type.dtype, 1, "C")], {"init": "none"}).result
                       for r, n in zip(self.roots, self.sizes)]
        self.pstores = [
            b.create(Alloc, [b.op(MulI, slots, self.asizes[self.arrays.index(k)])
                             if k in self.arrays else slots],
                     [ArrayType(v.type.dtype if k in self.arrays else I64 if k in
                                self.candidates else _slot_dtype(v.type), 1, "C")],
                     {"init": "none"}).result
            for k, v in enumerate(self.carried)]
        self.buffers = [fmap[r] for k in sorted(self.candidates) for r in self.candidates[k]]
        self.save(b, b.i64(0), inits)
        self._run_plain(b)

    def _slots(self, b, state, keep) -> Value:
        """How many loop states fit: as the user asked, or what the limit leaves (at least one:
        the probe says how much is needed when the limit is too small), or isqrt(trips) + 1."""
        if self.fixed is not None or self.limit is None:
            if self.fixed is not None:
                slots = b.i64(self.fixed)
            else:  # zymase.checkpoint without snaps nor memory_limit: isqrt(T) + 1
                root = b.op(Sqrt, b.cast(self.trips, F64))
                slots = b.op(AddI, b.cast(root, I64), b.i64(1))
            return b.op(MinI, slots, b.op(MaxI, self.trips, b.i64(1)))
        room = b.op(SubI, b.i64(self.limit), keep)
        slots = b.op(MaxI, b.op(FloorDivI, room, state), b.i64(1))
        return b.op(MinI, slots, b.op(MaxI, self.trips, b.i64(1)))

    def _run_plain(self, b) -> None:
        """Run the primal loop in place of its forward clone (which moves to the driver), then
        copy the final contents of the buffers the caller sees."""
        fmap = self.sweep.fmap
        plain = clone_op(self.loop, dict(fmap))
        b.insert(plain)
        self.sweep.replace_results(self.fl, plain)
        after = Builder(plain.parent, plain.parent.ops.index(plain) + 1, self.loop.loc)
        self.finals = [_copy_flat(after, fmap[r], n)
                       for r, n in zip(self.escaping, (self.sizes[self.roots.index(r)]
                                                       for r in self.escaping))]
        self.fl_block = self.fl.parent
        self.fl.detach()

    def lift(self) -> None:
        """Make every forward value the adjoint sweep's driver uses visible there."""
        vals = {"trips": self.trips, "lb": self.lb, "step": self.step,
                "state": self.state_bytes, "keep": self.keep_bytes, "max": self.max_slots}
        for name in ("sizes", "asizes", "stores", "pstores", "finals", "buffers"):
            for k, v in enumerate(getattr(self, name)):
                vals[(name, k)] = v
        for v in _free_values(self.loop):
            vals[("outer", v)] = self.sweep.fmap[v]
        fl_free = [x for x in _free_values(self.fl) if x.block is not self.sweep.new.body]
        for x in fl_free:
            vals[("fl", x)] = x
        for key in list(vals):
            vals[key] = self.up(vals[key], vals)
        self.trips, self.lb, self.step = vals["trips"], vals["lb"], vals["step"]
        self.state_bytes, self.keep_bytes = vals["state"], vals["keep"]
        self.max_slots = vals["max"]
        for name in ("sizes", "asizes", "stores", "pstores", "finals", "buffers"):
            setattr(self, name, [vals[(name, k)] for k in range(len(getattr(self, name)))])
        self.outer = {v: vals[("outer", v)] for v in _free_values(self.loop)}
        lifted = {x: vals[("fl", x)] for x in fl_free}
        for op in self.fl.walk():
            for i, x in enumerate(op.operands):
                if x in lifted:
                    op.set_operand(i, lifted[x])

    def reverse_part(self) -> None:
        b, rl, tape = self.rb, self.rl, self.sweep.tape
        adj = list(rl.operands[3:])
        rl.detach()
        later = [Value(r.type) for r in rl.results]  # uses after the driver, until it exists
        for old, tmp in zip(rl.results, later):
            old.replace_all_uses_with(tmp)
        st = b.create(Alloc, [b.op(AddI, self.max_slots, b.i64(HEADER))],
                      [ArrayType(I64, 1, "C")], {"init": "zero"}).result
        _store(b, self.trips, st, FINE)
        _store(b, self.max_slots, st, SNAPS)
        _store(b, b.i64(1), st, RUN)
        if self.probe:
            _store(b, b.i64(1), st, PENDING)
            self.pos0 = b.create(TapeMark, [tape], None).result
        ptypes = [v.type for v in self.carried]
        atypes = [v.type for v in adj]
        carried0 = [_as(b, self.outer[self.loop.operands[3 + k]], t)
                    if isinstance(t, ArrayType) else b.const(0, t)
                    for k, t in enumerate(ptypes)]  # (placeholders)
        w_before = Block(ptypes + atypes)
        w_after = Block([I64] + ptypes + atypes)
        with b.at(w_before):
            act = self.next_action(b, st)
            more = b.op(CmpI, act, b.i64(0), pred="ne")
            b.create(Condition, [more, act, *w_before.args], [])
        with b.at(w_after):
            act, ps, ads = w_after.args[0], list(w_after.args[1:1 + len(ptypes)]), \
                list(w_after.args[1 + len(ptypes):])
            res = self.dispatch(b, st, act, ps, ads)
            b.yield_(*res[1:])
        drv = b.create(While, [*carried0, *adj], [I64] + ptypes + atypes,
                       regions=[Region([w_before]), Region([w_after])])
        finals = drv.results[1 + len(ptypes):]
        for tmp, new in zip(later, finals):
            tmp.replace_all_uses_with(new)
        ct = self.top.ct
        for k, v in list(ct.items()):
            if v in rl.results:
                ct[k] = finals[rl.results.index(v)]
        for r, final in zip(self.escaping, self.finals):
            _from_flat(b, final, self.sweep.fmap[r], b.i64(0))

    def next_action(self, b, st):
        call = lambda: b.create(Call, [st], [I64], {"callee": Symbol(self.helper)}).result
        if not self.probe:
            return call()
        probe = b.op(AndI, _eq(b, _load(b, st, PENDING), 1),
                     _eq(b, _load(b, st, VALID), 1))
        yes, no = Block(), Block()
        with b.at(yes):
            _store(b, b.i64(0), st, PENDING)
            _store(b, b.i64(0), st, VALID)
            _store(b, b.i64(0), st, A)
            _store(b, b.i64(1), st, B)
            b.yield_(b.i64(PROBE))
        with b.at(no):
            b.yield_(call())
        return b.create(If, [probe], [I64], regions=[Region([yes]), Region([no])]).result

    def dispatch(self, b, st, act, ps, ads):
        """The driver's body: one action, as a chain of ``scf.if``; returns (act, P, A)."""
        types = [I64] + [v.type for v in ps] + [v.type for v in ads]

        def branch(emit):
            blk = Block()
            with b.at(blk):
                b.yield_(*emit())
            return Region([blk])

        def chain(cases):
            if len(cases) == 1:
                return cases[0][1]()
            code, emit = cases[0]
            cond = _eq(b, act, code)
            return list(b.create(If, [cond], types,
                                 regions=[branch(emit), branch(lambda: chain(cases[1:]))]).results)

        def advance():
            lo = self._iteration(b, _load(b, st, A))
            hi = self._iteration(b, _load(b, st, B))
            run = clone_op(self.loop, dict(self.outer))
            run.set_operands([lo, hi, run.operands[2], *ps])
            b.insert(run)
            return [act, *run.results, *ads]

        def takeshot():
            self.save(b, _load(b, st, A), ps)
            return [act, *ps, *ads]

        def restore():
            return [act, *self.load(b, _load(b, st, A)), *ads]

        def turn():  # steps t .. t_end - 1: record, then reverse
            t, t_end = _load(b, st, A), _load(b, st, B)
            fl = self.fl
            fl.set_operands([self._iteration(b, t), self._iteration(b, t_end), fl.operands[2],
                             *ps])
            b.insert(fl)
            if not self.probe:
                return [act, *ps, *self._adjoint(b, t, t_end, ads)]
            yes, no = Block(), Block()
            with b.at(yes):
                self._measure(b, st)
                b.yield_(*ads)
            with b.at(no):
                b.yield_(*self._adjoint(b, t, t_end, ads))
            out = b.create(If, [_eq(b, act, PROBE)], [v.type for v in ads],
                           regions=[Region([yes]), Region([no])]).results
            return [act, *ps, *out]

        return chain([(ADVANCE, advance), (TAKESHOT, takeshot), (RESTORE, restore),
                      (None, turn)])

    def _adjoint(self, b, t, t_end, ads):
        rl = self.rl
        one = b.i64(1)
        rl.set_operands([b.op(SubI, t_end, one), b.op(SubI, t, one), b.i64(-1), *ads])
        b.insert(rl)
        return list(rl.results)

    def _measure(self, b, st):
        """After the probe iteration: drop its tape, then share the limit between saved states
        and recorded steps: record the whole loop at once when its tape fits, else runs of
        steps filling half of what is left, else single steps."""
        op, tape = b.op, self.sweep.tape
        pos = b.create(TapeMark, [tape], None).result
        n = op(SubI, pos, self.pos0)
        b.create(TapeDrop, [tape, n], [])
        eight, one, zero = b.i64(8), b.i64(1), b.i64(0)
        step = op(MulI, n, eight)  # bytes of one step's tape
        other = op(AddI, op(MulI, self.pos0, eight), self.keep_bytes)
        avail = op(SubI, b.i64(self.limit), other)
        state = self.state_bytes
        trips = op(MaxI, self.trips, one)
        whole = op(MulI, trips, step)
        fits = op(AndI, op(CmpI, op(AddI, whole, state), avail, pred="le"),
                  op(CmpI, whole, b.i64(RUN_TAPE), pred="le"))
        half = op(FloorDivI, op(MaxI, avail, zero), b.i64(2))
        half = op(MinI, half, b.i64(RUN_TAPE))
        run = op(MaxI, op(FloorDivI, half, op(MaxI, step, one)), one)
        slots = op(FloorDivI, op(SubI, avail, op(MulI, run, step)), state)
        few = op(CmpI, slots, one, pred="lt")
        run = op(Select, few, one, run)
        slots = op(Select, few, op(FloorDivI, op(SubI, avail, step), state), slots)
        run = op(Select, fits, trips, run)
        slots = op(Select, fits, one, slots)
        ok = op(CmpI, slots, one, pred="ge")
        self.raise_unless(b, ok, op(AddI, op(AddI, other, step), state))
        _store(b, op(MinI, slots, self.max_slots), st, SNAPS)
        _store(b, run, st, RUN)

    def raise_unless(self, b, ok, need) -> None:
        """MemoryError unless ``ok``; ``need`` is what this loop needs (all loops: x ways)."""
        need = b.op(MulI, need, b.i64(self.ways))
        b.create(Assert, [ok, b.i64(self.user_limit), need], [], {
            "kind": "MemoryError",
            "msg": "memory_limit={a} bytes is too small to checkpoint this loop: it needs at "
                   "least {b} bytes (one saved loop state, one iteration's tape and the tape "
                   "already in use" + (", for each of the loops that run" if self.ways > 1
                                      else "") + ")"}, loc=self.loop.loc)

    def _iteration(self, b, t):
        return b.op(AddI, self.lb, b.op(MulI, t, self.step))

    # ------------------------------------------------------------------ state slots
    def save(self, b, k, carried) -> None:
        for j, (v, store) in enumerate(zip(carried, self.pstores)):
            if j in self.arrays:
                n = self.asizes[self.arrays.index(j)]
                b.create(Assert, [b.op(CmpI, _size(b, v), n, pred="eq")], [], {
                    "kind": "ShapeError",
                    "msg": "checkpointing this loop (memory_limit) saves the array it carries: "
                           "it must keep its size from one iteration to the next"},
                         loc=self.loop.loc)
                _to_flat(b, v, store, b.op(MulI, k, n))
            elif j in self.candidates:  # which buffer: its address
                b.create(Store, [b.op(DataPtr, v), store, k], [])
            else:
                b.create(Store, [b.cast(v, store.type.dtype), store, k], [])
        for r, n, store in zip(self.roots, self.sizes, self.stores):
            _to_flat(b, self.sweep.fmap[r], store, b.op(MulI, k, n))

    def load(self, b, k) -> list:
        for r, n, store in zip(self.roots, self.sizes, self.stores):
            _from_flat(b, store, self.sweep.fmap[r], b.op(MulI, k, n))
        out = []
        buffers = iter(self.buffers)
        picks = {j: [next(buffers) for _ in self.candidates[j]] for j in sorted(self.candidates)}
        for j, (v, store) in enumerate(zip(self.carried, self.pstores)):
            if j in self.candidates:  # the buffer at the saved address
                ptr = b.op(Load, store, k)
                cands = [_as(b, c, v.type) for c in picks[j]]
                pick = cands[-1]
                for c in cands[:-1]:
                    pick = b.op(Select, b.op(CmpI, ptr, b.op(DataPtr, c), pred="eq"), c, pick)
                out.append(pick)
                continue
            if j not in self.arrays:
                out.append(b.cast(b.op(Load, store, k), v.type))
                continue
            # a new buffer shaped as the initial array, filled from the slot
            init = self.outer[self.loop.operands[3 + j]]
            a = b.create(Alloc, dims(b, init), [v.type.with_layout("C")],
                         {"init": "none"}).result
            _from_flat(b, store, a, b.op(MulI, k, self.asizes[self.arrays.index(j)]))
            out.append(_as(b, a, v.type))
        return out


# ---------------------------------------------------------------------- helpers


def _free_values(loop) -> list:
    """Values ``loop`` uses that are defined outside it (its bounds and initial values too)."""
    seen: dict = {}
    for op in loop.walk():
        for v in op.operands:
            owner = v.op if v.op is not None else v.block.parent_op
            if v not in seen and (owner is None or not loop.is_ancestor_of(owner)):
                seen[v] = None
    return list(seen)


def _as(b, a, t):
    return a if a.type == t else b.op(Relayout, a, type=t)


def _itemsize(t: ArrayType) -> int:
    return max(t.dtype.bits // 8, 1)


def _slot_dtype(t):
    return I64 if t == I1 else t


def _size(b, a) -> Value:
    n = b.i64(1)
    for d in dims(b, a):
        n = b.op(MulI, n, d)
    return n


def _flat_index(b, idx, shape) -> Value:
    flat = b.i64(0)
    for i, d in zip(idx, shape):
        flat = b.op(AddI, b.op(MulI, flat, d), i)
    return flat


def _to_flat(b, src, dst, base) -> None:
    shape = dims(b, src)
    nest(b, shape, lambda idx: b.create(Store, [
        b.op(Load, src, *idx), dst,
        b.op(AddI, base, _flat_index(b, idx, shape))], []))


def _from_flat(b, src, dst, base) -> None:
    shape = dims(b, dst)
    nest(b, shape, lambda idx: b.create(Store, [
        b.op(Load, src, b.op(AddI, base, _flat_index(b, idx, shape))), dst,
        *idx], []))


def _copy_flat(b, src, n) -> Value:
    out = b.create(Alloc, [n], [ArrayType(src.type.dtype, 1, "C")],
                   {"init": "none"}).result
    _to_flat(b, src, out, b.i64(0))
    return out


def _load(b, st, k) -> Value:
    return b.op(Load, st, b.i64(k))


def _store(b, v, st, k) -> None:
    b.create(Store, [v, st, b.i64(k)], [])


def _eq(b, v, k) -> Value:
    return b.op(CmpI, v, b.i64(k), pred="eq")
