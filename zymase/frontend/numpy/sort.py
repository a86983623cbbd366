"""Sorting: ``np.argsort``, ``np.sort``, ``a.argsort()``, ``a.sort()`` (in place) along any axis
(``axis=None``: of the flattened array), and ``np.median``; ``np.searchsorted``, ``np.unique``;
``np.nonzero``/``a.nonzero()``, ``np.flatnonzero`` and ``np.argwhere`` of arrays of any rank
(their length known only when the function runs: the flat indices of ``library.flatnonzero``,
unravelled).

The indices come from ``library.argsort_stable`` (a merge sort in plain Python, compiled like a
user's helper); a sort is the gather ``a[idx]``, so its derivative is the gather's (reverse
mode scatters the adjoint back through the same permutation).  Equal elements keep their index
order, as NumPy's ``kind="stable"``; NumPy's default quicksort may order equal elements
otherwise, which only ``argsort`` shows.  NaN sorts last, as in NumPy.  An N-D array is sorted
line by line (``argsort_along``: the lines as the rows of a matrix, each sorted by the same
merge sort, ``library.argsort_rows``); a 1-D one takes the 1-D routine as before.
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedError, ZymaseTypeError
from ...ir.ops import FloorDivI, ModI, Transpose
from ...ir.types import I1, I64
from ..emit import alloc, load, nest, size_of, store
from ..library import (
    argsort_rows,
    argsort_stable,
    flatnonzero,
    median,
    searchsorted,
    unique,
)
from ..typing import Array, PyObj, Scalar, Tup
from .arrays import array_from_sequence, as_array, operand
from .params import REQUIRED, bind, const_int, is_none, norm_axis, static
from .registry import add_methods, register_all
from .shape import ravel, reshaped

KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def _params(lw, fname, args, kwargs, node, first):
    """The bound arguments; every ``kind`` gives the stable order (a valid answer for each),
    ``stable=`` likewise."""
    rest = {k: v for k, v in kwargs.items() if k != "stable"}
    p = bind(lw, fname, args, rest, node, ([(first, REQUIRED)] if first else []) + [
        ("axis", -1), ("kind", None), ("order", None)])
    if not is_none(p["order"]):
        raise lw.err(UnsupportedError, f"{fname}(order=...) is not supported (structured "
                     "arrays)", node)
    if not is_none(p["kind"]) and static(lw, p["kind"]) not in KINDS:
        raise lw.err(UnsupportedError, f"{fname}(kind=...) must be one of {KINDS[1:]}", node)
    return p


def _one_dim(lw, a, axis, fname, node) -> Array:
    if a.type.dtype.is_complex:
        raise lw.err(UnsupportedError, f"{fname}() of complex numbers is not supported", node)
    ax = None if is_none(axis) else static(lw, axis)
    if a.type.ndim != 1 or ax not in (None, 0, -1):
        raise lw.err(UnsupportedError, f"{fname}() is supported for 1-D arrays (here: ndim="
                     f"{a.type.ndim}, axis={ax}); sort each row in a loop", node)
    return a


def argsort(lw, a: Array, node) -> Array:
    return lw.call_library(argsort_stable, [a], node)


def gather(lw, a: Array, idx: Array) -> Array:
    out = alloc(lw, a.type.dtype, lw.dims(a))
    nest(lw, lw.dims(a), lambda i, acc: store(
        lw, load(lw, a, [load(lw, idx, i)]), out, i))
    return out


def _np_argsort(lw, args, kwargs, node):
    p = _params(lw, "np.argsort", args, kwargs, node, "a")
    a, axis = _line_axis(lw, as_array(lw, p["a"], "np.argsort", node), p["axis"], "np.argsort",
                         node)
    return argsort(lw, a, node) if axis is None else argsort_along(lw, a, axis, node)


def _np_sort(lw, args, kwargs, node):
    p = _params(lw, "np.sort", args, kwargs, node, "a")
    a, axis = _line_axis(lw, as_array(lw, p["a"], "np.sort", node), p["axis"], "np.sort", node)
    if axis is None:
        return gather(lw, a, argsort(lw, a, node))
    return gather_along(lw, a, axis, argsort_along(lw, a, axis, node))


def _m_argsort(lw, a, args, kwargs, node):
    p = _params(lw, "ndarray.argsort", args, kwargs, node, None)
    a, axis = _line_axis(lw, a, p["axis"], "ndarray.argsort", node)
    return argsort(lw, a, node) if axis is None else argsort_along(lw, a, axis, node)


def _m_sort(lw, a, args, kwargs, node):
    """``a.sort()``: sorted in place (through a sorted copy)."""
    p = _params(lw, "ndarray.sort", args, kwargs, node, None)
    if is_none(p["axis"]):
        raise lw.err(ZymaseTypeError, "ndarray.sort(axis=None) is not allowed (as in NumPy): "
                     "give an axis, or sort a flattened copy with np.sort(a, axis=None)", node)
    line, axis = _line_axis(lw, a, p["axis"], "ndarray.sort", node)
    if axis is None:
        s = gather(lw, line, argsort(lw, line, node))
    else:
        s = gather_along(lw, line, axis, argsort_along(lw, line, axis, node))
    nest(lw, lw.dims(a), lambda i, acc: store(lw, load(lw, s, i), a, i))
    return PyObj(None)


# ---------------------------------------------------------------------- sorting N-D arrays


def _line_axis(lw, a: Array, axis, fname, node):
    """(the array, the axis its lines run along) for a sort: axis None for a 1-D array (the
    1-D routine), which ``axis=None`` makes of a flattened copy."""
    if a.type.dtype.is_complex:
        raise lw.err(UnsupportedError, f"{fname}() of complex numbers is not supported", node)
    if is_none(axis):
        return (a if a.type.ndim == 1 else ravel(lw, a)), None
    ax = norm_axis(lw, const_int(lw, axis, f"{fname}(axis=)", node), a.type.ndim, node)
    return a, (None if a.type.ndim == 1 else ax)


def argsort_along(lw, a: Array, axis: int, node) -> Array:
    """The indices sorting each line of ``a`` along ``axis`` (stable): the lines moved last
    and flattened to the rows of a matrix (a copy where ``a`` is not contiguous so), each row
    sorted by ``library.argsort_rows``, the result viewed back in ``a``'s axes."""
    b = lw.b
    nd = a.type.ndim
    perm = [d for d in range(nd) if d != axis] + [axis]
    moved = a if axis == nd - 1 else Array(b.op(Transpose, a.value, perm=perm))
    dims = lw.dims(moved)
    rows = reshaped(lw, moved, [size_of(lw, dims[:-1]), dims[-1]])
    idx = reshaped(lw, lw.call_library(argsort_rows, [rows], node), dims)
    if axis == nd - 1:
        return idx
    back = [perm.index(d) for d in range(nd)]
    return Array(b.op(Transpose, idx.value, perm=back))


