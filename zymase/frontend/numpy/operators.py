"""Python operators on arrays: ``a + b``, ``a > 0``, ``-a``, ``~mask`` (a new array, elementwise
over the broadcast shape) and ``a += b`` (written through ``a``, with NumPy's same-kind
casting rule).  The scalar operation itself is the lowerer's (``lw.scalar_binop``)."""

from __future__ import annotations

import ast
import enum

import numpy as np

from ...errors import UnsupportedError, ZymaseTypeError
from ...ir.ops import Not, XorI
from ...ir.types import I1, I64
from ..syntax import symbol
from ..typing import Array, PyObj, Scalar, result_type
from .arrays import map_elements, sdtype


def array_binop(lw, op, a, b, node):
    for v in (a, b):
        if not isinstance(v, (Array, Scalar)):
            raise lw.err(ZymaseTypeError, f"unsupported operand `{symbol(op)}` between an array "
                         f"and {lw.describe(v)}",
                         node)
    opk = type(op)
    st = result_type(sdtype(a), sdtype(b))
    sample = lw.scalar_binop_type(opk, st)
    return map_elements(lw, [a, b], lambda x, y: lw.scalar_binop(opk, x, y), sample, node)


def inplace_binop(lw, op, target: Array, value, node):
    opk = type(op)
    if isinstance(value, (Array, Scalar)):
        out = lw.scalar_binop_type(opk, result_type(sdtype(target), sdtype(value)))
        want = target.type.dtype
        if not np.can_cast(out.np_dtype, want.np_dtype, casting="same_kind"):
            raise lw.err(ZymaseTypeError, f"cannot update an array of {want.np_dtype} in place "
                         f"with a result of {out.np_dtype} (NumPy refuses to cast it back: "
                         "casting rule 'same_kind')", node)
        map_elements(lw, [target, value], lambda x, y: lw.scalar_binop(opk, x, y), None, node,
                     out=target)
        return
    raise lw.err(ZymaseTypeError, f"cannot update an array in place with {lw.describe(value)}",
                 node)


def array_unary(lw, op, a: Array, node):
    if isinstance(op, ast.UAdd):
        return a
    if isinstance(op, ast.USub):
        return map_elements(lw, [a], lambda x: lw.expr_neg(x), _neg_dtype(a.type.dtype), node)
    if isinstance(op, ast.Invert) and a.type.dtype in (I1,):
        return map_elements(lw, [a], lambda x: Scalar(lw.b.op(Not, x.value)), I1, node)
    if isinstance(op, ast.Invert) and a.type.dtype.is_int:  # ~x: every bit flipped
        t = a.type.dtype
        ones = lw.b.const((1 << t.bits) - 1 if t.unsigned else -1, t)
        return map_elements(lw, [a], lambda x: Scalar(lw.b.op(XorI, x.value, ones)), t, node)
    raise lw.err(UnsupportedError, f"unary `{symbol(op)}` on arrays of "
                 f"{a.type.dtype.np_dtype} is not supported", node)


def _neg_dtype(t):
    return I64 if t == I1 else t


def array_compare(lw, pred, a, b, node):
    for arr, other in ((a, b), (b, a)):
        if isinstance(other, PyObj):
            # NumPy: an array == None, a string or an enum member is False everywhere (!= True)
            if pred in ("eq", "ne") and isinstance(arr, Array) and \
                    isinstance(other.obj, (str, bytes, type(None), enum.Enum)):
                return map_elements(lw, [arr], lambda x: lw.const_bool(pred == "ne"), I1, node)
            raise lw.err(ZymaseTypeError, f"cannot compare {lw.describe(arr)} with "
                         f"{lw.describe(other)}", node)
    return map_elements(lw, [a, b], lambda x, y: lw.scalar_compare(pred, x, y), I1, node)
