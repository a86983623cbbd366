"""The adjoint sweep under construction (``Adjoint``): the reverse regions open at the current
point, the adjoints accumulated there, and the primal values and shadows it reads.

* **Primal values** (``get``): values of the function's top level are used as they are; the
  others come as the plan says (``plan/values.py``): recomputed from their operands, reloaded,
  read from a snapshot, computed from a loop counter, or pushed on the tape at the end of their
  forward block and popped at the start of the matching reverse block (exact LIFO order, so
  ``while`` loops and data-dependent trip counts need nothing special).
* **Shadows** (``shadow``): the zeroed buffers that hold the adjoints of active arrays: made in
  the forward sweep for top-level buffers, at the head of a reverse region for buffers made in
  it, chosen by address among several (swapped buffers), one per version of a renewed array.
"""

from __future__ import annotations

from collections.abc import Callable

from ...errors import DifferentiationError
from ...ir.builder import Builder
from ...ir.core import PURE, VIEW, Block, Region, Value
from ...ir.ops import (
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
    Select,
    Stride,
    SubI,
    TapeDrop,
    TapePop,
    TapePopRef,
    TapeRead,
    While,
)
from ...ir.roots import array_flows
from ...ir.types import ArrayType
from ..arrays import add_into
from ..plan import Here, Plan
from ..plan.flows import Flows, fresh_call_result, handed_over, is_flow
from ..plan.policy import ALWAYS_RECOMPUTE
from ..rules import RuleBuilder
from .state import Scope, Settings
from .sweep import ForwardSweep
from .tape import trip_count

# where an array came from, in the user's terms (for refusals)
_ORIGINS = {If: "an if/else (or conditional expression)", For: "a for loop",
            While: "a while loop (or a for loop with break)", Call: "a function call",
            Select: "a conditional expression", ArrayConst: "a global or closure array"}