def gather_along(lw, a: Array, axis: int, idx: Array) -> Array:
    """``np.take_along_axis(a, idx, axis)`` for ``idx`` of ``a``'s shape (in range)."""
    dims = lw.dims(a)
    out = alloc(lw, a.type.dtype, dims)

    def body(i, acc):
        at = list(i)
        at[axis] = load(lw, idx, i)
        store(lw, load(lw, a, at), out, i)

    nest(lw, dims, body, parallel=True)
    return out


def _np_median(lw, args, kwargs, node):
    """``np.median(a)`` of any array (all elements) or ``axis=0`` of a 1-D one."""
    p = bind(lw, "np.median", args, kwargs, node, [("a", REQUIRED), ("axis", None),
                                                      ("out", None), ("overwrite_input", False)],
             {"keepdims": False})
    if not is_none(p["out"]):
        raise lw.err(UnsupportedError, "np.median(out=...) is not supported", node)
    a = as_array(lw, p["a"], "np.median", node)
    if a.type.dtype.is_complex:
        raise lw.err(UnsupportedError, "np.median() of complex numbers is not supported", node)
    if not is_none(p["axis"]):
        a = _one_dim(lw, a, p["axis"], "np.median(axis=...)", node)
    if a.type.ndim != 1:
        a = ravel(lw, a)
    return lw.call_library(median, [a], node)


register_all({np.argsort: _np_argsort, np.sort: _np_sort, np.median: _np_median})
add_methods({"argsort": _m_argsort, "sort": _m_sort})


