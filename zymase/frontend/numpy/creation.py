"""Making arrays: ``np.empty``/``zeros``/``ones``/``full`` (and ``*_like``), ``np.array``/
``asarray``/``ascontiguousarray``/``copy`` with NumPy 2's parameters (``copy=False`` and
``asarray`` hand back the array itself when no conversion is needed), NumPy scalar constructors
(``np.float64(x)``), and the methods ``copy``, ``astype`` and ``fill``."""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedError, ZymaseTypeError
from ...ir.ops import Assert, CmpI, ComplexCreate
from ...ir.types import C64, C128, F32, F64, I1, I8, I16, I32, I64, U8, U16, U32, U64, ScalarType
from ..emit import alloc, finite_to_int, nest, store
from ..typing import Array, EmptyList, ListVal, PyObj, Scalar, Tup
from .arrays import (
    array_from_sequence,
    assign_into,
    copy_array,
    dtype_arg,
    elementwise,
    list_to_array,
    map_elements,
    operand,
    sdtype,
    shape_arg,
)
from .copies import protect_copy
from .params import REQUIRED, bind, is_none, static
from .registry import method, register_all

# ---------------------------------------------------------------------- filled arrays


def _checked_dims(lw, dims):
    for d in dims:
        ok = lw.b.op(CmpI, d, lw.b.i64(0), pred="ge")
        lw.b.create(Assert, [ok], [], {"kind": "ValueError",
                                            "msg": "negative dimensions are not allowed"})
    return dims


def _creator(fill):
    def h(lw, args, kwargs, node):
        if not args:
            raise lw.err(ZymaseTypeError, "missing the shape argument", node)
        dims = _checked_dims(lw, shape_arg(lw, args[0], node))
        value = args[1] if fill == "full" else None
        dt_node = kwargs.get("dtype", args[2] if fill == "full" and len(args) > 2 else
                             args[1] if fill != "full" and len(args) > 1 else None)
        default = F64 if fill != "full" else sdtype(value).type
        return _make(lw, dims, dtype_arg(lw, dt_node, default, node), fill, value)
    return h


def _like(fill):
    def h(lw, args, kwargs, node):
        proto = args[0]
        if not isinstance(proto, Array):
            raise lw.err(ZymaseTypeError, f"expected an array, got {lw.describe(proto)}", node)
        value = args[1] if fill == "full" else None
        dt = dtype_arg(lw, kwargs.get("dtype"), proto.type.dtype, node)
        return _make(lw, lw.dims(proto), dt, fill, value)
    return h


def _make(lw, dims, dt, fill, value):
    if fill == "zeros":
        return alloc(lw, dt, dims, "zero")
    out = alloc(lw, dt, dims)
    if fill == "empty":
        return out
    v = Scalar(lw.b.const(1, dt), False) if fill == "ones" else value
    nest(lw, dims, lambda idx, acc: store(lw, lw.b.cast(v.value, dt), out, idx), parallel=True)
    return out


for _fill in ("empty", "zeros", "ones", "full"):
    register_all({getattr(np, _fill): _creator(_fill), getattr(np, _fill + "_like"): _like(_fill)})


# ---------------------------------------------------------------------- np.array and friends


_UNSET = object()  # copy= not given


# positional parameters, then keyword-only ones (NumPy 2's signatures)
_MAKERS = {np.array: (("object", "dtype"), ("copy", "order")),
           np.asarray: (("a", "dtype", "order"), ("copy",)),
           np.ascontiguousarray: (("a", "dtype"), ()),
           np.copy: (("a", "order"), ())}


