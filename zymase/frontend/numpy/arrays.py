"""Arrays as operands: broadcasting, the elementwise loop every array expression becomes
(``map_elements``), overlap between a source and the array written, copies, assignment into a
view, arrays made from tuples and lists, and the dtype and shape arguments of NumPy functions.

Array expressions allocate their result and fill it with a loop nest over the broadcast shape;
in-place forms write through the view.  A source that may overlap the destination (and is not
the very same view) is copied first, as NumPy does.
"""

from __future__ import annotations

import ast

import numpy as np

from ...errors import ShapeError, UnsupportedError, ZymaseTypeError
from ...ir.core import VIEW
from ...ir.ops import Alloc, ArrayConst, Assert, Broadcast, CmpI, OrI, Select
from ...ir.types import F64, I1, I64, ArrayType, ScalarType, scalar_from_dtype
from ..emit import alloc, load, nest, store
from ..typing import Array, ListVal, PyObj, Scalar, SType, Tup, result_type, stype

# ---------------------------------------------------------------------- broadcasting


def broadcast_dims(lw, operands, node):
    """The broadcast shape (list of i64 Values) of Arrays/Scalars, with a run-time check whose
    message names the operands as the source writes them."""
    names = operand_names(node, len(operands))
    arrays = [(o, n) for o, n in zip(operands, names or [None] * len(operands))
              if isinstance(o, Array)]
    return broadcast_shapes(lw, [lw.dims(o) for o, _ in arrays],
                            [n for _, n in arrays] if names else None)


def operand_names(node, n: int) -> list | None:
    """The source text of the ``n`` operands of expression ``node`` (a binary operator, a
    comparison or a call with ``n`` positional arguments), or None."""
    if isinstance(node, ast.BinOp) and n == 2:
        parts = [node.left, node.right]
    elif isinstance(node, ast.AugAssign) and n == 2:
        parts = [node.target, node.value]
    elif isinstance(node, ast.Compare) and n == 2:
        parts = [node.left, node.comparators[0]]
    elif isinstance(node, ast.Call) and len(node.args) >= n:
        parts = node.args[:n]
    else:
        return None
    return [_short(ast.unparse(p)) for p in parts]


