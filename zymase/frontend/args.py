"""Typing the arguments of a call from Python: each argument becomes a template FVal whose IR
types are the compiled function's parameter types, and a signature key for the compile cache.

Python floats/ints/bools are weak scalars, NumPy scalars strong ones, arrays of the supported
dtypes are ``array<dtype,ndim,C|A>``, tuples stay tuples, dataclass and namedtuple instances
become structs of their fields.  Anything else is refused with a message that says what to pass.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..errors import ZymaseTypeError
from ..ir.core import Value
from ..ir.types import ArrayType, scalar_from_dtype
from .typing import Array, PyObj, Scalar, Struct, Tup, TupList, python_scalar_stype


def param_template(x, where: str):
    """The FVal template for argument value ``x`` (``where`` names it in errors)."""
    st = python_scalar_stype(x)
    if st is not None:
        return Scalar(Value(st.type), True)
    if isinstance(x, np.ndarray):
        t = scalar_from_dtype(x.dtype)
        if t is None:
            raise ZymaseTypeError(f"{where}: arrays of dtype {x.dtype} are not supported "
                                  "(use float64, float32, int64, int32, bool or complex)")
        if x.ndim == 0:
            raise ZymaseTypeError(f"{where}: 0-d arrays are not supported; pass a scalar")
        if any(s % x.itemsize for s in x.strides):
            raise ZymaseTypeError(f"{where}: array strides are not a multiple of the item size")
        layout = "C" if x.flags.c_contiguous else "A"
        return Array(Value(ArrayType(t, x.ndim, layout)))
    if isinstance(x, np.generic):
        t = scalar_from_dtype(x.dtype)
        if t is None:
            raise ZymaseTypeError(f"{where}: NumPy scalars of {x.dtype} are not supported")
        return Scalar(Value(t), False)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return Struct(type(x), {f: param_template(getattr(x, f), f"{where}.{f}")
                                for f in x._fields})
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return Struct(type(x), {f.name: param_template(getattr(x, f.name), f"{where}.{f.name}")
                                for f in dataclasses.fields(x)})
    if isinstance(x, tuple):
        return Tup(tuple(param_template(v, f"{where}[{k}]") for k, v in enumerate(x)))
    if x is None:
        return PyObj(None)
    if isinstance(x, list) and x and all(isinstance(v, np.ndarray) for v in x):
        return TupList(tuple(param_template(v, f"{where}[{k}]") for k, v in enumerate(x)))
    if isinstance(x, list):
        raise ZymaseTypeError(f"{where} is a Python list; zymase needs a NumPy array here "
                              "(pass np.asarray(...)); lists of arrays are accepted")
    raise ZymaseTypeError(f"{where} has type {type(x).__name__}, which zymase cannot compile "
                          "(supported: numbers, NumPy arrays and scalars, tuples, dataclasses, "
                          "namedtuples)")


def flatten_arg(x, tpl) -> list:
    """The run-time values an argument contributes, in the order of its template's IR values."""
    if isinstance(tpl, (Scalar, Array)):
        return [x]
    if isinstance(tpl, Tup):
        return [v for item, t in zip(x, tpl.items) for v in flatten_arg(item, t)]
    if isinstance(tpl, Struct):
        return [v for f, t in tpl.fields.items() for v in flatten_arg(getattr(x, f), t)]
    return []
