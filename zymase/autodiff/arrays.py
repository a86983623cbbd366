"""Loop nests over shadow buffers used by the transforms: accumulate one array into another,
zero a buffer, add an outer product, copy (snapshots), conjugate."""

from __future__ import annotations

from ..ir.builder import Builder
from ..ir.core import Value
from ..ir.ops import AddF, Alloc, Conj, Dim, Load, MulF, Store


def dims(b: Builder, a: Value) -> list[Value]:
    return [b.op(Dim, a, axis=k) for k in range(a.type.ndim)]


def nest(b: Builder, shape: list[Value], body) -> None:
    """Nested ``scf.for`` over ``shape``; ``body(indices)`` emits the innermost ops."""
    b.nest(shape, body)


def add_into(b: Builder, dst: Value, src: Value) -> None:
    """``dst += src`` (same shape)."""
    def body(idx):
        s = b.op(AddF, b.op(Load, dst, *idx), b.op(Load, src, *idx), nsz=True)
        b.create(Store, [s, dst, *idx], [])
    nest(b, dims(b, dst), body)


def fill_zero(b: Builder, dst: Value) -> None:
    zero = b.const(0, dst.type.dtype)
    nest(b, dims(b, dst), lambda idx: b.create(Store, [zero, dst, *idx], []))


def outer_add(b: Builder, dst: Value, x: Value, y: Value) -> None:
    """``dst[i, j] += x[i] * y[j]``."""
    def body(idx):
        i, j = idx
        p = b.op(MulF, b.op(Load, x, i), b.op(Load, y, j))
        s = b.op(AddF, b.op(Load, dst, i, j), p, nsz=True)
        b.create(Store, [s, dst, i, j], [])
    nest(b, dims(b, dst), body)


def copy(b: Builder, src: Value, conj: bool = False) -> Value:
    """A fresh C-contiguous copy of ``src`` (its complex conjugate with ``conj``)."""
    shape = dims(b, src)
    out = b.create(Alloc, shape, [src.type.with_layout("C")], {"init": "none"}).result

    def body(idx):
        v = b.op(Load, src, *idx)
        b.create(Store, [b.op(Conj, v) if conj else v, out, *idx], [])
    nest(b, shape, body)
    return out
