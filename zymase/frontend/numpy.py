"""The supported NumPy subset, lowered to loops over buffers.

Array expressions (``a + b``, ``np.exp(a)``, ``a > 0``) allocate their result and fill it with a
loop nest over the broadcast shape; in-place forms (``a += b``, ``a[1:] = b``) write through the
view.  A source that may overlap the destination (and is not the very same view) is copied first,
as NumPy does.  Reductions carry accumulators through the nest.  Matrix products are
``linalg.matmul`` (BLAS in the backend).  Handlers register in ``calls.CALLS``; more of NumPy lives
in ``numpy_extra.py``.
"""

from __future__ import annotations

import ast

import numpy as np

from ..errors import ShapeError, UnsupportedError, ZymaseTypeError
from ..ir.core import VIEW, Block, Region
from ..ir.types import F64, I1, I64, ArrayType, ScalarType, scalar_from_dtype
from .calls import CALLS
from .typing import (
    Array,
    EmptyList,
    ListVal,
    PyObj,
    Scalar,
    SType,
    Tup,
    result_type,
    stype,
)

# ---------------------------------------------------------------------- loop nests


def nest(lw, dims, body, carried=()):
    """Emit nested ``scf.for`` over ``dims``; ``body(idx, acc) -> new acc`` (lists of Values).
    Returns the final carried values."""
    b = lw.b
    if not dims:
        return list(body([], list(carried)) or [])

    def level(k, acc):
        blk = Block([I64, *[v.type for v in acc]])
        with b.at(blk):
            iv, cur = blk.args[0], list(blk.args[1:])
            idx_stack.append(iv)
            if k + 1 == len(dims):
                out = body(list(idx_stack), cur) or []
            else:
                out = level(k + 1, cur)
            idx_stack.pop()
            b.yield_(*out)
        op = b.create("scf.for", [b.i64(0), dims[k], b.i64(1), *acc], [v.type for v in acc],
                      regions=[Region([blk])])
        return list(op.results)

    idx_stack: list = []
    return level(0, list(carried))


def alloc(lw, dtype: ScalarType, dims, init="none") -> Array:
    t = ArrayType(dtype, len(dims), "C")
    return Array(lw.b.create("array.alloc", list(dims), [t], {"init": init}).result)


def load(lw, a: Array, idx):
    return lw.b.op("array.load", a.value, *idx)


def store(lw, v, a: Array, idx):
    lw.b.create("array.store", [v, a.value, *idx])


# ---------------------------------------------------------------------- broadcasting


def broadcast_dims(lw, operands, node):
    """The broadcast shape (list of i64 Values) of Arrays/Scalars, with a run-time check."""
    arrays = [o for o in operands if isinstance(o, Array)]
    nd = max(a.type.ndim for a in arrays)
    out = [None] * nd
    for a in arrays:
        dims = lw.dims(a)
        for k, d in enumerate(dims):
            pos = nd - a.type.ndim + k
            out[pos] = d if out[pos] is None else _combine(lw, out[pos], d)
    return out


def _combine(lw, d1, d2):
    if d1 is d2:
        return d1
    b = lw.b
    one = b.i64(1)
    same = b.op("arith.cmpi", d1, d2, pred="eq")
    ok = b.op("arith.ori", same, b.op("arith.ori", b.op("arith.cmpi", d1, one, pred="eq"),
                                      b.op("arith.cmpi", d2, one, pred="eq")))
    b.create("rt.assert", [ok], [], {"kind": "ShapeError",
                                     "msg": "operands could not be broadcast together"})
    return b.op("arith.select", b.op("arith.cmpi", d1, one, pred="eq"), d2, d1)


def check_broadcastable(lw, a: Array, dims, node) -> None:
    """ShapeError at run time unless ``a`` broadcasts to exactly ``dims`` (the shape of an array
    written in place: ``out[...] = a``, ``out += a``), as NumPy checks."""
    if a.type.ndim > len(dims):
        raise lw.err(ShapeError, f"cannot write an array of rank {a.type.ndim} into one of rank "
                     f"{len(dims)}", node)
    b, one = lw.b, lw.b.i64(1)
    for d, want in zip(lw.dims(a), dims[len(dims) - a.type.ndim:]):
        if d is want:
            continue
        ok = b.op("arith.ori", b.op("arith.cmpi", d, want, pred="eq"),
                  b.op("arith.cmpi", d, one, pred="eq"))
        b.create("rt.assert", [ok], [], {
            "kind": "ShapeError",
            "msg": "could not broadcast the input array into the shape of the array written"})


def broadcast_to(lw, a: Array, dims) -> Array:
    """``a`` viewed with shape ``dims`` (size-1 dims repeat); ``a`` itself when shapes match."""
    if a.type.ndim == len(dims) and all(x is y for x, y in zip(lw.dims(a), dims)):
        return a
    t = ArrayType(a.type.dtype, len(dims), "A")
    return Array(lw.b.create("array.broadcast", [a.value, *dims], [t]).result)


