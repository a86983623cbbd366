"""Optimized IR -> a JAX function: the IR run on JAX values while ``jax.jit`` traces it.

Arrays are strided views of *buffers*; a buffer is a flat JAX array, replaced by a functional
update (``.at[i].set``) at every store, so the IR's in-place semantics (writes through views and
aliases) hold as long as the buffer table is threaded through control flow:

* numbers known when tracing (array sizes, loop bounds from shapes, integer arguments) stay
  Python/NumPy numbers and are folded with the IR interpreter's own rules (``ir/interp.py``);
  the rest are traced JAX scalars;
* a loop whose iterations are independent runs once on the vector of its indices (gathers,
  scatters, elementwise arithmetic: ``raise_loops.py``);
* other ``scf.for``/``scf.parallel`` become ``lax.fori_loop``, ``scf.while`` a rotated
  ``lax.while_loop``, ``scf.if`` on a traced condition ``lax.cond``; each carries the loop's
  values, every buffer that exists when it starts, and the error state;
* an array a loop carries (or a branch returns) is passed by value (its contents); where the
  program could tell the difference (the carried array is written in the loop and its first
  buffer is an argument or is used after the loop) the lowering refuses at the loop's line;
* ``rt.assert`` and checked indices update an error state (first failed check, two payloads)
  that the call raises as zymase's error after XLA returns;
* array sizes must be known when tracing (they are XLA shapes): a size that depends on data is
  refused at its line;
* reverse mode's tape is a buffer of int64 slots (values' bit patterns) and a position; its size
  is not known before the run, so a call starts with room for ``Lowering.capacity`` slots, and
  a run that needed more (pushes past the end are dropped and counted) runs again with room
  for all (the next computation for that signature starts with it).
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedError
from ...ir import ops
from ...ir.core import Block, Func, Module
from ...ir.interp import HANDLERS as EXACT
from ...ir.roots import array_roots, written_buffers
from ...ir.types import ArrayType
from .buffers import Buf, ChoiceBuf, View, c_strides
from .raise_loops import Plan, check, run_raised, why_not
from .tape import TAPE_RULES, Tape

MAX_INLINE = 24  # nested calls traced (a recursive function is refused beyond it)
# a loop with a known trip count that is not raised is traced once per trip (each with its
# index known: conditions on it fold, offsets are static) when it has at most UNROLL_TRIPS trips
# and trips x body ops is at most UNROLL_OPS (a loop over layers, over x/y/z)
UNROLL_TRIPS, UNROLL_OPS = 8, 4000


class Lowering:
    """Runs one module's functions on JAX values (call ``run`` inside a ``jax.jit`` trace)."""

    def __init__(self, module: Module, jax, errors: list):
        self.module = module
        self.jax, self.jnp, self.lax = jax, jax.numpy, jax.lax
        self.errors = errors  # (kind, msg, loc) per error id - 1
        self.err = None  # (id, a, b): int64 scalars
        self.bufs: list[Buf] = []  # every buffer alive (threaded through control flow)
        self.roots = {}
        self._roots: dict = {}  # function -> array_roots(function)
        self.depth = 0
        self.capacity = 1024  # tape slots (the call runs again with more if they overflow)
        self.pairs: dict = {}  # push/pop pair id -> the value every push of it pushed
        self.raised: dict = {}  # loop -> whether its iterations are independent
        self.mask = None  # (a raised loop's branch: where its checks may fail)
        self.need = None  # Buf: the most slots a tape needed
        self.notes: dict = {}  # loop -> how it was lowered (``explain``)
        self.sizes: dict = {}  # loop -> ops in its body (unrolling)
        self.sharded = False  # some operand is spread over several devices

    def note(self, op, how: str) -> None:
        self.notes.setdefault(op, (op.loc, how))

    # -- values

    def known(self, x) -> bool:
        """Whether ``x`` is a number known when tracing (not a traced value, not an array)."""
        return not isinstance(x, (self.jax.core.Tracer, self.jax.Array, View, Tape))

    def scalar(self, t, x):
        """A traced (or concrete) scalar of IR type ``t`` as a JAX value (a tape: a
        placeholder; its state is in buffers, threaded like every buffer)."""
        if isinstance(x, Tape):
            return self.jnp.int64(0)
        return self.jnp.asarray(x, dtype=t.np_dtype)

    def new_buf(self, data, origin) -> Buf:
        b = Buf(data, origin)
        self.bufs.append(b)
        return b

    def index_of(self, view: View, idx) -> object:
        flat = view.offset
        for i, s in zip(idx, view.strides):
            flat = flat + i * s
        return flat

    def grid(self, view: View):
        """The flat positions of every element of ``view`` (an int array of its shape)."""
        jnp = self.jnp
        pos = jnp.asarray(view.offset, dtype=jnp.int64)
        for k, (n, s) in enumerate(zip(view.shape, view.strides)):
            shape = [1] * len(view.shape)
            shape[k] = n
            pos = pos + (jnp.arange(n, dtype=jnp.int64) * s).reshape(shape)
        return jnp.broadcast_to(pos, view.shape)

    def read(self, view: View):
        if view.buf.data.shape[0] == 0:  # (only reached where a failed check is reported)
            return self.jnp.zeros(view.shape, view.buf.data.dtype)
        if not view.shape:
            return view.buf.data[view.offset]
        return view.buf.data[self.grid(view)]

    def write(self, view: View, values, add=False):
        if view.buf.data.shape[0] == 0:
            return
        pos = self.grid(view)
        values = self.jnp.broadcast_to(self.jnp.asarray(values, view.buf.data.dtype), view.shape)
        at = view.buf.data.at[pos]
        view.buf.data = at.add(values) if add else at.set(values)

    def fresh(self, t: ArrayType, shape, values=None, origin="alloc") -> View:
        n = int(np.prod(shape, dtype=np.int64)) if shape else 1
        dtype = t.dtype.np_dtype
        data = self.jnp.zeros(n, dtype) if values is None else \
            self.jnp.asarray(values, dtype).reshape(n)
        return View(self.new_buf(data, origin), 0, tuple(shape), c_strides(shape))

    # -- errors

    def fail_if_not(self, ok, kind, msg, loc, a=0, b=0):
        jnp = self.jnp
        if self.known(ok) and bool(ok):
            return
        self.errors.append((kind, msg, loc))
        eid = len(self.errors)
        i, ea, eb = self.err
        ok = jnp.asarray(ok)
        if self.mask is not None:  # only the iterations that take the branch
            ok = ok | jnp.logical_not(self.mask)
        if ok.ndim:  # a raised loop's iterations: the first that fails
            shape = np.broadcast_shapes(ok.shape, np.shape(a), np.shape(b))
            k = jnp.argmax(jnp.logical_not(jnp.broadcast_to(ok, shape)).ravel())
            a, b = (jnp.broadcast_to(x, shape).ravel()[k] for x in (a, b))
            ok = jnp.all(ok)
        first = (i == 0) & jnp.logical_not(ok)
        self.err = (jnp.where(first, eid, i), jnp.where(first, jnp.asarray(a, jnp.int64), ea),
                    jnp.where(first, jnp.asarray(b, jnp.int64), eb))

    # -- functions

    def run(self, name: str, args: list) -> list:
        return self.call(self.module[name], args)

    def call(self, func: Func, args: list) -> list:
        """Run ``func`` (inlined: an entry or a callee) on ``args``; while it runs, ``roots``
        are its arrays' alias roots (a callee's arguments count as arguments: writes the
        lowering cannot follow through them are refused)."""
        outer = self.roots
        roots = self._roots.get(func)
        if roots is None:
            roots = self._roots[func] = array_roots(func)
        self.roots = roots
        try:
            return self.block(func.body, dict(zip(func.args, args)))
        finally:
            self.roots = outer

    def block(self, block: Block, env: dict) -> list:
        for op in block.ops:
            if isinstance(op, (ops.Yield, ops.Condition, ops.Return)):
                return [env[v] for v in op.operands]
            out = self.op(op, [env[v] for v in op.operands], env)
            for r, v in zip(op.results, out):
                env[r] = v
        return []

    def op(self, op, args, env):
        rule = RULES.get(type(op))
        if rule is not None:
            return rule(self, op, args, env)
        exact = EXACT.get(type(op))
        if exact is None or op.regions:
            raise UnsupportedError(f"the XLA backend cannot run {op.name} (use the default "
                                   "backend)", op.loc)
        if all(self.known(a) for a in args):  # folded exactly as the interpreter does
            with np.errstate(all="ignore"):
                return exact(_NoFrame, op, args)
        fn = TRACED.get(type(op))
        if fn is None:
            raise UnsupportedError(f"the XLA backend cannot run {op.name} on traced values "
                                   "(use the default backend)", op.loc)
        t = op.results[0].type
        return (fn(self, op, [self.jnp.asarray(a) for a in args], t),)


