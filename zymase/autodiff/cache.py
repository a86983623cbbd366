"""What the adjoint sweep stores and what it recomputes, and how big the tape gets.

``Policy.recompute(v)`` says whether a primal value needed in the adjoint sweep, and not visible
there, is recomputed rather than taken from the tape:

* cheap pure ops (integer and float arithmetic, comparisons, casts, selects, index math, array
  dims and views) are recomputed from their operands (which are themselves recomputed or cached);
* a load is recomputed when nothing in the function writes the buffer it reads (alias roots as in
  the activity analysis): the memory still holds the value;
* transcendental functions, loop-carried values, loads from buffers that are written, and
  results of loops and calls are cached.

``reserve`` puts one ``tape.reserve`` before each loop (trip count x slots per iteration) so
pushes inside loops never check capacity; ``scf.while`` loops reserve once per iteration.
"""

from __future__ import annotations

from ..ir.builder import Builder
from ..ir.core import EXPENSIVE, LOOP, PURE, Op, Value
from ..ir.ops import (
    AddI,
    Call,
    CmpI,
    Constant,
    FloorDivI,
    For,
    If,
    Index,
    Load,
    Matmul,
    MaxI,
    ModI,
    MulI,
    NegI,
    PowI,
    Select,
    Store,
    SubI,
    TapePush,
    TapePushArray,
    TapeReserve,
    While,
)
from ..ir.types import I64
from .memory import written_roots

# index arithmetic the adjoint sweep always recomputes (even under disable={"recompute"})
ALWAYS_RECOMPUTE = (Index, FloorDivI, ModI, PowI)


class Policy:
    """Recompute-or-cache decisions for one function (see the module docstring)."""

    def __init__(self, func, act):
        self.act = act
        self.written = set().union(*(written_roots(op, act.roots) for op in func.walk()))

    def read_only(self, array: Value) -> bool:
        roots = self.act.roots.get(array)
        return roots is not None and not (roots & self.written)

    disable: frozenset = frozenset()

    def recompute(self, v: Value) -> bool:
        """Cheap pure ops (not loads: see ReverseTransform.how)."""
        op = v.op
        if op is None or op.regions or isinstance(op, Load):
            return False
        if isinstance(op, ALWAYS_RECOMPUTE):
            return True
        if "recompute" in self.disable and not isinstance(op, Constant):
            return False
        return op.has_trait(PURE) and not op.has_trait(EXPENSIVE)


# ---------------------------------------------------------------------- while loops


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


# ---------------------------------------------------------------------- tape capacity


def reserve(rt) -> None:
    """Insert ``tape.reserve`` ops in the forward sweep of ``rt`` (a ReverseTransform).

    An ``scf.for`` with no pushing loop nested inside reserves trip count x slots per iteration
    before it starts (its body, the hot path, then pushes without any call).  Every other block
    that pushes reserves its own slots right before its pushes, after anything nested in it has
    pushed.
    """
    covered: set = set()
    for op in list(rt.new.walk()):
        if not isinstance(op, For) or _pushing_loop_inside(rt, op.regions[0].block):
            continue
        body = op.regions[0].block
        per_iter = _slots(rt, body)
        if not per_iter:
            continue
        b = Builder.before(op)
        lb, ub, st = op.operands[:3]
        b.create(TapeReserve, [rt.tape, b.op(MulI, _trip(b, lb, ub, st), b.i64(per_iter))], [])
        covered |= _if_blocks(body)
    for block, n in rt.pushes.items():
        if block in covered or not n:
            continue
        first = next(op for op in block.ops if isinstance(op, TapePush))
        b = Builder.before(first)
        b.create(TapeReserve, [rt.tape, b.i64(n)], [])


def _slots(rt, block) -> int:
    """Tape slots one execution of ``block`` pushes (ifs: the larger branch)."""
    n = rt.pushes.get(block, 0)
    for op in block.ops:
        if isinstance(op, If):
            n += max(_slots(rt, r.block) for r in op.regions)
    return n


def _if_blocks(block) -> set:
    """``block`` and the branch blocks of the ifs nested in it (not inside loops)."""
    out = {block}
    for op in block.ops:
        if isinstance(op, If):
            for r in op.regions:
                out |= _if_blocks(r.block)
    return out


def _pushing_loop_inside(rt, block) -> bool:
    """Does something inside ``block`` push a variable number of slots (a loop that pushes, or
    a snapshot)?  Then ``block`` cannot be covered by one reservation made before it."""
    for op in block.walk():
        if isinstance(op, TapePushArray):
            return True
        if op.has_trait(LOOP):
            if any(rt.pushes.get(r.block) for inner in op.walk() for r in inner.regions):
                return True
    return False


def _trip(b: Builder, lb, ub, step):
    """len(range(lb, ub, step)) (step non-zero)."""
    zero, one = b.i64(0), b.i64(1)
    pos = b.op(CmpI, step, zero, pred="gt")
    span = b.op(Select, pos, b.op(SubI, ub, lb), b.op(SubI, lb, ub))
    mag = b.op(Select, pos, step, b.op(NegI, step))
    n = b.op(FloorDivI, b.op(AddI, span, b.op(SubI, mag, one)), mag)
    return b.op(MaxI, n, zero)


# ---------------------------------------------------------------------- region summaries


def relevant(op: Op, act) -> bool:
    """Does the adjoint sweep have anything to do inside region op ``op``?"""
    for inner in op.walk():
        if inner is op:
            continue
        if any(act.active(r) for r in inner.results):
            return True
        if isinstance(inner, Store) and act.active(inner.operands[1]):
            return True
        if isinstance(inner, (Call, Matmul)) and any(act.active(v) for v in inner.operands):
            return True
    return False


def free_active(op: Op, act) -> list[Value]:
    """Active scalars defined outside ``op`` and used inside it (their adjoints are threaded
    through the reverse region), in first-use order."""
    seen: dict[Value, None] = {}
    for inner in op.walk():
        if inner is op:
            continue
        for v in inner.operands:
            if v in seen or isinstance(v.type, type(None)) or not act.active(v):
                continue
            if getattr(v.type, "ndim", None) is not None:
                continue
            owner = v.op if v.op is not None else v.block.parent_op
            if owner is None or not op.is_ancestor_of(owner) or owner is op:
                if owner is not op:
                    seen[v] = None
    return list(seen)
