"""Parallel loops reversed as parallel loops (Enzyme's parallel AD): ``scf.parallel`` in the
primal gives an ``scf.parallel`` adjoint loop whose iterations need no order between them.

``plan(rt, loop)`` says whether a loop can be (else it is reversed serially, as ``scf.for``):
its carried values must be reductions whose adjoint every iteration gets whole (sums, and values
passed through; a product, ``max`` or a private value's adjoint depends on the other
iterations), and its body must not call functions, nor multiply matrices with active operands
that are not the iteration's own (their adjoints add whole products into the shadows).  Under
forward mode over the result, a memory limit or ``disable={"parallel_adjoint"}`` every loop is
reversed serially.

Inside the adjoint loop:

* **caches indexed by iteration**: the forward loop's iterations push on their thread's tape
  and record where their values end (``tape.set_new`` before it, ``tape.chunk`` and
  ``tape.close`` in its body); the adjoint loop's iteration ``k`` pops from a tape of its own
  values (``tape.at``): no stack shared between threads, no order between them, and the
  forward loop stays parallel too (``IterationTapes``);
* **shadow updates**: the adjoint of a load adds into the shadow element.  When every access
  of the buffer in the loop indexes it by the loop variable in one position (``x[i]``,
  ``x[i, j]``, ``x[i]`` as a view), or the buffer is made in the body, that element belongs to
  the iteration and the update is plain;
* **per-thread accumulators** (``spread_roots``): a buffer the loop only reads, at addresses
  several iterations share (``w[j]``, ``pos[j]`` in a pairwise loop, ``u[i - 1, j]`` in a
  stencil, ``cams[idx[i]]``), gets one zeroed copy of its shadow per thread (fewer threads when
  the copies would cost more than the loop); the adjoint adds into the running thread's copy
  plainly, and the copies are added into the shadow after the loop, in thread order
  (``deterministic=True`` fixes the blocks, so the sums do not depend on the threads);
* **atomic adds** for the rest (an element the loop also writes): ``array.atomic_add``
  (under ``deterministic=True`` the backend then runs the loop serially);
* reductions of the adjoints of outer scalars (a parameter used by every iteration) are carried
  sums, which the backend accumulates per thread and combines once.
"""

from __future__ import annotations

from ...ir.builder import Builder
from ...ir.core import LOOP, READS, VIEW, WRITES, Block, Op, Region, Value
from ...ir.ops import (
    AddF,
    AddI,
    Alloc,
    AtomicAdd,
    Call,
    Dim,
    FloorDivI,
    For,
    Index,
    Load,
    Matmul,
    MulI,
    Parallel,
    Relayout,
    Store,
    SubI,
    Subview,
    TapeAt,
    TapeChunk,
    TapeClose,
    TapeSetFree,
    TapeSetNew,
    ThreadCount,
    ThreadSlot,
)
from ...ir.ops import tape as tape_ops
from ...ir.parallel import reductions
from ...ir.types import I64, TAPE, ArrayType
from ...passes.rewrite import rebuild
from ..activity import is_float
from ..arrays import dims, nest
from .tape import trip_count

SWITCH = "parallel_adjoint"  # disable={SWITCH}: reverse every parallel loop serially
_TAPE_OPS = tuple(getattr(tape_ops, name) for name in tape_ops.__all__)
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

    def before(self, rt, trips: Value) -> None:
        """Before the adjoint loop (of ``trips`` iterations): zeroed accumulators, one per
        thread, for each spread buffer."""
        if not self.spread:
            return
        b = rt.b
        elements = b.i64(0)
        for r in self.spread:
            size = b.i64(2 if r.type.dtype.is_complex else 1)
            for d in dims(b, rt.shadow(r)):
                size = b.op(MulI, size, d)
            elements = b.op(AddI, elements, size)
        self.count = b.create(ThreadCount, [elements, _work(rt, self.loop, trips)],
                              [I64]).result
        for r in self.spread:
            sh = rt.shadow(r)
            t = ArrayType(sh.type.dtype, sh.type.ndim + 1, "C")
            acc = self.acc[r] = b.create(Alloc, [self.count, *dims(b, sh)], [t],
                                         {"init": "none"}).result
            zero = rt.zero(t.dtype)  # each thread's copy zeroed by a thread
            _parallel_for(b, self.count, lambda k, acc=acc, zero=zero: nest(
                b, dims(b, acc)[1:], lambda idx: b.create(Store, [zero, acc, k, *idx], [])))

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
        """After the adjoint loop: the accumulators added into the shadows, thread by thread
        for each element, the elements split between threads."""
        b = rt.b
        for r, acc in self.acc.items():
            sh = rt.shadow(r)
            d = dims(b, sh)

            def element(e, sh=sh, acc=acc, d=d):
                def body(idx):
                    rest = [e, *idx[1:]]
                    s = b.op(AddF, b.op(Load, sh, *rest), b.op(Load, acc, idx[0], *rest),
                             nsz=True)
                    b.create(Store, [s, sh, *rest], [])
                nest(b, [self.count, *d[1:]], body)
            _parallel_for(b, d[0], element)