class _Frame:
    """The interpreter's frame where its handlers need one (constants only)."""

    class interp:  # noqa: N801
        constants: dict = {}


_NoFrame = _Frame()


# ---------------------------------------------------------------------- rules


def _constant(lo, op, args, env):
    return (op.results[0].type.np_dtype.type(op.attrs["value"]),)


def _dim(lo, op, args, env):
    return (np.int64(args[0].shape[op.attrs["axis"]]),)


def _stride(lo, op, args, env):
    return (np.int64(args[0].strides[op.attrs["axis"]]),)


def _concrete(lo, op, values, what="array size"):
    out = []
    for v in values:
        if not lo.known(v):
            raise UnsupportedError(f"the XLA backend needs every {what} when the function is "
                                   "traced; this one depends on the data (pass it as an int "
                                   "argument, or use the default backend)", op.loc)
        out.append(int(v))
    return tuple(out)


def _alloc(lo, op, args, env):
    shape = _concrete(lo, op, args)
    if any(d < 0 for d in shape):
        raise UnsupportedError(f"negative dimensions {shape}", op.loc)
    return (lo.fresh(op.results[0].type, shape),)


def _array_const(lo, op, args, env):
    t = op.results[0].type
    data = np.array(op.attrs["data"], dtype=t.dtype.np_dtype)
    return (lo.fresh(t, data.shape, data, origin="const"),)