def _array_maker(fn, default_copy):
    """``np.array`` / ``asarray`` / ``ascontiguousarray`` / ``copy``: NumPy's parameters
    (``_MAKERS``); ``copy=False`` and
    ``asarray`` return the array itself when no conversion is needed, as NumPy does."""
    name = f"np.{fn.__name__}"

    def h(lw, args, kwargs, node):
        positional, keyword = _MAKERS[fn]
        if len(args) > len(positional):
            raise lw.err(ZymaseTypeError, f"{name}() takes at most {len(positional)} positional "
                         f"arguments ({len(args)} given)", node)
        params = [(positional[0], REQUIRED)] + [(k, _UNSET if k == "copy" else None)
                                                 for k in positional[1:] + keyword]
        p = bind(lw, name, args, kwargs, node, params,
                 {"subok": False, "ndmin": 0, "like": None, "device": None})
        p = {"dtype": None, "order": None, **p, "object": p[positional[0]]}
        if p.get("copy", _UNSET) is _UNSET:
            p["copy"] = default_copy
        order = None if is_none(p["order"]) else static(lw, p["order"])
        if order not in (None, "C", "K", "A"):
            raise lw.err(UnsupportedError, f"{name}(order={order!r}) is not supported (arrays "
                         "made in compiled code are C-ordered)", node)
        copy = p["copy"] if p["copy"] in (True, None) else static(lw, p["copy"])
        if copy not in (True, False, None):
            raise lw.err(UnsupportedError, f"{name}(copy=...) must be True, False or None, "
                         "known at compile time", node)
        v = p["object"]
        dtype = None if is_none(p["dtype"]) else dtype_arg(lw, p["dtype"], None, node)
        if isinstance(v, EmptyList):  # np.array([]): float64 unless told
            return alloc(lw, dtype or F64, [lw.b.i64(0)])
        if isinstance(v, (Tup, ListVal)) and copy is False:
            raise lw.err(UnsupportedError, f"{name}(copy=False) "
                         "of a list needs a copy (NumPy raises ValueError)", node)
        if isinstance(v, Tup):
            return array_from_sequence(lw, v, node, dtype)
        if isinstance(v, ListVal):
            out = list_to_array(lw, v)
            return out if dtype in (None, out.type.dtype) else \
                map_elements(lw, [out], lambda x: x, dtype, node)
        if isinstance(v, Scalar):
            raise lw.err(UnsupportedError, "0-d arrays are not supported; use the scalar", node)
        if not isinstance(v, Array):
            raise lw.err(ZymaseTypeError, f"cannot make an array from {lw.describe(v)}", node)
        dt = dtype or v.type.dtype
        contiguous = fn is not np.ascontiguousarray or v.type.layout == "C"
        if copy is not True and dt == v.type.dtype and contiguous:
            return v  # NumPy hands back the same array (writes through it reach the original)
        if copy is False:
            raise lw.err(UnsupportedError, f"{name}(copy=False) of an array that needs "
                         "converting (NumPy raises ValueError)", node)
        block, start = lw.b.block, len(lw.b.block.ops)
        out = map_elements(lw, [v], lambda x: x, dt, node)
        if copy is None and dt == v.type.dtype:  # NumPy views it when it is contiguous after all
            protect_copy(block, start, out, "contiguous")
        return out

    return h


for _fn, _copy_default in ((np.array, True), (np.asarray, None),
                          (np.ascontiguousarray, None), (np.copy, True)):
    register_all({_fn: _array_maker(_fn, _copy_default)})


@method("copy")
def _m_copy(lw, a, args, kwargs, node):
    return copy_array(lw, a)


@method("astype")
def _m_astype(lw, a, args, kwargs, node):
    dt = dtype_arg(lw, args[0] if args else kwargs.get("dtype"), a.type.dtype, node)
    return map_elements(lw, [a], lambda x: x, dt, node)


@method("fill")
def _m_fill(lw, a, args, kwargs, node):
    assign_into(lw, a, args[0], node)
    return PyObj(None)


# ---------------------------------------------------------------------- scalar constructors


def _scalar_ctor(t: ScalarType, fname):
    """``np.float64(x)`` and friends: a strong scalar of type ``t`` (an array: a cast copy)."""

    def h(lw, args, kwargs, node):
        if kwargs or len(args) > (2 if t.is_complex else 1):
            raise lw.err(ZymaseTypeError, f"{fname}() takes one value", node)
        if not args:
            return Scalar(lw.b.const(0, t), False)
        if len(args) == 2:
            re, im = (_convert(lw, operand(lw, a, node), t.real_type, fname, node) for a in args)
            return Scalar(lw.b.op(ComplexCreate, re.value, im.value), False)
        return _convert(lw, operand(lw, args[0], node), t, fname, node)

    return h


def _convert(lw, v, t, fname, node):
    if sdtype(v).type.is_complex and not t.is_complex:
        raise lw.err(ZymaseTypeError, f"{fname}() cannot convert a complex value", node)

    def elem(x):
        if t.is_bool:
            return lw.truth(x, node).value
        if t.is_int and x.type.is_inexact:
            return finite_to_int(lw, x, t)
        return lw.b.cast(x.value, t)

    return elementwise(lw, v, elem, t, node)


SCALAR_TYPES = {
    np.float64: F64,
    np.float32: F32,
    np.int64: I64,
    np.int32: I32,
    np.int16: I16,
    np.int8: I8,
    np.uint64: U64,
    np.uint32: U32,
    np.uint16: U16,
    np.uint8: U8,
    np.complex128: C128,
    np.complex64: C64,
    np.bool_: I1,
}


register_all({f: _scalar_ctor(t, f"np.{f.__name__}") for f, t in SCALAR_TYPES.items()})