def _work(rt, loop: Op, trips: Value) -> Value:
    """``trips`` times the trips of the loops nested one in the other in ``loop``'s body with
    bounds known before it (a stencil's rows and columns): the updates the loop makes."""
    b, body = rt.b, loop.regions[0].block
    while True:
        inner = [op for op in body.ops if op.has_trait(LOOP)]
        if len(inner) != 1 or not isinstance(inner[0], For) or \
                any(_made_inside(loop, v) or v.block is body for v in inner[0].operands[:3]):
            return trips
        lb, ub, st = (rt.get(v) for v in inner[0].operands[:3])
        trips = b.op(MulI, trips, trip_count(b, lb, ub, st))
        body = inner[0].regions[0].block


def _parallel_for(b, n: Value, body) -> None:
    """``for k in prange(n): body(k)``."""
    blk = Block([I64])
    with b.at(blk):
        body(blk.args[0])
        b.yield_()
    b.create(Parallel, [b.i64(0), n, b.i64(1)], [], regions=[Region([blk])])


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
    owned = owned_roots(rt.act.roots, loop)
    for op in loop.walk():
        if isinstance(op, Call):
            return None
        if isinstance(op, Matmul) and not all(rt.act.roots.get(v, set()) <= owned
                                              for v in op.operands if rt.act.active(v)):
            return None  # (its adjoint adds whole products into the operands' shadows)
        if isinstance(op, Matmul) and any(_made_in(r, loop) for v in op.operands[:2]
                                          for r in rt.act.roots.get(v, set())):
            # its adjoint reads the operands, kept by reference: a buffer an iteration makes
            # lives in its thread's arena, freed when the thread's share of the loop ends
            return None
    return Par(loop, owned, spread_roots(rt, loop, owned))


def _made_in(root: Value, loop: Op) -> bool:
    owner = root.op if root.op is not None else root.block.parent_op
    return owner is not None and owner is not loop and loop.is_ancestor_of(owner)


def spread_roots(rt, loop: Op, owned: set) -> list:
    """Buffers defined outside the loop that it only reads (directly or through views), at
    addresses several iterations share (``w[j]``, ``params[c]``, ``pos[j]``, ``u[i - 1, j]``,
    ``cams[idx[i]]``): each thread gets accumulators of its own for their shadows (atomic adds
    would contend, or at best cost a locked instruction per update).  ``scf.thread_count``
    gives fewer threads (down to one: a serial loop with plain updates) when the accumulators
    would cost more than the loop (a gather from a large buffer in a short loop)."""
    reads: set = set()
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
            reads |= rs
    return [r for r in reads if r not in excluded and r not in owned and r.block is rt.func.body
            and rt.act.active(r)]


def owned_roots(roots: dict, loop: Op) -> set:
    """The buffers whose every element the loop touches belongs to one iteration: made in the
    body, or always indexed by the loop variable in the same position (directly, or through
    a view fixing that dimension: ``x[i]`` of a matrix, also as an operand of a product)."""
    i = loop.regions[0].block.args[0]
    where: dict = {}  # root -> positions indexed by i in every access so far

    def seen(rs, at):
        for r in rs:
            where[r] = where[r] & at if r in where else at

    for op in loop.walk():
        if op is loop:
            continue
        spec = _ACCESS.get(type(op))
        if spec is not None:
            a = op.operands[spec[0]]
            rs = roots.get(a, set())
            if rs == {a}:
                seen(rs, {k for k, x in enumerate(op.operands[spec[1]:]) if _is(x, i)})
            else:
                seen(rs, _fixed_dims(a, rs, i))
        elif op.has_trait(READS) or op.has_trait(WRITES) or isinstance(op, Call):
            for v in op.operands:
                if isinstance(v.type, ArrayType):
                    rs = roots.get(v, set())
                    seen(rs, set() if isinstance(op, Call) else _fixed_dims(v, rs, i))
    out = {r for r, at in where.items() if at or _made_inside(loop, r)}
    for rs in roots.values():
        out |= {r for r in rs if _made_inside(loop, r)}
    return out