def _array_global(lo, op, args, env):
    return (lo.globals_[op.attrs["slot"]],)


def _load(lo, op, args, env):
    view, *idx = args
    if view.buf.data.shape[0] == 0:  # (only reached where a failed check is reported)
        return (lo.jnp.zeros((), view.buf.data.dtype),)
    return (view.buf.data[lo.index_of(view, idx)],)


def _store(lo, op, args, env):
    """``array.store`` (set) and ``array.atomic_add`` (add; duplicates of a raised loop's
    indices add up)."""
    v, view, *idx = args
    if view.buf.data.shape[0] == 0:  # (only reached where a failed check is reported)
        return ()
    at = view.buf.data.at[lo.index_of(view, idx)]
    v = lo.jnp.asarray(v, view.buf.data.dtype)
    view.buf.data = at.add(v) if isinstance(op, ops.AtomicAdd) else at.set(v)
    return ()


def _subview(lo, op, args, env):
    src = args[0]
    n = len(src.shape)
    offs = args[1:1 + n]
    rest = args[1 + n:]
    sizes = _concrete(lo, op, rest[0::2])
    steps = rest[1::2]
    offset = src.offset
    for o, d, s in zip(offs, src.shape, src.strides):
        # array.subview clamps its starts into [0, d] (interp.subview)
        o = lo.jnp.clip(o, 0, d) if not lo.known(o) else min(max(int(o), 0), d)
        offset = offset + o * s
    kept = [s for s, k in zip(src.strides, op.attrs["keep"]) if k]
    strides = []
    for s, st in zip(kept, steps):
        if not lo.known(st):
            raise UnsupportedError("the XLA backend needs slice steps known when the function "
                                   "is traced", op.loc)
        strides.append(s * int(st))
    return (View(src.buf, offset, sizes, tuple(strides)),)


def _broadcast(lo, op, args, env):
    src, *dims = args
    shape = _concrete(lo, op, dims)
    lead = len(shape) - len(src.shape)
    strides = [0] * lead + [0 if d == 1 and n != 1 else s for d, n, s in
                            zip(src.shape, shape[lead:], src.strides)]
    return (View(src.buf, src.offset, shape, tuple(strides)),)


def _transpose(lo, op, args, env):
    src = args[0]
    perm = op.attrs["perm"]
    return (View(src.buf, src.offset, tuple(src.shape[p] for p in perm),
                 tuple(src.strides[p] for p in perm)),)


def _reshape(lo, op, args, env):
    src, *dims = args
    shape = _concrete(lo, op, dims)
    # (the IR's rule: a C-contiguous operand; a dim of size 1 may have any stride)
    if any(n > 1 and st != cs for n, st, cs in zip(src.shape, src.strides,
                                                   c_strides(src.shape))):
        raise UnsupportedError("the XLA backend found a reshape of an array that is not "
                               "contiguous (use the default backend)", op.loc)
    return (View(src.buf, src.offset, shape, c_strides(shape)),)


def _relayout(lo, op, args, env):
    return (args[0],)


def _free(lo, op, args, env):
    return ()


def _index(lo, op, args, env):
    i, n = args
    jnp = lo.jnp
    if lo.known(i) and lo.known(n):
        j = i + n if op.attrs.get("wrap") and i < 0 else i
        if op.attrs.get("check") and not 0 <= j < n:
            lo.fail_if_not(False, "IndexError", "index {a} is out of bounds for size {b}",
                           op.loc, int(i), int(n))
        return (np.int64(j),)
    i, n = jnp.asarray(i, jnp.int64), jnp.asarray(n, jnp.int64)
    j = jnp.where(i < 0, i + n, i) if op.attrs.get("wrap") else i
    if op.attrs.get("check"):
        lo.fail_if_not((j >= 0) & (j < n), "IndexError", "index {a} is out of bounds for size "
                       "{b}", op.loc, i, n)
        j = jnp.clip(j, 0, jnp.maximum(n - 1, 0))
    return (j,)


