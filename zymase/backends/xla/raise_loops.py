"""Raising loops to array operations: a nest of ``scf.for``/``scf.parallel`` loops whose
iterations can run together runs once, on the grid of all its indices (one array axis per
loop), instead of as nested ``fori_loop``\\ s.

The IR part (``why_not``/``raisable``, kept per loop) takes a loop whose body holds only scalar
arithmetic and math, constants, ``array.dim``/``array.index``, loads, stores,
``array.atomic_add``, run-time checks, ``scf.if`` with pure branches (both run, the result is
selected, checks count only where the branch is taken), tape pushes or pops (not both), and
inner loops of the same kind whose bounds do not change with the outer ones; and where:

* every array the nest stores into is defined outside it and stored by one store, at
  ``i + a`` in one dimension per loop around the store (``i`` that loop's index, ``a``
  invariant) and invariant indices in the others: each iteration writes its own element;
* every value a loop carries is a *shift* (its next value does not depend on itself through
  the loop's other carried values: the vector of its values is the vector of what the body
  yields, one trip late, like ``prev = cur`` in a stencil sweep) or a *reduction*
  (``s = s + e``, ``*``, ``np.maximum``, ``np.minimum``, ``e`` not depending on ``s``: a sum,
  or a prefix scan where ``s`` is also read in the body).

When the function is traced, ``check`` looks at the actual buffers: every load must read the
value its element had before the loop.  A load from a buffer the nest stores into is compared
with the store: through the same view (or one differing by a known offset, in a single loop),
the element it reads is written by a *later* iteration, by the same one after the load, or by
none; arrays added into are neither read nor stored; no two stored views share a buffer; the
stored dimensions' strides are not zero; inner loops' bounds are known.  Then loads gather
from the buffers as they were, stores and adds scatter after the whole nest (duplicate adds
add up), checks report the first failing iteration, pushes write one slab of the tape
(iteration-major, as the loops would have), pops read one.  Anything else runs as a
``fori_loop``.  Reductions may sum in another order than the loop (float rounding).
"""

from __future__ import annotations

import numpy as np

from ...ir import ops
from ...ir.types import ArrayType
from .buffers import Buf, View
from .tape import MIXED, Tape, bits, put, record_pair, take, unbits, width

SCALAR = (ops.Constant, ops.Dim, ops.Index, ops.Load, ops.Store, ops.AtomicAdd, ops.Assert,
          ops.Relayout, ops.Select, ops.Cast, ops.CmpF, ops.CmpI, ops.TapePush, ops.TapePop,
          ops.TapeReserve, ops.TapeRead)
EFFECTS = (ops.Store, ops.AtomicAdd, ops.Assert, ops.TapePush)
LOOPS = (ops.For, ops.Parallel)

# reduction op -> (jnp reduce name, lax cumulative name)
REDUCTIONS = {ops.AddF: ("sum", "cumsum"), ops.AddI: ("sum", "cumsum"),
              ops.MulF: ("prod", "cumprod"), ops.MulI: ("prod", "cumprod"),
              ops.MaximumF: ("max", "cummax"), ops.MinimumF: ("min", "cummin"),
              ops.MaxI: ("max", "cummax"), ops.MinI: ("min", "cummin")}


class Access:
    """A load or store of ``array`` at ``index`` inside the loops ``path`` (outermost first);
    ``levels``: per loop, the dimension whose index is that loop's index plus the sum of
    signed invariant values, and those values (``(None, None)`` where no index is of that
    form); ``order``: its position in the innermost body."""

    __slots__ = ("op", "array", "index", "path", "levels", "order")

    def __init__(self, op, array, index, path, levels, order):
        self.op, self.array, self.index = op, array, index
        self.path, self.levels, self.order = path, levels, order


class Plan:
    """What ``why_not`` found for one loop of a nest: how each carried value is computed, its
    inner loops' plans; for the nest (on the outermost loop's plan) every access."""

    def __init__(self, loop):
        self.loop = loop
        self.carries: list = []  # per carried value: ("shift",) or ("reduce", op, e)
        self.inner: dict = {}  # inner loop -> its Plan
        self.pops: list = []  # this loop's own tape pops, in body order
        self.stores: list[Access] = []
        self.loads: list[Access] = []
        self.adds: list = []  # arrays added into
        # store of ``a[i] = a[i] + e`` -> (e, load, add, the store's and the load's Access)
        self.accum: dict = {}
        self.pushes = 0
        self.reads = 0


def raisable(op, cache: dict, static=None):
    """The loop's ``Plan`` when its iterations can run together (the IR part), else None."""
    got = why_not(op, cache, static)
    return got if isinstance(got, Plan) else None


def why_not(op, cache: dict, static=None):
    """The loop's ``Plan``, or why its iterations cannot run together (a sentence).
    ``static``: an ``scf.if`` condition defined outside the loop -> its value when known
    (then only the branch taken counts: the bounds-check versions of a loop)."""
    static = static or (lambda v: None)
    found = cache.get(op)
    if found is not None and all(static(c) == d for c, d in found[1].items()):
        return found[0]
    root = Plan(op)
    root.decisions = {}
    got = _level(op, (op,), root, static)
    if isinstance(got, Plan) and root.pushes and (_any_pops(got) or root.reads):
        got = "it both pushes to and reads from the tape"
    if isinstance(got, Plan):
        for name in ("stores", "loads", "adds", "accum", "pushes", "reads"):
            setattr(got, name, getattr(root, name))
    cache[op] = (got, root.decisions)
    return got


def _expand(block, root, static, nest, prefix=()):
    """``block``'s ops with their order (a tuple), the branch taken of an ``scf.if`` whose
    condition is known in its place."""
    out = []
    for k, inner in enumerate(block.ops):
        taken = None
        if isinstance(inner, ops.If) and not _inside(root, inner.operands[0]):
            taken = nest.decisions[inner.operands[0]] = static(inner.operands[0])
        if isinstance(inner, ops.If) and taken is None and _checked_copy(inner):
            taken = False
        if taken is not None:
            out += _expand(inner.regions[0 if taken else 1].block, root, static, nest,
                           prefix + (k,))
            continue
        out.append((prefix + (k,), inner))
    return out