def element(lw, v, dims, idx):
    """The scalar of operand ``v`` (Array broadcast to ``dims``, or Scalar) at ``idx``."""
    if isinstance(v, Scalar):
        return v
    a = broadcast_to(lw, v, dims)
    return Scalar(load(lw, a, idx), False)


def map_elements(lw, operands, fn, dtype, node, out: Array | None = None) -> Array:
    """``out[idx] = fn(*elements)`` over the broadcast shape of ``operands``."""
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

    nest(lw, dims, body)
    return out


def root(v):
    """The buffer an array value views (follows views), or the value itself."""
    while v.op is not None and v.op.has_trait(VIEW):
        v = v.op.operands[0]
    return v


def may_overlap(a: Array, b: Array) -> bool:
    ra, rb = root(a.value), root(b.value)
    if ra is rb:
        return True
    fresh = ("array.alloc", "array.const")
    return not ((ra.op is not None and ra.op.name in fresh) or
                (rb.op is not None and rb.op.name in fresh))


def _unshare(lw, src, dst: Array):
    """``src`` itself, or a copy when it may overlap ``dst`` without being the same view."""
    if not isinstance(src, Array) or src.value is dst.value or not may_overlap(src, dst):
        return src
    return copy_array(lw, src)


def copy_array(lw, a: Array) -> Array:
    return map_elements(lw, [a], lambda x: x, a.type.dtype, None)


# ---------------------------------------------------------------------- operators


def _dtype_of(v) -> SType:
    if isinstance(v, Array):
        return SType(v.type.dtype, False)
    return stype(v)


def array_binop(lw, op, a, b, node):
    for v in (a, b):
        if not isinstance(v, (Array, Scalar)):
            raise lw.err(ZymaseTypeError, f"unsupported operand {lw.describe(v)} with an array",
                         node)
    opk = type(op)
    st = result_type(_dtype_of(a), _dtype_of(b))
    sample = lw.scalar_binop_type(opk, st)
    return map_elements(lw, [a, b], lambda x, y: lw.scalar_binop(opk, x, y), sample, node)


def inplace_binop(lw, op, target: Array, value, node):
    opk = type(op)
    if isinstance(value, (Array, Scalar)):
        out = lw.scalar_binop_type(opk, result_type(_dtype_of(target), _dtype_of(value)))
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


def array_unary(lw, op, a: Array, node):
    if isinstance(op, ast.UAdd):
        return a
    if isinstance(op, ast.USub):
        return map_elements(lw, [a], lambda x: lw.expr_neg(x), _neg_dtype(a.type.dtype), node)
    if isinstance(op, ast.Invert) and a.type.dtype in (I1,):
        return map_elements(lw, [a], lambda x: Scalar(lw.b.op("arith.not", x.value)), I1, node)
    raise lw.err(UnsupportedError, f"unary `{type(op).__name__}` on arrays is not supported", node)


def _neg_dtype(t):
    return I64 if t == I1 else t


def array_compare(lw, pred, a, b, node):
    return map_elements(lw, [a, b], lambda x, y: lw.scalar_compare(pred, x, y), I1, node)


# ---------------------------------------------------------------------- elementwise functions

UFUNC_OPS = {
    np.sqrt: "math.sqrt", np.exp: "math.exp", np.log: "math.log", np.sin: "math.sin",
    np.cos: "math.cos", np.tan: "math.tan", np.tanh: "math.tanh", np.arcsin: "math.asin",
    np.arccos: "math.acos", np.arctan: "math.atan", np.sinh: "math.sinh", np.cosh: "math.cosh",
    np.log1p: "math.log1p", np.expm1: "math.expm1", np.log10: "math.log10", np.log2: "math.log2",
    np.floor: "math.floor", np.ceil: "math.ceil", np.trunc: "math.trunc", np.rint: "math.roundeven",
    np.sign: "math.sign", np.arcsinh: "math.asinh", np.arccosh: "math.acosh",
    np.arctanh: "math.atanh",
}
COMPLEX_OK = {"math.sqrt", "math.exp", "math.log", "math.sin", "math.cos", "math.tanh"}


def float_type(t: ScalarType) -> ScalarType:
    """The result type of a NumPy float ufunc on ``t`` (ints and bools give float64)."""
    return t if t.is_inexact else F64


def scalar_ufunc(lw, opname, x: Scalar, node) -> Scalar:
    t = float_type(x.type)
    if t.is_complex and opname not in COMPLEX_OK:
        raise lw.err(UnsupportedError, f"{opname} of a complex number is not supported", node)
    return Scalar(lw.b.op(opname, lw.b.cast(x.value, t)), False)


