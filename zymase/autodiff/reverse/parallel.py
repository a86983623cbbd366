"""Parallel loops reversed as parallel loops (Enzyme's parallel AD): ``scf.parallel`` in the
primal gives an ``scf.parallel`` adjoint loop whose iterations need no order between them.

``plan(rt, loop)`` says whether a loop can be (else it is reversed serially, as ``scf.for``):
its carried values must be reductions whose adjoint every iteration gets whole (sums, and values
passed through; a product, ``max`` or a private value's adjoint depends on the other
iterations), and its body must not call functions or multiply matrices with active operands
(their adjoints write whole shadows).  Under forward mode over the result, a memory limit or
``disable={"parallel_adjoint"}`` every loop is reversed serially.

Inside the adjoint loop:

* **caches indexed by iteration**: the forward loop makes one tape per iteration
  (``tape.set_new`` before it, ``tape.at`` in its body), every value its body pushes goes on
  that tape, and the adjoint loop's iteration ``k`` pops from tape ``k`` and frees it; no stack
  shared between threads, and the forward loop stays parallel too (``IterationTapes``);
* **shadow updates**: the adjoint of a load adds into the shadow element.  When every access
  of the buffer in the loop indexes it by the loop variable in one position (``x[i]``,
  ``x[i, j]``), or the buffer is made in the body, that element belongs to the iteration and
  the update is plain; a buffer with per-thread accumulators (next) is updated plainly there;
  otherwise (``u[i - 1]``, ``w[idx[i]]``) it is an ``array.atomic_add`` (under
  ``deterministic=True`` the backend then runs the loop serially);
* **per-thread accumulators** (``spread_roots``): a buffer every iteration reads at the same
  addresses (a parameter vector, ``pos[j]`` in a pairwise loop) gets one zeroed copy of its
  shadow per thread; the adjoint adds into the running thread's copy plainly, and the copies are
  added into the shadow once after the loop, in thread order;
* reductions of the adjoints of outer scalars (a parameter used by every iteration) are carried
  sums, which the backend accumulates per thread and combines once.
"""

from __future__ import annotations

from ...ir.builder import Builder
from ...ir.core import READS, VIEW, WRITES, Block, Op, Value
from ...ir.ops import (
    AddF,
    Alloc,
    AtomicAdd,
    Call,
    Dim,
    FloorDivI,
    For,
    Index,
    Load,
    Matmul,
    Parallel,
    Relayout,
    Store,
    SubI,
    Subview,
    TapeAt,
    TapeFree,
    TapeSetFree,
    TapeSetNew,
    ThreadCount,
    ThreadSlot,
)
from ...ir.parallel import reductions
from ...ir.types import I64, TAPE, ArrayType
from ..activity import is_float
from ..arrays import dims, nest
from .tape import trip_count

SWITCH = "parallel_adjoint"  # disable={SWITCH}: reverse every parallel loop serially
_ACCESS = {Load: (0, 1), Store: (1, 2), AtomicAdd: (1, 2)}  # op -> (array operand, first index)


class Par:
    """A parallel loop being reversed in parallel: which buffers' elements its iterations own,
    and which buffers' shadows get an accumulator per thread (``spread``)."""

    def __init__(self, loop: Op, owned: set, spread: list):
        self.loop, self.owned, self.spread = loop, owned, spread
        self.acc: dict = {}  # spread root -> its accumulators (thread, *shape)

    def owns(self, roots: set) -> bool:
        """Are the shadow elements of these buffers updated by one thread only?"""
        return bool(roots) and roots <= (self.owned | set(self.spread))

    def spreads(self, roots) -> bool:
        """Is this a view of a buffer with per-thread accumulators (its shadow then is the same
        view of the running thread's)?"""
        return bool(roots) and roots <= set(self.acc)

    def before(self, rt) -> None:
        """Before the adjoint loop: zeroed accumulators, one per thread, for each spread
        buffer."""
        if not self.spread:
            return
        b = rt.b
        self.count = b.create(ThreadCount, [], [I64]).result
        for r in self.spread:
            sh = rt.shadow(r)
            t = ArrayType(sh.type.dtype, sh.type.ndim + 1, "C")
            self.acc[r] = b.create(Alloc, [self.count, *dims(b, sh)], [t],
                                   {"init": "zero"}).result

    def enter(self, rt, scope) -> None:
        """At the head of the adjoint body: the running thread's accumulators stand for the
        spread buffers' shadows (views of them too: ``shadow`` rebuilds views on these)."""
        if not self.spread:
            return
        b = Builder(scope.rblock, scope.lead, self.loop.loc)
        slot = b.create(ThreadSlot, [self.count], [I64]).result
        for r, acc in self.acc.items():
            sh = rt.shadow(r)
            n = sh.type.ndim
            zero, one = b.i64(0), b.i64(1)
            sizes = [x for k in range(n) for x in (b.op(Dim, acc, axis=k + 1), one)]
            scope.shadows[r] = b.create(Subview, [acc, slot, *[zero] * n, *sizes],
                                        [sh.type.with_layout("C")],
                                        {"keep": [False] + [True] * n}).result
            if sh.type.layout != "C":
                scope.shadows[r] = b.op(Relayout, scope.shadows[r], type=sh.type)
        scope.lead = scope.head = len(scope.rblock.ops)

    def after(self, rt) -> None:
        """After the adjoint loop: the accumulators added into the shadows, thread by thread."""
        b = rt.b
        for r, acc in self.acc.items():
            sh = rt.shadow(r)

            def body(idx, sh=sh, acc=acc):
                s = b.op(AddF, b.op(Load, sh, *idx[1:]), b.op(Load, acc, *idx), nsz=True)
                b.create(Store, [s, sh, *idx[1:]], [])
            nest(b, [self.count, *dims(b, sh)], body)


