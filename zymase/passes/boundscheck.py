"""Bounds-check elimination ("boundscheck"): fewer ``array.index`` checks, same behaviour.

Expects canonicalized, CSE'd IR (array dims shared, invariants hoisted); leaves IR with fewer
``array.index`` ops and some loops versioned.  Two steps, after LLVM's IRCE and Java HotSpot's
range-check elimination:

1. **Prove.**  A small symbolic range analysis bounds each index from below by a constant and from
   above by ``base + offset`` (``i`` in ``range(1, n - 1)`` gives ``i + 1 <= n - 1``; ``x % m``
   with ``m > 0`` lies in ``[0, m)``).  A check proved to pass goes; a proved non-negative index
   loses its negative-index wrap.
2. **Version.**  In an ``scf.for`` with a constant step, the checks whose index is the loop
   variable plus a constant, or loop-invariant, hold for every iteration exactly when they hold
   at the two ends of the range.  The loop becomes ``scf.if (those conditions) {the loop
   without them} else {the loop as it was}``: when an index would go out of range, the checked
   loop runs and raises IndexError at the same iteration as before.  The checked loop is marked
   ``{checked = true}`` and never versioned again (by a later run of the pass, after AD say):
   its guard is the one that failed, so a second fast copy could not run.  Loops are versioned
   innermost first; an outer loop versioned for checks of its own also takes the conditions of
   the inner guards that fail only when their loop raises into its guard, so such a nest has
   two copies (all fast, all checked), not two per level.
"""

from __future__ import annotations

from ..ir.builder import Builder
from ..ir.core import Block, Module, Op, Region, Value
from ..ir.ops import AddI, AndI, Cast, CmpI, Dim, For, If, Index, MaxI, MinI, ModI, Select, SubI
from .rewrite import clone_op, constant_value, inline_block_before, replace_op

MAX_VERSIONED_OPS = 4000  # do not duplicate loop bodies larger than this


def boundscheck(module: Module) -> bool:
    changed = False
    for f in module:
        for op in [o for o in f.walk() if isinstance(o, Index)]:
            changed |= _prove(op)
        loops = [o for o in f.walk() if isinstance(o, For)]
        for loop in reversed(loops):  # innermost first
            changed |= _version(loop)
    return changed


# ---------------------------------------------------------------------- range analysis


def lower(v: Value, depth: int = 8):
    """A constant lower bound of integer ``v``, or None."""
    c = constant_value(v)
    if c is not None or depth == 0:
        return c
    op = v.op
    if op is None:
        loop = v.block.parent_op
        if isinstance(loop, For) and v is loop.body.args[0]:
            step = constant_value(loop.operands[2])
            if step is not None and step > 0:
                return lower(loop.operands[0], depth - 1)
        return None
    kind, args = type(op), op.operands
    if kind in (Dim, Index):
        return 0
    if kind is AddI:
        a, b = lower(args[0], depth - 1), lower(args[1], depth - 1)
        return None if a is None or b is None else a + b
    if kind is SubI:
        a, b = lower(args[0], depth - 1), constant_value(args[1])
        return None if a is None or b is None else a - b
    if kind in (MinI, MaxI, Select):
        vals = [lower(x, depth - 1) for x in (args[1:] if kind is Select else args)]
        known = [x for x in vals if x is not None]
        if kind is MaxI:
            return max(known) if known else None
        return min(vals) if None not in vals else None
    if kind is ModI and _nonneg(args[1], depth - 1):
        return 0  # Python's x % m for m >= 0 (and m != 0, or modi raised) lies in [0, m)
    if kind is Cast and args[0].type.is_bool:
        return 0
    return None


def _nonneg(v: Value, depth: int = 8) -> bool:
    lo = lower(v, depth)
    return lo is not None and lo >= 0


def uppers(v: Value, depth: int = 8) -> list[tuple[Value | None, int]]:
    """Pairs ``(base, off)`` with ``v <= base + off`` (``base`` None: a constant bound)."""
    c = constant_value(v)
    if c is not None:
        return [(None, c)]
    out = [(v, 0)]
    if depth == 0:
        return out
    op = v.op
    if op is None:
        loop = v.block.parent_op
        if isinstance(loop, For) and v is loop.body.args[0]:
            step = constant_value(loop.operands[2])
            if step is not None and step > 0:
                out += [(b, o - 1) for b, o in uppers(loop.operands[1], depth - 1)]
        return out
    kind, args = type(op), op.operands
    if kind is AddI:
        for x, y in ((args[0], args[1]), (args[1], args[0])):
            k = constant_value(y)
            if k is not None:
                out += [(b, o + k) for b, o in uppers(x, depth - 1)]
    elif kind is SubI and constant_value(args[1]) is not None:
        k = constant_value(args[1])
        out += [(b, o - k) for b, o in uppers(args[0], depth - 1)]
    elif kind is MinI:
        out += uppers(args[0], depth - 1) + uppers(args[1], depth - 1)
    elif kind is ModI and _nonneg(args[1], depth - 1):
        out += [(args[1], -1)]
    return out


