"""While loops made countable for checkpointing (under ``memory_limit``, before the plan): the
loop runs once to count its trips, the buffers it writes are restored, and it runs again as a
``for`` loop over that count, which ``checkpoint.py`` then checkpoints like any other."""

from __future__ import annotations

from ...errors import DifferentiationError
from ...ir.builder import Builder
from ...ir.core import LOOP, Block, Region
from ...ir.ops import For, If, Load, Store, While
from ...ir.types import I64
from ...passes.rewrite import clone_op
from ..arrays import copy, dims, nest
from ..plan.memory import written_roots
from .tape import count_iterations


def rewrite_while_loops(func, act) -> None:
    """Give each outer ``scf.while`` a trip count before it runs, so it can be checkpointed as a
    ``for`` loop (the trip count of a ``while`` is known only once it has run):

        save the buffers the loop writes
        T = the loop run as it is, counting its trips (its effects undone next; no adjoint)
        restore the buffers
        X = for k in range(T): (cond, Y) = before(X); X = after(Y)    # the same steps
        (cond, Y) = before(X); results = Y                              # the last test

    This primal runs the loop twice; under checkpointing the steps are re-run anyway."""
    for w in [op for op in outer_loops(func.body) if isinstance(op, While)]:
        _rewrite_while(func, w, act)


def _rewrite_while(func, w, act) -> None:
    written = set().union(*(written_roots(op, act.roots) for op in w.walk()))
    roots = []
    for r in written:
        owner = r.op if r.op is not None else r.block.parent_op
        if owner is not None and w.is_ancestor_of(owner):
            continue
        if r.block is not func.body:
            raise DifferentiationError("checkpointing this `while` loop needs to save a buffer "
                                       "that is not made at the function's top level", w.loc)
        roots.append(r)
    b = Builder.before(w, w.loc)
    saved = [copy(b, r) for r in roots]
    counting = clone_op(w, {})
    b.insert(counting)
    counting, trips = count_iterations(counting)
    counting.attrs["no_adjoint"] = True  # everything it does is undone right after
    b.index = counting.parent.ops.index(counting) + 1
    for r, c in zip(roots, saved):
        nest(b, dims(b, r), lambda idx, r=r, c=c: b.create(
            Store, [b.op(Load, c, *idx), r, *idx], []))
    before, after = w.regions[0].block, w.regions[1].block
    body = Block([I64] + [v.type for v in w.operands])
    with b.at(body):
        ys = _inline(b, before, list(body.args[1:]))[1:]
        nxt = _inline(b, after, ys)
        b.yield_(*nxt)
    loop = b.create(For, [b.i64(0), trips, b.i64(1), *w.operands],
                    [v.type for v in w.operands], regions=[Region([body])])
    last = _inline(b, before, list(loop.results))[1:]
    for old, new in zip(w.results, last):
        old.replace_all_uses_with(new)
    w.erase()


def _inline(b, block, args) -> list:
    """Clone ``block``'s ops at ``b`` with its arguments bound to ``args``; returns the values
    its terminator passes on."""
    m = dict(zip(block.args, args))
    for op in block.ops[:-1]:
        b.insert(clone_op(op, m))
    return [m.get(v, v) for v in block.terminator.operands]


def outer_loops(block):
    """Loops not inside another loop (at the top level or in branches, such as the guards LICM
    puts around loops)."""
    for op in block.ops:
        if op.has_trait(LOOP):
            yield op
        elif isinstance(op, If):
            for r in op.regions:
                yield from outer_loops(r.block)