def plan(rt, loop: Op) -> Par | None:
    """A ``Par`` when primal ``loop``'s adjoint can run as a parallel loop, else None."""
    s = rt.settings
    if not isinstance(loop, Parallel) or SWITCH in s.disable or not s.split_calls or \
            s.memory_limit is not None or "checkpoint" in loop.attrs or rt.par:
        return None
    kinds = reductions(loop)
    if kinds is None:
        return None
    for r, c in zip(kinds, loop.regions[0].block.args[1:]):
        if isinstance(c.type, ArrayType) and rt.act.active(c):
            return None
        if is_float(c) and rt.act.active(c) and r.kind not in ("add", "same"):
            return None
    for op in loop.walk():
        if isinstance(op, Call) or isinstance(op, Matmul) and \
                any(rt.act.active(v) for v in op.operands):
            return None
    owned = owned_roots(rt.act.roots, loop)
    return Par(loop, owned, spread_roots(rt, loop, owned))


def spread_roots(rt, loop: Op, owned: set) -> list:
    """Buffers defined outside the loop, only read in it (directly or through views), and at
    least once at an address that does not depend on the iteration (``w[j]`` in an inner
    loop, ``params[c]``): every iteration adds into the same shadow elements, so each thread
    gets accumulators of its own (atomic adds would contend on every update).  A buffer read
    only at addresses that depend on the iteration (``u[i - 1]``, ``w[idx[i]]``) takes atomic
    adds instead: each element is updated by few iterations."""
    dep = _Dependence(loop)
    fixed: set = set()
    excluded: set = set()
    for op in loop.walk():
        if op is loop or op.has_trait(VIEW) or isinstance(op, Dim):
            continue
        for v in op.operands:
            if isinstance(v.type, ArrayType) and not (isinstance(op, Load) and v is op.operands[0]):
                excluded |= rt.act.roots.get(v, set())
        if isinstance(op, Load) and rt.act.active(op.result):
            rs = rt.act.roots.get(op.operands[0], set())
            if len(rs) != 1:
                excluded |= rs
            elif not dep(op.operands[0]) and not any(dep(x) for x in op.operands[1:]):
                fixed |= rs
    return [r for r in fixed if r not in excluded and r not in owned and r.block is rt.func.body
            and not _made_inside(loop, r) and rt.act.active(r)]


class _Dependence:
    """Does a value depend on the loop's iteration (conservatively)?"""

    def __init__(self, loop: Op):
        self.loop, self.memo = loop, {loop.regions[0].block.args[0]: True}

    def __call__(self, v: Value) -> bool:
        if v in self.memo:
            return self.memo[v]
        owner = v.op if v.op is not None else v.block.parent_op
        if owner is None or not self.loop.is_ancestor_of(owner) or owner is self.loop:
            r = owner is self.loop
        elif v.op is None:  # a block argument inside: an inner loop's counter follows its bounds
            r = not (isinstance(owner, For) and v.index == 0 and
                     not any(self(x) for x in owner.operands[:3]))
        else:
            self.memo[v] = True  # (cycles: conservative)
            r = any(self(x) for x in v.op.operands)
        self.memo[v] = r
        return r


