"""fuse: an elementwise loop that fills a temporary array is computed where the array is read.

Expects IR straight from the frontend or after canonicalize/cse.  Leaves the same program
without some temporaries: ``np.sum(np.tanh(x) * w)`` lowers to three loops (``t1 = tanh(x)``,
``t2 = t1 * w``, a sum over ``t2``) and two arrays; after this pass it is one loop that loads
``x[i]`` and ``w[i]`` and adds ``tanh(x[i]) * w[i]``, and no array.

The pattern, for a buffer ``T = array.alloc`` (the producer's only output):

* the **producer** is a nest of ``scf.for`` loops, one per dim of ``T``, from 0 to ``T``'s dims
  by 1, carrying nothing, whose innermost body holds only pure ops, ``array.load`` and one
  ``array.store`` of some value ``v`` into ``T`` at the loops' induction variables: every
  element is written once, as ``T[i] = v(i)``;
* ``T`` is read by **one** ``array.load``, of ``T`` or of an ``array.broadcast`` of ``T`` to the
  same rank, somewhere after the producer (nested in a later op of the producer's block), or by
  several that share a ``read_once`` group (``array.load {read_once = g}``: loads that together
  read each element at most once, such as the lanes and the rest of a vectorized sum);
* nothing between the producer and that load writes a buffer the producer reads (``licm``'s
  alias rules).

Then the load at index ``i`` becomes the producer's body evaluated at ``T``'s index (``i``, or 0
along a broadcast dim of size 1), and the producer and ``T`` are erased.  The result is exactly
what the loops computed (the same ops on the same values); a value read once is computed once,
so no work is repeated (a broadcast reads an element of a size-1 dim many times: that one is
computed as often).

A producer with transcendental math (``EXPENSIVE`` ops) is not fused into a ``read_once`` group
of several loads: LLVM's SLP vectorizer does not widen the eight ``exp`` calls of a vectorized
sum's lanes (its cost model does not know libmvec), while the loop vectorizer widens the
producer's own loop; keeping the temporary is 3x faster there (``np.sum(np.exp(a))``, 10^6:
1.1 ms against 3.7 ms).  Mirrors producer-consumer fusion of elementwise ops (XLA's loop fusion,
MLIR's ``linalg`` elementwise fusion) on loops instead of tensor ops.
"""

from __future__ import annotations

from ..ir.builder import Builder
from ..ir.core import EXPENSIVE, MAY_RAISE, WRITES, Func, Module, Op, Value
from ..ir.ops import Alloc, Broadcast, CmpI, For, Load, Select, Store, Yield
from ..ir.roots import written_buffers
from .licm import may_alias
from .rewrite import Effects, clone_op, constant_value, walk


def fuse(module: Module) -> bool:
    effects = Effects(module)
    changed = False
    for f in module:
        while _fuse_one(f, effects):
            changed = True
    return changed


def _fuse_one(f: Func, effects: Effects) -> bool:
    for op in walk(f):
        if isinstance(op, Alloc):
            found = _producer(op, effects)
            if found is not None and _fuse(f, op, *found):
                return True
    return False


def _producer(alloc: Op, effects: Effects):
    """``(loops, store, load, view)`` when ``alloc``'s buffer matches the pattern, else None."""
    t = alloc.result
    stores, loads, view = [], [], None
    for user, pos in t.uses:
        if isinstance(user, Store) and pos == 1:
            stores.append(user)
        elif isinstance(user, Load) and pos == 0:
            loads.append(user)
        elif isinstance(user, Broadcast) and pos == 0 and view is None and \
                user.result.type.ndim == t.type.ndim:
            view = user
            for vu, vpos in user.result.uses:
                if not (isinstance(vu, Load) and vpos == 0):
                    return None
                loads.append(vu)
        else:
            return None
    if len(stores) != 1 or not loads or len(loads) > 1 and \
            len({ld.attrs.get("read_once") for ld in loads} - {None}) != 1 or \
            any("read_once" not in ld.attrs for ld in loads[1:]):
        return None
    loops = _nest(stores[0], alloc, effects)
    if loops is None:
        return None
    if len(loads) > 1 and any(inner.has_trait(EXPENSIVE) for inner in stores[0].parent.ops):
        return None  # (see the module docstring: a vectorized sum with transcendental math)
    return loops, stores[0], loads, view