def below(i: Value, n: Value) -> bool:
    """Is ``i < n`` provable?"""
    n_low = lower(n)
    for base, off in uppers(i):
        if base is None and n_low is not None and off < n_low:
            return True
        if base is not None and off <= -1 and _same(base, n):
            return True
    return False


def _same(a: Value, b: Value) -> bool:
    if a is b:
        return True
    da, db = a.op, b.op
    return (isinstance(da, Dim) and isinstance(db, Dim)
            and da.operands[0] is db.operands[0] and da.attrs["axis"] == db.attrs["axis"])


def _prove(op: Op) -> bool:
    i, n = op.operands
    nonneg = _nonneg(i)
    if nonneg and op.attrs.get("wrap"):
        op.attrs["wrap"] = False
    if nonneg and below(i, n):
        replace_op(op, [i])
        return True
    return False


# ---------------------------------------------------------------------- loop versioning

# on the scf.if a versioned loop sits in: "raises" or "maybe" (_raising_guards); reverse mode
# keeps it on the adjoint's scf.if, and the LLVM backend neither vectorizes nor unrolls the loops
# in the checked branch of a "raises" guard
GUARD = "bounds_guard"


def _version(loop: Op) -> bool:
    step = constant_value(loop.operands[2])
    if not step or loop.parent is None or loop.attrs.get("checked"):
        return False
    checks = [(op, direct) for op, direct in _direct_checks(loop.body)
              if _outside(op.operands[1], loop) and _shifted_iv(op.operands[0], loop)]
    if not checks or sum(1 for _ in loop.walk()) > MAX_VERSIONED_OPS:
        return False
    guards = [(g, leaves) for g in _raising_guards(loop.body)
              if (leaves := _monotone_leaves(g.operands[0], loop)) is not None]
    b = Builder.before(loop)
    zero = b.i64(0)
    leaves = [(op.operands[0], zero, "ge") for op, _ in checks]
    leaves += [(op.operands[0], op.operands[1], "lt") for op, _ in checks]
    leaves += [(x, y, pred) for _, ls in guards for x, y, pred in ls]
    cond = _guard_condition(loop, step, leaves, b)
    raises = all(direct for _, direct in checks)
    mapping: dict = {}
    fast = clone_op(loop, mapping)
    copies = dict(zip(loop.walk(), fast.walk(), strict=True))
    for op, _ in checks:
        copy = copies[op]
        replace_op(copy, [copy.operands[0]])
    for g, _ in guards:
        _take_branch(copies[g], 0)  # the fast loop inside
        if raises:
            _take_branch(g, 1)  # the slow copy raises anyway: its inner loops stay checked
    slow_block, fast_block = Block(), Block()
    fast_block.append(fast)
    Builder.at_end(fast_block, loop.loc).yield_(*fast.results)
    guard = b.create(If, [cond], [r.type for r in loop.results],
                     {GUARD: "raises" if raises else "maybe"},
                     regions=[Region([fast_block]), Region([slow_block])])
    for old, new in zip(loop.results, guard.results):
        old.replace_all_uses_with(new)
    loop.detach()
    loop.attrs["checked"] = True  # its guard failed: versioning it again gives a dead copy
    slow_block.append(loop)
    Builder.at_end(slow_block, loop.loc).yield_(*loop.results)
    return True


def _guard_condition(loop: Op, step: int, leaves, b: Builder) -> Value:
    """The ``and`` of the comparisons ``leaves`` at both ends of the induction variable's range
    (each is monotone in it, so true at both ends is true at every iteration)."""
    ends = _iv_ends(loop, step, b)
    cond = None
    unique = {(_key(x), _key(y), pred): (x, y, pred) for x, y, pred in leaves}
    for x, y, pred in unique.values():
        moves = _direction(x, loop) or _direction(y, loop)
        for end in ends if moves else ends[:1]:
            ok = b.op(CmpI, _at(x, loop, end, b), _at(y, loop, end, b), pred=pred)
            cond = ok if cond is None else b.op(AndI, cond, ok)
    return cond


