"""Arrays edited into new ones: ``np.append``, ``np.insert`` and ``np.delete`` (an int, a list or
1-D array of ints or booleans, or a slice known when compiling, along ``axis`` or of the
flattened array), ``np.take`` (``mode="raise"``, ``"wrap"``, ``"clip"``),
``np.take_along_axis``, ``np.rot90`` (a view, as NumPy's flips and transposes) and ``np.isin``.

``insert`` follows NumPy's two cases: one index (an int, or one element in a list or array)
takes all the values there in a row (an int index moves ``values``' first axis to ``axis``),
several indices take one slice each in a stable order; the new and old positions come from
``library.insert_positions``, ``delete``'s kept ones from ``library.kept_indices``, both when the
function runs.  Indices are checked as NumPy checks them (IndexError naming the index and the
size) and negative ones count from the end.  Values are cast to the array's type (complex
values into a real array are refused, as NumPy refuses them).  ``isin`` sorts the test values
and searches each element (``library.isin_sorted``); its result is boolean.  Derivatives flow
through the copies and gathers (an inserted value gets the adjoint of where it lands).
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedError, ZymaseIndexError, ZymaseTypeError, ZymaseValueError
from ...ir.ops import (
    AddI,
    AndI,
    Assert,
    CmpI,
    MaxI,
    MinI,
    ModI,
    MulI,
    Not,
    Select,
    SubI,
    Transpose,
)
from ...ir.types import I1, I64
from ..emit import alloc, check, load, nest, store
from ..library import flatnonzero, insert_positions, isin_sorted, kept_indices
from ..typing import Array, EmptyList, PyObj, Scalar, Tup
from .arrays import (
    array_from_sequence,
    as_array,
    broadcast_shapes,
    broadcast_to,
    check_broadcastable,
    map_elements,
    operand,
)
from .axes import flip
from .params import REQUIRED, bind, const_int, is_none, norm_axis, static
from .registry import register_all
from .shape import concatenate, ravel, reshaped


def _flat(lw, a: Array) -> Array:
    return a if a.type.ndim == 1 else ravel(lw, a)


def _along(idx, axis, i):
    """``idx`` with its entry at ``axis`` replaced by ``i``."""
    return idx[:axis] + [i] + idx[axis + 1:]


def _check_index(lw, i, n, axis, upper_ok: bool):
    """IndexError unless ``-n <= i < n`` (``<= n`` with ``upper_ok``: insertion points)."""
    b = lw.b
    ok = b.op(AndI, b.op(CmpI, i, b.op(SubI, b.i64(0), n), pred="ge"),
              b.op(CmpI, i, n, pred="le" if upper_ok else "lt"))
    check_values(lw, ok, i, n, f"index {{a}} is out of bounds for axis {axis} with size {{b}}")


def check_values(lw, ok, a, b, msg, kind="IndexError"):
    """IndexError unless ``ok``; ``{a}``/``{b}`` in ``msg`` show the i64 values ``a``/``b``."""
    lw.b.create(Assert, [ok, a, b], [], {"kind": kind, "msg": msg})


# ---------------------------------------------------------------------- append


def _as_strong_array(lw, v, node) -> Array:
    """NumPy's ``asarray``/``ravel`` of an operand: a number becomes a 1-element array of its
    default type (a Python float is float64 here, not weak)."""
    v = operand(lw, v, node)
    if isinstance(v, Scalar):
        return array_from_sequence(lw, Tup((Scalar(v.value, False),)), node)
    return v


def _append(lw, args, kwargs, node):
    p = bind(lw, "np.append", args, kwargs, node,
             [("arr", REQUIRED), ("values", REQUIRED), ("axis", None)])
    arr, values = (_as_strong_array(lw, p[k], node) for k in ("arr", "values"))
    if is_none(p["axis"]):
        return concatenate(lw, [arr, values], None, None, node)
    if arr.type.ndim != values.type.ndim:
        raise lw.err(ZymaseValueError, "np.append(axis=...): arr and values must have the same "
                     f"number of dimensions (here {arr.type.ndim} and {values.type.ndim})", node)
    return concatenate(lw, [arr, values], const_int(lw, p["axis"], "axis", node), None, node)


# ---------------------------------------------------------------------- insert, delete


def _array_and_axis(lw, p, fname, node):
    arr = as_array(lw, p["arr"], fname, node)
    if is_none(p["axis"]):
        return _flat(lw, arr), 0
    return arr, norm_axis(lw, const_int(lw, p["axis"], "axis", node), arr.type.ndim, node)


def _index_array(lw, obj, n, fname, node):
    """``obj`` as indices along an axis of size ``n``: ("int", Scalar), ("slice", I64 Array),
    ("mask", bool Array), ("ints", I64 Array, its length when known when compiling)."""
    b = lw.b
    if isinstance(obj, PyObj) and isinstance(obj.obj, slice):
        s = obj.obj
        parts = [None if x is None else lw.pyvalue(x, node) for x in (s.start, s.stop, s.step)]
        if any(x is not None and not (isinstance(x, Scalar) and x.type.is_int) for x in parts):
            raise lw.err(ZymaseTypeError, f"{fname}(): slice indices must be integers", node)
        lo, size, step = lw.norm_slice(*parts, n, node)
        out = alloc(lw, I64, [size])
        nest(lw, [size], lambda idx, acc: store(
            lw, b.op(AddI, lo, b.op(MulI, idx[0], step)), out, idx))
        return "slice", out, None
    if isinstance(obj, EmptyList):
        return "ints", alloc(lw, I64, [b.i64(0)]), 0
    known = len(obj.items) if isinstance(obj, Tup) else None
    v = operand(lw, obj, node)
    if isinstance(v, Scalar):
        if not v.type.is_int or v.type.is_bool:
            raise lw.err(ZymaseTypeError, f"{fname}(): an index must be an integer, not "
                         f"{lw.describe(v)}", node)
        return "int", Scalar(b.cast(v.value, I64), v.weak), None
    if v.type.ndim != 1:
        raise lw.err(ZymaseValueError, f"{fname}(): an index array must be one dimensional "
                     "(or an int)", node)
    if v.type.dtype.is_bool:
        return "mask", v, None
    if not v.type.dtype.is_int:
        raise lw.err(ZymaseIndexError, f"{fname}(): arrays used as indices must be of integer "
                     f"(or boolean) type, not {v.type.dtype.np_dtype.name}", node)
    if v.type.dtype != I64:
        v = map_elements(lw, [v], lambda x: Scalar(b.cast(x.value, I64), False), I64, node)
    return "ints", v, known


def _check_all(lw, idx: Array, n, axis, upper_ok):
    nest(lw, lw.dims(idx), lambda i, acc: _check_index(lw, load(lw, idx, i), n, axis, upper_ok))


def _one(lw, i) -> Array:
    out = alloc(lw, I64, [lw.b.i64(1)])
    store(lw, i, out, [lw.b.i64(0)])
    return out


def _padded(lw, v: Array, nd, fname, node) -> Array:
    """``np.array(v, ndmin=nd)``: leading size-1 axes (a view)."""
    if v.type.ndim > nd:
        raise lw.err(UnsupportedError, f"{fname}(): values of more dimensions ({v.type.ndim}) "
                     f"than the array ({nd}) are not supported", node)
    if v.type.ndim == nd:
        return v
    dims = [lw.b.i64(1)] * (nd - v.type.ndim) + lw.dims(v)
    return reshaped(lw, v, dims)


def _insert(lw, args, kwargs, node):
    fname = "np.insert"
    p = bind(lw, fname, args, kwargs, node,
             [("arr", REQUIRED), ("obj", REQUIRED), ("values", REQUIRED), ("axis", None)])
    arr, axis = _array_and_axis(lw, p, fname, node)
    b = lw.b
    t = arr.type.dtype
    nd = arr.type.ndim
    n = lw.dim(arr, axis)
    values = operand(lw, p["values"], node)
    vt = values.type if isinstance(values, Scalar) else values.type.dtype
    if vt.is_complex and not t.is_complex:
        raise lw.err(ZymaseTypeError, f"{fname}(): complex values cannot be inserted into an "
                     f"array of {t.np_dtype.name}", node)
    if isinstance(values, Scalar):
        values = array_from_sequence(lw, Tup((values,)), node)
    vals = _padded(lw, values, nd, fname, node)
    kind, idx, known = _index_array(lw, p["obj"], n, fname, node)
    if kind == "mask":
        idx, known = lw.call_library(flatnonzero, [idx], node), None
    if kind == "int":
        _check_index(lw, idx.value, n, axis, True)
        idx, known = _one(lw, idx.value), 1
        if axis:  # (NumPy: np.moveaxis(values, 0, axis))
            perm = list(range(1, axis + 1)) + [0] + list(range(axis + 1, nd))
            vals = Array(b.op(Transpose, vals.value, perm=perm))
    else:
        _check_all(lw, idx, n, axis, True)
    count = lw.dim(idx, 0)
    single = lw.dim(vals, axis)  # (one index takes all of them)
    if known == 1:
        numnew = single
    elif known is not None:
        numnew = count
    else:
        numnew = b.op(Select, b.op(CmpI, count, b.i64(1), pred="eq"), single, count)
    target = _along(lw.dims(arr), axis, numnew)
    check_broadcastable(lw, vals, target, node)
    vals = broadcast_to(lw, vals, target)
    pos, old = lw.call_library(insert_positions, [idx, Scalar(n, True), Scalar(numnew, True)],
                               node).items
    out = alloc(lw, t, _along(lw.dims(arr), axis, b.op(AddI, n, numnew)))
    nest(lw, lw.dims(arr), lambda i, acc: store(
        lw, load(lw, arr, i), out, _along(i, axis, load(lw, old, [i[axis]]))))
    nest(lw, target, lambda i, acc: store(
        lw, b.cast(load(lw, vals, i), t), out, _along(i, axis, load(lw, pos, [i[axis]]))))
    return out


def gather_along(lw, a: Array, axis, kept: Array) -> Array:
    """``a[..., kept, ...]`` along ``axis`` (``kept`` 1-D int64, in range)."""
    dims = _along(lw.dims(a), axis, lw.dim(kept, 0))
    out = alloc(lw, a.type.dtype, dims)
    nest(lw, dims, lambda i, acc: store(
        lw, load(lw, a, _along(i, axis, load(lw, kept, [i[axis]]))), out, i), parallel=True)
    return out


def _delete(lw, args, kwargs, node):
    fname = "np.delete"
    p = bind(lw, fname, args, kwargs, node, [("arr", REQUIRED), ("obj", REQUIRED),
                                               ("axis", None)])
    arr, axis = _array_and_axis(lw, p, fname, node)
    b = lw.b
    n = lw.dim(arr, axis)
    kind, idx, _ = _index_array(lw, p["obj"], n, fname, node)
    if kind == "mask":
        check_values(lw, b.op(CmpI, lw.dim(idx, 0), n, pred="eq"), lw.dim(idx, 0), n,
                     "boolean array argument obj to delete must be one dimensional and match "
                     "the axis length of {b} (got {a})", "ValueError")
        keep = map_elements(lw, [idx], lambda x: Scalar(b.op(Not, x.value), False), I1, node)
        kept = lw.call_library(flatnonzero, [keep], node)
        return gather_along(lw, arr, axis, kept)
    if kind == "int":
        _check_index(lw, idx.value, n, axis, False)
        idx = _one(lw, idx.value)
    elif kind == "ints":
        _check_all(lw, idx, n, axis, False)
    kept = lw.call_library(kept_indices, [idx, Scalar(n, True)], node)
    return gather_along(lw, arr, axis, kept)


# ---------------------------------------------------------------------- take, take_along_axis

TAKE_MODES = ("raise", "wrap", "clip")


def _source(lw, i, n, axis, mode):
    """The index read for index ``i`` along an axis of size ``n``: NumPy's ``mode``."""
    b = lw.b
    if mode == "raise":
        _check_index(lw, i, n, axis, False)
        return b.op(Select, b.op(CmpI, i, b.i64(0), pred="lt"), b.op(AddI, i, n), i)
    if mode == "wrap":
        return b.op(ModI, i, n)
    return b.op(MaxI, b.op(MinI, i, b.op(SubI, n, b.i64(1))), b.i64(0))