def _checked_copy(if_op) -> bool:
    """A bounds-check guard (``passes/boundscheck.py``) whose branches do not touch the tape:
    its else branch, the loop with its checks, computes what the fast branch does (the
    checks pass where the guard holds), so a raised nest may always run it."""
    return bool(if_op.attrs.get("bounds_guard")) and \
        not any(o.name.startswith("tape.") for o in if_op.walk())


def _any_pops(plan) -> bool:
    return bool(plan.pops) or any(_any_pops(p) for p in plan.inner.values())


def _level(op, path, nest: Plan, static):
    """The plan of ``op``, a loop of the nest whose outermost loop is ``path[0]``; accesses
    are recorded on ``nest``."""
    root = path[0]
    plan = Plan(op)
    body = _expand(op.body, root, static, nest)
    orders = {inner: order for order, inner in body}
    for order, inner in body:
        if isinstance(inner, ops.Yield):
            continue
        if isinstance(inner, LOOPS):
            if not all(_invariant(root, v) for v in inner.operands[:3]):
                return "an inner loop's bounds change with the outer loops"
            sub = _level(inner, path + (inner,), nest, static)
            if not isinstance(sub, Plan):
                return sub
            plan.inner[inner] = sub
            continue
        if not _allowed(inner):
            if isinstance(inner, ops.If):
                bad = next(s for r in inner.regions for s in r.block.ops
                           if not (isinstance(s, BRANCH_OPS) or _pure_scalar(s) or
                                   (isinstance(s, ops.If) and _allowed(s))))
                return f"a branch in it has {bad.name}"
            return f"its body has {inner.name}"
        for sub in _flat(inner):
            if isinstance(sub, ops.Store) and _accumulation(sub) is not None:
                # an add into the array, or (where the nest reads it too) a store
                ld, add, e = _accumulation(sub)
                array, idx = sub.operands[1], list(sub.operands[2:])
                if _inside(root, array):
                    return "it adds into an array made inside it"
                st = _access(path, sub, array, idx, order)
                dims = [d for d, _ in st.levels]
                if None in dims or len(set(dims)) != len(dims) or \
                        any(not _invariant(root, v) for k, v in enumerate(idx) if k not in dims):
                    st = None
                top = ld
                while top not in orders:
                    top = top.parent_op
                ld_order = orders[top]
                nest.accum[sub] = (e, ld, add, st, _access(path, ld, array, idx, ld_order))
            elif isinstance(sub, ops.Store):
                array, idx = sub.operands[1], list(sub.operands[2:])
                acc = _access(path, sub, array, idx, order)
                dims = [d for d, _ in acc.levels]
                if _inside(root, array) or None in dims or \
                        len(set(dims)) != len(dims) or \
                        any(not _invariant(root, v) for k, v in enumerate(idx) if k not in dims):
                    return "a store is not at the loops' indices, one dimension each"
                nest.stores.append(acc)
            elif isinstance(sub, ops.AtomicAdd):
                if _inside(root, sub.operands[1]):
                    return "it adds into an array made inside it"
                nest.adds.append(sub.operands[1])
            elif isinstance(sub, ops.Load) and not _accumulated(sub):
                array = sub.operands[0]
                if _inside(root, array):
                    return "it loads from an array made inside it"
                nest.loads.append(_access(path, sub, array, list(sub.operands[1:]), order))
            elif isinstance(sub, ops.TapePush):
                nest.pushes += 1
            elif isinstance(sub, ops.TapeRead):
                nest.reads += 1
            elif isinstance(sub, ops.TapePop):
                if sub is not inner:
                    return "it pops from the tape in a branch"
                plan.pops.append(sub)
    carried = list(op.carried)
    deps = {}
    for c, y in zip(carried, op.body.terminator.operands):
        kind = ("shift",)
        d = _carry_deps(y, carried, op)
        if c in d:
            red, where = y.owner, None
            pick = _pick(red, y, c, op)
            if pick is not None:  # m = e if e > m else m: a max (NaN e skipped, as > does)
                name, e = pick
                if c in _carry_deps(e, carried, op):
                    return "a carried value depends on itself, not as a reduction"
                plan.carries.append(("reduce", red, e, None, name))
                deps[c] = _carry_deps(e, carried, op) - {c}
                continue
            if isinstance(red, ops.If) and red.parent_op is op:
                # s = s + e if cond else s: a reduction of e where cond holds
                k = red.results.index(y)
                yields = [r.block.terminator.operands[k] for r in red.regions]
                taken = [b for b, v in enumerate(yields) if v is not c]
                if len(taken) != 1 or len(y.uses) != 1:
                    return "a carried value is updated in both branches of an if"
                where = (red, taken[0])
                red = yields[taken[0]].owner
                if type(red) not in REDUCTIONS or red.parent_op is not where[0] or \
                        len(red.results[0].uses) != 1:
                    return "a carried value is updated in a branch, not as a reduction"
            elif type(red) not in REDUCTIONS or red.parent_op is not op:
                return f"a carried value is updated by {red.name}, not a reduction"
            a, b = red.operands
            e = b if a is c else a if b is c else None
            if e is None or c in _carry_deps(e, carried, op):
                return "a carried value depends on itself, not as a reduction"
            kind = ("reduce", red, e, where, REDUCTIONS[type(red)][0])
            d = _carry_deps(e, carried, op)
        plan.carries.append(kind)
        deps[c] = d - {c}
    if _cyclic(deps):
        return "carried values depend on each other in a cycle"
    return plan


def _pick(red, y, c, op):
    """``y`` is ``e if e > c else c`` (``>=``, or ``<``/``<=`` for a min; either operand
    order), ``e`` not ``c``: ("pickmax" | "pickmin", e), else None."""
    if isinstance(red, ops.Select) and red.parent_op is op:
        cond, then, other = red.operands[0].owner, red.operands[1], red.operands[2]
    elif isinstance(red, ops.If) and red.parent_op is op and len(y.uses) == 1:
        k = red.results.index(y)
        then, other = (r.block.terminator.operands[k] for r in red.regions)
        cond = red.operands[0].owner
    else:
        return None
    if other is not c or then is c or not isinstance(cond, (ops.CmpF, ops.CmpI)) or \
            any(not _pure_block(r.block) for r in red.regions):
        return None
    a, b = cond.operands
    pred = cond.attrs["pred"]
    for x in (a, b):  # (the value compared, loaded again in the branch: take the first)
        if _same_load(x, then) and not _inside(red, x):
            then = x
    if (a, b) == (then, c):
        bigger = pred in ("gt", "ge")
        smaller = pred in ("lt", "le")
    elif (a, b) == (c, then):
        bigger = pred in ("lt", "le")
        smaller = pred in ("gt", "ge")
    else:
        return None
    if not (bigger or smaller) or _inside(red, then):
        return None  # (made in the branch, whose condition needs the carried value first)
    return ("pickmax" if bigger else "pickmin"), then


