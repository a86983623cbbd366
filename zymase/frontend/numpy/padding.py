"""``np.pad(a, pad_width, mode="constant", constant_values=0)``: a new array, ``a`` in the middle
and the border filled by ``mode``: ``"constant"``, ``"edge"``, ``"reflect"``, ``"symmetric"`` or
``"wrap"`` (the others are refused; ``reflect_type="odd"`` too).  ``pad_width`` (and
``constant_values``) take NumPy's forms: one number, ``(before, after)``, or one pair per axis;
the widths may be run-time ints (checked non-negative as NumPy checks).

The index modes read ``a`` at a source index per axis (``edge`` clamps, ``wrap`` is periodic,
``reflect``/``symmetric`` are periodic reflections, which is what NumPy's repeated padding gives
for widths beyond the array); ``constant`` fills the whole result, then copies ``a`` in (a
corner takes the constant of the last axis it pads, as in NumPy).  Derivatives are those of
the loads and stores."""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedError, ZymaseTypeError
from ...ir.ops import AddI, AndI, CmpI, MaxI, MinI, ModI, OrI, Select, SubI
from ...ir.types import I64
from ..emit import alloc, check, load, nest, store
from ..typing import Array, Scalar, Tup
from .arrays import as_array, operand
from .params import REQUIRED, bind, is_none, static
from .registry import register_all

MODES = ("constant", "edge", "reflect", "symmetric", "wrap")
OTHER_MODES = ("linear_ramp", "maximum", "mean", "median", "minimum", "empty")


def _pairs(lw, v, ndim, what, node):
    """``v`` in NumPy's forms (``n``, ``(n,)``, ``(before, after)``, ``((b0, a0), ...)``, one
    pair or one per axis) as ``ndim`` pairs of Scalars (NumPy broadcasts it to (ndim, 2))."""
    def bad():
        return lw.err(ZymaseTypeError, f"np.pad(): {what} does not fit an array of {ndim} "
                      "dimension(s): give one number, (before, after), or one (before, after) "
                      "pair per axis", node)

    if isinstance(v, Array):
        kind = "ints (run-time ints are fine)" if what == "pad_width" else "numbers"
        raise lw.err(UnsupportedError, f"np.pad(): {what} as an array is not supported: give "
                     f"one number or a tuple of {kind}", node)
    if isinstance(v, Scalar):
        return [(v, v)] * ndim
    if not isinstance(v, Tup) or not v.items:
        raise bad()
    items = v.items
    if all(isinstance(x, Scalar) for x in items):
        if len(items) > 2:
            raise bad()
        return [(items[0], items[-1])] * ndim
    if not all(isinstance(x, Tup) and 1 <= len(x.items) <= 2 and
               all(isinstance(y, Scalar) for y in x.items) for x in items):
        raise bad()
    if len(items) not in (1, ndim) or len({len(x.items) for x in items}) != 1:
        raise bad()  # (NumPy makes an array of it: the pairs are all of one length)
    rows = [(x.items[0], x.items[-1]) for x in items]
    return rows * ndim if len(rows) == 1 else rows


def _widths(lw, v, ndim, node):
    pairs = _pairs(lw, v, ndim, "pad_width", node)
    out = []
    for pair in pairs:
        ws = []
        for s in pair:
            if not s.type.is_int:
                raise lw.err(ZymaseTypeError, "np.pad(): `pad_width` must be of integral type "
                             f"(got {lw.describe(s)})", node)
            w = lw.b.cast(s.value, I64)
            k = lw.constant_of(Scalar(w))
            if k is not None and k < 0:
                raise lw.err(ZymaseTypeError, "np.pad(): index can't contain negative values",
                             node)
            if k is None:
                check(lw, lw.b.op(CmpI, w, lw.b.i64(0), pred="ge"), "ValueError",
                      "index can't contain negative values")
            ws.append(w)
        out.append(tuple(ws))
    return out


def _source_index(lw, mode, j, n):
    """The index of ``a`` (size ``n`` along this axis) read at ``j`` (relative to ``a``'s
    start; negative in the border before it)."""
    b = lw.b
    zero, one = b.i64(0), b.i64(1)
    if mode == "edge":
        return b.op(MinI, b.op(MaxI, j, zero), b.op(SubI, n, one))
    if mode == "wrap":
        return b.op(ModI, j, n)  # (Python's modulo: non-negative)
    if mode == "symmetric":  # ... 2 1 0 | 0 1 2 | 2 1 0 ...: period 2n
        period = b.op(AddI, n, n)
        k = b.op(ModI, j, period)
        back = b.op(SubI, b.op(SubI, period, one), k)
        return b.op(Select, b.op(CmpI, k, n, pred="lt"), k, back)
    # reflect: ... 2 1 | 0 1 2 | 1 0 ...: period 2n - 2 (one element: itself)
    single = b.op(CmpI, n, one, pred="eq")
    period = b.op(MaxI, b.op(SubI, b.op(AddI, n, n), b.i64(2)), one)
    k = b.op(ModI, j, period)
    back = b.op(SubI, period, k)
    k = b.op(Select, b.op(CmpI, k, n, pred="lt"), k, back)
    return b.op(Select, single, zero, k)


