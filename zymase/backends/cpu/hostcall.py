"""``@zy.host_call(descriptor, table)``, the function compiled code calls for ``host.call``
(``backends/llvm/host.py``): it reads the operands from their stack slots as NumPy values
(arrays as views of the program's memory, which the function writes into), runs the function of
``ir/host.py`` and returns 0, or 1 when it raised (``EntryPoint.error`` then raises that
exception at the op's line).  A ctypes callback: it takes the GIL, so it may be called from any
thread of a parallel loop."""

from __future__ import annotations

import ctypes
import json

import numpy as np

from ...ir import host
from ...ir.types import ArrayType, ScalarType, parse_type

_C_SCALARS = {"f64": ctypes.c_double, "f32": ctypes.c_float, "i64": ctypes.c_int64,
              "i32": ctypes.c_int32, "i16": ctypes.c_int16, "i8": ctypes.c_int8,
              "u64": ctypes.c_uint64, "u32": ctypes.c_uint32, "u16": ctypes.c_uint16,
              "u8": ctypes.c_uint8, "i1": ctypes.c_bool}
_DESCRIPTORS: dict[bytes, tuple] = {}  # (keyed by the text: a freed module's address may be
# reused by another module's descriptor)


class _View:
    """Exposes memory to NumPy (``__array_interface__``) for the length of one call."""

    __slots__ = ("__array_interface__",)


def _array(address: int, t: ArrayType) -> np.ndarray:
    """A NumPy view of the array struct at ``address`` ({base, data, shape[n], strides[n]},
    strides in elements)."""
    n = t.ndim
    words = (ctypes.c_int64 * (2 + 2 * n)).from_address(address)
    data = words[1] & 0xFFFFFFFFFFFFFFFF
    shape = tuple(words[2:2 + n])
    dtype = t.dtype.np_dtype
    if any(d == 0 for d in shape) or not data:
        return np.empty(shape, dtype)
    v = _View()
    v.__array_interface__ = {"data": (data, False), "shape": shape, "version": 3,
                             "strides": tuple(s * dtype.itemsize for s in words[2 + n:]),
                             "typestr": dtype.str}
    return np.asarray(v)


def _scalar(address: int, t: ScalarType):
    if t.is_complex:
        part = ctypes.c_double if t.bits == 128 else ctypes.c_float
        re, im = (part * 2).from_address(address)
        return t.np_dtype.type(complex(re, im))
    return t.np_dtype.type(_C_SCALARS[str(t)].from_address(address).value)


def _descriptor(address: int) -> tuple:
    text = ctypes.string_at(address)
    d = _DESCRIPTORS.get(text)
    if d is None:
        spec = json.loads(text.decode())
        d = _DESCRIPTORS[text] = (spec["fn"], spec["kw"], [parse_type(t) for t in
                                                            spec["types"]])
    return d


@ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p)
def _host_call(desc, table):
    try:
        fn, kw, types = _descriptor(desc)
        slots = (ctypes.c_void_p * max(1, len(types))).from_address(table)
        values = [_array(slots[k], t) if isinstance(t, ArrayType) else _scalar(slots[k], t)
                  for k, t in enumerate(types)]
    except Exception as e:  # noqa: BLE001 (reported as the program's error)
        host._PENDING.error = e
        return 1
    return 0 if host.run(fn, kw, values) else 1


def symbols() -> dict[str, int]:
    return {"zy.host_call": ctypes.cast(_host_call, ctypes.c_void_p).value}
