"""IR types: scalars, strided arrays, and the function-level helpers to name them.

Every IR value has one of these types.  Types are immutable and compared by value.
Text forms: ``f64 f32 i64 i32 i16 i8 u64 u32 u16 u8 i1 c128 c64`` for scalars and
``array<f64,2,C>`` for a rank-2 C-contiguous array of float64 (layout ``A`` means arbitrary
element strides).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


class Type:
    """Base class of IR types."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class ScalarType(Type):
    """A machine scalar.  ``kind`` is ``f`` (float), ``i`` (int), ``b`` (bool) or ``c``;
    ``unsigned`` marks the unsigned ints (``u8`` ... ``u64``): the same ops as the signed ones,
    whose comparisons, divisions, shifts and conversions read the bits as unsigned."""

    kind: str
    bits: int
    unsigned: bool = False

    def __str__(self) -> str:
        return _SCALAR_NAMES[(self.kind, self.bits, self.unsigned)]

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
        return np.dtype(_NP_NAMES[(self.kind, self.bits, self.unsigned)])

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
I16 = ScalarType("i", 16)
I8 = ScalarType("i", 8)
U64 = ScalarType("i", 64, True)
U32 = ScalarType("i", 32, True)
U16 = ScalarType("i", 16, True)
U8 = ScalarType("i", 8, True)
I1 = ScalarType("b", 1)
C128 = ScalarType("c", 128)
C64 = ScalarType("c", 64)
INDEX = I64

_SCALAR_NAMES = {
    ("f", 64, False): "f64", ("f", 32, False): "f32", ("i", 64, False): "i64",
    ("i", 32, False): "i32", ("i", 16, False): "i16", ("i", 8, False): "i8",
    ("i", 64, True): "u64", ("i", 32, True): "u32", ("i", 16, True): "u16", ("i", 8, True): "u8",
    ("b", 1, False): "i1", ("c", 128, False): "c128", ("c", 64, False): "c64",
}
_NP_NAMES = {
    ("f", 64, False): "float64", ("f", 32, False): "float32", ("i", 64, False): "int64",
    ("i", 32, False): "int32", ("i", 16, False): "int16", ("i", 8, False): "int8",
    ("i", 64, True): "uint64", ("i", 32, True): "uint32", ("i", 16, True): "uint16",
    ("i", 8, True): "uint8", ("b", 1, False): "bool", ("c", 128, False): "complex128",
    ("c", 64, False): "complex64",
}
DTYPE_NAMES = tuple(_NP_NAMES.values())  # the NumPy dtypes zymase compiles for
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