def _direct_checks(block: Block, direct: bool = True):
    """``(check, direct)`` for the ``array.index`` checks in ``block`` and its ``scf.if``
    regions (not in nested loops, nor in the guards of versioned ones); ``direct``: not under
    an ``scf.if``, so it runs at every iteration."""
    for op in block.ops:
        if isinstance(op, Index) and op.attrs.get("check"):
            yield op, direct
        elif isinstance(op, If) and GUARD not in op.attrs:
            for r in op.regions:
                yield from _direct_checks(r.block, False)


def _raising_guards(block: Block):
    """The guards of versioned loops that run at every iteration (directly in ``block``) and
    whose checks all run at every iteration of their loop: when such a guard fails, the loop
    raises IndexError (or runs no iteration).  Versioning the outer loop on their conditions
    too gives two copies of the nest (all fast, all checked) instead of two per level.  Not
    after reverse mode (tape ops inside): the adjoint follows the branch the guard took."""
    return [op for op in block.ops if isinstance(op, If) and op.attrs.get(GUARD) == "raises"
            and not any(inner.name.startswith("tape.") for inner in op.walk())]


def _key(v: Value):
    """Equal for values known to be equal: a constant, a dim of the same array."""
    if (c := constant_value(v)) is not None:
        return ("const", c)
    op = v.op
    return ("dim", op.operands[0], op.attrs["axis"]) if isinstance(op, Dim) else v


def _take_branch(op: Op, k: int) -> None:
    """Replace the ``scf.if`` ``op`` by the ops of its region ``k``."""
    replace_op(op, inline_block_before(op.regions[k].block, op, []))


def _iv_ends(loop: Op, step: int, b: Builder) -> tuple[Value, Value]:
    """The least and the greatest value the induction variable can take."""
    lb, ub = loop.operands[0], loop.operands[1]
    if step > 0:  # iv in [lb, ub - 1]
        return lb, b.op(SubI, ub, b.i64(1))
    return b.op(AddI, ub, b.i64(1)), lb  # iv in [ub + 1, lb]


def _shifted_iv(i: Value, loop: Op) -> bool:
    """Whether ``i`` is loop-invariant or the induction variable plus a constant."""
    if _outside(i, loop) or i is loop.body.args[0]:
        return True
    op, iv = i.op, loop.body.args[0]
    if not isinstance(op, (AddI, SubI)):
        return False
    x, y = op.operands
    return ((x is iv and constant_value(y) is not None)
            or (isinstance(op, AddI) and y is iv and constant_value(x) is not None))


def _monotone_leaves(cond: Value, loop: Op):
    """``cond`` as a list of comparisons ``(x, y, pred)`` joined by ``and`` whose truth is
    monotone in ``loop``'s induction variable (one side loop-invariant, the other monotone),
    or None."""
    op = cond.op
    if isinstance(op, AndI):
        a, b = (_monotone_leaves(v, loop) for v in op.operands)
        return None if a is None or b is None else a + b
    if constant_value(cond) is True:
        return []
    if not isinstance(op, CmpI) or op.attrs["pred"] not in ("lt", "le", "gt", "ge"):
        return None
    dirs = [_direction(v, loop) for v in op.operands]
    if None in dirs or 0 not in dirs:
        return None
    return [(*op.operands, op.attrs["pred"])]


def _direction(v: Value, loop: Op, depth: int = 8):
    """How integer ``v`` moves with ``loop``'s induction variable: 0 (invariant), 1 or -1
    (monotone), None (unknown).  Only sums and differences of such values and constants."""
    if _outside(v, loop) or constant_value(v) is not None:
        return 0
    if v is loop.body.args[0]:
        return 1
    op = v.op
    if depth == 0 or not isinstance(op, (AddI, SubI, MaxI, MinI)):
        return None
    a, b = (_direction(x, loop, depth - 1) for x in op.operands)
    if a is None or b is None:
        return None
    b = -b if isinstance(op, SubI) else b
    if isinstance(op, (MaxI, MinI)) and a * b < 0:
        return None
    return a or b if a * b >= 0 else None


def _at(v: Value, loop: Op, iv: Value, b: Builder) -> Value:
    """``v`` (``_direction`` not None) computed before ``loop`` for the induction value ``iv``."""
    if _outside(v, loop):
        return v
    if v is loop.body.args[0]:
        return iv
    if (c := constant_value(v)) is not None:
        return b.const(c, v.type)
    return b.op(type(v.op), *(_at(x, loop, iv, b) for x in v.op.operands))


def _outside(v: Value, loop: Op) -> bool:
    owner = v.op if v.op is not None else v.block.parent_op
    return owner is None or not loop.is_ancestor_of(owner)
