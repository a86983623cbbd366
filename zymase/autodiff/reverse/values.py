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
from ...ir.core import VIEW, Block, Value
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
from ..plan.memory import renewed_array
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
                                       "(not supported yet)", op.loc if op else self.func.loc)
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
        return self._renewed_shadow(a)

    def _renewed_shadow(self, a: Value) -> Value:
        """A zeroed shadow of its own for each version of a renewed array (else a refusal)."""
        op = a.op
        if renewed_array(a) is not None:
            scope = self.scope_of(a.block)
            dims = self.forward_dims(a)
            r = self.at_head(scope, lambda: self.b.create(
                Alloc, dims, [a.type.with_layout("C")], {"init": "zero"}).result)
            r = self._as(r, a.type) if r.type != a.type else r
            scope.shadows[a] = r
            return r
        owner = op if op is not None else a.block.parent_op  # (a block argument: its loop)
        if op is None and not isinstance(owner, (For, While, If)):
            owner = None
        what = _ORIGINS.get(type(owner), f"`{owner.name}`") if owner is not None else \
            "a value carried by a loop or chosen by a branch"
        raise DifferentiationError(
            f"reverse mode cannot follow an active array that comes from {what} here (arrays "
            "carried from one loop iteration to the next and written in place, renewed by a "
            "while loop, or chosen by a branch, are not supported in reverse mode yet)",
            owner.loc if owner is not None else self.func.loc)

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
        if len(roots) < 2 or not all(r in self.sweep.fshadow and r.block is self.func.body
                                     for r in roots) or not self._whole_buffers(a, roots):
            return None
        ptr = self._data_ptr(a)
        b = self.b
        roots = sorted(roots, key=lambda r: r.index + (r.op.results.index(r) if r.op else 0))
        out = self._as(self.sweep.fshadow[roots[-1]], a.type)
        for r in roots[:-1]:
            same = b.op(CmpI, ptr, b.op(DataPtr, self.sweep.fmap[r]), pred="eq")
            out = b.op(Select, same, self._as(self.sweep.fshadow[r], a.type), out)
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
        return self.kept_value(a)

    def kept_value(self, a: Value) -> Value:
        """Array ``a`` of a loop's body, which nothing writes after the iteration reads it, as
        the iteration being reversed held it: a reference pushed (``tape.push_ref``) once at
        the end of the forward block, popped once at the start of the reverse block."""
        scope = self.scope_of(a.block)
        if a in scope.env:
            return scope.env[a]
        return self._push_pop(scope, self.sweep.fmap[a], a, self.func.loc)

    def forward_dims(self, a: Value) -> list:
        """The dimensions of primal array ``a`` (defined in a block of the forward sweep) as
        values the adjoint sweep can use at the start of ``a``'s reverse block."""
        sweep = self.sweep
        if a.block is self.func.body:
            b = Builder(sweep.new.body, sweep.new.body.ops.index(sweep.fop[a.op]) + 1
                        if a.op is not None else 0, self.func.loc)
            return [b.op(Dim, sweep.fmap[a], axis=k) for k in range(a.type.ndim)]
        fb = sweep.fblock[a.block]
        fa = sweep.fmap[a]
        at = 0 if fa.op is None else fb.ops.index(fa.op) + 1
        b = Builder(fb, at, self.func.loc)
        dims = [b.op(Dim, fa, axis=k) for k in range(a.type.ndim)]
        return [self.forward_value(d, a.block) for d in dims]

    def _as(self, v: Value, t) -> Value:
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


def _is_list_buffer(r: Value) -> bool:
    return r.op is not None and isinstance(r.op, Alloc) and bool(r.op.attrs.get("list"))