def _take(lw, args, kwargs, node):
    fname = "np.take"
    p = bind(lw, fname, args, kwargs, node, [("a", REQUIRED), ("indices", REQUIRED),
                                               ("axis", None), ("out", None), ("mode", "raise")])
    if not is_none(p["out"]):
        raise lw.err(UnsupportedError, f"{fname}(out=...) is not supported", node)
    mode = p["mode"] if isinstance(p["mode"], str) else static(lw, p["mode"])
    if mode not in TAKE_MODES:
        raise lw.err(ZymaseValueError, f"{fname}(): mode must be one of {TAKE_MODES} (a "
                     "constant)", node)
    a = as_array(lw, p["a"], fname, node)
    if is_none(p["axis"]):
        a, axis = _flat(lw, a), 0
    else:
        axis = norm_axis(lw, const_int(lw, p["axis"], "axis", node), a.type.ndim, node)
    b = lw.b
    ind = operand(lw, p["indices"], node)
    it = ind.type if isinstance(ind, Scalar) else ind.type.dtype
    if not it.is_int or it.is_bool:
        raise lw.err(ZymaseTypeError, f"{fname}(): indices must be integers, not "
                     f"{lw.describe(ind)}", node)
    n = lw.dim(a, axis)
    if mode != "raise":
        check(lw, b.op(CmpI, n, b.i64(0), pred="gt"), "IndexError",
              "cannot do a non-empty take from an empty axes.")
    dims = lw.dims(a)
    if isinstance(ind, Scalar):
        i = _source(lw, b.cast(ind.value, I64), n, axis, mode)
        if a.type.ndim == 1:
            return Scalar(load(lw, a, [i]), False)
        out_dims = dims[:axis] + dims[axis + 1:]
        out = alloc(lw, a.type.dtype, out_dims)
        nest(lw, out_dims, lambda o, acc: store(
            lw, load(lw, a, o[:axis] + [i] + o[axis:]), out, o), parallel=True)
        return out
    k = ind.type.ndim
    out_dims = dims[:axis] + lw.dims(ind) + dims[axis + 1:]
    out = alloc(lw, a.type.dtype, out_dims)

    def body(o, acc):
        i = _source(lw, b.cast(load(lw, ind, o[axis:axis + k]), I64), n, axis, mode)
        store(lw, load(lw, a, o[:axis] + [i] + o[axis + k:]), out, o)

    nest(lw, out_dims, body)
    return out


