"""IR types: scalars, strided arrays, and the function-level helpers to name them.

Every IR value has one of these types.  Types are immutable and compared by value.
Text forms: ``f64 f32 i64 i32 i1 c128 c64`` for scalars and ``array<f64,2,C>`` for a
rank-2 C-contiguous array of float64 (layout ``A`` means arbitrary element strides).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


class Type:
    """Base class of IR types."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class ScalarType(Type):
    """A machine scalar.  ``kind`` is ``f`` (float), ``i`` (signed int), ``b`` (bool) or ``c``."""

    kind: str
    bits: int

    def __str__(self) -> str:
        return _SCALAR_NAMES[(self.kind, self.bits)]

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_int(self) -> bool:
        return self.kind == "i"

    @property
    def is_bool(self) -> bool:
        return self.kind == "b"

    @property
    def is_complex(self) -> bool:
        return self.kind == "c"

    @property
    def is_inexact(self) -> bool:
        return self.kind in "fc"

    @property
    def np_dtype(self) -> np.dtype:
        return np.dtype(_NP_NAMES[(self.kind, self.bits)])

    @property
    def nbytes(self) -> int:
        return max(self.bits // 8, 1)

    @property
    def real_type(self) -> ScalarType:
        """The float type of a complex type's parts (the type itself otherwise)."""
        return ScalarType("f", self.bits // 2) if self.kind == "c" else self


@dataclass(frozen=True, slots=True)
class ArrayType(Type):
    """A strided view of a buffer: element type, rank, layout (``C`` contiguous or ``A`` any)."""

    dtype: ScalarType
    ndim: int
    layout: str = "A"

    def __str__(self) -> str:
        return f"array<{self.dtype},{self.ndim},{self.layout}>"

    def with_layout(self, layout: str) -> ArrayType:
        return ArrayType(self.dtype, self.ndim, layout)


class TapeType(Type):
    """The reverse-mode tape: a stack of 8-byte slots (see ``ops/tape.py``)."""

    __slots__ = ()

    def __str__(self) -> str:
        return "tape"

    def __eq__(self, other) -> bool:
        return isinstance(other, TapeType)

    def __hash__(self) -> int:
        return hash("tape")


TAPE = TapeType()
F64 = ScalarType("f", 64)
F32 = ScalarType("f", 32)
I64 = ScalarType("i", 64)
I32 = ScalarType("i", 32)
I1 = ScalarType("b", 1)
C128 = ScalarType("c", 128)
C64 = ScalarType("c", 64)
INDEX = I64

_SCALAR_NAMES = {
    ("f", 64): "f64", ("f", 32): "f32", ("i", 64): "i64", ("i", 32): "i32",
    ("b", 1): "i1", ("c", 128): "c128", ("c", 64): "c64",
}
_NP_NAMES = {
    ("f", 64): "float64", ("f", 32): "float32", ("i", 64): "int64", ("i", 32): "int32",
    ("b", 1): "bool", ("c", 128): "complex128", ("c", 64): "complex64",
}
SCALARS = {name: ScalarType(*key) for key, name in _SCALAR_NAMES.items()}
_BY_NP = {np.dtype(v): ScalarType(*k) for k, v in _NP_NAMES.items()}


def scalar_from_dtype(dtype) -> ScalarType | None:
    """The scalar type of a NumPy dtype, or None when zymase does not support it."""
    return _BY_NP.get(np.dtype(dtype))


def parse_type(text: str) -> Type:
    """Parse the text form of a type (inverse of ``str``)."""
    text = text.strip()
    if text == "tape":
        return TAPE
    if text in SCALARS:
        return SCALARS[text]
    if text.startswith("array<") and text.endswith(">"):
        dt, nd, layout = (p.strip() for p in text[6:-1].split(","))
        return ArrayType(SCALARS[dt], int(nd), layout)
    raise ValueError(f"unknown type {text!r}")


def promote(a: ScalarType, b: ScalarType) -> ScalarType:
    """NumPy's promotion of two strong scalar types (bool < int < float < complex)."""
    return scalar_from_dtype(np.promote_types(a.np_dtype, b.np_dtype))
