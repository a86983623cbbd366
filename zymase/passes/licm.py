"""licm: loop-invariant code motion out of ``scf.for`` and ``scf.while``.

Expects: any verified IR.  Leaves: the same IR with every invariant computation that is safe to
move placed before its loop.  An op of a loop body is invariant when every value it (or an op
nested in it) uses is defined outside the loop or by an op hoisted before it.  Loops are visited
innermost first, so an inner loop emptied of invariant code can itself be hoisted.

What may move, and where to:

* speculatable ops (PURE, no regions, cannot raise) move before the loop unconditionally;
* reads (``array.load``, a region op or call whose only effect is reading memory) move only if no
  op in the loop may write an array they read (alias analysis below), and only if they would have
  run in the loop's first iteration (no op before them in the body may raise).  Since a read may
  be out of bounds when the loop does not run, a read hoisted out of an ``scf.for`` that may run
  zero times is placed under a guard ``scf.if`` (trip count > 0) that yields zeros otherwise (the
  loop, the only user, does not run then).  The before-region of an ``scf.while`` always runs, so
  its reads need no guard; from the after-region only speculatable ops move.
* nothing that may raise, write or allocate moves.

Alias analysis: an array value is traced through views (``array.subview``, ``broadcast``,
``transpose``, ``relayout``) to its root buffer.  Two roots may alias unless they differ and each
is an ``array.alloc`` result, an ``array.const`` or an argument of the function, where two
arguments are distinct only when the function has ``noalias=True``.  Any other root (a loop-carried
array, a call result) may alias anything.
Mirrors MLIR's ``--loop-invariant-code-motion`` (``LoopInvariantCodeMotionUtils.cpp``) and LLVM's
LICM with its guard for speculated loads (``LoopRotation`` + ``LICM``), with alias rules like
LLVM's ``BasicAA`` (distinct allocations, ``noalias`` arguments).
"""

from __future__ import annotations

from ..ir.builder import Builder
from ..ir.core import LOOP, MAY_RAISE, READS, VIEW, WRITES, Block, Func, Module, Op, Region, Value
from ..ir.ops import Alloc, AndI, ArrayConst, CmpI, For, If, OrI
from ..ir.roots import array_roots, written_buffers
from ..ir.types import ArrayType, ScalarType
from .rewrite import (
    Effects,
    ancestors,
    constant_value,
    free_values,
    is_defined_outside,
    is_speculatable,
    move_before,
    trip_count,
    walk,
)


def licm(module: Module) -> bool:
    effects = Effects(module)
    changed = False
    for f in module:
        loops = [op for op in walk(f, reverse=True) if op.has_trait(LOOP)]  # inner loops first
        for loop in loops:
            changed |= LoopMotion(loop, f, effects).run()
    return changed


class LoopMotion:
    """Hoists the invariant ops of one loop."""

    def __init__(self, loop: Op, func: Func, effects: Effects):
        self.loop, self.func, self.effects = loop, func, effects
        self.hoisted: set[Op] = set()
        self.guarded: dict[Op, None] = {}  # ordered set of the ops that go under the guard
        self.written = written_arrays(loop, effects)

    def run(self) -> bool:
        if isinstance(self.loop, For):
            needs_guard = (trip_count(self.loop) or 0) <= 0
            self._scan(self.loop.regions[0].block, reads=True, needs_guard=needs_guard)
        else:
            self._scan(self.loop.regions[0].block, reads=True, needs_guard=False)
            self._scan(self.loop.regions[1].block, reads=False, needs_guard=False)
        if self.guarded:
            self._build_guard()
        return bool(self.hoisted)

    def _scan(self, block: Block, reads: bool, needs_guard: bool) -> None:
        """Hoist the invariant ops of ``block`` in order: speculatable ones straight before the
        loop, reads too when ``reads`` (collected for ``_build_guard`` when ``needs_guard``)."""
        may_have_raised = False
        for op in block.ops[:-1]:
            guard = self._placement(op, reads and not may_have_raised, needs_guard)
            if guard is None:
                may_have_raised |= MAY_RAISE in self.effects.of(op)
            else:
                self._hoist(op, guard)

    def _placement(self, op: Op, may_read: bool, needs_guard: bool) -> bool | None:
        """None when ``op`` stays in the loop, else whether it goes under the guard."""
        free = free_values(op)
        if not all(self._is_available(v) for v in free):
            return None
        after_guard = any(v.op in self.guarded for v in free)
        if is_speculatable(op):
            return None if after_guard and not _guardable(op) else after_guard
        if may_read and self._is_hoistable_read(op) and (not needs_guard or _guardable(op)):
            return needs_guard
        return None

    def _hoist(self, op: Op, guard: bool) -> None:
        self.hoisted.add(op)
        if guard:
            self.guarded[op] = None
        else:
            move_before(op, self.loop)

    def _is_available(self, v: Value) -> bool:
        return v.op in self.hoisted or is_defined_outside(v, self.loop)

    def _is_hoistable_read(self, op: Op) -> bool:
        """Whether ``op`` only reads memory that nothing in the loop may write."""
        if not self.effects.of(op) <= {READS}:
            return False
        return not any(
            may_alias(a, w, self.func) for a in read_arrays(op, self.effects) for w in self.written
        )

    def _build_guard(self) -> None:
        """Move the guarded ops into ``scf.if (trip count > 0)`` placed before the loop; the else
        branch yields zeros, which nobody sees since the loop does not run then."""
        guarded = self.guarded
        escaping = [
            r
            for op in guarded
            for r in op.results
            if any(u not in guarded and not _inside_any(u, guarded) for u, _ in r.uses)
        ]
        b = Builder.before(self.loop)
        cond = runs_at_least_once(b, self.loop)
        guard = b.create(If, [cond], [r.type for r in escaping],
                         regions=[Region([Block()]), Region([Block()])])  # fmt: skip
        then_block, else_block = (r.block for r in guard.regions)
        for op in guarded:
            op.detach()
            then_block.append(op)
        for r, out in zip(escaping, guard.results, strict=True):
            for user, i in list(r.uses):
                if not guard.is_ancestor_of(user):
                    user.set_operand(i, out)
        with b.at(then_block):
            b.yield_(*escaping)
        with b.at(else_block):
            b.yield_(*(b.const(0, r.type) for r in escaping))