def _take_along_axis(lw, args, kwargs, node):
    fname = "np.take_along_axis"
    p = bind(lw, fname, args, kwargs, node, [("arr", REQUIRED), ("indices", REQUIRED),
                                               ("axis", -1)])
    arr = as_array(lw, p["arr"], fname, node)
    ind = as_array(lw, p["indices"], fname, node)
    if not ind.type.dtype.is_int or ind.type.dtype.is_bool:
        raise lw.err(ZymaseIndexError, f"{fname}(): `indices` must be an integer array", node)
    if is_none(p["axis"]):
        if ind.type.ndim != 1:
            raise lw.err(ZymaseValueError, f"{fname}(): when axis=None, `indices` must have a "
                         "single dimension.", node)
        arr, axis = _flat(lw, arr), 0
    else:
        if ind.type.ndim != arr.type.ndim:
            raise lw.err(ZymaseValueError, f"{fname}(): `indices` and `arr` must have the same "
                         "number of dimensions", node)
        axis = norm_axis(lw, const_int(lw, p["axis"], "axis", node), arr.type.ndim, node)
    ad, idd = lw.dims(arr), lw.dims(ind)
    other = broadcast_shapes(lw, [ad[:axis] + ad[axis + 1:], idd[:axis] + idd[axis + 1:]])
    out_dims = other[:axis] + [idd[axis]] + other[axis:]
    n = ad[axis]
    src = broadcast_to(lw, arr, other[:axis] + [n] + other[axis:])
    ind = broadcast_to(lw, ind, out_dims)
    out = alloc(lw, arr.type.dtype, out_dims)

    def body(o, acc):
        i = _source(lw, lw.b.cast(load(lw, ind, o), I64), n, axis, "raise")
        store(lw, load(lw, src, _along(o, axis, i)), out, o)

    nest(lw, out_dims, body, parallel=True)
    return out