def _same_load(x, y) -> bool:
    """Two loads of one element in one trip (a raised nest's loads both read the value from
    before the loop)."""
    lx, ly = x.owner, y.owner
    return isinstance(lx, ops.Load) and isinstance(ly, ops.Load) and \
        len(lx.operands) == len(ly.operands) and \
        all(p is q for p, q in zip(lx.operands, ly.operands))


def _pure_block(block) -> bool:
    """Arithmetic, constants, loads and index checks only (the value a pick takes may be
    computed in its branch: every trip computes it, checks count where it is taken)."""
    return all(isinstance(s, (ops.Yield, ops.Constant, ops.Load, ops.Index, ops.Dim)) or
               _pure_scalar(s) for s in block.ops)


BRANCH_OPS = (ops.Yield, ops.Constant, ops.Dim, ops.Index, ops.Load, ops.Select, ops.Cast,
              ops.CmpF, ops.CmpI, ops.TapeRead, ops.Store, ops.AtomicAdd, ops.Assert)


def _allowed(inner) -> bool:
    if isinstance(inner, ops.If):  # both branches run, their effects where they are taken
        return all(not isinstance(r.type, ArrayType) for r in inner.results) and all(
            isinstance(s, BRANCH_OPS) or _pure_scalar(s) or
            (isinstance(s, ops.If) and _allowed(s))
            for r in inner.regions for s in r.block.ops)
    if inner.regions or isinstance(inner, ops.Call):
        return False
    return isinstance(inner, SCALAR) or _pure_scalar(inner)


def _accumulation(store):
    """``a[idx] = a[idx] + e`` (the load and the add used by nothing else): (load, add, e)."""
    v, array, *idx = store.operands
    add = v.owner
    if not isinstance(add, (ops.AddF, ops.AddI)) or len(v.uses) != 1 or \
            add.parent is not store.parent:
        return None
    for k in (0, 1):
        ld = add.operands[k].owner
        if isinstance(ld, ops.Load) and ld.operands[0] is array and \
                len(ld.operands) == len(store.operands) - 1 and \
                all(a is b for a, b in zip(ld.operands[1:], idx)) and \
                len(add.operands[k].uses) == 1 and ld.parent is store.parent:
            return ld, add, add.operands[1 - k]
    return None


def _accumulated(load) -> bool:
    """``load`` is the load of an ``a[i] = a[i] + e``."""
    (use,) = load.results[0].uses if len(load.results[0].uses) == 1 else [(None, 0)]
    add = use[0]
    if not isinstance(add, (ops.AddF, ops.AddI)) or len(add.results[0].uses) != 1:
        return False
    store = add.results[0].uses[0][0]
    return isinstance(store, ops.Store) and _accumulation(store) is not None and \
        _accumulation(store)[0] is load


def _flat(inner):
    """``inner`` and, for an ``scf.if``, the ops of its branches."""
    yield inner
    for r in inner.regions:
        for s in r.block.ops:
            yield from _flat(s)


def _pure_scalar(inner) -> bool:
    """Arithmetic, math and complex ops on scalars (no arrays, no effects)."""
    name = inner.name.split(".", 1)[0]
    return name in ("arith", "math", "complex") and \
        not any(isinstance(v.type, ArrayType) for v in list(inner.operands) + inner.results)


def _inside(op, value) -> bool:
    owner = value.owner
    o = owner.parent_op if hasattr(owner, "parent_op") else None
    while o is not None:
        if o is op:
            return True
        o = o.parent_op
    return False


def _invariant(root, v) -> bool:
    """``v`` is the same in every trip of the nest: defined outside it, a constant, or
    integer arithmetic on those."""
    if not _inside(root, v):
        return True
    owner = v.owner
    if isinstance(owner, ops.Constant):
        return True
    return isinstance(owner, (ops.AddI, ops.SubI, ops.MulI, ops.Index)) and \
        all(_invariant(root, a) for a in owner.operands)


def _affine(op, v, iv):
    """``v`` as the loop's index plus signed invariant terms, or None."""
    if v is iv:
        return []
    owner = v.owner
    if isinstance(owner, ops.Index) and not owner.attrs.get("wrap") and \
            _invariant(op, owner.operands[1]):
        return _affine(op, owner.operands[0], iv)
    if isinstance(owner, (ops.AddI, ops.SubI)):
        a, b = owner.operands
        if _invariant(op, b):
            base = _affine(op, a, iv)
            if base is not None:
                return base + [(1 if isinstance(owner, ops.AddI) else -1, b)]
        if isinstance(owner, ops.AddI) and _invariant(op, a):
            base = _affine(op, b, iv)
            if base is not None:
                return base + [(1, a)]
    return None


def _access(path, sub, array, idx, order) -> Access:
    levels = []
    for loop in path:
        found = [(k, off) for k, v in enumerate(idx) for off in [_affine(loop, v, loop.iv)]
                 if off is not None]
        levels.append(found[0] if len(found) == 1 else (None, None))
    return Access(sub, array, idx, path, levels, order)


def _carry_deps(value, carried, op) -> set:
    """The carried values ``value`` depends on inside the loop's body."""
    seen, out, todo = set(), set(), [value]
    cset = set(carried)
    while todo:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        if v in cset:
            out.add(v)
            continue
        owner = v.owner
        if isinstance(owner, ops.Op) and _inside(op, v):
            todo.extend(owner.operands)
            for r in owner.regions:  # branches and inner loops read values of the body
                for blk_op in r.block.ops:
                    for s in _flat(blk_op):
                        todo.extend(s.operands)
    return out


