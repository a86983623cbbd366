"""Raising loops to array operations: an ``scf.for``/``scf.parallel`` whose iterations can run
together runs once, on the vector of all its indices, instead of as a ``fori_loop``.

The IR part (``raisable``, kept per loop) takes a loop whose body holds only scalar
arithmetic and math, constants, ``array.dim``/``array.index``, loads, stores,
``array.atomic_add``, run-time checks, ``scf.if`` with pure branches (run both, select), and
tape pushes or pops (not both), and where:

* every array it stores into is defined outside it and stored by one store, at ``i + a`` in one
  dimension (``i`` the loop's index, ``a`` loop-invariant) and loop-invariant indices in the
  others: each iteration writes its own element;
* every value it carries is either a *shift* (its next value does not depend on itself through
  the other carried values: the vector of its values is the vector of what the body yields,
  shifted by one iteration, like ``prev = cur`` in a stencil sweep) or a *reduction*
  (``s = s + e``, ``*``, ``max``, ``min``, with ``e`` not depending on ``s``: a sum, or a
  prefix scan where ``s`` is also read in the body);

Then every load reads the value the array had before the loop, provided (checked when the
function is traced, ``Raise.check``, on the actual buffers): a load from an array the loop
stores into reads it at ``i + b`` in the same dimension with the same other indices (or a
different known row), where the element is written by a *later* iteration
(``(b - a) * step > 0``) or by the same one after the load; arrays added into are not read or
stored; no two stored views share a buffer; the stored dimension's stride is not zero.  Loads
are gathers from the buffers as they were, stores and adds scatters applied after the body
(duplicate adds add up), checks report the first failing iteration, pushes write one slab of
the tape (iteration-major), pops read one.  Anything else runs as a ``fori_loop``.
"""

from __future__ import annotations

from ...ir import ops
from ...ir.types import ArrayType
from .buffers import Buf
from .tape import MIXED, Tape, bits, put, take, unbits, width

SCALAR = (ops.Constant, ops.Dim, ops.Index, ops.Load, ops.Store, ops.AtomicAdd, ops.Assert,
          ops.Relayout, ops.Select, ops.Cast, ops.CmpF, ops.CmpI, ops.TapePush, ops.TapePop,
          ops.TapeReserve)
EFFECTS = (ops.Store, ops.AtomicAdd, ops.Assert, ops.TapePush)

# reduction op -> (jnp reduce name, lax cumulative name)
REDUCTIONS = {ops.AddF: ("sum", "cumsum"), ops.AddI: ("sum", "cumsum"),
              ops.MulF: ("prod", "cumprod"), ops.MulI: ("prod", "cumprod"),
              ops.MaximumF: ("max", "cummax"), ops.MinimumF: ("min", "cummin"),
              ops.MaxI: ("max", "cummax"), ops.MinI: ("min", "cummin")}


class Access:
    """A load or store of ``array`` whose index in dimension ``dim`` is the loop's index plus
    the sum of ``offset`` (signed loop-invariant values); ``dim`` is None where no index is
    of that form."""

    __slots__ = ("op", "array", "index", "dim", "offset", "order")

    def __init__(self, op, array, index, dim, offset, order):
        self.op, self.array, self.index = op, array, index
        self.dim, self.offset, self.order = dim, offset, order


class Plan:
    """What ``raisable`` found: the body's accesses and how each carried value is computed."""

    def __init__(self):
        self.stores: list[Access] = []
        self.loads: list[Access] = []
        self.adds: list = []  # arrays added into
        self.carries: list = []  # per carried value: ("shift",) or ("reduce", op, e)
        self.pushes = 0
        self.pops = 0


def raisable(op, cache: dict):
    """The loop's ``Plan`` when its iterations can run together (the IR part), else None."""
    got = why_not(op, cache)
    return got if isinstance(got, Plan) else None