# ---------------------------------------------------------------------- rot90


def _rot90(lw, args, kwargs, node):
    fname = "np.rot90"
    p = bind(lw, fname, args, kwargs, node, [("m", REQUIRED), ("k", 1), ("axes", (0, 1))])
    m = as_array(lw, p["m"], fname, node)
    nd = m.type.ndim
    k = p["k"] if isinstance(p["k"], int) else const_int(lw, p["k"], "np.rot90(k=)", node)
    axes = p["axes"]
    items = list(axes) if isinstance(axes, tuple) else \
        [const_int(lw, x, "np.rot90(axes=)", node) for x in axes.items] \
        if isinstance(axes, Tup) else None
    if items is None or len(items) != 2:
        raise lw.err(ZymaseValueError, f"{fname}(): len(axes) must be 2.", node)
    if items[0] == items[1] or abs(items[0] - items[1]) == nd:
        raise lw.err(ZymaseValueError, f"{fname}(): Axes must be different.", node)
    if not all(-nd <= x < nd for x in items):
        raise lw.err(ZymaseValueError, f"{fname}(): Axes={tuple(items)} out of range for array "
                     f"of dimension {nd}", node)
    a0, a1 = (x % nd for x in items)
    k %= 4
    if k == 0:
        return Array(lw.subview(m, [], node))
    if k == 2:
        return flip(lw, m, [a0, a1], node)
    perm = list(range(nd))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return Array(lw.b.op(Transpose, flip(lw, m, [a1], node).value, perm=perm))
    return flip(lw, Array(lw.b.op(Transpose, m.value, perm=perm)), [a1], node)