def _cyclic(deps: dict) -> bool:
    state: dict = {}

    def visit(c):
        if state.get(c) == 1:
            return True
        if state.get(c) == 2:
            return False
        state[c] = 1
        if any(visit(d) for d in deps.get(c, ())):
            return True
        state[c] = 2
        return False

    return any(visit(c) for c in deps)


# ---------------------------------------------------------------------- when traced


def _known(lo, env, v):
    """The integer ``v`` is when traced, where it is known (an invariant of the nest)."""
    x = env.get(v)
    if x is not None:
        return int(x) if lo.known(x) else None
    owner = v.owner
    if isinstance(owner, ops.Constant):
        return int(owner.attrs["value"])
    if isinstance(owner, (ops.AddI, ops.SubI, ops.MulI)):
        a, b = (_known(lo, env, o) for o in owner.operands)
        if a is None or b is None:
            return None
        return a + b if isinstance(owner, ops.AddI) else a - b if \
            isinstance(owner, ops.SubI) else a * b
    return None


def _offset(env, lo, terms):
    total = 0
    for sign, v in terms:
        x = _known(lo, env, v)
        if x is None:
            return None
        total += sign * x
    return total


def _linear(lo, env, v):
    """``v`` as (a value, a number added to it), the value None where ``v`` is known."""
    x = _known(lo, env, v)
    if x is not None:
        return None, x
    owner = v.owner
    if isinstance(owner, ops.Index) and not owner.attrs.get("wrap"):
        return _linear(lo, env, owner.operands[0])  # (out of bounds: an error either way)
    if isinstance(owner, (ops.AddI, ops.SubI)):
        a, b = owner.operands
        y = _known(lo, env, b)
        if y is not None:
            base, k = _linear(lo, env, a)
            return base, k + y if isinstance(owner, ops.AddI) else k - y
    return v, 0


class Checked:
    """What ``check`` found: the nest's trip counts (loop -> (lb, step, n)), the accumulations
    that run as adds, and the loads and adds of those (not run as such)."""

    def __init__(self, trips):
        self.trips = trips
        self.adds: set = set()
        self.skip: set = set()


def check(lo, op, plan: Plan, env, step, n, lb=None):
    """The traced part of the conditions above, on the buffers the loop's arrays are in: a
    ``Checked``, or why not (a sentence)."""
    trips = {op: (lb, step, n)}
    if not _inner_trips(lo, plan, env, trips):
        return "an inner loop's bounds are not known when the function is traced"
    out = Checked(trips)
    stores, loads, adds = list(plan.stores), list(plan.loads), list(plan.adds)
    touched = set()
    for acc in stores + loads:
        touched |= _parts(env[acc.array].buf)
    into: dict = {}
    for store in plan.accum:
        into.setdefault(env[store.operands[1]].buf, []).append(store)
    for buf, accs in into.items():
        e, ld, add, st, lda = plan.accum[accs[0]]
        if not (_parts(buf) & touched):  # only added into: adds, in any order
            out.adds |= set(accs)
            for a in accs:
                out.skip |= {plan.accum[a][1], plan.accum[a][2]}
            adds.append(accs[0].operands[1])
        elif len(accs) == 1 and st is not None:  # read elsewhere too: a load and a store
            stores.append(st)
            loads.append(lda)
        else:
            return "it adds into an array it also reads or stores"
    views: dict = {}
    for acc in stores:
        v = env[acc.array]
        if any(v.strides[d] == 0 or _offset(env, lo, off) is None for d, off in acc.levels):
            return "a store's offset is not known when the function is traced"
        if not isinstance(v.buf, Buf):
            return "it stores into an array chosen when the function runs"
        for other in views.get(v.buf, ()):  # stores into one buffer: other elements
            if not (_other_rows(lo, env, acc, other) or
                    _disjoint(lo, env, acc, other, trips)):
                return "two stores may write the same element"
        views.setdefault(v.buf, []).append(acc)
    added = set()
    for a in adds:
        added |= _parts(env[a].buf)
    if added & set(views):
        return "it adds into an array it also stores into"
    for ld in loads:
        parts = _parts(env[ld.array].buf)
        if parts & added:
            return "it reads an array it adds into"
        if not isinstance(env[ld.array].buf, Buf) and parts & set(views):
            return "it reads an array chosen when the function runs, one it writes"
        for st in views.get(env[ld.array].buf, ()):
            if len(st.path) == 1 and ld.path == st.path:
                ok = _reads_old(lo, env, ld, st, step, n)
            else:
                ok = _reads_old_nested(lo, env, ld, st, trips)
            if not ok:
                return f"line {ld.op.loc.line} may read what an earlier trip writes"
    return out


def _positions(lo, env, acc: Access, trips):
    """The flat positions a store writes over the whole nest (known offsets and indices, at
    most 65536 of them), or None."""
    v = env[acc.array]
    if not lo.known(v.offset):
        return None
    dims = {d: (loop, off) for loop, (d, off) in zip(acc.path, acc.levels)}
    pos = np.array([int(v.offset)], dtype=np.int64)
    for k, i in enumerate(acc.index):
        if k in dims:
            loop, off = dims[k]
            lb, step, n = trips[loop]
            o = _offset(env, lo, off)
            if o is None or not (lo.known(lb) and lo.known(step)) or pos.size * n > 65536:
                return None
            ks = (int(lb) + o + int(step) * np.arange(n)) * v.strides[k]
        else:
            x = _known(lo, env, i)
            if x is None:
                return None
            ks = np.array([x * v.strides[k]])
        pos = (pos[:, None] + ks[None, :]).ravel()
    return pos


def _disjoint(lo, env, a: Access, b: Access, trips) -> bool:
    """Two stores into one buffer never write the same element (their positions known)."""
    pa, pb = _positions(lo, env, a, trips), _positions(lo, env, b, trips)
    return pa is not None and pb is not None and not np.intersect1d(pa, pb).size