def _fixed_dims(a: Value, rs: set, i: Value) -> set:
    """The dimensions of ``a``'s buffer that the view ``a`` fixes at ``i`` (the view made from
    the buffer itself decides: views of that view stay inside it)."""
    v = a
    while v.op is not None and v.op.has_trait(VIEW) and rs != {v.op.operands[0]}:
        v = v.op.operands[0]
    if isinstance(v.op, Subview) and rs == {v.op.operands[0]}:
        keep = v.op.attrs["keep"]
        return {k for k, x in enumerate(v.op.parts()[0]) if not keep[k] and _is(x, i)}
    return set()


def _is(x: Value, i: Value) -> bool:
    """Is index ``x`` the loop variable (checked against the bounds, not wrapped: ``x[i]`` and
    ``x[i - n]`` of ``prange(-n, n)`` are one element)?"""
    while x.op is not None and isinstance(x.op, Index) and not x.op.attrs.get("wrap"):
        x = x.op.operands[0]
    return x is i


def _made_inside(loop: Op, r: Value) -> bool:
    owner = r.op if r.op is not None else r.block.parent_op
    return owner is not None and owner is not loop and loop.is_ancestor_of(owner)


def serial_forward(rt, loop: Op) -> None:
    """A parallel loop reversed serially whose forward clone pushes on a shared tape: that
    clone becomes an ``scf.for``, since the pops expect the pushes in order (the backend would
    run it serially anyway; the interpreter's shuffled order must not reorder it either)."""
    sweep = rt.sweep
    fl = sweep.fop.get(loop)
    if not isinstance(fl, Parallel) or not any(
            isinstance(op, _TAPE_OPS) and op.operands and op.operands[0].op is not None and
            not fl.is_ancestor_of(op.operands[0].op) for op in fl.walk()):
        return
    new = rebuild(fl, list(fl.operands), list(range(len(fl.results))), For)
    sweep.replace_results(fl, new)
    for k, v in list(sweep.fop.items()):
        if v is fl:
            sweep.fop[k] = new


class IterationTapes:
    """The tapes of a parallel loop's iterations: a set made before the forward loop, whose
    iterations push on their thread's tape (``tape.chunk``) and record where their values end
    (``tape.close``); the adjoint loop's iteration ``k`` pops from a tape of its own values
    (``tape.at``); the set is freed after the adjoint loop."""

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
        fb = self.fblock = fl.regions[0].block
        b = Builder(fb, 0, loop.loc)
        self.k = b.op(FloorDivI, b.op(SubI, fb.args[0], lb), st)
        self.ftape = b.create(TapeChunk, [self.set, self.k], [TAPE]).result
        self.made = [op for op in fl.parent.ops if op not in before] + list(fb.ops[:3])
        sweep.local_tapes[fb] = self.ftape
        self.rtape = Builder(rblock, 0, loop.loc).create(
            TapeAt, [Value(I64), rblock.args[0]], [TAPE]).result
        rt.local_tapes[loop.regions[0].block] = self.rtape

    @staticmethod
    def enter(scope) -> None:
        """The adjoint body's pops go after its tape is found."""
        scope.lead = scope.head = 1

    def finish(self, trips: Value) -> None:
        """After the adjoint loop (running ``trips`` iterations) is built: the tapes go away
        when nothing was pushed; else each forward iteration records where its values end,
        the set reaches the adjoint and is freed after it."""
        rt = self.rt
        if not self.ftape.uses and not self.rtape.uses:
            self.rtape.op.erase()
            for op in reversed(self.made):
                op.erase()
            return
        Builder.before(self.fblock.terminator, self.loop.loc).create(
            TapeClose, [self.set, self.k, self.ftape], [])
        h = rt.forward_value(self.set, self.loop.parent)
        self.rtape.op.set_operand(0, h)
        rt.b.create(TapeSetFree, [h, trips], [])
