"""Counting into bins: ``np.bincount(x, weights=None, minlength=0)`` and
``np.histogram(a, bins=10, range=None, weights=None, density=False)`` with a number of equal
bins (known when compiling or not) or an array of edges, each value placed as NumPy places it
(the same arithmetic and the same corrections at the edges, so a value on an edge lands where
NumPy puts it).  The counts' derivative with respect to ``weights`` is the scatter's; with
respect to the values it is zero, and the edges follow the values' min and max when ``range``
is not given."""

from __future__ import annotations

import numpy as np

from ...errors import ZymaseTypeError
from ...ir.ops import (
    AddI,
    AndI,
    Assert,
    CmpF,
    CmpI,
    DivF,
    IsFinite,
    Load,
    MaxI,
    MaximumF,
    MinimumF,
    MulF,
    Select,
    Store,
    SubF,
    SubI,
)
from ...ir.types import F64, I64
from .. import library
from ..emit import alloc, arith, check, load, nest, store
from ..typing import Array, Scalar, Tup
from .arrays import as_array, map_elements, sdtype
from .params import REQUIRED, bind, is_none
from .registry import register_all
from .shape import ravel


def _flat(lw, v, fname, node) -> Array:
    a = as_array(lw, v, fname, node)
    return a if a.type.ndim == 1 else ravel(lw, a)


def bincount(lw, x: Array, weights, minlength, node) -> Array:
    """Counts (or sums of ``weights``) of each value of ``x``, non-negative ints."""
    b = lw.b
    n = lw.dim(x, 0)
    if weights is not None:
        ok = b.op(CmpI, lw.dim(weights, 0), n, pred="eq")
        b.create(Assert, [ok, lw.dim(weights, 0), n], [],
                 {"kind": "ValueError", "msg": "The weights and list don't have the same "
                  "length ({a} and {b})"})

    def biggest(idx, acc):
        v = b.cast(load(lw, x, idx), I64)
        check(lw, b.op(CmpI, v, b.i64(0), pred="ge"), "ValueError",
              "'list' argument must have no negative elements")
        return [b.op(MaxI, acc[0], v)]

    (top,) = nest(lw, [n], biggest, carried=[b.i64(-1)])
    size = b.op(MaxI, b.op(AddI, top, b.i64(1)), minlength)
    t = I64 if weights is None else sdtype(weights).type
    out = alloc(lw, t, [size], init="zero")

    def add(idx, acc):
        k = b.cast(load(lw, x, idx), I64)
        w = b.const(1, t) if weights is None else b.cast(load(lw, weights, idx), t)
        old = b.op(Load, out.value, k)
        b.create(Store, [arith(lw, "add", old, w), out.value, k])

    nest(lw, [n], add)
    return out


def _bincount(lw, args, kwargs, node):
    p = bind(lw, "np.bincount", args, kwargs, node,
             [("x", REQUIRED), ("weights", None), ("minlength", 0)])
    x = as_array(lw, p["x"], "np.bincount", node)
    if x.type.ndim != 1 or sdtype(x).type.is_inexact:
        raise lw.err(ZymaseTypeError, "np.bincount() counts a 1-D array of non-negative "
                     "integers", node)
    w = None if is_none(p["weights"]) else _flat(lw, p["weights"], "np.bincount", node)
    m = p["minlength"]
    m = lw.b.cast(m.value, I64) if isinstance(m, Scalar) else lw.b.i64(int(m))
    return bincount(lw, x, w, m, node)