def _nest(store: Op, alloc: Op, effects: Effects):
    """The loops (outermost first) around ``store`` when they are ``alloc``'s full index space
    and the innermost body only computes the stored value."""
    body = store.parent
    loops: list = []
    op = body.parent.parent if body.parent is not None else None
    while isinstance(op, For) and len(loops) < len(alloc.operands):
        loops.insert(0, op)
        op = op.parent.parent.parent if op.parent and op.parent.parent else None
    ndim = len(alloc.operands)
    if len(loops) != ndim or ndim == 0:
        return None
    for k, loop in enumerate(loops):
        if loop.results or constant_value(loop.lb) != 0 or constant_value(loop.step) != 1 or \
                loop.ub is not alloc.operands[k]:
            return None
        ops = loop.regions[0].blocks[0].ops
        if k + 1 < ndim and not (len(ops) == 2 and ops[0] is loops[k + 1]):
            return None
    ivs = [loop.regions[0].blocks[0].args[0] for loop in loops]
    if list(store.operands[2:]) != ivs:
        return None
    for inner in body.ops:
        if inner is store or isinstance(inner, Yield):
            continue
        if inner.regions or not (inner.is_pure or isinstance(inner, Load)) or \
                effects.of(inner) & {WRITES, MAY_RAISE}:
            return None
    return loops


def _fuse(f: Func, alloc: Op, loops, store: Op, loads, view) -> bool:
    outer = loops[0]
    anchors = [_ancestor_in(load, outer.parent) for load in loads]
    if any(a is None or not _after(a, outer) for a in anchors):
        return False
    last = max(anchors, key=lambda a: a.parent.ops.index(a))
    reads = [inner.operands[0] for inner in store.parent.ops if isinstance(inner, Load)]
    for op in _between(outer, last):
        for w in written_buffers(op):
            if any(may_alias(w, r, f) for r in reads):
                return False
    for load in loads:
        _compute_at(load, alloc, loops, store, view is not None)
    if view is not None:
        view.erase()
    outer.erase()
    alloc.erase()
    return True


def _compute_at(load: Op, alloc: Op, loops, store: Op, broadcast: bool) -> None:
    """Replace ``load`` by the producer's body at the element it reads."""
    b = Builder.before(load)
    index = list(load.operands[1:])
    if broadcast:  # along a dim of size 1 a broadcast reads element 0
        zero, one = b.i64(0), b.i64(1)
        for k in range(len(index)):
            single = b.op(CmpI, alloc.operands[k], one, pred="eq")
            index[k] = b.op(Select, single, zero, index[k])
    mapping: dict[Value, Value] = dict(zip([lp.regions[0].blocks[0].args[0] for lp in loops],
                                           index))
    for inner in store.parent.ops:
        if inner is store or isinstance(inner, Yield):
            continue
        b.insert(clone_op(inner, mapping))
    value = store.operands[0]
    load.result.replace_all_uses_with(mapping.get(value, value))
    load.erase()


def _ancestor_in(op: Op, block) -> Op | None:
    while op is not None and op.parent is not block:
        op = op.parent_op
    return op


def _after(op: Op, first: Op) -> bool:
    ops = op.parent.ops
    return ops.index(op) > ops.index(first)


def _between(first: Op, last: Op):
    """The ops after ``first`` up to and including ``last`` (one block), nested ops too."""
    ops = first.parent.ops
    for op in ops[ops.index(first) + 1: ops.index(last) + 1]:
        yield op
        yield from (inner for inner in op.walk() if inner is not op)