def _short(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."


def broadcast_shapes(lw, shapes, names=None):
    """The broadcast shape of shapes (lists of i64 Values), with a run-time check (``names``:
    the operands' source text, for its message)."""
    nd = max(len(s) for s in shapes)
    out = [None] * nd
    first = [None] * nd  # the operand that set each axis (-1: several did)
    for j, dims in enumerate(shapes):
        for k, d in enumerate(dims):
            pos = nd - len(dims) + k
            if out[pos] is None:
                out[pos], first[pos] = d, j
            else:
                out[pos] = _combine(lw, out[pos], d, _mismatch(names, shapes, first[pos], j,
                                                               nd - pos))
                first[pos] = -1
    return out


def _mismatch(names, shapes, i, j, back) -> str:
    axis = "the last axis" if back == 1 else f"axis {-back}"
    if names is None or i < 0:
        return ("operands could not be broadcast together: sizes {a} and {b} in "
                f"{axis} of the result")
    return (f"operands could not be broadcast together: `{names[i]}` (rank {len(shapes[i])}) "
            f"has size {{a}} and `{names[j]}` (rank {len(shapes[j])}) size {{b}} in {axis}")


def _combine(lw, d1, d2, msg="operands could not be broadcast together: sizes {a} and {b}"):
    if d1 is d2:
        return d1
    b = lw.b
    one = b.i64(1)
    same = b.op(CmpI, d1, d2, pred="eq")
    ok = b.op(OrI, same, b.op(OrI, b.op(CmpI, d1, one, pred="eq"),
                                      b.op(CmpI, d2, one, pred="eq")))
    b.create(Assert, [ok, d1, d2], [], {"kind": "ShapeError", "msg": msg})
    return b.op(Select, b.op(CmpI, d1, one, pred="eq"), d2, d1)


def check_broadcastable(lw, a: Array, dims, node) -> None:
    """ShapeError at run time unless ``a`` broadcasts to exactly ``dims`` (the shape of an array
    written in place: ``out[...] = a``, ``out += a``), as NumPy checks."""
    if a.type.ndim > len(dims):
        raise lw.err(ShapeError, f"cannot write an array of rank {a.type.ndim} into one of rank "
                     f"{len(dims)}", node)
    b, one = lw.b, lw.b.i64(1)
    for k, (d, want) in enumerate(zip(lw.dims(a), dims[len(dims) - a.type.ndim:])):
        if d is want:
            continue
        ok = b.op(OrI, b.op(CmpI, d, want, pred="eq"),
                  b.op(CmpI, d, one, pred="eq"))
        back = a.type.ndim - k
        axis = "the last axis" if back == 1 else f"axis {-back}"
        b.create(Assert, [ok, d, want], [], {
            "kind": "ShapeError",
            "msg": "could not broadcast the input array into the shape of the array written: "
                   f"size {{a}} against {{b}} in {axis}"})


def broadcast_to(lw, a: Array, dims) -> Array:
    """``a`` viewed with shape ``dims`` (size-1 dims repeat); ``a`` itself when shapes match."""
    if a.type.ndim == len(dims) and all(x is y for x, y in zip(lw.dims(a), dims)):
        return a
    t = ArrayType(a.type.dtype, len(dims), "A")
    return Array(lw.b.create(Broadcast, [a.value, *dims], [t]).result)


def element(lw, v, dims, idx):
    """The scalar of operand ``v`` (Array broadcast to ``dims``, or Scalar) at ``idx``."""
    if isinstance(v, Scalar):
        return v
    a = broadcast_to(lw, v, dims)
    return Scalar(load(lw, a, idx), False)


def map_elements(lw, operands, fn, dtype, node, out: Array | None = None) -> Array:
    """``out[idx] = fn(*elements)`` over the broadcast shape of ``operands``."""
    for o in operands:
        if not isinstance(o, (Array, Scalar)):
            raise lw.err(ZymaseTypeError, f"expected numbers or arrays, got {lw.describe(o)}",
                         node)
    dims = broadcast_dims(lw, operands, node) if out is None else lw.dims(out)
    if out is None:
        out = alloc(lw, dtype, dims)
    else:
        operands = [_unshare(lw, o, out) for o in operands]
        for o in operands:
            if isinstance(o, Array):
                check_broadcastable(lw, o, dims, node)
    bcast = [broadcast_to(lw, o, dims) if isinstance(o, Array) else o for o in operands]

    def body(idx, acc):
        vals = [Scalar(load(lw, o, idx), False) if isinstance(o, Array) else o for o in bcast]
        r = fn(*vals)
        store(lw, lw.b.cast(r.value, out.type.dtype), out, idx)

    nest(lw, dims, body, parallel=True)
    return out


# ---------------------------------------------------------------------- overlap and copies


def root(v):
    """The buffer an array value views (follows views), or the value itself."""
    while v.op is not None and v.op.has_trait(VIEW):
        v = v.op.operands[0]
    return v


def may_overlap(a: Array, b: Array) -> bool:
    ra, rb = root(a.value), root(b.value)
    if ra is rb:
        return True
    fresh = (Alloc, ArrayConst)
    return not (isinstance(ra.op, fresh) or isinstance(rb.op, fresh))


def _unshare(lw, src, dst: Array):
    """``src`` itself, or a copy when it may overlap ``dst`` without being the same view."""
    if not isinstance(src, Array) or src.value is dst.value or not may_overlap(src, dst):
        return src
    return copy_array(lw, src)


def copy_array(lw, a: Array) -> Array:
    return map_elements(lw, [a], lambda x: x, a.type.dtype, None)


def assign_into(lw, view: Array, value, node):
    """``view[...] = value`` (a scalar fills, an array is broadcast and copied)."""
    if isinstance(value, Tup):
        value = array_from_sequence(lw, value, node)
    if isinstance(value, ListVal):
        value = list_to_array(lw, value)
    if not isinstance(value, (Array, Scalar)):
        raise lw.err(ZymaseTypeError, f"cannot assign {lw.describe(value)} into an array", node)
    if isinstance(value, Array) and value.type.ndim > view.type.ndim:
        raise lw.err(ZymaseTypeError, "cannot assign an array of higher rank into a view", node)
    src = value.type.dtype if isinstance(value, Array) else value.type
    if src.is_complex and not view.type.dtype.is_complex:
        raise lw.err(ZymaseTypeError, "cannot assign complex values into a real array", node)
    map_elements(lw, [value], lambda x: x, None, node, out=view)


# ---------------------------------------------------------------------- operands


def sdtype(v) -> SType:
    return SType(v.type.dtype, False) if isinstance(v, Array) else stype(v)


def common_type(vals) -> ScalarType:
    st = sdtype(vals[0])
    for v in vals[1:]:
        st = result_type(st, sdtype(v))
    return st.type


def float_type(t: ScalarType) -> ScalarType:
    """The result type of a NumPy float ufunc on ``t`` (ints and bools give float64)."""
    return t if t.is_inexact else F64


def as_operand(lw, v, node):
    """Tuples and lists as arrays; anything else as it is."""
    if isinstance(v, Tup):
        return array_from_sequence(lw, v, node)
    if isinstance(v, ListVal):
        return list_to_array(lw, v)
    return v


def operand(lw, v, node):
    """A scalar or an array (tuples and lists become arrays); anything else is refused."""
    if isinstance(v, Tup):
        v = array_from_sequence(lw, v, node)
    elif isinstance(v, ListVal):
        v = list_to_array(lw, v)
    if not isinstance(v, (Scalar, Array)):
        raise lw.err(ZymaseTypeError, f"expected a number or an array, got {lw.describe(v)}", node)
    return v


def as_array(lw, v, fname, node) -> Array:
    v = operand(lw, v, node)
    if not isinstance(v, Array):
        raise lw.err(
            ZymaseTypeError,
            f"{fname}() needs an array here, not {lw.describe(v)} (0-d arrays are not supported)",
            node,
        )
    return v


def array_from_sequence(lw, v: Tup, node, dtype=None) -> Array:
    """``np.array([a, b, c])`` of scalars (or of equal-length tuples: a 2-D array)."""
    items = v.items
    if items and all(isinstance(x, Tup) for x in items):
        rows = [array_from_sequence(lw, x, node, dtype) for x in items]
        dt = rows[0].type.dtype
        out = alloc(lw, dt, [lw.b.i64(len(rows)), lw.dim(rows[0], 0)])
        for k, r in enumerate(rows):
            view = lw.index_value(out, [lw.const_int(k)], node)
            assign_into(lw, view, r, node)
        return out
    if not all(isinstance(x, Scalar) for x in items):
        raise lw.err(UnsupportedError, "np.array() of a list needs scalars (or lists of them)",
                     node)
    st = items[0] and sdtype(items[0])
    for x in items[1:]:
        st = result_type(st, sdtype(x))
    dt = dtype or (st.type if items else F64)
    out = alloc(lw, dt, [lw.b.i64(len(items))])
    for k, x in enumerate(items):
        store(lw, lw.b.cast(x.value, dt), out, [lw.b.i64(k)])
    return out


def list_to_array(lw, lst: ListVal) -> Array:
    out = alloc(lw, lst.dtype, [lst.length])
    buf = Array(lst.buf)
    nest(lw, [lst.length], lambda idx, acc: store(lw, load(lw, buf, idx), out, idx))
    return out


def elementwise(lw, v, elem, dtype, node):
    """``elem(x: Scalar) -> Value`` on a scalar (a strong Scalar) or on every array element."""
    v = operand(lw, v, node)
    if isinstance(v, Scalar):
        return Scalar(elem(v), False)
    return map_elements(lw, [v], lambda x: Scalar(elem(x), False), dtype, node)


def elementwise2(lw, x, y, elem, dtype_fn, node):
    """``elem(x, y, t) -> Value`` over the broadcast of two operands of promoted type ``t``."""
    x, y = operand(lw, x, node), operand(lw, y, node)
    t = result_type(sdtype(x), sdtype(y)).type
    if isinstance(x, Scalar) and isinstance(y, Scalar):
        return Scalar(elem(x, y, t), False)
    return map_elements(lw, [x, y], lambda a, b: Scalar(elem(a, b, t), False), dtype_fn(t), node)


# ---------------------------------------------------------------------- dtype and shape arguments


def dtype_arg(lw, v, default, node) -> ScalarType:
    if v is None:
        return default
    obj = v.obj if isinstance(v, PyObj) else None
    if obj is float:
        return F64
    if obj is int:
        return I64
    if obj is bool:
        return I1
    if obj is complex:
        return scalar_from_dtype(np.complex128)
    try:
        t = scalar_from_dtype(np.dtype(obj)) if obj is not None else None
    except TypeError:
        t = None
    if t is None:
        raise lw.err(ZymaseTypeError, f"unsupported dtype {lw.describe(v)}", node)
    return t


def shape_arg(lw, v, node):
    if isinstance(v, Scalar) and (v.type.is_int):
        return [lw.b.cast(v.value, I64)]
    if isinstance(v, Tup) and all(isinstance(x, Scalar) and x.type.is_int for x in v.items):
        return [lw.b.cast(x.value, I64) for x in v.items]
    raise lw.err(ZymaseTypeError, f"a shape must be an int or a tuple of ints, not "
                 f"{lw.describe(v)}", node)
