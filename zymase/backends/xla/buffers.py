"""The XLA lowering's arrays: buffers (flat JAX arrays, replaced at each write) and strided
views of them."""

from __future__ import annotations


class Buf:
    """A buffer: its contents (a flat JAX array) and where it came from."""

    __slots__ = ("data", "origin")

    def __init__(self, data, origin):
        self.data = data
        self.origin = origin  # "arg", "global", "const", "alloc", "carry"


class View:
    """An array value: ``shape`` elements of ``buf`` at ``offset + sum(i_k * strides_k)``."""

    __slots__ = ("buf", "offset", "shape", "strides")

    def __init__(self, buf: Buf, offset, shape: tuple, strides: tuple):
        self.buf, self.offset, self.shape, self.strides = buf, offset, shape, strides


def c_strides(shape) -> tuple:
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return tuple(reversed(out))


class ChoiceBuf:
    """One of two buffers, chosen by a traced condition: reads see the chosen one's contents,
    writes go to the chosen one only."""

    __slots__ = ("cond", "a", "b", "origin")

    def __init__(self, cond, a, b):
        self.cond, self.a, self.b, self.origin = cond, a, b, "choice"

    @property
    def data(self):
        import jax.numpy as jnp  # lazy: an optional dependency (loaded by now)
        return jnp.where(self.cond, self.a.data, self.b.data)

    @data.setter
    def data(self, new):
        import jax.numpy as jnp  # lazy: an optional dependency (loaded by now)
        self.a.data = jnp.where(self.cond, new, self.a.data)
        self.b.data = jnp.where(self.cond, self.b.data, new)