def _constant_fill(lw, out, a, widths, values):
    """Fill ``out`` with the constants (the last padded axis decides a corner, as NumPy pads
    one axis after the other), then copy ``a`` into the middle."""
    b = lw.b
    dims, src = lw.dims(out), lw.dims(a)
    flat = [v for pair in values for v in pair]
    if all(v is flat[0] for v in flat):
        nest(lw, dims, lambda idx, acc: store(lw, flat[0], out, idx), parallel=True)
    else:
        def fill(idx, acc):
            v = values[0][0]
            for d, (i, (before, _), (cb, ca)) in enumerate(zip(idx, widths, values)):
                lo = b.op(CmpI, i, before, pred="lt")
                hi = b.op(CmpI, i, b.op(AddI, before, src[d]), pred="ge")
                v = b.op(Select, lo, cb, b.op(Select, hi, ca, v))
            store(lw, v, out, idx)

        nest(lw, dims, fill, parallel=True)
    nest(lw, src, lambda idx, acc: store(
        lw, load(lw, a, idx), out, [b.op(AddI, i, w[0]) for i, w in zip(idx, widths)]),
        parallel=True)


def pad(lw, a: Array, widths, mode, values) -> Array:
    b = lw.b
    src = lw.dims(a)
    dims = [b.op(AddI, b.op(AddI, n, w0), w1) for n, (w0, w1) in zip(src, widths)]
    out = alloc(lw, a.type.dtype, dims)
    if mode == "constant":
        _constant_fill(lw, out, a, widths, values)
        return out
    for d, (n, (w0, w1)) in enumerate(zip(src, widths)):
        none = b.op(AndI, b.op(CmpI, w0, b.i64(0), pred="eq"),
                    b.op(CmpI, w1, b.i64(0), pred="eq"))
        check(lw, b.op(OrI, b.op(CmpI, n, b.i64(0), pred="gt"), none), "ValueError",
              f"can't extend empty axis {d} using modes other than 'constant' or 'empty'")

    def body(idx, acc):
        at = [_source_index(lw, mode, b.op(SubI, i, w[0]), n)
              for i, w, n in zip(idx, widths, src)]
        store(lw, load(lw, a, at), out, idx)

    nest(lw, dims, body, parallel=True)
    return out


def _pad(lw, args, kwargs, node):
    kwargs = dict(kwargs)
    reflect_type = kwargs.pop("reflect_type", None)
    p = bind(lw, "np.pad", args, kwargs, node, [("array", REQUIRED), ("pad_width", REQUIRED),
                                                 ("mode", "constant"), ("constant_values", None)])
    a = as_array(lw, p["array"], "np.pad", node)
    mode = p["mode"] if isinstance(p["mode"], str) else static(lw, p["mode"])
    if callable(mode):
        raise lw.err(UnsupportedError, "np.pad() with a function as mode is not supported: "
                     f"use one of {', '.join(map(repr, MODES))}", node)
    if mode not in MODES:
        if mode in OTHER_MODES:
            raise lw.err(UnsupportedError, f"np.pad(mode={mode!r}) is not supported in compiled "
                         f"code: the modes are {', '.join(map(repr, MODES))}", node)
        raise lw.err(ZymaseTypeError, f"np.pad(): mode {mode!r} is not a padding mode (the "
                     f"supported ones: {', '.join(map(repr, MODES))})", node)
    if reflect_type is not None:
        if mode not in ("reflect", "symmetric"):
            raise lw.err(ZymaseTypeError, f"np.pad(): mode {mode!r} takes no reflect_type",
                         node)
        if static(lw, reflect_type) != "even":
            raise lw.err(UnsupportedError, "np.pad(reflect_type='odd') is not supported: only "
                         "the default 'even' reflection", node)
    nd = a.type.ndim
    widths = _widths(lw, p["pad_width"], nd, node)
    values = None
    if mode == "constant":
        cv = 0 if is_none(p["constant_values"]) else p["constant_values"]
        cv = lw.pyvalue(cv, node) if isinstance(cv, (int, float)) else cv
        cv = cv if isinstance(cv, (Tup, Array)) else operand(lw, cv, node)
        pairs = _pairs(lw, cv, nd, "constant_values", node)
        t = a.type.dtype
        if any(s.type.is_complex for pair in pairs for s in pair) and not t.is_complex:
            raise lw.err(ZymaseTypeError, "np.pad(): complex constant_values for a real array",
                         node)
        cast = {}  # (one cast per Scalar: a single constant fills without selects)
        for s in (s for pair in pairs for s in pair):
            if id(s) not in cast:
                cast[id(s)] = lw.b.cast(s.value, t)
        values = [tuple(cast[id(s)] for s in pair) for pair in pairs]
    elif not is_none(p["constant_values"]):
        raise lw.err(ZymaseTypeError, f"np.pad(): mode {mode!r} takes no constant_values "
                     "(only mode='constant' does)", node)
    return pad(lw, a, widths, mode, values)


register_all({np.pad: _pad})
