"""The tape as the derivative uses it: a trip counter on each ``scf.while`` of the forward sweep
(the adjoint loop runs that many times), and ``tape.reserve`` ops so that pushes inside loops
never check capacity (``reserve``: one reservation before each loop, trip count x slots per
iteration; ``scf.while`` loops reserve once per iteration; a parallel loop whose iterations
push on tapes of their own reserves in each iteration).
"""

from __future__ import annotations

from ...ir.builder import Builder
from ...ir.core import LOOP, Op, Value
from ...ir.ops import (
    AddI,
    CmpI,
    FloorDivI,
    For,
    If,
    MaxI,
    MulI,
    NegI,
    Select,
    SubI,
    TapePush,
    TapePushArray,
    TapePushRef,
    TapeReserve,
    While,
)
from ...ir.types import I64


def count_iterations(w: Op):
    """Give forward-sweep ``scf.while`` ``w`` a carried iteration counter; returns
    (the replacing op, its counter result).  The adjoint sweep runs the loop backwards that
    many times."""
    before, after = w.regions[0].block, w.regions[1].block
    b = Builder.before(w)
    zero = b.i64(0)
    cb = before.add_arg(I64, "trips")
    before.terminator._add_operand(cb)
    ca = after.add_arg(I64, "trips")
    yld = after.terminator
    one = Builder.before(yld).i64(1)
    nxt = Builder.before(yld).op(AddI, ca, one)
    yld._add_operand(nxt)
    regions = list(w.regions)
    w.regions = []
    new = b.create(While, [*w.operands, zero], [r.type for r in w.results] + [I64],
                   regions=regions)
    for old, r in zip(w.results, new.results):
        old.replace_all_uses_with(r)
    w.erase()
    return new, new.results[-1]


def reserve(func, tape, pushes: dict) -> None:
    """Insert ``tape.reserve`` ops into ``func`` (a derivative whose forward sweep pushes
    ``pushes[block]`` slots on ``tape`` at the end of each forward block).

    An ``scf.for`` with no pushing loop nested inside reserves trip count x slots per iteration
    before it starts (its body, the hot path, then pushes without any call).  Every other block
    that pushes reserves its own slots right before its pushes, after anything nested in it has
    pushed.
    """
    covered: set = set()
    for op in list(func.walk()):
        if not isinstance(op, For) or _pushing_loop_inside(pushes, op.regions[0].block):
            continue
        body = op.regions[0].block
        per_iter = _slots(pushes, body)
        if not per_iter:
            continue
        t = _tape_of(body, tape)
        if t.op is not None and op.is_ancestor_of(t.op):
            continue  # each iteration pushes on a tape of its own (a parallel loop's)
        b = Builder.before(op)
        lb, ub, st = op.operands[:3]
        b.create(TapeReserve, [t, b.op(MulI, trip_count(b, lb, ub, st), b.i64(per_iter))], [])
        covered |= _if_blocks(body)
    for block, n in pushes.items():
        if block in covered or not n:
            continue
        first = next(op for op in block.ops if isinstance(op, (TapePush, TapePushRef)))
        b = Builder.before(first)
        b.create(TapeReserve, [first.operands[0], b.i64(n)], [])


def _tape_of(block, tape):
    """The tape ``block``'s pushes use: ``tape``, or an iteration's own (``tape.at``)."""
    for op in block.walk():
        if isinstance(op, (TapePush, TapePushRef)):
            return op.operands[0]
    return tape


def _slots(pushes, block) -> int:
    """Tape slots one execution of ``block`` pushes (ifs: the larger branch)."""
    n = pushes.get(block, 0)
    for op in block.ops:
        if isinstance(op, If):
            n += max(_slots(pushes, r.block) for r in op.regions)
    return n


def _if_blocks(block) -> set:
    """``block`` and the branch blocks of the ifs nested in it (not inside loops)."""
    out = {block}
    for op in block.ops:
        if isinstance(op, If):
            for r in op.regions:
                out |= _if_blocks(r.block)
    return out


def _pushing_loop_inside(pushes, block) -> bool:
    """Does something inside ``block`` push a variable number of slots (a loop that pushes, or
    a snapshot)?  Then ``block`` cannot be covered by one reservation made before it."""
    for op in block.walk():
        if isinstance(op, TapePushArray):
            return True
        if op.has_trait(LOOP) and any(pushes.get(r.block) for inner in op.walk()
                                      for r in inner.regions):
            return True
    return False


def trip_count(b: Builder, lb, ub, step) -> Value:
    """len(range(lb, ub, step)) (step non-zero)."""
    zero, one = b.i64(0), b.i64(1)
    pos = b.op(CmpI, step, zero, pred="gt")
    span = b.op(Select, pos, b.op(SubI, ub, lb), b.op(SubI, lb, ub))
    mag = b.op(Select, pos, step, b.op(NegI, step))
    n = b.op(FloorDivI, b.op(AddI, span, b.op(SubI, mag, one)), mag)
    return b.op(MaxI, n, zero)