# ---------------------------------------------------------------------- isin


def _isin(lw, args, kwargs, node):
    fname = "np.isin"
    p = bind(lw, fname, args, kwargs, node,
             [("element", REQUIRED), ("test_elements", REQUIRED), ("assume_unique", False),
              ("invert", False), ("kind", None)])
    el = operand(lw, p["element"], node)
    if isinstance(el, Scalar):
        raise lw.err(UnsupportedError, f"{fname}() of a number gives a 0-d array, which is not "
                     "supported: use np.any(test_elements == x)", node)
    test = _as_strong_array(lw, p["test_elements"], node)
    if el.type.dtype.is_complex or test.type.dtype.is_complex:
        raise lw.err(UnsupportedError, f"{fname}() of complex numbers is not supported", node)
    invert = p["invert"] if isinstance(p["invert"], bool) else static(lw, p["invert"])
    if not isinstance(invert, (bool, np.bool_)):
        raise lw.err(UnsupportedError, f"{fname}(invert=...) must be True or False, known when "
                     "compiling", node)
    kind = None if is_none(p["kind"]) else static(lw, p["kind"])
    if kind not in (None, "sort", "table"):
        raise lw.err(ZymaseValueError, f"{fname}(): kind must be None, 'sort' or 'table'", node)
    flag = Scalar(lw.b.const(bool(invert), I1), True)
    out = lw.call_library(isin_sorted, [_flat(lw, el), _flat(lw, test), flag], node)
    return out if el.type.ndim == 1 else reshaped(lw, out, lw.dims(el))


register_all({
    np.append: _append, np.insert: _insert, np.delete: _delete, np.take: _take,
    np.take_along_axis: _take_along_axis, np.rot90: _rot90, np.isin: _isin,
})  # fmt: skip