def _guardable(op: Op) -> bool:
    """Whether the else branch of a guard can stand in for ``op``'s results (scalars only)."""
    return all(isinstance(r.type, ScalarType) for r in op.results)


def _inside_any(op: Op, ops) -> bool:
    return any(anc in ops for anc in ancestors(op))


def runs_at_least_once(b: Builder, loop: Op) -> Value:
    """An ``i1`` that is true when ``range(lb, ub, step)`` of an ``scf.for`` is not empty."""
    lb, ub, step = loop.operands[:3]
    sign = constant_value(step) or 0
    if sign > 0:
        return b.op(CmpI, lb, ub, pred="lt")
    if sign < 0:
        return b.op(CmpI, lb, ub, pred="gt")
    zero = b.i64(0)
    up = b.op(AndI, b.op(CmpI, step, zero, pred="gt"), b.op(CmpI, lb, ub, pred="lt"))
    down = b.op(AndI, b.op(CmpI, step, zero, pred="lt"), b.op(CmpI, lb, ub, pred="gt"))
    return b.op(OrI, up, down)


# ---- memory: which arrays an op reads or writes, and whether two arrays may overlap

def written_arrays(loop: Op, effects: Effects) -> list[Value]:
    """The array values that ops inside ``loop`` (or a function) may write through: what each
    op says it writes (``Op.written``), every array operand of a call that may write."""
    out = []
    for op in loop.walk():
        if op is loop or op.regions or WRITES not in effects.of(op):
            continue
        written = op.written() if op.has_trait(WRITES) else op.operands  # a call: its callee's
        out += [v for v in written if isinstance(v.type, ArrayType)]
    return out


def written_arguments(func: Func, module: Module | None) -> list[int]:
    """Positions of ``func``'s array arguments its code may write (directly, through views, or
    by handing them to a call that writes); every array argument when a written buffer's origin
    is not clear (carried by a loop, chosen by a branch).  The runtime refuses read-only arrays
    there: writing through them would change bytes objects or fault on read-only mappings."""
    written = {root(v) for v in written_arrays(func, Effects(module))}
    args = [a for a in func.args if isinstance(a.type, ArrayType)]
    unknown = [v for v in written if root_kind(v, func) == "unknown"]
    if unknown:  # the buffers a loop or branch may carry there (alias roots)
        roots = array_roots(func)
        for v in unknown:
            found = roots.get(v)
            written |= set(args) if found is None else {a for a in found if a in args}
    return [k for k, a in enumerate(func.args) if a in written]


def constant_writes(module: Module) -> list[Op]:
    """Stores and matrix products that write through an ``array.const`` (a NumPy array the
    function captured from a global or closure variable, compiled as a constant)."""
    out = []
    for f in module:
        for op in f.walk():
            for v in written_buffers(op):
                r = root(v)
                if isinstance(r.op, ArrayConst):
                    out.append(op)
    return out


def read_arrays(op: Op, effects: Effects) -> list[Value]:
    """The array values that ``op`` (or an op nested in it) may read through."""
    out = []
    for inner in op.walk():
        if not inner.regions and READS in effects.of(inner):
            out += [v for v in inner.operands if isinstance(v.type, ArrayType)]
    return out


def root(v: Value) -> Value:
    """The buffer a view was made from (the value itself when it is not a view)."""
    while v.op is not None and v.op.has_trait(VIEW):
        v = v.op.operands[0]
    return v


def may_alias(a: Value, b: Value, func: Func) -> bool:
    ra, rb = root(a), root(b)
    if ra is rb:
        return True
    ka, kb = root_kind(ra, func), root_kind(rb, func)
    if "unknown" in (ka, kb):
        return True
    if ka == kb == "arg":
        return not func.attrs.get("noalias", False)
    return False  # an allocation or a constant is distinct from every other buffer


def root_kind(v: Value, func: Func) -> str:
    """'alloc', 'const', 'arg' or 'unknown': where the buffer ``v`` (a root) comes from."""
    if isinstance(v.op, Alloc):
        return "alloc"
    if isinstance(v.op, ArrayConst):
        return "const"
    if v.owner is func.body:
        return "arg"
    return "unknown"