def _histogram(lw, args, kwargs, node):
    p = bind(lw, "np.histogram", args, kwargs, node,
             [("a", REQUIRED), ("bins", 10), ("range", None), ("weights", None),
              ("density", False)])
    b = lw.b
    a = _flat(lw, p["a"], "np.histogram", node)
    if isinstance(p["bins"], (Array, Tup)):
        return _histogram_edges(lw, a, p, node)
    bins = p["bins"]
    if not isinstance(bins, Scalar) or not bins.type.is_int:
        raise lw.err(ZymaseTypeError, "np.histogram(bins=) takes a number of bins or an array "
                     f"of bin edges, not {lw.describe(bins)}", node)
    n = lw.dim(a, 0)
    t = F64
    if is_none(p["range"]):
        def extent(idx, acc):
            v = b.cast(load(lw, a, idx), t)
            return [b.op(MinimumF, acc[0], v), b.op(MaximumF, acc[1], v)]
        lo, hi = nest(lw, [n], extent, carried=[b.const(float("inf"), t),
                                                 b.const(float("-inf"), t)])
        empty = b.op(CmpI, n, b.i64(0), pred="eq")
        lo = b.op(Select, empty, b.const(0.0, t), lo)
        hi = b.op(Select, empty, b.const(1.0, t), hi)
    else:
        rng = p["range"]
        if not isinstance(rng, Tup) or len(rng.items) != 2:
            raise lw.err(ZymaseTypeError, "np.histogram(range=) takes (low, high)", node)
        lo, hi = (b.cast(v.value, t) for v in rng.items)
        check(lw, b.op(CmpF, lo, hi, pred="le"), "ValueError",
              "max must be larger than min in range parameter.")
    finite = b.op(AndI, b.op(IsFinite, lo), b.op(IsFinite, hi))
    check(lw, finite, "ValueError", "the range of the histogram is not finite (NaN or "
          "infinite values: pass range=)" if is_none(p["range"]) else
          "supplied range of the histogram is not finite")
    same = b.op(CmpF, lo, hi, pred="eq")  # (NumPy widens an empty range by 1/2 each side)
    lo = b.op(Select, same, b.op(SubF, lo, b.const(0.5, t)), lo)
    hi = b.op(Select, same, arith(lw, "add", hi, b.const(0.5, t)), hi)
    # the edges, as np.linspace(lo, hi, nbins + 1)
    nbins = b.cast(bins.value, I64)
    check(lw, b.op(CmpI, nbins, b.i64(1), pred="ge"), "ValueError",
          "`bins` must be positive, when an integer")
    fbins = b.cast(nbins, t)
    nedges = b.op(AddI, nbins, b.i64(1))
    edges = alloc(lw, t, [nedges])
    step = b.op(DivF, b.op(SubF, hi, lo), fbins)

    def fill(idx, acc):
        i = b.cast(idx[0], t)
        v = arith(lw, "add", b.op(MulF, i, step), lo)
        last = b.op(CmpI, idx[0], nbins, pred="eq")
        store(lw, b.op(Select, last, hi, v), edges, idx)

    nest(lw, [nedges], fill)
    weights = None if is_none(p["weights"]) else _flat(lw, p["weights"], "np.histogram",
                                                       node)
    wt = I64 if weights is None else sdtype(weights).type
    hist = alloc(lw, wt, [nbins], init="zero")
    norm = b.op(DivF, fbins, b.op(SubF, hi, lo))
    last_bin = b.op(SubI, nbins, b.i64(1))

    def place(idx, acc):
        v = b.cast(load(lw, a, idx), t)
        keep = b.op(AndI, b.op(CmpF, v, lo, pred="ge"), b.op(CmpF, v, hi, pred="le"))
        f = b.op(MulF, b.op(SubF, v, lo), norm)
        f = b.op(Select, keep, f, b.const(0.0, t))  # (NaN and outside: not counted)
        k = b.cast(f, I64)
        k = b.op(Select, b.op(CmpI, k, nbins, pred="eq"), last_bin, k)
        k = b.op(Select, b.op(CmpI, k, nbins, pred="gt"), last_bin, k)
        below = b.op(CmpF, v, b.op(Load, edges.value, k), pred="lt")
        k = b.op(Select, below, b.op(SubI, k, b.i64(1)), k)
        k = b.op(MaxI, k, b.i64(0))
        nxt = b.op(Load, edges.value, b.op(AddI, k, b.i64(1)))
        up = b.op(AndI, b.op(CmpF, v, nxt, pred="ge"),
                  b.op(CmpI, k, last_bin, pred="ne"))
        k = b.op(Select, up, b.op(AddI, k, b.i64(1)), k)
        w = b.const(1, wt) if weights is None else b.cast(load(lw, weights, idx), wt)
        w = b.op(Select, keep, w, b.const(0, wt))
        old = b.op(Load, hist.value, k)
        b.create(Store, [arith(lw, "add", old, w), hist.value, k])

    nest(lw, [n], place)
    return Tup((_density(lw, hist, edges, nbins, p["density"]), edges))


def _density(lw, hist, edges, nbins, density):
    """``hist`` itself, or for ``density=True`` divided by its total and the bins' widths."""
    b, t = lw.b, F64
    if lw.constant_of(density) if isinstance(density, Scalar) else bool(density):
        total = nest(lw, [nbins],
                     lambda idx, acc: [arith(lw, "add", acc[0],
                                             b.cast(load(lw, hist, idx), t))],
                     carried=[b.const(0.0, t)])[0]
        dens = alloc(lw, t, [nbins])

        def scale(idx, acc):
            width = b.op(SubF, b.op(Load, edges.value, b.op(AddI, idx[0], b.i64(1))),
                         load(lw, edges, idx))
            store(lw, b.op(DivF, b.cast(load(lw, hist, idx), t), b.op(MulF, total, width)),
                  dens, idx)

        nest(lw, [nbins], scale)
        return dens
    return hist


def _histogram_edges(lw, a, p, node):
    """``np.histogram(a, bins=edges)``: bins between given (increasing) edges, the last one
    closed (``library.histogram_edges``)."""
    edges = _flat(lw, p["bins"], "np.histogram", node)
    if not is_none(p["range"]):
        raise lw.err(ZymaseTypeError, "np.histogram(range=) is not used with bin edges; drop "
                     "range=", node)
    given = edges
    edges = map_elements(lw, [edges], lambda x: x, F64, node)
    weighted = not is_none(p["weights"])
    w = _flat(lw, p["weights"], "np.histogram", node) if weighted else a
    hist = lw.call_library(library.histogram_edges, [a, edges, w, lw.const_bool(weighted)], node)
    want = sdtype(w).type if weighted else I64
    if hist.type.dtype != want:
        hist = map_elements(lw, [hist], lambda x: x, want, node)
    nbins = lw.b.op(SubI, lw.dim(edges, 0), lw.b.i64(1))
    return Tup((_density(lw, hist, edges, nbins, p["density"]), given))


register_all({np.bincount: _bincount, np.histogram: _histogram})