def _assert(lo, op, args, env):
    ok, *payload = list(args) + [0, 0]
    lo.fail_if_not(ok, op.attrs["kind"], op.attrs.get("msg", ""), op.loc, payload[0],
                   payload[1])
    return ()


def _matmul(lo, op, args, env):
    a, b, out = args
    prod = lo.jnp.matmul(lo.read(a), lo.read(b))
    lo.write(out, prod, add=bool(op.attrs.get("acc")))
    return ()


def _call(lo, op, args, env):
    if lo.depth >= MAX_INLINE:
        raise UnsupportedError("the XLA backend inlines every call: this one recurses too "
                               "deeply (use the default backend)", op.loc)
    lo.depth += 1
    try:
        return lo.call(lo.module[str(op.attrs["callee"])], args)
    finally:
        lo.depth -= 1


def _select(lo, op, args, env):
    c, a, b = args
    if not isinstance(a, View):
        if lo.known(c) and lo.known(a) and lo.known(b):
            return (a if bool(c) else b,)
        t = op.results[0].type
        return (lo.jnp.where(c, lo.scalar(t, a), lo.scalar(t, b)),)
    if lo.known(c):
        return (a if bool(c) else b,)
    if a.buf is b.buf and a.shape == b.shape and a.strides == b.strides:
        return (View(a.buf, lo.jnp.where(c, a.offset, b.offset), a.shape, a.strides),)
    raise UnsupportedError("the XLA backend cannot choose between two arrays on a value known "
                           "only when the function runs (use the default backend)", op.loc)


def _thread_count(lo, op, args, env):
    return (np.int64(1),)


def _thread_slot(lo, op, args, env):
    return (np.int64(0),)


# -- control flow


def _state(lo, values):
    """What flows through a loop or branch: the values (arrays by contents), every buffer's
    data, the error state."""
    return ([v.data if isinstance(v, Buf) else v for v in values],
            [b.data for b in lo.bufs], lo.err)


def _carry_in(lo, t, v):
    """A value entering a loop's carry: arrays as a buffer of their own contents."""
    if isinstance(t, ArrayType):
        return lo.read(v) if v.shape else v.buf.data[v.offset].reshape(())
    return lo.scalar(t, v)


def _carry_view(lo, t, data, shape):
    """A carried array inside a loop: a buffer of its own (registered, so that loops and
    branches inside carry it too)."""
    return View(lo.new_buf(data.reshape(-1), "carry"), 0, tuple(shape), c_strides(shape))


def _check_carried(lo, op, values, written):
    """Refuse where passing a loop's carried arrays by value could be told apart from the
    program's own semantics: an array written through the carried value (``written``: per
    value) that may be an argument or a global (the caller would see the write), or a buffer
    that another name reads after the loop."""
    for v, w in zip(values, written):
        if not w or not isinstance(v.type, ArrayType):
            continue
        roots = lo.roots.get(v, {v})
        for r in roots:
            owner = r.owner
            if isinstance(owner, Block) and isinstance(owner.parent_op, Func) or \
                    isinstance(owner, ops.ArrayGlobal):
                raise UnsupportedError(
                    "the XLA backend passes the arrays a loop carries by value, and this loop "
                    "writes into one that may be an argument of the function: copy it first "
                    "(x = x.copy())", op.loc)
        for other, its in lo.roots.items():
            if other is v or not (its & roots) or _inside(op, other) or \
                    _derived(other, op.results):
                continue
            if any(_after(op, user) for user in _users(other)):
                raise UnsupportedError(
                    "the XLA backend passes the arrays a loop carries by value, and this loop "
                    "writes into one that another name reads after the loop: copy it where the "
                    "loop starts (x = x.copy())", op.loc)


def _inside(op, value) -> bool:
    """Whether ``value`` is defined inside ``op``'s regions."""
    owner = value.owner
    return _op_within(op, owner.parent_op if isinstance(owner, Block) else owner.parent_op)


def _op_within(op, o) -> bool:
    while o is not None:
        if o is op:
            return True
        o = o.parent_op
    return False


VIEWS = (ops.Subview, ops.Transpose, ops.Broadcast, ops.Reshape, ops.Relayout)


def _derived(value, results) -> bool:
    """Whether ``value`` is one of ``results`` or a view of one."""
    while True:
        if any(value is r for r in results):
            return True
        owner = value.owner
        if not isinstance(owner, VIEWS):
            return False
        value = owner.operands[0]


