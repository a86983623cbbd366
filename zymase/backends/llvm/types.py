"""LLVM types of IR types.

An array value is the struct ``{ptr base, ptr data, [n x i64] shape, [n x i64] strides}``: ``base``
is the malloc'd block that owns the memory (null for memory zymase does not own), ``data`` points at
element ``[0, ..., 0]``, strides count elements.  Complex scalars are ``{double, double}``.
"""

from __future__ import annotations

import struct

from ...ir.types import TAPE, ArrayType, ScalarType, Type

SCALAR = {"f64": "double", "f32": "float", "i64": "i64", "i32": "i32", "i16": "i16", "i8": "i8",
          "u64": "i64", "u32": "i32", "u16": "i16", "u8": "i8", "i1": "i1",
          "c128": "{double, double}", "c64": "{float, float}"}  # (LLVM ints have no sign)
# where each field of an array struct lives
BASE, DATA, SHAPE, STRIDES = 0, 1, 2, 3
# a NumPy array object (``PyArrayObject``, whose layout NumPy keeps stable): where its data
# pointer, shape and byte-strides pointers are
PYARRAY_DATA, PYARRAY_DIMS, PYARRAY_STRIDES = 16, 32, 40
# the call context (``cpu/abi.py: Context``): error id and payloads, arena, and at CTX_GLOBALS
# the table of array objects ``array.global`` reads
CTX_GLOBALS, CTX_BYTES = 48, 56


def ltype(t: Type) -> str:
    if isinstance(t, ScalarType):
        return SCALAR[str(t)]
    if isinstance(t, ArrayType):
        return array_struct(t.ndim)
    if t == TAPE:  # the address of its {buf, pos, cap} (tape.py)
        return "ptr"
    raise TypeError(f"no LLVM type for {t}")


def array_struct(ndim: int) -> str:
    return f"{{ptr, ptr, [{ndim} x i64], [{ndim} x i64]}}"


def elem_type(t: ArrayType) -> str:
    return SCALAR[str(t.dtype)]


def float_literal(x: float, bits: int = 64) -> str:
    """An exact LLVM literal for a float (hex form; float32 values widened as LLVM requires)."""
    if bits == 32:
        x = struct.unpack("<f", struct.pack("<f", x))[0]
    return f"0x{struct.unpack('<Q', struct.pack('<d', x))[0]:016X}"


def literal(value, t: ScalarType) -> str:
    if t.is_float:
        return float_literal(float(value), t.bits)
    if t.is_bool:
        return "true" if value else "false"
    if t.is_int:  # the two's-complement value of the bits (u64 2**64 - 1 is -1)
        v = int(value) & ((1 << t.bits) - 1)
        return str(v - (1 << t.bits) if v >> (t.bits - 1) else v)
    c = complex(value)
    ft = SCALAR[str(t.real_type)]
    return (f"{{{ft} {float_literal(c.real, t.bits // 2)}, "
            f"{ft} {float_literal(c.imag, t.bits // 2)}}}")
