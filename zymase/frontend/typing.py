"""Compile-time values of the frontend and the typing rules that combine them.

The frontend maps each Python name to an ``FVal``:

* ``Scalar`` an IR scalar plus ``weak``: True for Python ``int/float/bool/complex`` values, which
  (as in NumPy 2, NEP 50) adopt the type of a NumPy operand (``f32_array[i] * 2.0`` is float32);
* ``Array`` an IR array value;
* ``Tup`` a tuple of FVals (never an IR value: tuples are unpacked at compile time);
* ``ListVal`` a list being built with ``append`` (a buffer and a length, both IR values);
* ``Struct`` a dataclass or namedtuple argument, its fields FVals;
* ``PyObj`` any Python object known at compile time (modules, functions, ``None``, strings).

``result_type`` is the promotion of binary arithmetic and also the unification of a name that
holds different types on different paths (a loop-carried name that starts as ``0`` and becomes a
float is a float throughout).
"""

from __future__ import annotations

import enum
import types
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir.core import Value
from ..ir.types import C128, F64, I1, I64, ArrayType, ScalarType, Type, promote

_KIND_ORDER = {"b": 0, "i": 1, "f": 2, "c": 3}
_WEAK_DEFAULT = {"b": I1, "i": I64, "f": F64, "c": C128}


class FVal:
    """A compile-time value of the frontend."""

    __slots__ = ()


@dataclass(eq=False, slots=True)
class Scalar(FVal):
    value: Value
    weak: bool = False

    @property
    def type(self) -> ScalarType:
        return self.value.type


@dataclass(eq=False, slots=True)
class Array(FVal):
    value: Value

    @property
    def type(self) -> ArrayType:
        return self.value.type


@dataclass(eq=False, slots=True)
class Tup(FVal):
    items: tuple


class TupList(Tup):
    """A Python list argument of numbers or arrays: read like a tuple in compiled code;
    derivatives with respect to it come back as a list."""

    __slots__ = ()


@dataclass(eq=False, slots=True)
class ListVal(FVal):
    buf: Value  # 1-D array with capacity >= length
    length: Value  # i64

    @property
    def dtype(self) -> ScalarType:
        return self.buf.type.dtype


@dataclass(eq=False, slots=True)
class Struct(FVal):
    pytype: Any
    fields: dict  # name -> FVal


@dataclass(eq=False, slots=True)
class PyObj(FVal):
    obj: Any


class EmptyList(FVal):
    """``[]`` before its first ``append`` (its element type is not known yet)."""

    __slots__ = ()


EMPTY_LIST = EmptyList()


@dataclass(frozen=True, slots=True)
class Undef:
    """Placeholder for a name not yet bound on some path (Python would raise UnboundLocalError)."""


UNDEF = Undef()


@dataclass(frozen=True, slots=True)
class SType:
    """The static type of a scalar FVal (IR type + weakness)."""

    type: ScalarType
    weak: bool


def result_type(a: SType, b: SType) -> SType:
    """NumPy 2 promotion with Python scalars weak (NEP 50)."""
    if a.weak and b.weak:
        hi = a if _KIND_ORDER[a.type.kind] >= _KIND_ORDER[b.type.kind] else b
        return SType(_WEAK_DEFAULT[hi.type.kind], True)
    if a.weak or b.weak:
        weak, strong = (a, b) if a.weak else (b, a)
        if _KIND_ORDER[weak.type.kind] <= _KIND_ORDER[strong.type.kind]:
            return SType(strong.type, False)
        if weak.type.kind == "c":
            return SType(C128 if strong.type.bits > 32 or strong.type.is_int else
                         ScalarType("c", 2 * strong.type.bits), False)
        return SType(promote(_WEAK_DEFAULT[weak.type.kind], strong.type)
                     if strong.type.kind != "f" else strong.type, False)
    return SType(promote(a.type, b.type), False)


def stype(v: Scalar) -> SType:
    return SType(v.value.type, v.weak)


# Values held constant (one specialization per value, like JAX's static arguments): their
# equality is their identity or an immutable value, so a cached specialization stays right.
_STATIC_TYPES = (str, bytes, enum.Enum, type, np.dtype, types.FunctionType,
                 types.BuiltinFunctionType, np.ufunc, type(np.sum), type(None))


def static_key(x):
    """The cache key of an argument held constant (a string, bytes, None, an enum member, a
    function, a class, a dtype), or None when ``x`` is not one.  NumPy strings are strings."""
    if isinstance(x, np.str_):
        x = str(x)
    if isinstance(x, _STATIC_TYPES) or getattr(x, "__zymase_fn__", None) is not None or \
            getattr(x, "__zymase_custom__", False):
        return ("static", type(x), x)
    return None


def type_key(v) -> Any:
    """A hashable description of an FVal's static type (used to unify names across paths)."""
    if isinstance(v, Scalar):
        return ("s", v.type, v.weak)
    if isinstance(v, Array):
        return ("a", v.type)
    if isinstance(v, Tup):
        tag = "tl" if isinstance(v, TupList) else "t"
        return (tag, tuple(type_key(x) for x in v.items))
    if isinstance(v, ListVal):
        return ("l", v.dtype)
    if isinstance(v, Struct):
        return ("r", v.pytype, tuple((k, type_key(x)) for k, x in v.fields.items()))
    if isinstance(v, PyObj):
        return static_key(v.obj) or ("p", id(v.obj))
    if v is UNDEF:
        return ("u",)
    if isinstance(v, EmptyList):
        return ("e",)
    raise TypeError(v)


def flatten(v) -> list[Value]:
    """The IR values an FVal is made of (what a loop carries or a branch yields for it)."""
    if isinstance(v, (Scalar, Array)):
        return [v.value]
    if isinstance(v, Tup):
        return [x for item in v.items for x in flatten(item)]
    if isinstance(v, ListVal):
        return [v.buf, v.length]
    if isinstance(v, Struct):
        return [x for f in v.fields.values() for x in flatten(f)]
    return []


def rebuild(template, values: list[Value]):
    """An FVal shaped like ``template`` made of ``values`` (consumed from the front)."""
    if isinstance(template, Scalar):
        return Scalar(values.pop(0), template.weak)
    if isinstance(template, Array):
        return Array(values.pop(0))
    if isinstance(template, Tup):
        return type(template)(tuple(rebuild(x, values) for x in template.items))
    if isinstance(template, ListVal):
        return ListVal(values.pop(0), values.pop(0))
    if isinstance(template, Struct):
        return Struct(template.pytype, {k: rebuild(x, values) for k, x in template.fields.items()})
    return template


def ir_types(v) -> list[Type]:
    return [x.type for x in flatten(v)]


_PY_SCALARS = {bool: SType(I1, True), int: SType(I64, True), float: SType(F64, True),
               complex: SType(C128, True)}


def python_scalar_stype(x) -> SType | None:
    """The weak type of a Python scalar (not of NumPy scalars such as np.float64, which
    subclass float but are strong), or None."""
    return _PY_SCALARS.get(type(x))