def _other_rows(lo, env, a: Access, b: Access) -> bool:
    """Two stores through one view, at the same loops' dimensions, into rows known to
    differ (``acc[i, 0] = ax``, ``acc[i, 1] = ay``)."""
    va, vb = env[a.array], env[b.array]
    if a.path != b.path or [d for d, _ in a.levels] != [d for d, _ in b.levels] or not (
            va is vb or (lo.known(va.offset) and lo.known(vb.offset) and
                         (va.offset, va.shape, va.strides) == (vb.offset, vb.shape, vb.strides))):
        return False
    dims = [d for d, _ in a.levels]
    for k, (x, y) in enumerate(zip(a.index, b.index)):
        if k not in dims:
            (p, i), (q, j) = _linear(lo, env, x), _linear(lo, env, y)
            if p is q and i != j:
                return True
    return False


def _inner_trips(lo, plan, env, trips) -> bool:
    for loop, sub in plan.inner.items():
        lb, ub, st = (_known(lo, env, v) for v in loop.operands[:3])
        if lb is None or ub is None or not st:
            return False
        trips[loop] = (lb, st, len(range(lb, ub, st)))
        if not _inner_trips(lo, sub, env, trips):
            return False
    return True


def _parts(buf) -> set:
    """The buffers ``buf`` is (both of a choice between two)."""
    if isinstance(buf, Buf):
        return {buf}
    return _parts(buf.a) | _parts(buf.b)


