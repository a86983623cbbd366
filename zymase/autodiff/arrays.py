"""Loop nests over shadow buffers used by the transforms: accumulate one array into another,
zero a buffer, add an outer product, copy (snapshots)."""

from __future__ import annotations

from ..ir.builder import Builder
from ..ir.core import Block, Region, Value
from ..ir.types import I64


def dims(b: Builder, a: Value) -> list[Value]:
    return [b.op("array.dim", a, axis=k) for k in range(a.type.ndim)]


def nest(b: Builder, shape: list[Value], body) -> None:
    """Nested ``scf.for`` over ``shape``; ``body(indices)`` emits the innermost ops."""
    def level(k, idx):
        if k == len(shape):
            body(idx)
            return
        blk = Block([I64])
        with b.at(blk):
            level(k + 1, idx + [blk.args[0]])
            b.yield_()
        b.create("scf.for", [b.i64(0), shape[k], b.i64(1)], [], regions=[Region([blk])])
    level(0, [])


def add_into(b: Builder, dst: Value, src: Value) -> None:
    """``dst += src`` (same shape)."""
    def body(idx):
        s = b.op("arith.addf", b.op("array.load", dst, *idx), b.op("array.load", src, *idx),
                 nsz=True)
        b.create("array.store", [s, dst, *idx], [])
    nest(b, dims(b, dst), body)


def fill_zero(b: Builder, dst: Value) -> None:
    zero = b.const(0, dst.type.dtype)
    nest(b, dims(b, dst), lambda idx: b.create("array.store", [zero, dst, *idx], []))


def outer_add(b: Builder, dst: Value, x: Value, y: Value) -> None:
    """``dst[i, j] += x[i] * y[j]``."""
    def body(idx):
        i, j = idx
        p = b.op("arith.mulf", b.op("array.load", x, i), b.op("array.load", y, j))
        s = b.op("arith.addf", b.op("array.load", dst, i, j), p, nsz=True)
        b.create("array.store", [s, dst, i, j], [])
    nest(b, dims(b, dst), body)


def copy(b: Builder, src: Value) -> Value:
    """A fresh C-contiguous copy of ``src``."""
    shape = dims(b, src)
    out = b.create("array.alloc", shape, [src.type.with_layout("C")], {"init": "none"}).result
    nest(b, shape, lambda idx: b.create("array.store", [b.op("array.load", src, *idx), out, *idx],
                                        []))
    return out