def why_not(op, cache: dict):
    """The loop's ``Plan``, or why its iterations cannot run together (a sentence)."""
    if op not in cache:
        cache[op] = _plan(op)
    return cache[op]


def _plan(op):
    body, iv = op.body, op.iv
    plan = Plan()
    stored = set()
    for order, inner in enumerate(body.ops):
        if isinstance(inner, ops.Yield):
            continue
        if not _allowed(op, inner):
            return f"its body has {inner.name}" if not isinstance(inner, ops.If) else \
                "a branch in it has effects"

        for sub in _flat(inner):
            if isinstance(sub, ops.Store):
                array, idx = sub.operands[1], list(sub.operands[2:])
                acc = _access(op, sub, array, idx, iv, order)
                if _inside(op, array) or array in stored or acc.dim is None or \
                        any(_inside(op, v) for k, v in enumerate(idx) if k != acc.dim):
                    return "a store is not at the loop's index in one dimension"

                stored.add(array)
                plan.stores.append(acc)
            elif isinstance(sub, ops.AtomicAdd):
                if _inside(op, sub.operands[1]):
                    return "it adds into an array made inside it"
                plan.adds.append(sub.operands[1])
            elif isinstance(sub, ops.Load):
                array = sub.operands[0]
                if _inside(op, array):
                    return "it loads from an array made inside it"
                plan.loads.append(_access(op, sub, array, list(sub.operands[1:]), iv, order))
            elif isinstance(sub, ops.TapePush):
                plan.pushes += 1
            elif isinstance(sub, ops.TapePop):
                plan.pops += 1
    if plan.pushes and plan.pops:
        return "it both pushes to and pops from the tape"
    yields = body.terminator.operands
    carried = list(op.carried)
    deps = {}
    for c, y in zip(carried, yields):
        kind = ("shift",)
        d = _carry_deps(y, carried, op)
        if c in d:
            red = y.owner
            if type(red) not in REDUCTIONS or red.parent_op is not op:
                return f"a carried value is updated by {red.name}, not a reduction"
            a, b = red.operands
            e = b if a is c else a if b is c else None
            if e is None or c in _carry_deps(e, carried, op):
                return "a carried value depends on itself, not as a reduction"
            kind = ("reduce", red, e)
            d = _carry_deps(e, carried, op)
        plan.carries.append(kind)
        deps[c] = d - {c}
    if _cyclic(deps):
        return "carried values depend on each other in a cycle"
    return plan


def _allowed(op, inner) -> bool:
    if isinstance(inner, ops.If):
        # both branches run: pure scalar code only
        return all(not isinstance(r.type, ArrayType) for r in inner.results) and all(
            isinstance(s, (ops.Yield, ops.Constant, ops.Dim, ops.Index, ops.Load, ops.Select,
                           ops.Cast, ops.CmpF, ops.CmpI)) or
            _pure_scalar(s) or (isinstance(s, ops.If) and _allowed(op, s))
            for blk in (inner.regions[0].block, inner.regions[1].block) for s in blk.ops)
    if inner.regions or isinstance(inner, ops.Call):
        return False
    return isinstance(inner, SCALAR) or _pure_scalar(inner)


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


def _affine(op, v, iv):
    """``v`` as the loop's index plus signed invariant terms, or None."""
    if v is iv:
        return []
    owner = v.owner
    if isinstance(owner, ops.Index) and not owner.attrs.get("wrap") and \
            not _inside(op, owner.operands[1]):
        return _affine(op, owner.operands[0], iv)
    if isinstance(owner, (ops.AddI, ops.SubI)):
        a, b = owner.operands
        if not _inside(op, b):
            base = _affine(op, a, iv)
            if base is not None:
                return base + [(1 if isinstance(owner, ops.AddI) else -1, b)]
        if isinstance(owner, ops.AddI) and not _inside(op, a):
            base = _affine(op, b, iv)
            if base is not None:
                return base + [(1, a)]
    return None


