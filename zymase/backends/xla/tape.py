"""Reverse mode's tape in the XLA lowering: a buffer of int64 slots (the bit patterns of the
values pushed) and a position, threaded through control flow like every buffer."""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedError
from ...ir import ops
from ...ir.types import ArrayType


class Tape:
    """Reverse mode's stack: ``slots`` (int64 bit patterns of the values pushed, a buffer of
    ``Lowering.capacity`` slots) and ``pos`` (a one-slot buffer), both threaded through
    control flow like every buffer; pushed arrays' shapes are known when tracing and kept in
    ``refs`` (pops meet pushes in reverse order).  A push past the capacity is dropped and
    raises ``Lowering.need``: the call then runs again with room for everything."""

    __slots__ = ("slots", "pos", "refs")

    def __init__(self, lo):
        jnp = lo.jnp
        self.slots = lo.new_buf(jnp.zeros(lo.capacity, jnp.int64), "tape")
        self.pos = lo.new_buf(jnp.zeros(1, jnp.int64), "tape")
        self.refs: list = []

    def at(self):
        return self.pos.data[0]

    def move(self, lo, by):
        p = self.pos.data[0] + by
        self.pos.data = self.pos.data.at[0].set(p)
        lo.need.data = lo.need.data.at[0].max(p)
        return p


def bits(lo, t, v) -> list:
    """The int64 slots a scalar of type ``t`` takes on the tape."""
    jnp, lax = lo.jnp, lo.lax
    v = jnp.asarray(v)
    if t.is_complex:
        return bits(lo, t.real_type, jnp.real(v)) + bits(lo, t.real_type, jnp.imag(v))
    if t.is_float:
        return [lax.bitcast_convert_type(v.astype(jnp.float64), jnp.int64)]
    return [v.astype(jnp.int64)]


def unbits(lo, t, slots):
    jnp, lax = lo.jnp, lo.lax
    if t.is_complex:
        re = unbits(lo, t.real_type, slots[:1])
        im = unbits(lo, t.real_type, slots[1:])
        return (re + 1j * im).astype(t.np_dtype)
    if t.is_float:
        return lax.bitcast_convert_type(slots[0], jnp.float64).astype(t.np_dtype)
    if t.is_bool:
        return slots[0] != 0
    return slots[0].astype(t.np_dtype)


def width(t) -> int:
    return 2 if t.is_complex else 1


def put(lo, tape, values):
    """Push int64 ``values`` (a flat array) at the tape's position: one in-place slice write.
    Past the end, the write lands clamped (or not at all) and the position still moves: the
    run is then redone with room for everything (``Lowering.need``), so nothing it computed
    is kept."""
    n = values.shape[0]
    if n <= lo.capacity:
        tape.slots.data = lo.lax.dynamic_update_slice(tape.slots.data, values, (tape.at(),))
    tape.move(lo, n)


def take(lo, tape, start, n):
    """``n`` slots from ``start`` (clamped into the tape, as in ``put``)."""
    if n > lo.capacity:
        return lo.jnp.zeros(n, lo.jnp.int64)
    return lo.lax.dynamic_slice(tape.slots.data, (lo.jnp.asarray(start, lo.jnp.int64),), (n,))


def _tape_new(lo, op, args, env):
    return (Tape(lo),)


def _tape_nothing(lo, op, args, env):
    return ()


MIXED = object()


def _tape_push(lo, op, args, env):
    tape, v = args
    put(lo, tape, lo.jnp.stack(bits(lo, op.operands[1].type, v)))
    record_pair(lo, op, v)
    return ()


def record_pair(lo, push, v):
    """A value known when tracing (a size, a bound) is known where it is popped too, when
    every push of its pair pushed it (a push traced inside a loop is the same in every
    trip)."""
    pair = push.attrs.get("pair")
    if pair is not None:
        known = v if lo.known(v) else MIXED
        seen = lo.pairs.get(pair, known)
        lo.pairs[pair] = known if (seen is not MIXED and known is not MIXED and
                                   seen == known) else MIXED