def _users(value):
    """The ops that use ``value`` (freeing a buffer is no use of its contents)."""
    return [u for u in (u if not isinstance(u, tuple) else u[0] for u in value.uses)
            if not isinstance(u, ops.ArrayFree)]


def _path(op) -> list:
    """Positions of ``op`` and its ancestors in their blocks, outermost first."""
    out = []
    while op is not None and not isinstance(op, Func):
        block = op.parent
        out.append((block, block.ops.index(op)))
        op = block.parent_op
    return list(reversed(out))


def _after(op, user) -> bool:
    """Whether ``user`` may run after ``op`` (later in a common block, or inside a loop around
    both)."""
    if user is op or _op_within(op, user.parent_op):
        return False
    a, b = _path(op), _path(user)
    for (ba, ia), (bb, ib) in zip(a, b):
        if ba is not bb:
            break
        if ia != ib:
            if ib > ia:
                return True
            # earlier in the block: after only if a loop around both runs it again
            return any(isinstance(blk.parent_op, (ops.For, ops.While)) for blk, _ in a[:-1])
    return False


def _for(lo, op, args, env):
    jnp, lax = lo.jnp, lo.lax
    lb, ub, step, *inits = args
    types = [r.type for r in op.results]
    if lo.known(step) and int(step) == 0:
        raise UnsupportedError("range() arg 3 must not be zero", op.loc)
    if lo.known(lb) and lo.known(ub) and lo.known(step):
        n = len(range(int(lb), int(ub), int(step)))
    else:
        lb_, ub_, st_ = (jnp.asarray(x, jnp.int64) for x in (lb, ub, step))
        n = jnp.maximum(0, jnp.where(st_ > 0, (ub_ - lb_ + st_ - 1) // st_,
                                     (lb_ - ub_ - st_ - 1) // (-st_)))
    plan = why_not(op, lo.raised, lambda v: bool(env[v]) if v in env and lo.known(env[v])
                   else None) if isinstance(n, int) else "its trip count depends on the data"
    checked = check(lo, op, plan, env, step, n, lb) if isinstance(plan, Plan) else plan
    if not isinstance(checked, str):
        lo.note(op, "raised to array operations")
        return run_raised(lo, op, plan, checked, env, lb, step, n) if n else list(inits)
    if isinstance(n, int) and n <= UNROLL_TRIPS and n * _size(lo, op) <= UNROLL_OPS:
        lo.note(op, f"unrolled ({n} trips: {checked})")
        vals = list(inits)
        for k in range(n):
            env2 = dict(env)
            env2[op.iv] = np.int64(int(lb) + k * int(step))
            env2.update(zip(op.carried, vals))
            vals = lo.block(op.body, env2)
        return vals
    lo.note(op, f"lax.fori_loop: {checked}")
    shapes = [v.shape if isinstance(t, ArrayType) else None for v, t in zip(inits, types)]
    outer = list(lo.bufs)
    written = [False] * len(types)

    def body(k, carry):
        vals, datas, err = carry
        for b, d in zip(outer, datas):
            b.data = d
        lo.bufs = list(outer)
        lo.err = err
        iv = lb + k * step if lo.known(lb) and lo.known(step) else \
            jnp.asarray(lb, jnp.int64) + k * jnp.asarray(step, jnp.int64)
        carried = [_carry_view(lo, t, v, s) if isinstance(t, ArrayType) else
                   inits[j] if isinstance(inits[j], Tape) else v
                   for j, (t, v, s) in enumerate(zip(types, vals, shapes))]
        before = [c.buf.data if isinstance(c, View) else None for c in carried]
        env2 = dict(env)
        env2[op.iv] = iv
        for a, c in zip(op.carried, carried):
            env2[a] = c
        out = lo.block(op.body, env2)
        for j, (c, b0) in enumerate(zip(carried, before)):
            if b0 is not None and c.buf.data is not b0:
                written[j] = True
        nxt = [_yield_value(lo, op, t, v, s) for t, v, s in zip(types, out, shapes)]
        return (nxt, [b.data for b in outer], lo.err)

    init = ([_carry_in(lo, t, v) for t, v in zip(types, inits)], [b.data for b in outer],
            lo.err)
    vals, datas, err = lax.fori_loop(0, n, body, init)
    _check_carried(lo, op, op.carried, written)
    for b, d in zip(outer, datas):
        b.data = d
    lo.bufs = outer
    lo.err = err
    return [inits[j] if isinstance(inits[j], Tape) else _result_view(lo, t, v, s)
            for j, (t, v, s) in enumerate(zip(types, vals, shapes))]


def _size(lo, op) -> int:
    """Ops in ``op``'s body, its inner loops' bodies as often as they run when known."""
    got = lo.sizes.get(op)
    if got is None:
        got = lo.sizes[op] = sum(1 for inner in op.body.ops for _ in _walk_op(inner))
    return got


def _walk_op(op):
    yield op
    for r in op.regions:
        for o in r.block.ops:
            yield from _walk_op(o)


def _yield_value(lo, op, t, v, shape):
    if not isinstance(t, ArrayType):
        return lo.scalar(t, v)
    if tuple(v.shape) != tuple(shape):
        raise UnsupportedError(f"the XLA backend needs the arrays a loop carries to keep their "
                               f"shape; this one goes from {shape} to {v.shape}", op.loc)
    return lo.read(v) if v.shape else v.buf.data[v.offset].reshape(())


def _result_view(lo, t, v, shape):
    if not isinstance(t, ArrayType):
        return v
    return _carry_view(lo, t, v, shape)


def _while(lo, op, args, env):
    lo.note(op, "lax.while_loop")
    lax, jnp = lo.lax, lo.jnp
    before, after = op.regions[0].block, op.regions[1].block
    btypes = [a.type for a in before.args]
    ftypes = [a.type for a in after.args]
    bshapes = [v.shape if isinstance(t, ArrayType) else None for v, t in zip(args, btypes)]
    outer = list(lo.bufs)
    written = [False] * len(btypes)
    written_after = [False] * len(ftypes)
    fshapes = [None] * len(ftypes)

    tapes = {}  # forwarded position -> the tape (its state is in buffers)

    def run_before(vals):
        carried = [_carry_view(lo, t, v, s) if isinstance(t, ArrayType) else
                   args[j] if isinstance(args[j], Tape) else v
                   for j, (t, v, s) in enumerate(zip(btypes, vals, bshapes))]
        env2 = dict(env)
        for a, c in zip(before.args, carried):
            env2[a] = c
        start = [c.buf.data if isinstance(c, View) else None for c in carried]
        cond, *fwd = lo.block(before, env2)
        for j, (c, d) in enumerate(zip(carried, start)):
            if d is not None and c.buf.data is not d:
                written[j] = True
        for j, f in enumerate(fwd):
            if isinstance(f, View):
                fshapes[j] = f.shape
            if isinstance(f, Tape):
                tapes[j] = f
        return jnp.asarray(cond, bool), [_yield_value(lo, op, t, f, fshapes[j]) if
                                         isinstance(t, ArrayType) else lo.scalar(t, f)
                                         for j, (t, f) in enumerate(zip(ftypes, fwd))]

    def restore(datas, err):
        for b, d in zip(outer, datas):
            b.data = d
        lo.bufs = list(outer)
        lo.err = err

    cond0, fwd0 = run_before([_carry_in(lo, t, v) for t, v in zip(btypes, args)])
    init = (cond0, fwd0, [b.data for b in outer], lo.err)

    def body(carry):
        _, fwd, datas, err = carry
        restore(datas, err)
        views = [_carry_view(lo, t, v, s) if isinstance(t, ArrayType) else tapes.get(j, v)
                 for j, (t, v, s) in enumerate(zip(ftypes, fwd, fshapes))]
        env2 = dict(env)
        for a, c in zip(after.args, views):
            env2[a] = c
        start = [c.buf.data if isinstance(c, View) else None for c in views]
        nxt = lo.block(after, env2)
        for j, (c, d) in enumerate(zip(views, start)):
            if d is not None and c.buf.data is not d:
                written_after[j] = True
        vals = [_yield_value(lo, op, t, v, s) for t, v, s in zip(btypes, nxt, bshapes)]
        c, f = run_before(vals)
        return (c, f, [b.data for b in outer], lo.err)

    _, fwd, datas, err = lax.while_loop(lambda c: c[0], body, init)
    _check_carried(lo, op, before.args, written)
    _check_carried(lo, op, after.args, written_after)
    restore(datas, err)
    lo.bufs = outer
    return [tapes[j] if j in tapes else _result_view(lo, t, v, s)
            for j, (t, v, s) in enumerate(zip(ftypes, fwd, fshapes))]


def _view_base(value):
    """The value ``value`` is a view of (following subviews, transposes, broadcasts, reshapes
    and relayouts), or ``value`` itself."""
    while isinstance(value.owner, VIEWS):
        value = value.owner.operands[0]
    return value


def _if(lo, op, args, env):
    """``scf.if`` on a traced condition: ``lax.cond``.  An array result that both branches
    take from arrays existing before the branch (``dst = u[1:] if v > 0 else u[:-1]``) stays a
    view of them (a write through it reaches them); one made inside a branch is passed by its
    contents, refused where a later write could tell."""
    cond = args[0]
    blocks = op.regions[0].block, op.regions[1].block
    if lo.known(cond):
        return lo.block(blocks[0] if bool(cond) else blocks[1], dict(env))
    types = [r.type for r in op.results]
    outer = list(lo.bufs)
    err0 = lo.err
    datas0 = [b.data for b in outer]
    shapes = [None] * len(types)
    # per array result: the arrays before the branch its two yields are views of, if both are
    refs = {}
    for j, t in enumerate(types):
        if isinstance(t, ArrayType):
            bases = [_view_base(b.terminator.operands[j]) for b in blocks]
            if all(not _inside(op, b) and b in env for b in bases):
                refs[j] = [env[b].buf for b in bases]
            else:
                _check_by_value(lo, op, op.results[j])
    views = {}

    def branch(k):
        def run(state):
            datas, err = state
            for b, d in zip(outer, datas):
                b.data = d
            lo.bufs = list(outer)
            lo.err = err
            out = lo.block(blocks[k], dict(env))
            vals = []
            for j, (t, v) in enumerate(zip(types, out)):
                if isinstance(v, Tape):
                    tapes[j] = v
                if j in refs:
                    seen = views.setdefault(j, (v.shape, v.strides))
                    if seen != (v.shape, v.strides) or v.buf is not refs[j][k]:
                        raise UnsupportedError(
                            "the XLA backend cannot choose between views of different shapes "
                            "or layouts here (use the default backend)", op.loc)
                    vals.append(lo.jnp.asarray(v.offset, lo.jnp.int64))
                elif isinstance(t, ArrayType):
                    if shapes[j] is None:
                        shapes[j] = v.shape
                    vals.append(_yield_value(lo, op, t, v, shapes[j]))
                else:
                    vals.append(lo.scalar(t, v))
            return vals, [b.data for b in outer], lo.err
        return run

    tapes = {}
    c = lo.jnp.asarray(cond, bool)
    vals, datas, err = lo.lax.cond(c, branch(0), branch(1), (datas0, err0))
    for b, d in zip(outer, datas):
        b.data = d
    lo.bufs = outer
    lo.err = err
    out = []
    for j, (t, v, s) in enumerate(zip(types, vals, shapes)):
        if j in tapes:
            out.append(tapes[j])
        elif j in refs:
            then_buf, else_buf = refs[j]
            buf = then_buf if then_buf is else_buf else _choice(lo, op, c, then_buf, else_buf)
            shape, strides = views[j]
            out.append(View(buf, v, shape, strides))
        else:
            out.append(_result_view(lo, t, v, s))
    return out


def _choice(lo, op, c, a, b):
    if a.data.shape != b.data.shape or a.data.dtype != b.data.dtype:
        raise UnsupportedError("the XLA backend can choose between two arrays on a value known "
                               "only when the function runs when their buffers have one size "
                               "(use the default backend)", op.loc)
    return ChoiceBuf(c, a, b)


def _check_by_value(lo, op, result):
    """Refuse passing ``result`` (an array a branch makes) by value where a later write into
    its buffers could tell: written through it, or through another name, after the branch."""
    roots = lo.roots.get(result, {result})
    func = op
    while func.parent_op is not None:
        func = func.parent_op
    for later in func.walk():
        if _op_within(op, later) or not _after(op, later):
            continue
        for w in written_buffers(later):
            if lo.roots.get(w, {w}) & roots:
                raise UnsupportedError(
                    "the XLA backend passes an array a branch makes by value, and the program "
                    "writes into it after the branch: copy it where it is written (y = y.copy()) "
                    "or use the default backend", op.loc)


RULES = {
    ops.Constant: _constant, ops.Dim: _dim, ops.Stride: _stride, ops.Alloc: _alloc,
    ops.ArrayConst: _array_const, ops.ArrayGlobal: _array_global, ops.Load: _load,
    ops.Store: _store, ops.AtomicAdd: _store, ops.Subview: _subview,
    ops.Broadcast: _broadcast, ops.Transpose: _transpose, ops.Reshape: _reshape,
    ops.Relayout: _relayout, ops.ArrayFree: _free, ops.Index: _index, ops.Assert: _assert,
    ops.Matmul: _matmul, ops.Call: _call, ops.For: _for, ops.Parallel: _for,
    ops.While: _while, ops.If: _if, ops.ThreadCount: _thread_count,
    ops.ThreadSlot: _thread_slot, ops.Select: _select,
}  # fmt: skip
RULES.update(TAPE_RULES)


# ---------------------------------------------------------------------- traced scalars


def _traced_table():
    """op class -> fn(lowering, op, jax operands, result type) for traced scalars."""

    def j(name):
        return lambda lo, op, a, t: getattr(lo.jnp, name)(*a).astype(t.np_dtype)

    def cmp(lo, op, a, t):
        x, y = a
        return {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y,
                "ge": x >= y}[op.attrs["pred"]]

    def cast(lo, op, a, t):
        x = a[0]
        if t.is_bool:
            return x != 0
        if t.is_int and x.dtype.kind == "f":  # truncate toward zero, NaN -> 0, saturating
            info = np.iinfo(t.np_dtype)
            x = lo.jnp.where(lo.jnp.isnan(x), 0, lo.jnp.trunc(x))
            x = lo.jnp.clip(x, info.min, info.max)
        return x.astype(t.np_dtype)

    def select(lo, op, a, t):
        return lo.jnp.where(a[0], a[1], a[2]).astype(t.np_dtype)

    def floordivi(lo, op, a, t):
        lo.fail_if_not(a[1] != 0, "ZeroDivisionError", "integer division or modulo by zero",
                       op.loc)
        return lo.jnp.floor_divide(a[0], lo.jnp.where(a[1] == 0, 1, a[1])).astype(t.np_dtype)

    def modi(lo, op, a, t):
        lo.fail_if_not(a[1] != 0, "ZeroDivisionError", "integer division or modulo by zero",
                       op.loc)
        return lo.jnp.mod(a[0], lo.jnp.where(a[1] == 0, 1, a[1])).astype(t.np_dtype)

    def powi(lo, op, a, t):
        return lo.jnp.power(a[0], lo.jnp.maximum(a[1], 0)).astype(t.np_dtype)

    def special(name):
        def fn(lo, op, a, t):
            import jax.scipy.special as sp  # lazy: an optional dependency
            return getattr(sp, name)(a[0]).astype(t.np_dtype)
        return fn

    table = {
        ops.AddF: j("add"), ops.SubF: j("subtract"), ops.MulF: j("multiply"),
        ops.DivF: j("true_divide"), ops.NegF: j("negative"), ops.ModF: j("mod"),
        ops.FloorDivF: j("floor_divide"), ops.MaximumF: j("maximum"),
        ops.MinimumF: j("minimum"), ops.AddI: j("add"), ops.SubI: j("subtract"),
        ops.MulI: j("multiply"), ops.NegI: j("negative"), ops.AbsI: j("abs"),
        ops.MaxI: j("maximum"), ops.MinI: j("minimum"), ops.FloorDivI: floordivi,
        ops.ModI: modi, ops.PowI: powi, ops.AndI: j("bitwise_and"), ops.OrI: j("bitwise_or"),
        ops.XorI: j("bitwise_xor"), ops.ShlI: j("left_shift"), ops.ShrI: j("right_shift"),
        ops.Not: j("logical_not"), ops.CmpF: cmp, ops.CmpI: cmp,
        ops.Select: select, ops.Cast: cast,
        ops.Sqrt: j("sqrt"), ops.Exp: j("exp"), ops.Log: j("log"), ops.Log1p: j("log1p"),
        ops.Expm1: j("expm1"), ops.Log10: j("log10"), ops.Log2: j("log2"), ops.Sin: j("sin"),
        ops.Cos: j("cos"), ops.Tan: j("tan"), ops.Asin: j("arcsin"), ops.Acos: j("arccos"),
        ops.Atan: j("arctan"), ops.Sinh: j("sinh"), ops.Cosh: j("cosh"), ops.Tanh: j("tanh"),
        ops.Asinh: j("arcsinh"), ops.Acosh: j("arccosh"), ops.Atanh: j("arctanh"),
        ops.AbsF: j("abs"), ops.Floor: j("floor"), ops.Ceil: j("ceil"), ops.Trunc: j("trunc"),
        ops.RoundEven: j("rint"), ops.Sign: j("sign"), ops.Pow: j("power"),
        ops.Hypot: j("hypot"), ops.Copysign: j("copysign"), ops.Fmod: j("fmod"),
        ops.Atan2: j("arctan2"), ops.IsNan: j("isnan"), ops.IsInf: j("isinf"),
        ops.IsFinite: j("isfinite"), ops.Erf: special("erf"), ops.Erfc: special("erfc"),
        ops.Lgamma: special("gammaln"), ops.Digamma: special("digamma"),
        ops.ComplexRe: j("real"), ops.ComplexIm: j("imag"), ops.ComplexAbs: j("abs"),
        ops.Conj: j("conj"),
    }  # fmt: skip
    return table


TRACED = _traced_table()