def elementwise_unary(lw, name, v, node):
    """np.<name>(v) for the table ops plus abs/square/conj/real/imag; on a scalar or an array."""
    fn = {"abs": _abs_elem, "square": _square_elem}.get(name)
    if fn is None:
        opname = name

        def fn(lw_, x, node_):
            return scalar_ufunc(lw_, opname, x, node_)
    if isinstance(v, Scalar):
        return fn(lw, v, node)
    if not isinstance(v, Array):
        raise lw.err(ZymaseTypeError, f"{name}() needs a number or an array, not "
                     f"{lw.describe(v)}", node)
    sample = fn(lw, Scalar(lw.b.const(0, v.type.dtype)), node).type
    return map_elements(lw, [v], lambda x: fn(lw, x, node), sample, node)


def _abs_elem(lw, x, node):
    if x.type.is_complex:
        return Scalar(lw.b.op("complex.abs", x.value), False)
    if x.type.is_inexact:
        return Scalar(lw.b.op("math.absf", x.value), False)
    t = I64 if x.type == I1 else x.type
    return Scalar(lw.b.op("arith.absi", lw.b.cast(x.value, t)), False)


def _square_elem(lw, x, node):
    t = I64 if x.type == I1 else x.type
    v = lw.b.cast(x.value, t)
    return Scalar(lw.b.op("arith.mulf" if t.is_inexact else "arith.muli", v, v), False)


def _register_ufuncs():
    for f, opname in UFUNC_OPS.items():
        def h(lw, args, kwargs, node, opname=opname):
            _only_args(lw, args, kwargs, 1, node)
            return elementwise_unary(lw, opname, _as_operand(lw, args[0], node), node)
        CALLS[f] = h
    for f, name in ((np.abs, "abs"), (np.absolute, "abs"), (np.fabs, "abs"),
                    (np.square, "square")):
        def h(lw, args, kwargs, node, name=name):
            _only_args(lw, args, kwargs, 1, node)
            return elementwise_unary(lw, name, _as_operand(lw, args[0], node), node)
        CALLS[f] = h


def _only_args(lw, args, kwargs, n, node):
    if kwargs:
        raise lw.err(UnsupportedError, f"keyword arguments {sorted(kwargs)} are not supported "
                     "here", node)
    if len(args) != n:
        raise lw.err(ZymaseTypeError, f"expected {n} argument(s), got {len(args)}", node)


def _as_operand(lw, v, node):
    if isinstance(v, Tup):
        return array_from_sequence(lw, v, node)
    if isinstance(v, ListVal):
        return list_to_array(lw, v)
    return v


_register_ufuncs()


def _binary_ufunc(fn_elem, dtype_fn):
    def h(lw, args, kwargs, node):
        _only_args(lw, args, kwargs, 2, node)
        a, b = (_as_operand(lw, x, node) for x in args)
        st = result_type(_dtype_of(a), _dtype_of(b))
        if isinstance(a, Scalar) and isinstance(b, Scalar):
            return fn_elem(lw, a, b, st.type)
        return map_elements(lw, [a, b], lambda x, y: fn_elem(lw, x, y, st.type), dtype_fn(st.type),
                            node)
    return h


def _maximum(op):
    def elem(lw, x, y, t):
        x, y = lw.b.cast(x.value, t), lw.b.cast(y.value, t)
        if t.is_inexact:
            return Scalar(lw.b.op(op + "f", x, y), False)
        return Scalar(lw.b.op({"arith.maximum": "arith.maxi", "arith.minimum": "arith.mini"}[op],
                              x, y), False)
    return elem


def _power(lw, x, y, t):
    return lw.scalar_pow(Scalar(x.value, False), Scalar(y.value, False), SType(t, False))


def _arctan2(lw, x, y, t):
    t = float_type(t)
    return Scalar(lw.b.op("math.atan2", lw.b.cast(x.value, t), lw.b.cast(y.value, t)), False)


CALLS[np.maximum] = _binary_ufunc(_maximum("arith.maximum"), lambda t: t)
CALLS[np.minimum] = _binary_ufunc(_maximum("arith.minimum"), lambda t: t)
CALLS[np.power] = _binary_ufunc(_power, lambda t: t)
CALLS[np.arctan2] = _binary_ufunc(_arctan2, float_type)

# ---------------------------------------------------------------------- creation


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