def _access(op, sub, array, idx, iv, order) -> Access:
    found = [(k, off) for k, v in enumerate(idx) for off in [_affine(op, v, iv)]
             if off is not None]
    dim, offset = found[0] if len(found) == 1 else (None, None)
    return Access(sub, array, idx, dim, offset, order)


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
            for r in owner.regions:  # an scf.if's branches read values from the body
                for s in _flat_region(r):
                    todo.extend(s.operands)
    return out


def _flat_region(region):
    for s in region.block.ops:
        yield from _flat(s)


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


def _offset(env, lo, terms):
    total = 0
    for sign, v in terms:
        x = env.get(v)
        if x is None or not lo.known(x):
            return None
        total += sign * int(x)
    return total


def _linear(lo, env, v):
    """``v`` as (a value, a number added to it), the value None where ``v`` is known."""
    x = env.get(v)
    if x is not None and lo.known(x):
        return None, int(x)
    owner = v.owner
    if isinstance(owner, ops.Index) and not owner.attrs.get("wrap"):
        return _linear(lo, env, owner.operands[0])  # (out of bounds: an error either way)
    if isinstance(owner, (ops.AddI, ops.SubI)):
        a, b = owner.operands
        y = env.get(b)
        if y is not None and lo.known(y):
            base, k = _linear(lo, env, a)
            return base, k + int(y) if isinstance(owner, ops.AddI) else k - int(y)
    return v, 0


def _same_index(lo, env, a, b) -> bool | None:
    """Whether invariant indices ``a`` and ``b`` are equal (None: cannot tell)."""
    if a is b:
        return True
    (x, i), (y, j) = _linear(lo, env, a), _linear(lo, env, b)
    return i == j if x is y else None


def check(lo, op, plan: Plan, env, step, n) -> bool:
    """The traced part of the conditions above, on the buffers the loop's arrays are in."""
    views = {}
    for acc in plan.stores:
        v = env[acc.array]
        if v.strides[acc.dim] == 0 or _offset(env, lo, acc.offset) is None:
            return False
        if not isinstance(v.buf, Buf) or v.buf in views:  # two stored views of one buffer
            return False
        views[v.buf] = acc
    added = set()
    for a in plan.adds:
        added |= _parts(env[a].buf)
    if added & set(views):
        return False
    for ld in plan.loads:
        parts = _parts(env[ld.array].buf)
        if parts & added:
            return False
        if not isinstance(env[ld.array].buf, Buf) and parts & set(views):
            return False  # a buffer chosen when the function runs, one the loop writes
        st = views.get(env[ld.array].buf)
        if st is not None and not _reads_old(lo, env, ld, st, step, n):
            return False
    return True


def _parts(buf) -> set:
    """The buffers ``buf`` is (both of a choice between two)."""
    if isinstance(buf, Buf):
        return {buf}
    return _parts(buf.a) | _parts(buf.b)