class Adjoint:
    """Builds the adjoint sweep of ``sweep.func`` into reverse regions (``Scope``), reading the
    forward sweep ``sweep`` and deciding by ``plan``.  ``callee_grad(callee, acts, res)`` gives
    the derivative a re-run call needs (``calls.py``).  Outputs: ``decisions`` ((value, how) for
    ``tape_report``), ``rloops`` (primal loop -> its reverse loop, for checkpointing) and, when
    ``settings.record_needs``, ``needs`` (block -> the values its adjoint asked for)."""

    def __init__(self, plan: Plan, settings: Settings, sweep: ForwardSweep,
                 callee_grad: Callable):
        self.plan, self.settings, self.sweep = plan, settings, sweep
        self.func, self.act = plan.func, plan.act
        self.callee_grad = callee_grad
        self.b = RuleBuilder(loc=sweep.b.loc)
        self.scopes: list[Scope] = []
        self.decisions: list = []
        self.rloops: dict = {}
        self.needs: dict | None = {} if settings.record_needs else None
        self._recomputing: list[Block] = []
        self.list_shadows: dict = {}  # a list's buffers (alias roots) -> their one shadow
        self._flow_sources = None  # array value -> [(sources, through a view/call)]
        self.local_tapes: dict[Block, Value] = {}  # a parallel loop's body -> its iteration's tape
        self.par: list = []  # the parallel loops being reversed in parallel (parallel.py)
        self.flows = Flows(plan.memory)
        self.own: set = set()  # flow values with shadows of their own (``_flow_shadow``)
        self._replays: dict = {}  # array chosen by a branch -> how its shadow is (``_replay``)
        self.here = Here(has=lambda v: any(v in s.env for s in self.scopes),
                         is_open=lambda block: any(s.pblock is block for s in self.scopes))

    def open_top(self) -> Scope:
        """Open the reverse region of the function's body (the builder goes there)."""
        top = Scope(self.func.body, self.sweep.new.body, Block())
        self.scopes.append(top)
        self.b.block, self.b.index = top.rblock, None
        return top

    def enter(self, pblock: Block, rblock: Block, free, free_in) -> Scope:
        """Open the reverse region ``rblock`` of primal block ``pblock`` (the builder goes
        there), with the adjoints ``free_in`` of the outer values ``free`` it threads."""
        scope = Scope(pblock, self.sweep.fblock[pblock], rblock)
        self.scopes.append(scope)
        for f, c in zip(free, free_in):
            scope.ct[f] = c
        self.b.block, self.b.index = rblock, None
        return scope

    def leave(self, saved) -> None:
        """Close the innermost region; the builder goes back to ``saved`` (block, index)."""
        self.scopes.pop()
        self.b.block, self.b.index = saved

    def seed(self, v: Value, seed: Value) -> None:
        if isinstance(v.type, ArrayType):
            if self.act.active(v):
                add_into(self.b, self.shadow(v), seed)
            return
        if self.act.active(v):
            self.accumulate(v, seed)

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
        if v.block is self.func.body:
            return self.sweep.fmap[v]
        if isinstance(v.type, ArrayType):
            return self.get_array(v)
        how = self.plan.how(v, self.here)
        self.decisions.append((v, how))
        return self._obtain(v, how)

    def _obtain(self, v: Value, how: str) -> Value:
        op, memory = v.op, self.plan.memory
        if how == "recompute" or how == "reload":
            return self.recompute(v)
        if how == "snapshot":
            snap = memory.snapshot_for(op)
            idx = [self.get(i) for i in op.operands[1:]]
            return self._memo(v, self.snapshot_read(op.operands[0], idx, snap, v.type))
        if how == "stored":  # loaded back from the array it was stored into
            st = self.plan.memory.stored_at(v)
            arr = self.get(st.operands[1])
            idx = [self.get(i) for i in st.operands[2:]]
            r = self.b.op(Load, arr, *idx)
            return self._memo(v, r if r.type == v.type else self.b.cast(r, v.type))
        if how == "kept" and self.par:  # (an array an iteration of a parallel loop makes lives
            # in its thread's arena, freed when the thread's share of the loop ends)
            return self.pop(v, self.scope_of(v.block))
        if how == "kept":  # read again from the array, kept by reference
            arr = self.kept_array(op.operands[0])
            idx = [self.get(i) for i in op.operands[1:]]
            return self._memo(v, self.b.op(Load, arr, *idx))
        if how == "induction":
            return self._memo(v, self.induction_value(v))
        if how == "carried":
            ly, dim, shift = memory.carried_load(v)
            idx = [self.get(i) for i in ly.operands[1:]]
            idx[dim] = self.b.op(AddI, idx[dim], self.b.i64(shift))
            snap = memory.snapshot_for(ly)
            return self._memo(v, self.snapshot_read(ly.operands[0], idx, snap, v.type))
        return self.pop(v, self.scope_of(v.block))

    def invertible(self, v: Value):
        """A function computing, in the adjoint sweep, the amount by which loop-carried ``v``
        grows each iteration when the plan says it can be recovered that way (the reverse loop
        then subtracts it from the next iteration's value instead of popping ``v``); else
        None."""
        how = self.plan.invertible(v)
        if how is None:
            return None
        if how[0] == "add":
            return lambda: self.get(how[1])
        _, inner, inc = how

        def amount():
            b = self.b
            lb, ub, st = (self.get(x) for x in inner.operands[:3])
            step = self.get(inc)
            step = b.cast(step, v.type) if step.type != v.type else step
            return b.op(MulI, trip_count(b, lb, ub, st), step)
        return amount

    def induction_value(self, v: Value) -> Value:
        loop, init, inc, kind = self.plan.induction(v)
        b = self.b
        lb, step = self.get(loop.operands[0]), self.get(loop.operands[2])
        t = b.op(FloorDivI, b.op(SubI, self.get(loop.regions[0].block.args[0]), lb), step)
        delta = b.op(MulI, t, b.cast(self.get(inc), v.type) if inc.type != v.type
                     else self.get(inc))
        return b.op(kind, self.get(init), delta)

    def get_array(self, a: Value) -> Value:
        op = a.op
        if op is not None and op.has_trait(VIEW):
            return self.recompute(a)
        if not self.plan.array_available(a):
            raise DifferentiationError("the adjoint sweep needs an array made inside a loop "
                                       "after it: make the array before the loop and write "
                                       "into it", op.loc if op else self.func.loc)
        fv = self.promote(self.sweep.fmap[a], self.sweep.fblock[a.block])
        self.scopes[0].env[a] = fv
        return fv

    def _memo(self, v: Value, r: Value) -> Value:
        self.scopes[-1].env[v] = r
        return r

    def snapshot_read(self, array: Value, idx, snap, t) -> Value:
        """The element ``array[idx]`` as it was when the snapshot of its buffer was taken."""
        loop, root = snap
        mark = self.sweep.snapshot(loop, root)
        p0 = self.forward_value(mark, loop.parent)
        b = self.b
        a = self.get(array)
        off = b.op(Offset, a, self.get(root))
        for k, i in enumerate(idx):
            off = b.op(AddI, off, b.op(MulI, i, b.op(Stride, a, axis=k)))
        if t.is_complex:
            off = b.op(MulI, off, b.i64(2))
        return b.create(TapeRead, [self.tape_of(loop.parent), b.op(AddI, p0, off)], [t]).result

    def drop_snapshots(self, loop) -> None:
        """After the adjoint of ``loop``: discard the snapshots taken before it (newest first)."""
        b = self.b
        for root in reversed(self.sweep.take_snapshots(loop)):
            r = self.get(root)
            n = b.i64(2 if r.type.dtype.is_complex else 1)
            for k in range(r.type.ndim):
                n = b.op(MulI, n, b.op(Dim, r, axis=k))
            b.create(TapeDrop, [self.tape_of(loop.parent), n], [])

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
        return self._push_pop(scope, self.sweep.fmap[v], v, v.op.loc if v.op else self.func.loc)

    def _push_pop(self, scope: Scope, fwd: Value, key: Value, loc) -> Value:
        """Push forward value ``fwd`` at the end of ``scope``'s forward block and pop it at the
        start of its reverse block, where it stands for ``key`` (a scalar; an array goes by
        reference, ``tape.push_ref``)."""
        pair = self.sweep.push(scope.fblock, fwd, loc)
        ref = isinstance(fwd.type, ArrayType)
        popped = Builder(scope.rblock, scope.lead, self.b.loc).create(
            TapePopRef if ref else TapePop, [self.tape_of(scope.pblock)], [fwd.type],
            {"pair": pair}).result
        self._inserted_at_start(scope)
        scope.env[key] = scope.head_env[key] = popped
        return popped

    def tape_of(self, pblock: Block) -> Value:
        """The tape the pops of primal block ``pblock``'s values come from (``sweep.tape_of``)."""
        while pblock is not self.func.body:
            if pblock in self.local_tapes:
                return self.local_tapes[pblock]
            pblock = pblock.parent_op.parent
        return self.sweep.tape

    def _inserted_at_start(self, scope: Scope) -> None:
        scope.head += 1
        if self.b.block is scope.rblock and self.b.index is not None:
            self.b.index += 1

    def promote(self, fwd: Value, fblock: Block) -> Value:
        """``ForwardSweep.promote``, keeping the open regions' values valid."""
        tables = [s.env for s in self.scopes] + [s.head_env for s in self.scopes]
        return self.sweep.promote(fwd, fblock, tables)

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
        op = a.op
        if a in self.sweep.fshadow and not (self.par and op is not None and op.has_trait(VIEW)
                                            and self.par[-1].spreads(self.act.roots.get(a))):
            return self.sweep.fshadow[a]
        if op is not None and op.has_trait(VIEW):  # (of a spread buffer: of this thread's)
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
        if self._replay(a) is not None:
            return self._replayed_shadow(a)
        return self._flow_shadow(a)

    def _replay(self, a: Value):
        """For an array an ``scf.if`` chooses among arrays from outside it or views of them
        made in its branches from pure values: per branch, (the array from outside, the ops
        making the view from it, in order); else None."""
        if a in self._replays:
            return self._replays[a]
        op, plan = a.op, None
        if op is not None and isinstance(op, If):
            k = op.results.index(a)
            plan = []
            for region in op.regions:
                y = region.block.terminator.operands[k]
                ops = _pure_ops(y, op)
                base = y
                while ops and base.op in ops and base.op.has_trait(VIEW):
                    base = base.op.operands[0]
                if ops is None or _defined_in(base, op) or not self.act.active(base):
                    plan = None
                    break
                plan.append((base, ops))
        self._replays[a] = plan
        return plan

    def _replayed_shadow(self, a: Value) -> Value:
        """The shadow of an array an ``scf.if`` chooses among arrays from outside it or views
        of them (``dst = un[1:] if vel > 0 else un[:-1]``; ``theta = theta_new if ok else
        theta``): the same choice made again on their shadows, at the head of its block's
        reverse region, so that it shares their shadows as it shares their buffers (exact also
        when it is written afterwards)."""
        op = a.op
        plan = self._replay(a)
        k = op.results.index(a)
        scope = self.scope_of(a.block)

        def emit():
            b = self.b
            cond = self.get(op.operands[0])
            bases = [self.shadow(base) for base, _ in plan]
            outside = {}
            for _, ops in plan:
                for o in ops:
                    for x in o.operands:
                        if x not in outside and not _defined_in(x, op) and \
                                not any(x is base for base, _ in plan):
                            outside[x] = self.get(x)
            blocks = []
            for region, (base, ops), sh in zip(op.regions, plan, bases):
                blk = Block()
                with b.at(blk):
                    m = dict(outside)
                    m[base] = sh
                    for o in ops:
                        c = b.create(type(o), [m[x] for x in o.operands],
                                     [r.type for r in o.results], dict(o.attrs))
                        m.update(zip(o.results, c.results))
                    y = region.block.terminator.operands[k]
                    b.yield_(self.as_type(m[y], a.type))
                blocks.append(blk)
            return b.create(If, [cond], [a.type], regions=[Region([x]) for x in blocks]).result
        r = self.at_head(scope, emit)
        scope.shadows[a] = r
        return r

    def _flow_shadow(self, a: Value) -> Value:
        """A zeroed shadow of its own for an array passed on by control flow (``plan/flows.py``)
        -- made at the head of its block's reverse region, handed on where the adjoint sweep
        reaches what passed it on (``pass_shadow``) -- else a refusal."""
        if is_flow(a) or fresh_call_result(a):
            r = self.zeroed_at_head(a)
            self.scope_of(a.block).shadows[a] = r
            self.own.add(a)
            return r
        op = a.op
        owner = op if op is not None else a.block.parent_op  # (a block argument: its loop)
        if op is None and not isinstance(owner, (For, While, If)):
            owner = None
        what = _ORIGINS.get(type(owner), f"`{owner.name}`") if owner is not None else \
            "a value carried by a loop or chosen by a branch"
        raise DifferentiationError(
            f"reverse mode cannot follow an active array that comes from {what} here (not "
            "supported in reverse mode)", owner.loc if owner is not None else self.func.loc)

    def zeroed_at_head(self, a: Value) -> Value:
        """A zeroed buffer shaped as primal array ``a``, made at the head of the reverse region
        of ``a``'s block."""
        scope = self.scope_of(a.block)
        dims = self.forward_dims(a)
        r = self.at_head(scope, lambda: self.b.create(
            Alloc, dims, [a.type.with_layout("C")], {"init": "zero"}).result)
        return self.as_type(r, a.type)

    def has_shadow(self, a: Value) -> bool:
        """Has array ``a`` a shadow already (made in the forward sweep, or by the adjoint so
        far)?"""
        return a in self.sweep.fshadow or any(a in s.shadows for s in self.scopes)

    def owns_if_flow(self, a: Value) -> bool:
        """An array that is not passed on by control flow, or one with a shadow of its own."""
        return not is_flow(a) or self.owns(a)

    def owns(self, a: Value) -> bool:
        """Does array ``a`` get a shadow of its own as a flow value (``_flow_shadow``), rather
        than a list's (``list_shadow``) or its buffer's chosen by address (``chosen_shadow``)?"""
        roots = self.act.roots.get(a, set())
        return is_flow(a) and self._list_family(a) is None and \
            not self._choosable(a, roots) and self._replay(a) is None

    def pass_shadow(self, src: Value, s: Value, where, block) -> None:
        """Give shadow ``s`` of a flow value to ``src``, which came in at ``where`` (the
        terminator ending ``block``, or the loop or select taking it from outside: the edges
        of ``plan/flows.py``): ``src``'s shadow from here on when it dies there, else added
        into its own shadow (refused when its buffer may be written afterwards)."""
        if not self.act.active(src):
            return
        if handed_over(src, where, block) and (src.op is not None and not is_flow(src)
                                                or self.owns(src)):
            self.scopes[-1].shadows[src] = self.as_type(s, src.type)
            if is_flow(src):
                self.own.add(src)
            return
        if block is not None or not self.flows.consumed(src, where):
            w = self.flows.written_after(src, where)
            if w is not None:
                owner = where if block is None else block.parent_op
                fix = "choose or swap whole arrays instead" if src.op is not None and \
                    src.op.has_trait(VIEW) else "pass a copy (`.copy()`) instead"
                raise DifferentiationError(
                    f"reverse mode cannot follow an array that {_passes(owner)} here while "
                    f"it may still be written afterwards (line {w.loc.line}): two names then "
                    f"hold one buffer; {fix}", owner.loc)
        add_into(self.b, self.shadow(src), s)

    def list_shadow(self, a: Value):
        """The one shadow of all the buffers of a Python list (``frontend/lists.py``): ``append``
        moves the elements to a bigger buffer at the same positions, so every buffer's element
        k is the list's element k, and a single zeroed shadow the size of the list's last
        buffer serves them all (the adjoint of the copy into the bigger buffer is then the
        identity, as it should be).  None when ``a`` is not a list's buffer."""
        found = self._list_family(a)
        if found is None:
            return None
        key, last = found
        if key in self.list_shadows:
            return self.list_shadows[key]
        sweep = self.sweep
        fop = sweep.fwhile[last.op][0] if last.op in sweep.fwhile else sweep.fop[last.op]
        while fop.parent is not sweep.new.body:  # (a while loop's forward op, with its counter)
            fop = fop.parent.parent_op
        b = Builder(sweep.new.body, sweep.new.body.ops.index(fop) + 1, last.op.loc)
        dim = b.op(Dim, sweep.fmap[last], axis=0)
        shadow = b.create(Alloc, [dim], [last.type.with_layout("C")],
                          {"init": "zero"}).result
        self.list_shadows[key] = shadow
        return shadow

    def _list_family(self, a: Value):
        """(the buffers of ``a``'s list, its last buffer at the function's top level) when
        ``a`` is a list's buffer and the list lives on at the top level, else None (a list made
        and used inside a loop's body: its buffers are flow values, ``_flow_shadow``)."""
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
        last = None
        for op in self.func.body.ops[:-1]:
            for r in op.results:
                if isinstance(r.type, ArrayType) and self.act.roots.get(r) and \
                        self.act.roots[r] <= family:
                    last = r
        return None if last is None else (frozenset(family), last)

    def at_head(self, scope: Scope, emit):
        """Run ``emit`` with the builder at the head of ``scope``'s reverse block (after its
        pops), seeing only that scope and the ones around it."""
        saved = (self.scopes, self.b.block, self.b.index)
        self.scopes = self.scopes[:self.scopes.index(scope) + 1]
        self.b.block, self.b.index = scope.rblock, scope.head
        body_env, scope.env = scope.env, scope.head_env
        before = len(scope.rblock.ops)
        try:
            return emit()
        finally:
            scope.head = self.b.index
            scope.env = body_env
            scope.env.update(scope.head_env)
            self.scopes, (self.b.block, self.b.index) = saved[0], saved[1:]
            if self.b.block is scope.rblock and self.b.index is not None:
                self.b.index += len(scope.rblock.ops) - before  # (it was past the head)

    def chosen_shadow(self, a: Value):
        """The shadow of an array that is one of several top-level buffers (swapped in a loop,
        chosen by a branch): the forward sweep records which one by its address, and the
        adjoint sweep selects that buffer's shadow.  None when some candidate has no shadow."""
        roots = self.act.roots.get(a, set())
        if not self._choosable(a, roots):
            return None
        ptr = self._data_ptr(a)
        b = self.b
        roots = sorted(roots, key=lambda r: r.index + (r.op.results.index(r) if r.op else 0))
        out = self.as_type(self.sweep.fshadow[roots[-1]], a.type)
        for r in roots[:-1]:
            same = b.op(CmpI, ptr, b.op(DataPtr, self.sweep.fmap[r]), pred="eq")
            out = b.op(Select, same, self.as_type(self.sweep.fshadow[r], a.type), out)
        return out

    def _choosable(self, a: Value, roots: set) -> bool:
        return bool(roots) and all(r in self.sweep.fshadow and r.block is self.func.body
                                   for r in roots) and self._whole_buffers(a, roots)

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

    def kept_array(self, x: Value) -> Value:
        """Array ``x``, which nothing writes after the point asking for it, as that point saw
        it: a top-level array as it is, one of a loop's body by reference (``kept_value``), a
        view made again on either."""
        if self.plan.array_available(x):
            return self.get(x)
        for s in reversed(self.scopes):
            if x in s.env:
                return s.env[x]
        op = x.op
        if op is not None and op.has_trait(VIEW):
            base = self.kept_array(op.operands[0])
            rest = [self.get(v) for v in op.operands[1:]]
            return self._memo(x, self.b.create(type(op), [base, *rest], [x.type],
                                               dict(op.attrs)).result)
        return self.kept_value(x)

    def kept_value(self, a: Value) -> Value:
        """Array ``a`` of a loop's body, which nothing writes after the iteration reads it, as
        the iteration being reversed held it: a reference pushed (``tape.push_ref``) once at
        the end of the forward block, popped once at the start of the reverse block."""
        scope = self.scope_of(a.block)
        if a in scope.env:
            return scope.env[a]
        owner = a.op if a.op is not None else a.block.parent_op  # (an argument: its loop)
        return self._push_pop(scope, self.sweep.fmap[a], a, owner.loc)

    def forward_dims(self, a: Value) -> list:
        """The dimensions of primal array ``a`` (defined in a block of the forward sweep) as
        values the adjoint sweep can use at the start of ``a``'s reverse block."""
        sweep = self.sweep
        top = a.block is self.func.body
        fb = sweep.new.body if top else sweep.fblock[a.block]
        fa = sweep.fmap[a]
        at = 0 if fa.op is None else fb.ops.index(_ancestor_in(fa.op, fb)) + 1
        b = Builder(fb, at, self.func.loc)
        dims = [b.op(Dim, fa, axis=k) for k in range(a.type.ndim)]
        return dims if top else [self.forward_value(d, a.block) for d in dims]

    def as_type(self, v: Value, t) -> Value:
        return v if v.type == t else self.b.op(Relayout, v, type=t)

    def _data_ptr(self, a: Value) -> Value:
        """The address of primal array ``a`` at the current point of the adjoint sweep."""
        if a.block is self.func.body:
            return self.b.op(DataPtr, self.sweep.fmap[a])
        fb = self.sweep.fblock[a.block]
        fa = self.sweep.fmap[a]
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


