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
   at the two ends of the range.  The loop becomes ``scf.if (those conditions) {the loop without
   them} else {the loop as it was}``: when an index would go out of range, the checked loop runs
   and raises IndexError at the same iteration as before.  The checked loop is marked
   ``{checked = true}`` and never versioned again (by a later run of the pass, after AD say):
   its guard is the one that failed, so a second fast copy could not run.
"""

from __future__ import annotations

from ..ir.builder import Builder
from ..ir.core import Block, Module, Op, Region, Value
from ..ir.ops import AddI, AndI, Cast, CmpI, Dim, For, If, Index, MaxI, MinI, ModI, Select, SubI
from .rewrite import clone_op, constant_value, replace_op

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


def _version(loop: Op) -> bool:
    step = constant_value(loop.operands[2])
    if not step or loop.parent is None or loop.attrs.get("checked"):
        return False
    checks = [(op, rng) for op in _direct_checks(loop.body)
              if (rng := _index_range(op, loop, step)) is not None]
    if not checks or sum(1 for _ in loop.walk()) > MAX_VERSIONED_OPS:
        return False
    b = Builder.before(loop)
    cond = None
    for op, (lo, hi) in checks:
        n = op.operands[1]
        ok = b.op(AndI, b.op(CmpI, lo, b.i64(0), pred="ge"), b.op(CmpI, hi, n, pred="lt"))
        cond = ok if cond is None else b.op(AndI, cond, ok)
    mapping: dict = {}
    fast = clone_op(loop, mapping)
    for op, _ in checks:
        copy = mapping[op.result].op
        replace_op(copy, [copy.operands[0]])
    slow_block, fast_block = Block(), Block()
    fast_block.append(fast)
    Builder.at_end(fast_block, loop.loc).yield_(*fast.results)
    guard = b.create(If, [cond], [r.type for r in loop.results],
                     regions=[Region([fast_block]), Region([slow_block])])
    for old, new in zip(loop.results, guard.results):
        old.replace_all_uses_with(new)
    loop.detach()
    loop.attrs["checked"] = True  # its guard failed: versioning it again gives a dead copy
    slow_block.append(loop)
    Builder.at_end(slow_block, loop.loc).yield_(*loop.results)
    return True


def _direct_checks(block: Block):
    """``array.index`` checks in ``block`` and its ``scf.if`` regions (not in nested loops)."""
    for op in block.ops:
        if isinstance(op, Index) and op.attrs.get("check"):
            yield op
        elif isinstance(op, If):
            for r in op.regions:
                yield from _direct_checks(r.block)


def _index_range(op: Op, loop: Op, step: int):
    """(first, last) values of the index over the loop (as Values built before the loop), when
    the index is ``iv + c`` or loop-invariant and the bound is loop-invariant; else None."""
    i, n = op.operands
    if not _outside(n, loop):
        return None
    b = Builder.before(loop)
    if _outside(i, loop):
        return i, i
    iv, c = _affine(i, loop)
    if iv is None:
        return None
    lb, ub = loop.operands[0], loop.operands[1]
    if step > 0:  # iv in [lb, ub - 1]
        first, last = lb, b.op(SubI, ub, b.i64(1))
    else:  # iv in [ub + 1, lb]
        first, last = b.op(AddI, ub, b.i64(1)), lb
    if c:
        first, last = (b.op(AddI, x, b.i64(c)) for x in (first, last))
    return first, last


def _affine(i: Value, loop: Op):
    """(iv, c) when ``i`` is ``iv + c`` for the loop's induction variable, else (None, 0)."""
    iv = loop.body.args[0]
    if i is iv:
        return iv, 0
    op = i.op
    if isinstance(op, (AddI, SubI)):
        x, y = op.operands
        k = constant_value(y)
        if x is iv and k is not None:
            return iv, k if isinstance(op, AddI) else -k
        if isinstance(op, AddI) and y is iv and constant_value(x) is not None:
            return iv, constant_value(x)
    return None, 0


def _outside(v: Value, loop: Op) -> bool:
    owner = v.op if v.op is not None else v.block.parent_op
    return owner is None or not loop.is_ancestor_of(owner)