def _reads_old(lo, env, ld: Access, st: Access, step, n) -> bool:
    """A load from the buffer ``st`` stores into reads an element no earlier iteration (nor
    the same one, before it) writes: from the distance between the element it reads and the
    one the store writes in the same iteration (a multiple of the stored dimension's stride
    ``k`` iterations later, or never written)."""
    vl, vs = env[ld.array], env[st.array]
    if not lo.known(step) or (vl is not vs and not (lo.known(vl.offset) and
                                                    lo.known(vs.offset))):
        return False
    if ld.dim != st.dim or len(ld.index) != len(st.index) or \
            vl.strides[ld.dim] != vs.strides[st.dim]:
        return False  # the element it reads does not move with the one written
    dist = 0 if vl is vs else int(vl.offset) - int(vs.offset)
    for k, (il, is_) in enumerate(zip(ld.index, st.index)):
        if k == st.dim:
            continue
        (x, i), (y, j) = _linear(lo, env, il), _linear(lo, env, is_)
        if x is not y or (x is not None and vl.strides[k] != vs.strides[k]):
            return False
        dist += i * vl.strides[k] - j * vs.strides[k]
    b, a = _offset(env, lo, ld.offset), _offset(env, lo, st.offset)
    if b is None:
        return False
    dist += (b - a) * vs.strides[st.dim]
    stride = vs.strides[st.dim]
    if dist % stride:
        return True  # never an element the store writes
    trips, rem = divmod(dist // stride, int(step))
    if rem or abs(trips) >= n:
        return True
    return trips > 0 or (trips == 0 and ld.order < st.order)


def run_raised(lo, op, plan: Plan, env, lb, step, n) -> list:
    """Run the loop's body once on the vector of its ``n`` indices; its results."""
    return _Vector(lo, op, plan, env, lb, step, n).run()


class _Vector:
    def __init__(self, lo, op, plan, env, lb, step, n):
        jnp = lo.jnp
        self.lo, self.op, self.plan, self.n = lo, op, plan, n
        self.vals = dict(env)
        self.vals[op.iv] = jnp.asarray(lb, jnp.int64) + jnp.asarray(step, jnp.int64) * \
            jnp.arange(n, dtype=jnp.int64)
        self.carry_at = {c: j for j, c in enumerate(op.carried)}
        self.inits = [env[v] for v in op.inits]
        self.slab = None
        self.popped = 0

    def vec(self, x, t):
        jnp = self.lo.jnp
        return jnp.broadcast_to(jnp.asarray(x, t.np_dtype), (self.n,))

    def get(self, v):
        got = self.vals.get(v)
        if got is not None:
            return got
        j = self.carry_at.get(v)
        if j is not None:
            got = self.carry(j)
        else:
            self.eval(v.owner)
            got = self.vals[v]
        self.vals[v] = got
        return got

    def carry(self, j):
        """The vector of the values carried value ``j`` has in each iteration."""
        jnp, lax = self.lo.jnp, self.lo.lax
        t = self.op.carried[j].type
        init = jnp.asarray(self.lo.scalar(t, self.inits[j]))[None]
        kind = self.plan.carries[j]
        if kind[0] == "shift":
            y = self.vec(self.get(self.op.body.terminator.operands[j]), t)
            return jnp.concatenate([init, y[:-1]])
        red, e = kind[1], kind[2]
        ev = self.vec(self.get(e), t)
        scan = getattr(lax, REDUCTIONS[type(red)][1])(jnp.concatenate([init, ev[:-1]]))
        return scan.astype(t.np_dtype)

    def eval(self, inner, mask=None):
        """Compute ``inner``'s results; ``mask``: where it runs (an op in a branch), checks
        elsewhere do not fail."""
        lo = self.lo
        if isinstance(inner, ops.If):
            c = self.get(inner.operands[0])
            outs = []
            for k, r in enumerate(inner.regions):
                m = c if k == 0 else lo.jnp.logical_not(c)
                m = m if mask is None else mask & m
                blk = r.block
                for s in blk.ops:
                    if not isinstance(s, ops.Yield):
                        self.eval(s, m)
                outs.append([self.get(v) for v in blk.terminator.operands])
            for res, a, b in zip(inner.results, *outs):
                self.vals[res] = lo.jnp.where(c, a, b).astype(res.type.np_dtype)
            return
        if isinstance(inner, ops.TapePop):
            self.vals[inner.results[0]] = self.pop(inner)
            return
        red = self.reduction_of(inner)
        if red is not None:  # s + e where s is a reduction: the inclusive scan
            j, e = red
            t = inner.results[0].type
            scan = getattr(lo.lax, REDUCTIONS[type(inner)][1])
            init = lo.jnp.asarray(lo.scalar(t, self.inits[j]))[None]
            ev = self.vec(self.get(e), t)
            self.vals[inner.results[0]] = scan(lo.jnp.concatenate([init, ev]))[1:].astype(
                t.np_dtype)
            return
        args = [self.get(v) for v in inner.operands]
        lo.mask = mask
        try:
            out = lo.op(inner, args, self.vals)
        finally:
            lo.mask = None
        for r, v in zip(inner.results, out):
            self.vals[r] = v

    def reduction_of(self, inner):
        for j, kind in enumerate(self.plan.carries):
            if kind[0] == "reduce" and kind[1] is inner:
                return j, kind[2]
        return None

    def pop(self, inner):
        lo = self.lo
        t = inner.results[0].type
        known = lo.pairs.get(inner.attrs.get("pair"), MIXED)
        w = width(t)
        col = self.popped
        self.popped += w
        if known is not MIXED:
            return t.np_dtype.type(known)
        # columns counted from the end of a row: the first pop of a trip takes the last slots
        W = self.width
        cols = self.slab[:, W - col - w:W - col]
        return unbits(lo, t, [cols[:, k] for k in range(w)])

    def run(self) -> list:
        lo, op, plan, jnp = self.lo, self.op, self.plan, self.lo.jnp
        body = op.body
        tape = None
        if plan.pops:
            pops = [s for s in body.ops if isinstance(s, ops.TapePop)]
            tape = self.vals[pops[0].operands[0]]
            self.width = sum(width(p.results[0].type) for p in pops)
            start = tape.move(lo, -self.n * self.width)
            rows = take(lo, tape, start, self.n * self.width).reshape(self.n, self.width)
            self.slab = rows[::-1]  # iteration k pops what the k-th last trip pushed
        for inner in body.ops:
            if not isinstance(inner, (ops.Yield, *EFFECTS, ops.TapeReserve)):
                for r in inner.results:
                    self.get(r)
        columns = []
        for inner in body.ops:  # effects, in the body's order, after every load
            if isinstance(inner, (ops.Store, ops.AtomicAdd)):
                v, array, *idx = inner.operands
                view = self.vals[array]
                if view.buf.data.shape[0] == 0:
                    continue
                pos = lo.index_of(view, [self.get(i) for i in idx])
                pos = jnp.broadcast_to(pos, (self.n,))
                vals = self.vec(self.get(v), array.type.dtype)
                at = view.buf.data.at[pos]
                view.buf.data = at.add(vals) if isinstance(inner, ops.AtomicAdd) else \
                    at.set(vals)
            elif isinstance(inner, ops.Assert):
                args = [self.get(v) for v in inner.operands]
                lo.op(inner, args, self.vals)
            elif isinstance(inner, ops.TapePush):
                tape = self.vals[inner.operands[0]]
                t = inner.operands[1].type
                v = self.get(inner.operands[1])
                columns += [jnp.broadcast_to(b, (self.n,)) for b in bits(lo, t, v)]
                pair = inner.attrs.get("pair")
                if pair is not None:
                    known = v if lo.known(v) else MIXED
                    seen = lo.pairs.get(pair, known)
                    lo.pairs[pair] = known if (seen is not MIXED and known is not MIXED
                                               and seen == known) else MIXED
        if columns:
            assert isinstance(tape, Tape)
            put(lo, tape, jnp.stack(columns, axis=1).reshape(-1))
        out = []
        for j, (c, y) in enumerate(zip(op.carried, body.terminator.operands)):
            t = c.type
            kind = plan.carries[j]
            if kind[0] == "shift":
                out.append(self.vec(self.get(y), t)[-1])
            else:
                red, e = kind[1], kind[2]
                total = getattr(jnp, REDUCTIONS[type(red)][0])(self.vec(self.get(e), t))
                init = lo.scalar(t, self.inits[j])
                out.append(_combine(lo, red, init, total, t))
        return out


def _combine(lo, red, init, total, t):
    jnp = lo.jnp
    name = REDUCTIONS[type(red)][0]
    f = {"sum": jnp.add, "prod": jnp.multiply, "max": jnp.maximum, "min": jnp.minimum}[name]
    return f(init, total).astype(t.np_dtype)