def _checked_dims(lw, dims):
    for d in dims:
        ok = lw.b.op("arith.cmpi", d, lw.b.i64(0), pred="ge")
        lw.b.create("rt.assert", [ok], [], {"kind": "ValueError",
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
        default = F64 if fill != "full" else _dtype_of(value).type
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
    nest(lw, dims, lambda idx, acc: store(lw, lw.b.cast(v.value, dt), out, idx))
    return out


for _fill in ("empty", "zeros", "ones", "full"):
    CALLS[getattr(np, _fill)] = _creator(_fill)
    CALLS[getattr(np, _fill + "_like")] = _like(_fill)


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
        from .numpy_extra import REQUIRED, bind, is_none, static
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
            from .numpy_shape import protect_copy
            protect_copy(block, start, out, "contiguous")
        return out

    return h


for _fn, _copy_default in ((np.array, True), (np.asarray, None),
                          (np.ascontiguousarray, None), (np.copy, True)):
    CALLS[_fn] = _array_maker(_fn, _copy_default)


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
    st = items[0] and _dtype_of(items[0])
    for x in items[1:]:
        st = result_type(st, _dtype_of(x))
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


# ---------------------------------------------------------------------- reductions


def reduce_all(lw, kind, v, node, axis=None, python=False):
    """sum/prod/max/min/mean/argmax/argmin of an array (all elements or along ``axis``)."""
    if isinstance(v, Scalar):
        return v
    if isinstance(v, ListVal):
        v = list_to_array(lw, v)
    if not isinstance(v, Array):
        raise lw.err(ZymaseTypeError, f"cannot reduce {lw.describe(v)}", node)
    from .reductions import python_extremum, reduce_array
    if python and kind in ("max", "min"):
        return python_extremum(lw, kind, v, node)
    return reduce_array(lw, kind, v, axis, node)


def reduce_axis0(lw, kind, v, node):
    if isinstance(v, Array) and v.type.ndim > 1:
        return reduce_all(lw, kind, v, node, axis=0)
    return reduce_all(lw, kind, v, node)


def _reducer(kind):
    def h(lw, args, kwargs, node):
        axis = kwargs.get("axis", args[1] if len(args) > 1 else None)
        ax = None if axis is None else lw.constant_of(axis)
        if axis is not None and not isinstance(ax, int):
            raise lw.err(UnsupportedError, "axis= must be a constant integer", node)
        return reduce_all(lw, kind, _as_operand(lw, args[0], node), node, ax)
    return h


for _kind, _fns in {"sum": (np.sum,), "prod": (np.prod,), "max": (np.max, np.amax),
                    "min": (np.min, np.amin), "mean": (np.mean,), "argmax": (np.argmax,),
                    "argmin": (np.argmin,), "any": (np.any,), "all": (np.all,)}.items():
    for _f in _fns:
        CALLS[_f] = _reducer(_kind)


# ---------------------------------------------------------------------- methods

METHODS = {}


def method(*names):
    def deco(fn):
        for n in names:
            METHODS[n] = fn
        return fn
    return deco


def call_method(lw, obj, name, args, kwargs, node):
    if isinstance(obj, ListVal) or (isinstance(obj, EmptyList) and name == "append"):
        from .lists import list_method
        return list_method(lw, obj, name, args, kwargs, node)
    if isinstance(obj, Array) and name in METHODS:
        return METHODS[name](lw, obj, args, kwargs, node)
    if isinstance(obj, Tup) and name in ("append", "extend", "insert", "pop"):
        raise lw.err(UnsupportedError, f"a list written as a literal (`[1.0, 2.0]`) is a fixed "
                     f"tuple in compiled code and has no `{name}`: start with `[]` and append, "
                     "or use np.array", node)
    if isinstance(obj, Scalar) and name == "conjugate":
        return Scalar(lw.b.op("complex.conj", obj.value), obj.weak) if obj.type.is_complex else obj
    raise lw.err(UnsupportedError, f"{lw.describe(obj)} has no supported method `{name}`", node)


for _kind in ("sum", "prod", "max", "min", "mean", "argmax", "argmin", "any", "all"):
    METHODS[_kind] = (lambda kind: lambda lw, a, args, kwargs, node: _reducer(kind)(
        lw, [a, *args], kwargs, node))(_kind)


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


@method("dot")
def _m_dot(lw, a, args, kwargs, node):
    return lw.matmul(a, args[0], node)


def complex_part(lw, a: Array, name, node):
    op = "complex.re" if name == "real" else "complex.im"
    if not a.type.dtype.is_complex:
        return a if name == "real" else map_elements(
            lw, [a], lambda x: Scalar(lw.b.const(0, x.type)), a.type.dtype, node)
    return map_elements(lw, [a], lambda x: Scalar(lw.b.op(op, x.value), False),
                        a.type.dtype.real_type, node)


def fancy_read(lw, base, items, node):
    from .numpy_extra import fancy_read as impl
    return impl(lw, base, items, node)


def fancy_write(lw, base, items, value, node):
    from .numpy_extra import fancy_write as impl
    return impl(lw, base, items, value, node)


from . import numpy_extra  # noqa: E402,F401  (registers more handlers)