def _reads_old(lo, env, ld: Access, st: Access, step, n) -> bool:
    """(One loop.)  A load from the buffer ``st`` stores into reads an element no earlier
    iteration (nor the same one, before it) writes: from the distance between the element it
    reads and the one the store writes in the same iteration (a multiple of the stored
    dimension's stride, ``k`` iterations later, or never written)."""
    vl, vs = env[ld.array], env[st.array]
    (dl, bo), (ds, ao) = ld.levels[0], st.levels[0]
    if not lo.known(step) or (vl is not vs and not (lo.known(vl.offset) and
                                                    lo.known(vs.offset))):
        return False
    if dl != ds or len(ld.index) != len(st.index) or vl.strides[dl] != vs.strides[ds]:
        return False  # the element it reads does not move with the one written
    dist = 0 if vl is vs else int(vl.offset) - int(vs.offset)
    for k, (il, is_) in enumerate(zip(ld.index, st.index)):
        if k == ds:
            continue
        (x, i), (y, j) = _linear(lo, env, il), _linear(lo, env, is_)
        if x is not y or (x is not None and vl.strides[k] != vs.strides[k]):
            return False
        dist += i * vl.strides[k] - j * vs.strides[k]
    b, a = _offset(env, lo, bo), _offset(env, lo, ao)
    if b is None:
        return False
    stride = vs.strides[ds]
    dist += (b - a) * stride
    if dist % stride:
        return True  # never an element the store writes
    trips, rem = divmod(dist // stride, int(step))
    if rem or abs(trips) >= n:
        return True
    return trips > 0 or (trips == 0 and ld.order < st.order)


def _reads_old_nested(lo, env, ld: Access, st: Access, trips) -> bool:
    """(A nest.)  The same, by coordinates: a load in the store's loop, through its view, at
    the same dimensions: another known row, or per loop ``q`` trips away, the first nonzero
    ``q`` (outermost first) later, or all zero and the load first."""
    vl, vs = env[ld.array], env[st.array]
    if ld.path != st.path or not (vl is vs or (
            lo.known(vl.offset) and lo.known(vs.offset) and
            (vl.offset, vl.shape, vl.strides) == (vs.offset, vs.shape, vs.strides))):
        return False
    dims = [d for d, _ in st.levels]
    if [d for d, _ in ld.levels] != dims:
        return False
    for k, (il, is_) in enumerate(zip(ld.index, st.index)):
        if k in dims:
            continue
        (x, i), (y, j) = _linear(lo, env, il), _linear(lo, env, is_)
        if x is not y:
            return False
        if i != j:
            return True  # another row than the one written
    qs = []
    for loop, (_, bo), (_, ao) in zip(st.path, ld.levels, st.levels):
        b, a = _offset(env, lo, bo), _offset(env, lo, ao)
        _, step, n = trips[loop]
        if b is None or not lo.known(step):
            return False
        q, rem = divmod(b - a, int(step))
        if rem or abs(q) >= n:
            return True
        qs.append(q)
    for q in qs:
        if q:
            return q > 0
    return ld.order < st.order


def run_raised(lo, op, plan: Plan, checked: Checked, env, lb, step, n) -> list:
    """Run the nest once on the grid of its indices; the outer loop's results."""
    checked.trips[op] = (lb, step, n)
    return _Vector(lo, op, plan, _Nest(plan, checked, env), None, lb, step, n).run()


class _Nest:
    """What the loops of one raised nest share: the outer loop's plan, trip counts, the
    values around it, the effects to apply after it."""

    def __init__(self, plan, checked, env):
        self.plan, self.env = plan, env
        self.trips, self.adds, self.skip = checked.trips, checked.adds, checked.skip
        self.effects: list = []  # functions applying the nest's writes, in order
        self.access = {a.op: a for a in plan.loads + plan.stores}
        for store, (_, ld, _, st, lda) in plan.accum.items():
            self.access[ld] = lda
            if st is not None:
                self.access[store] = st


class _Vector:
    """One loop of a raised nest, run on the grid ``prefix`` (the outer loops' trips, then
    its own): values are arrays of rank ``depth`` (or scalars) that broadcast to it."""

    def __init__(self, lo, op, plan, nest, parent, lb, step, n):
        jnp = lo.jnp
        self.lo, self.op, self.plan, self.nest, self.parent, self.n = \
            lo, op, plan, nest, parent, n
        self.depth = 1 if parent is None else parent.depth + 1
        self.prefix = (n,) if parent is None else parent.prefix + (n,)
        ivs = jnp.asarray(lb, jnp.int64) + jnp.asarray(step, jnp.int64) * \
            jnp.arange(n, dtype=jnp.int64)
        self.vals = {op.iv: ivs.reshape((1,) * (self.depth - 1) + (n,))}
        self.carry_at = {c: j for j, c in enumerate(op.carried)}
        self.inits = [self.around(v) for v in op.inits]
        self.children: dict = {}  # inner loop -> its _Vector (where it has trips)
        self.done: set = set()  # inner loops run
        self.slab = self.tape = None  # (pushing) the slots of each trip, and the tape
        self.rows = None  # (popping) the tape slots of each trip, first trip first
        self.cols: dict = {}  # pop or inner loop -> its columns of a row
        self.masks: dict = {}  # branch block -> where it is taken

    # -- values

    def around(self, v):
        """A value defined outside this loop, as the enclosing loop (or the function) has it."""
        return self.nest.env[v] if self.parent is None else self.parent.get(v)

    def get(self, v):
        got = self.vals.get(v)
        if got is not None:
            return got
        j = self.carry_at.get(v)
        if j is not None:
            got = self.carry(j)
        elif _inside(self.op, v):
            top = _top(self.op, v.owner)
            if not isinstance(top, (ops.If, *LOOPS)):
                self.eval(top)
            elif top not in self.done:  # (a value made in a branch: the whole if runs)
                self.done.add(top)
                self.eval(top)
            elif v not in self.vals and v.owner.parent in self.masks:
                # (asked for while its branch runs: a reduction's term, for a carried value
                # read earlier in the branch)
                self.eval(v.owner, self.masks[v.owner.parent])
            got = self.vals[v]
        else:
            got = self.around(v)
            if getattr(got, "ndim", 0) == self.depth - 1 > 0 and \
                    not isinstance(got, (View, Tape)):
                got = got[..., None]
        self.vals[v] = got
        return got

    def vec(self, x, t):
        jnp = self.lo.jnp
        return jnp.broadcast_to(jnp.asarray(x, t.np_dtype), self.prefix)

    def first(self, j, t):
        """The initial value of carried value ``j``, one per trip of the outer loops, with an
        axis of one for this loop's trips."""
        jnp = self.lo.jnp
        init = jnp.asarray(self.lo.scalar(t, self.inits[j]))
        return jnp.broadcast_to(init, self.prefix[:-1])[..., None]

    def carry(self, j):
        """The values carried value ``j`` has in each trip."""
        jnp, lax = self.lo.jnp, self.lo.lax
        t = self.op.carried[j].type
        kind = self.plan.carries[j]
        if kind[0] == "shift":
            y = self.vec(self.get(self.op.body.terminator.operands[j]), t)
            return jnp.concatenate([self.first(j, t), y[..., :-1]], axis=-1)
        ev = self.terms(kind, t)
        scan = getattr(lax, SCANS[kind[4]])
        return scan(jnp.concatenate([self.first(j, t), ev[..., :-1]], axis=-1),
                    axis=self.depth - 1).astype(t.np_dtype)

    def terms(self, kind, t):
        """What a reduction combines in each trip (its identity where its branch is not
        taken)."""
        jnp = self.lo.jnp
        _, red, e, where, name = kind
        if name.startswith("pick"):  # (NaN terms are skipped, as the comparison does)
            ev = self.vec(self.get(e), t)
            return jnp.where(jnp.isnan(ev), _identity(name, t), ev) if t.is_float else ev
        if where is None:
            return self.vec(self.get(e), t)
        if_op, branch = where
        if if_op not in self.done:
            self.done.add(if_op)
            self.eval(if_op)
        block = if_op.regions[branch].block
        identity = _identity(name, t)
        if block not in self.masks:  # (a branch known not taken)
            return self.vec(identity, t)
        ev = self.vec(self.get(e), t)
        mask = self.masks[block]
        return ev if mask is None else jnp.where(mask, ev, identity)

    def eval(self, inner, mask=None):
        """Compute ``inner``'s results; ``mask``: where it runs (an op in a branch), checks
        elsewhere do not fail."""
        lo, jnp = self.lo, self.lo.jnp
        if isinstance(inner, ops.If):
            c = self.get(inner.operands[0])
            if lo.known(c) or _checked_copy(inner):  # (one branch: known, or the checked)
                static = lo.known(c) and (not _inside(self.nest.plan.loop, inner.operands[0])
                                          or not _checked_copy(inner))
                blk = inner.regions[0 if static and bool(c) else 1].block
                self.masks[blk] = mask
                for s in blk.ops:
                    if not (s in self.nest.skip or isinstance(s, (ops.Yield, *EFFECTS,
                                                                  ops.TapeReserve)) or
                            (s.results and all(x in self.vals for x in s.results))):
                        self.eval(s, mask)
                for res, v in zip(inner.results, blk.terminator.operands):
                    self.vals[res] = self.get(v)
                return
            outs = []
            for k, r in enumerate(inner.regions):
                m = c if k == 0 else jnp.logical_not(c)
                m = m if mask is None else mask & m
                self.masks[r.block] = m
                for s in r.block.ops:
                    if s in self.nest.skip or isinstance(s, EFFECTS) or \
                            (s.results and all(x in self.vals for x in s.results)):
                        continue
                    if not isinstance(s, ops.Yield):
                        self.eval(s, m)
                outs.append([self.get(v) for v in r.block.terminator.operands])
            for res, a, b in zip(inner.results, *outs):
                self.vals[res] = jnp.where(c, a, b).astype(res.type.np_dtype)
            return
        if isinstance(inner, LOOPS):
            self.done.add(inner)
            self.vals.update(zip(inner.results, self.inner_loop(inner)))
            return
        if isinstance(inner, ops.TapePop):
            self.vals[inner.results[0]] = self.pop(inner)
            return
        red = self.reduction_of(inner)
        if red is not None:  # s + e where s is a reduction: the inclusive scan
            j, kind = red
            t = inner.results[0].type
            scan = getattr(lo.lax, SCANS[kind[4]])
            ev = self.terms(kind, t)
            self.vals[inner.results[0]] = scan(
                jnp.concatenate([self.first(j, t), ev], axis=-1),
                axis=self.depth - 1)[..., 1:].astype(t.np_dtype)
            return
        args = [self.get(v) for v in inner.operands]
        if isinstance(inner, ops.Load):
            got = self.read(inner, args[0], args[1:])
            if got is not None:
                self.vals[inner.results[0]] = got
                return
        lo.mask = mask
        try:
            out = lo.op(inner, args, self.vals)
        finally:
            lo.mask = None
        for r, v in zip(inner.results, out):
            self.vals[r] = v

    # -- loads and stores at the loops' indices: slices of the buffer

    def window(self, op, view, idx):
        """Where an access at the loops' indices (``Access.levels``) reaches: the first
        position and, per loop it moves with, (axis, trips, stride); None where unknown."""
        acc = self.nest.access.get(op)
        if acc is None or acc.path[-1] is not self.op or view.buf.data.shape[0] == 0:
            return None
        start, terms, dims = view.offset, [], set()
        for axis, (loop, (d, off)) in enumerate(zip(acc.path, acc.levels)):
            if d is None:
                continue
            o = _offset(self.nest.env, self.lo, off)
            lb, step, n = self.nest.trips[loop]
            if o is None or not self.lo.known(step):
                return None
            dims.add(d)
            start = start + (lb + o) * view.strides[d]
            terms.append((axis, n, int(step) * view.strides[d]))
        for k, i in enumerate(idx):
            if k not in dims:
                if getattr(i, "ndim", 0):
                    return None
                start = start + i * view.strides[k]
        return start, terms

    def read(self, op, view, idx):
        """A load as a slice of its buffer (None: a gather does it)."""
        jnp, lax = self.lo.jnp, self.lo.lax
        w = self.window(op, view, idx)
        if w is None:
            return None
        start, terms = w
        data = view.buf.data
        shape = [1] * self.depth
        if not terms or all(S == 0 for _, _, S in terms):
            return data[start]
        if len(terms) != 1:
            return None
        (axis, n, S), = terms
        span = (n - 1) * abs(S) + 1
        if span > data.shape[0]:
            return None
        first = start if S > 0 else start + (n - 1) * S
        seg = lax.dynamic_slice(data, (jnp.asarray(first, jnp.int64),), (span,))[::abs(S)]
        shape[axis] = n
        return (seg if S > 0 else reverse(self.lo, seg, 0)).reshape(shape)

    def write(self, op, view, idx, vals, add):
        """A store (or add) as an in-place slice update, returned as a function to run after
        the nest (None: a scatter does it)."""
        jnp, lax = self.lo.jnp, self.lo.lax
        w = self.window(op, view, idx)
        if w is None or len(w[1]) != 1 or abs(w[1][0][2]) != 1:
            return None
        lo = self.lo
        start, ((axis, n, S),) = w
        first = start if S > 0 else start + (n - 1) * S
        first = int(first) if lo.known(first) else jnp.asarray(first, jnp.int64)
        vals = vals.reshape(-1) if S > 0 else reverse(self.lo, vals.reshape(-1), 0)
        if n > view.buf.data.shape[0]:
            return None

        def apply():
            data = view.buf.data
            size = data.shape[0]
            if lo.known(start) and 2 * n >= size:
                # most of the buffer: padded and selected, elementwise (a sharded buffer
                # stays sharded: XLA partitions pads, not in-place writes at an offset)
                f = int(first)
                full = lax.pad(vals.astype(data.dtype), data.dtype.type(0),
                               [(f, size - f - n, 0)])
                if add:
                    view.buf.data = data + full
                else:
                    pos = jnp.arange(size)
                    view.buf.data = jnp.where((pos >= f) & (pos < f + n), full, data)
                return
            if add:
                vals_ = lax.dynamic_slice(data, (first,), (n,)) + vals
            else:
                vals_ = vals
            view.buf.data = lax.dynamic_update_slice(data, vals_.astype(data.dtype), (first,))
        return apply

    def inner_loop(self, loop):
        lb, step, n = self.nest.trips[loop]
        if not n:
            return [self.get(v) for v in loop.inits]
        child = self.children[loop] = _Vector(self.lo, loop, self.plan.inner[loop], self.nest,
                                              self, lb, step, n)
        if self.rows is not None:
            s, e = self.cols[loop]
            block = self.rows[..., s:e].reshape(self.prefix + (n, (e - s) // n))
            child.rows = reverse(self.lo, block, block.ndim - 2)  # its first trip pops the
            # last row
            child.assign_columns()
        return child.run()

    def reduction_of(self, inner):
        for j, kind in enumerate(self.plan.carries):
            if kind[0] == "reduce" and kind[1] is inner:
                return j, kind
        return None

    # -- the tape

    @staticmethod
    def width_of(nest, plan) -> int:
        """Slots one trip of ``plan``'s loop pops (its own pops and its inner loops')."""
        own = sum(width(p.results[0].type) for p in plan.pops)
        return own + sum(nest.trips[loop][2] * _Vector.width_of(nest, sub)
                         for loop, sub in plan.inner.items())

    def assign_columns(self):
        """Each pop (and inner loop) its columns of a row: the first pop of a trip takes the
        last slots pushed in the matching trip."""
        W = self.rows.shape[-1]
        used = 0
        for inner in self.taken(self.op.body):
            if isinstance(inner, ops.TapePop):
                w = width(inner.results[0].type)
            elif isinstance(inner, LOOPS):
                w = self.nest.trips[inner][2] * _Vector.width_of(self.nest,
                                                                 self.plan.inner[inner])
            else:
                continue
            self.cols[inner] = (W - used - w, W - used)
            used += w

    def taken(self, block) -> list:
        """``block``'s ops, with the ops of the branch taken in place of an ``scf.if`` whose
        condition is known when tracing."""
        out = []
        for inner in block.ops:
            if isinstance(inner, ops.If) and not _inside(self.nest.plan.loop, inner.operands[0]):
                c = self.get(inner.operands[0])
                if self.lo.known(c):
                    out += self.taken(inner.regions[0 if bool(c) else 1].block)
                    continue
            if isinstance(inner, ops.If) and _checked_copy(inner):
                out += self.taken(inner.regions[1].block)
                continue
            out.append(inner)
        return out

    def pop(self, inner):
        lo = self.lo
        t = inner.results[0].type
        known = lo.pairs.get(inner.attrs.get("pair"), MIXED)
        if known is not MIXED:
            return t.np_dtype.type(known)
        s, e = self.cols[inner]
        return unbits(lo, t, [self.rows[..., k] for k in range(s, e)])

    # -- running

    def run(self) -> list:
        lo, op, jnp = self.lo, self.op, self.lo.jnp
        body = op.body
        if self.parent is None and _any_pops(self.plan):
            pops = _first_pop(self.plan)
            tape = self.get(pops.operands[0])
            W = _Vector.width_of(self.nest, self.plan)
            start = tape.move(lo, -self.n * W)
            rows = take(lo, tape, start, self.n * W).reshape(self.n, W)
            self.rows = reverse(lo, rows, 0)  # trip k pops what the k-th last trip pushed
            self.assign_columns()
        skip = self.nest.skip
        for inner in body.ops:
            if isinstance(inner, (LOOPS, ops.If)):
                if inner not in self.done:
                    self.done.add(inner)
                    self.eval(inner)
            elif not isinstance(inner, (ops.Yield, *EFFECTS, ops.TapeReserve)) and \
                    inner not in skip:
                for r in inner.results:
                    self.get(r)
        self.columns, self.tape = [], None
        self.effects(body, None)
        columns, tape = self.columns, self.tape
        self.slab = jnp.concatenate(columns, axis=-1) if columns else None
        if self.parent is None:
            for apply in self.nest.effects:
                apply()
            if self.slab is not None:
                assert isinstance(tape, Tape)
                put(lo, tape, self.slab.reshape(-1))
        return self.results()

    def effects(self, block, mask):
        """The effects of ``block`` (the body, or a branch taken where ``mask``), in its order,
        after every load of the nest: stores, adds, checks, pushes, inner loops' pushes."""
        lo, jnp = self.lo, self.lo.jnp
        for inner in block.ops:
            if isinstance(inner, (ops.Store, ops.AtomicAdd)):
                v, array, *idx = inner.operands
                add = isinstance(inner, ops.AtomicAdd) or inner in self.nest.adds
                if inner in self.nest.adds:
                    v = self.nest.plan.accum[inner][0]
                view = self.get(array)
                idx = [self.get(i) for i in idx]
                vals = self.vec(self.get(v), array.type.dtype)
                fast = self.write(inner, view, idx, vals, add) if mask is None else None
                if fast is not None:
                    self.nest.effects.append(fast)
                    continue
                pos = jnp.broadcast_to(lo.index_of(view, idx), self.prefix).reshape(-1)
                where = None if mask is None else \
                    jnp.broadcast_to(mask, self.prefix).reshape(-1)
                self.nest.effects.append(_scatter(jnp, view, pos, vals.reshape(-1), add,
                                                  where))
            elif isinstance(inner, ops.Assert):
                args = [self.get(v) for v in inner.operands]
                lo.mask = mask
                try:
                    lo.op(inner, args, self.vals)
                finally:
                    lo.mask = None
            elif isinstance(inner, ops.If):
                for r in inner.regions:
                    if r.block in self.masks:  # (not a branch not taken)
                        self.effects(r.block, self.masks[r.block])
            elif isinstance(inner, ops.TapePush):
                self.tape = self.get(inner.operands[0])
                t = inner.operands[1].type
                v = self.get(inner.operands[1])
                self.columns.append(jnp.stack([jnp.broadcast_to(b, self.prefix)
                                               for b in bits(lo, t, v)], axis=-1))
                record_pair(lo, inner, v)
            elif isinstance(inner, LOOPS) and self.children.get(inner) is not None:
                child = self.children[inner]
                if child.slab is not None:
                    self.tape = child.tape
                    self.columns.append(child.slab.reshape(self.prefix + (-1,)))

    def results(self) -> list:
        jnp = self.lo.jnp
        out = []
        for j, (c, y) in enumerate(zip(self.op.carried, self.op.body.terminator.operands)):
            t = c.type
            kind = self.plan.carries[j]
            if kind[0] == "shift":
                out.append(self.vec(self.get(y), t)[..., -1])
                continue
            name = kind[4]
            base = name[4:] if name.startswith("pick") else name
            total = getattr(jnp, base)(self.terms(kind, t), axis=-1)
            f = {"sum": jnp.add, "prod": jnp.multiply, "max": jnp.maximum,
                 "min": jnp.minimum}[base]
            init = jnp.broadcast_to(jnp.asarray(self.lo.scalar(t, self.inits[j])),
                                    self.prefix[:-1])
            got = f(init, total)
            if name.startswith("pick") and t.is_float:  # a NaN start stays (no term is >)
                got = jnp.where(jnp.isnan(init), init, got)
            out.append(got.astype(t.np_dtype))
        return out


def reverse(lo, x, axis):
    """``x`` reversed along ``axis``; in a program with sharded operands, as a gather: XLA's
    SPMD partitioner miscompiled programs of ours holding ``rev`` of sharded values (wrong
    gradients on 8 devices, right on one), and a gather of reversed indices does not hit
    it (on one device ``rev`` is faster)."""
    if not lo.sharded:
        return lo.lax.rev(x, (axis,))
    n = x.shape[axis]
    return lo.jnp.take(x, lo.jnp.arange(n - 1, -1, -1), axis=axis)


def _scatter(jnp, view, pos, vals, add, mask):
    """A write at any positions (duplicate adds add up; where ``mask`` is false, none)."""
    def apply():
        size = view.buf.data.shape[0]
        if size == 0:
            return
        p = pos if mask is None else jnp.where(mask, pos, size)
        at = view.buf.data.at[p]
        view.buf.data = at.add(vals, mode="drop") if add else at.set(vals, mode="drop")
    return apply


def _top(loop, op):
    """The op of ``loop``'s body that ``op`` is (or is inside of)."""
    while op.parent_op is not loop:
        op = op.parent_op
    return op


SCANS = {"sum": "cumsum", "prod": "cumprod", "max": "cummax", "min": "cummin",
         "pickmax": "cummax", "pickmin": "cummin"}


def _identity(name, t):
    name = name[4:] if name.startswith("pick") else name
    dt = t.np_dtype
    if name == "sum":
        return dt.type(-0.0) if t.is_float else dt.type(0)
    if name == "prod":
        return dt.type(1)
    big = float("inf") if t.is_float else None
    if name == "max":
        return dt.type(-big) if big else np.iinfo(dt).min
    return dt.type(big) if big else np.iinfo(dt).max


def _first_pop(plan):
    if plan.pops:
        return plan.pops[0]
    for sub in plan.inner.values():
        found = _first_pop(sub)
        if found is not None:
            return found
    return None