def _tape_pop(lo, op, args, env):
    (tape,) = args
    t = op.results[0].type
    start = tape.move(lo, -width(t))
    known = lo.pairs.get(op.attrs.get("pair"), MIXED)
    if known is not MIXED:
        return (t.np_dtype.type(known),)
    return (unbits(lo, t, take(lo, tape, start, width(t))),)


def _tape_mark(lo, op, args, env):
    return (args[0].at(),)


def _array_slots(lo, view, t):
    vals = lo.read(view).reshape(-1)
    dt = t.dtype
    if dt.is_complex:
        parts = [lo.jnp.real(vals), lo.jnp.imag(vals)]
        vals = lo.jnp.stack(parts, axis=-1).reshape(-1)
        return lo.lax.bitcast_convert_type(vals.astype(lo.jnp.float64), lo.jnp.int64)
    if dt.is_float:
        return lo.lax.bitcast_convert_type(vals.astype(lo.jnp.float64), lo.jnp.int64)
    return vals.astype(lo.jnp.int64)


def _slots_array(lo, slots, t: ArrayType, shape):
    dt = t.dtype
    if dt.is_complex:
        f = lo.lax.bitcast_convert_type(slots, lo.jnp.float64).reshape(-1, 2)
        vals = (f[:, 0] + 1j * f[:, 1]).astype(dt.np_dtype)
    elif dt.is_float:
        vals = lo.lax.bitcast_convert_type(slots, lo.jnp.float64).astype(dt.np_dtype)
    elif dt.is_bool:
        vals = slots != 0
    else:
        vals = slots.astype(dt.np_dtype)
    return lo.fresh(t, shape, vals.reshape(shape) if shape else vals)


def _tape_push_array(lo, op, args, env):
    tape, view = args
    if view.shape and int(np.prod(view.shape)):
        put(lo, tape, _array_slots(lo, view, op.operands[1].type))
    return ()


def _tape_read(lo, op, args, env):
    """The value at slot ``p`` (a raised loop: at each of the slots ``p``)."""
    tape, p = args
    t = op.results[0].type
    jnp = lo.jnp
    p = jnp.asarray(p, jnp.int64)
    slots = [tape.slots.data[jnp.clip(p + k, 0, lo.capacity - 1)] for k in range(width(t))]
    return (unbits(lo, t, slots),)


def _tape_drop(lo, op, args, env):
    tape, n = args
    tape.move(lo, -lo.jnp.asarray(n, lo.jnp.int64))
    return ()


def _tape_push_ref(lo, op, args, env):
    """An array kept by reference: nothing writes it before its pop (reverse mode's rule), so
    its contents on the tape are the same thing."""
    tape, view = args
    t = op.operands[1].type
    size = int(np.prod(view.shape, dtype=np.int64)) * width(t.dtype)
    if size:
        put(lo, tape, _array_slots(lo, view, t))
    tape.refs.append(tuple(view.shape))
    return ()


def _tape_pop_ref(lo, op, args, env):
    (tape,) = args
    t = op.results[0].type
    shape = tape.refs.pop()
    size = int(np.prod(shape, dtype=np.int64)) * width(t.dtype)
    if not size:
        return (lo.fresh(t, shape),)
    start = tape.move(lo, -size)
    return (_slots_array(lo, take(lo, tape, start, size), t, shape),)


def _tape_refused(lo, op, args, env):
    raise UnsupportedError("the XLA backend cannot hand a tape from one entry to another "
                           "(zymase.vjp's split form) or keep per-iteration tapes", op.loc)


TAPE_RULES = {
    ops.TapeNew: _tape_new, ops.TapeFree: _tape_nothing, ops.TapeReserve: _tape_nothing,
    ops.TapePush: _tape_push, ops.TapePop: _tape_pop, ops.TapeMark: _tape_mark,
    ops.TapePushArray: _tape_push_array, ops.TapeRead: _tape_read, ops.TapeDrop: _tape_drop,
    ops.TapePushRef: _tape_push_ref, ops.TapePopRef: _tape_pop_ref,
    ops.TapeExport: _tape_refused, ops.TapeAdopt: _tape_refused,
    ops.TapeSetNew: _tape_refused, ops.TapeChunk: _tape_refused, ops.TapeClose: _tape_refused,
    ops.TapeAt: _tape_refused, ops.TapeSetFree: _tape_refused,
}  # fmt: skip