def owned_roots(roots: dict, loop: Op) -> set:
    """The buffers whose every element the loop touches belongs to one iteration: made in the
    body, or always indexed by the loop variable in the same position (directly, or through
    a view fixing that dimension: ``x[i]`` of a matrix)."""
    i = loop.regions[0].block.args[0]
    where: dict = {}  # root -> positions indexed by i in every access so far
    shared: set = set()
    for op in loop.walk():
        if op is loop:
            continue
        spec = _ACCESS.get(type(op))
        if spec is None:
            if op.has_trait(READS) or op.has_trait(WRITES) or isinstance(op, Call):
                for v in op.operands:
                    if isinstance(v.type, ArrayType):
                        shared |= roots.get(v, set())
            continue
        a = op.operands[spec[0]]
        rs = roots.get(a, set())
        if rs == {a}:
            at = {k for k, x in enumerate(op.operands[spec[1]:]) if _is(x, i)}
        else:  # through views: the one made from the buffer itself fixes dimension k at i
            at = set()  # (`x[i]`, `x[i, :]`; views of it stay inside that row)
            v = a
            while v.op is not None and v.op.has_trait(VIEW) and rs != {v.op.operands[0]}:
                v = v.op.operands[0]
            if isinstance(v.op, Subview) and rs == {v.op.operands[0]}:
                keep = v.op.attrs["keep"]
                at = {k for k, x in enumerate(v.op.parts()[0]) if not keep[k] and _is(x, i)}
        for r in rs:
            where[r] = where[r] & at if r in where else at
    out = set()
    for r, at in where.items():
        if _made_inside(loop, r) or (at and r not in shared):
            out.add(r)
    for rs in roots.values():
        out |= {r for r in rs if _made_inside(loop, r)}
    return out


def _is(x: Value, i: Value) -> bool:
    while x.op is not None and isinstance(x.op, Index):  # (a checked or wrapped index)
        x = x.op.operands[0]
    return x is i


def _made_inside(loop: Op, r: Value) -> bool:
    owner = r.op if r.op is not None else r.block.parent_op
    return owner is not None and owner is not loop and loop.is_ancestor_of(owner)


class IterationTapes:
    """One tape per iteration of a parallel loop reversed in parallel: made before the forward
    loop, found by iteration in both loops, freed by the adjoint iteration that used it."""

    def __init__(self, rt, loop: Op, rblock: Block):
        """``loop``: the primal loop; ``rblock``: its adjoint loop's (empty) body, whose first
        argument is the iteration number."""
        self.rt, self.loop = rt, loop
        sweep = rt.sweep
        fl = sweep.fop[loop]
        before = set(fl.parent.ops)
        b = Builder.before(fl, loop.loc)
        lb, ub, st = fl.operands[:3]
        self.set = b.create(TapeSetNew, [trip_count(b, lb, ub, st)], [I64]).result
        fb = fl.regions[0].block
        b = Builder(fb, 0, loop.loc)
        k = b.op(FloorDivI, b.op(SubI, fb.args[0], lb), st)
        self.ftape = b.create(TapeAt, [self.set, k], [TAPE]).result
        self.made = [op for op in fl.parent.ops if op not in before] + list(fb.ops[:3])
        sweep.local_tapes[fb] = self.ftape
        self.rtape = Builder(rblock, 0, loop.loc).create(
            TapeAt, [Value(I64), rblock.args[0]], [TAPE]).result
        rt.local_tapes[loop.regions[0].block] = self.rtape

    @staticmethod
    def enter(scope) -> None:
        """The adjoint body's pops go after its tape is found."""
        scope.lead = scope.head = 1

    def finish(self, rloop: Op, trips: Value) -> None:
        """After the adjoint loop ``rloop`` (running ``trips`` iterations) is built: the tapes
        go away when nothing was pushed; else the set reaches the adjoint and is freed."""
        rt = self.rt
        if not self.ftape.uses and not self.rtape.uses:
            self.rtape.op.erase()
            for op in reversed(self.made):
                op.erase()
            return
        h = rt.forward_value(self.set, self.loop.parent)
        self.rtape.op.set_operand(0, h)
        body = rloop.regions[0].block
        Builder.before(body.terminator, self.loop.loc).create(TapeFree, [self.rtape], [])
        rt.b.create(TapeSetFree, [h, trips], [])