def _pure_ops(y: Value, op):
    """The ops inside ``op`` that make ``y`` from values outside it, in order, when they are
    all pure (views, and integer divisions that passed their checks, included); else None."""
    out, seen = [], set()

    def visit(v) -> bool:
        if not _defined_in(v, op):
            return True
        d = v.op
        if d is None or d.regions or not (d.has_trait(PURE) or d.has_trait(VIEW) or
                                          isinstance(d, ALWAYS_RECOMPUTE)):
            return False
        if d not in seen:
            seen.add(d)
            if not all(visit(x) for x in d.operands):
                return False
            out.append(d)
        return True
    return out if visit(y) else None


def _defined_in(v: Value, op) -> bool:
    owner = v.op if v.op is not None else v.block.parent_op
    return owner is not None and owner is not op and op.is_ancestor_of(owner)


def _ancestor_in(op, block: Block):
    """``op`` or the op around it directly in ``block`` (a forward ``scf.while`` sits in the
    ops that count its trips)."""
    while op.parent is not block:
        op = op.parent_op
    return op


def _passes(op) -> str:
    """What ``op`` does with the array, in the user's terms."""
    if isinstance(op, If):
        return "a branch chooses"
    if isinstance(op, Select):
        return "a conditional expression chooses"
    return "a loop carries"


def _is_list_buffer(r: Value) -> bool:
    return r.op is not None and isinstance(r.op, Alloc) and bool(r.op.attrs.get("list"))