def _searchsorted(lw, args, kwargs, node):
    p = bind(lw, "np.searchsorted", args, kwargs, node,
             [("a", REQUIRED), ("v", REQUIRED), ("side", "left"), ("sorter", None)])
    if not is_none(p["sorter"]):
        raise lw.err(UnsupportedError, "np.searchsorted(sorter=) is not supported: sort first",
                     node)
    side = static(lw, p["side"]) if not isinstance(p["side"], str) else p["side"]
    if side not in ("left", "right"):
        raise lw.err(UnsupportedError, "np.searchsorted(side=) is 'left' or 'right'", node)
    a = as_array(lw, p["a"], "np.searchsorted", node)
    if a.type.ndim != 1 or a.type.dtype.is_complex:
        raise lw.err(UnsupportedError, "np.searchsorted() needs a 1-D real array", node)
    v = operand(lw, p["v"], node)
    flat = array_from_sequence(lw, Tup((v,)), node) if isinstance(v, Scalar) else \
        v if v.type.ndim == 1 else ravel(lw, v)
    right = Scalar(lw.b.const(side == "right", I1), True)
    out = lw.call_library(searchsorted, [a, flat, right], node)
    if isinstance(v, Scalar):
        return Scalar(load(lw, out, [lw.b.i64(0)]), False)
    return out if v.type.ndim == 1 else reshaped(lw, out, lw.dims(v))


register_all({np.searchsorted: _searchsorted})


def _unique(lw, args, kwargs, node):
    p = bind(lw, "np.unique", args, kwargs, node, [("ar", REQUIRED)],
             {"return_index": False, "return_inverse": False, "return_counts": False,
              "axis": None, "equal_nan": True})
    a = as_array(lw, p["ar"], "np.unique", node)
    if a.type.dtype.is_complex:
        raise lw.err(UnsupportedError, "np.unique() of complex numbers is not supported", node)
    return lw.call_library(unique, [a if a.type.ndim == 1 else ravel(lw, a)], node)


def _flatnonzero(lw, args, kwargs, node):
    p = bind(lw, "np.flatnonzero", args, kwargs, node, [("a", REQUIRED)])
    a = as_array(lw, p["a"], "np.flatnonzero", node)
    return lw.call_library(flatnonzero, [a if a.type.ndim == 1 else ravel(lw, a)], node)


def nonzero_coordinates(lw, a: Array, node) -> list[Array]:
    """The indices of ``a``'s non-zero elements along each axis, in C order (NumPy's
    ``nonzero``): ``library.flatnonzero`` of ``a`` raveled, each flat index unravelled (the
    count is known only when the function runs)."""
    b = lw.b
    nd = a.type.ndim
    flat = lw.call_library(flatnonzero, [a if nd == 1 else ravel(lw, a)], node)
    if nd == 1:
        return [flat]
    dims = lw.dims(a)
    count = lw.dim(flat, 0)
    outs = [alloc(lw, I64, [count]) for _ in range(nd)]

    def body(idx, acc):
        f = load(lw, flat, idx)
        for d in range(nd - 1, 0, -1):
            store(lw, b.op(ModI, f, dims[d]), outs[d], idx)
            f = b.op(FloorDivI, f, dims[d])
        store(lw, f, outs[0], idx)

    nest(lw, [count], body)
    return outs


def _nonzero(lw, args, kwargs, node):
    p = bind(lw, "np.nonzero", args, kwargs, node, [("a", REQUIRED)])
    a = as_array(lw, p["a"], "np.nonzero", node)
    return Tup(tuple(nonzero_coordinates(lw, a, node)))


def _argwhere(lw, args, kwargs, node):
    """``np.argwhere(a)``: the (count, ndim) array of the non-zero elements' indices."""
    p = bind(lw, "np.argwhere", args, kwargs, node, [("a", REQUIRED)])
    a = as_array(lw, p["a"], "np.argwhere", node)
    cols = nonzero_coordinates(lw, a, node)
    count = lw.dim(cols[0], 0)
    out = alloc(lw, I64, [count, lw.b.i64(len(cols))])

    def body(idx, acc):
        for d, c in enumerate(cols):
            store(lw, load(lw, c, idx), out, [idx[0], lw.b.i64(d)])

    nest(lw, [count], body)
    return out


def _m_nonzero(lw, a, args, kwargs, node):
    bind(lw, "ndarray.nonzero", args, kwargs, node, [])
    return Tup(tuple(nonzero_coordinates(lw, a, node)))


register_all({np.unique: _unique, np.flatnonzero: _flatnonzero, np.nonzero: _nonzero,
              np.argwhere: _argwhere})
add_methods({"nonzero": _m_nonzero})
