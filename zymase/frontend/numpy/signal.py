"""Sliding products and differences: ``np.convolve(a, v, mode="full")`` and
``np.correlate(a, v, mode="valid")`` of 1-D arrays, and ``np.gradient(f, *varargs, axis=None,
edge_order=1)``.

``convolve``/``correlate`` compute what NumPy's C routine does: the longer operand slides along
the shorter one (``correlate`` reverses its result when ``v`` is the longer, and conjugates
``v``), each output element the dot product of the overlap, summed in NumPy's order, in the
operands' common type (booleans: ``or`` of ``and``s, as NumPy's dot).  Which operand is the
longer is found when the function runs.  ``mode`` is ``"valid"``, ``"same"`` or ``"full"`` (or
NumPy's 0, 1, 2), known when compiling.

``gradient`` is NumPy's second-order scheme: central differences inside, one-sided differences
of order ``edge_order`` (1 or 2) at both ends, along every axis (a tuple of arrays) or the
``axis`` given (one array for one axis).  Spacings are numbers (one for all axes or one per
axis) or 1-D coordinate arrays (non-uniform formulas; coordinates evenly spaced use the uniform
ones, as NumPy does); the arithmetic is NumPy's expression by expression, so float32 data with a
Python float spacing stays float32, and integers give float64.  Derivatives come from the loads
and the arithmetic.
"""

from __future__ import annotations

import ast

import numpy as np

from ...errors import UnsupportedError, ZymaseTypeError, ZymaseValueError
from ...ir.ops import (
    AddI,
    AndI,
    CmpF,
    CmpI,
    Conj,
    FloorDivI,
    MaxI,
    MinI,
    MulI,
    NegI,
    Select,
    SubI,
)
from ...ir.types import F64, I1
from ..emit import alloc, arith, check, load, nest, store
from ..typing import Array, Scalar, SType, Tup, result_type
from .arrays import array_from_sequence, operand
from .params import REQUIRED, bind, const_axes, is_none, static
from .registry import register_all

MODES = {"valid": 0, "same": 1, "full": 2, 0: 0, 1: 1, 2: 2}


def _mode(lw, v, fname, node) -> int:
    m = v if isinstance(v, str) else static(lw, v)
    if isinstance(m, bool) or m not in MODES:
        raise lw.err(ZymaseValueError, f"{fname}(): mode must be one of 'valid', 'same', or "
                     "'full' (a constant)", node)
    return MODES[m]


def _vector(lw, v, fname, what, node, number_ok: bool) -> Array:
    v = operand(lw, v, node)
    if isinstance(v, Scalar) and number_ok:  # (np.convolve: ndmin=1, a strong 1-element array)
        v = array_from_sequence(lw, Tup((Scalar(v.value, False),)), node)
    if not isinstance(v, Array) or v.type.ndim != 1:
        got = "a number" if isinstance(v, Scalar) else f"an array of {v.type.ndim} dimensions"
        raise lw.err(ZymaseValueError, f"{fname}(): {what} must be a 1-D array, not {got}", node)
    return v


def slide(lw, a: Array, v: Array, mode: int, convolve: bool) -> Array:
    """NumPy's ``_pyarray_correlate`` of ``a`` and ``v`` (``v`` reversed for ``convolve``,
    conjugated for ``correlate``): ``long`` the longer, ``short`` the other; output ``k`` of
    ``full`` mode sums ``long[t + j] * short'[j]`` over the overlap (``t = k - n_left``).  The
    roles are chosen when the function runs; ``correlate`` reverses its output when ``v`` is the
    longer."""
    b = lw.b
    t = result_type(SType(a.type.dtype, False), SType(v.type.dtype, False)).type
    na, nv = lw.dim(a, 0), lw.dim(v, 0)
    swapped = b.op(CmpI, na, nv, pred="lt")  # v is the longer
    n1, n2 = b.op(MaxI, na, nv), b.op(MinI, na, nv)
    one = b.i64(1)
    if mode == 0:
        length, n_left = b.op(AddI, b.op(SubI, n1, n2), one), b.i64(0)
    elif mode == 1:
        length, n_left = n1, b.op(FloorDivI, n2, b.i64(2))
    else:
        length, n_left = b.op(SubI, b.op(AddI, n1, n2), one), b.op(SubI, n2, one)
    out = alloc(lw, t, [length])
    last = b.op(SubI, length, one)
    zero = b.i64(0)

    def body(idx, acc):
        k = idx[0]
        if not convolve:
            k = b.op(Select, swapped, b.op(SubI, last, k), k)
        tt = b.op(SubI, k, n_left)
        lo = b.op(MaxI, zero, b.op(NegI, tt))
        hi = b.op(MinI, n2, b.op(SubI, n1, tt))
        count = b.op(MaxI, b.op(SubI, hi, lo), zero)
        long0 = b.op(AddI, tt, lo)  # long[long0 + j]
        if convolve:  # short reversed: short[n2 - 1 - lo - j]
            short0, short_step = b.op(SubI, b.op(SubI, n2, one), lo), b.i64(-1)
        else:
            short0, short_step = lo, one
        a0 = b.op(Select, swapped, short0, long0)
        a_step = b.op(Select, swapped, short_step, one)
        v0 = b.op(Select, swapped, long0, short0)
        v_step = b.op(Select, swapped, one, short_step)

        def term(jdx, s):
            j = jdx[0]
            x = b.cast(load(lw, a, [b.op(AddI, a0, b.op(MulI, a_step, j))]), t)
            y = b.cast(load(lw, v, [b.op(AddI, v0, b.op(MulI, v_step, j))]), t)
            if not convolve and t.is_complex:
                y = b.op(Conj, y)
            return [arith(lw, "add", s[0], arith(lw, "mul", x, y))]

        store(lw, nest(lw, [count], term, [b.const(0, t)])[0], out, idx)

    nest(lw, [length], body, parallel=True)
    return out


def _sliding(fname, convolve: bool, default_mode: str):
    def h(lw, args, kwargs, node):
        p = bind(lw, fname, args, kwargs, node,
                 [("a", REQUIRED), ("v", REQUIRED), ("mode", default_mode)])
        mode = _mode(lw, p["mode"], fname, node)
        a = _vector(lw, p["a"], fname, "a", node, convolve)
        v = _vector(lw, p["v"], fname, "v", node, convolve)
        b = lw.b
        msgs = (("a cannot be empty", "v cannot be empty") if convolve else
                ("first array argument cannot be empty", "second array argument cannot be empty"))
        for x, msg in zip((a, v), msgs):
            check(lw, b.op(CmpI, lw.dim(x, 0), b.i64(0), pred="gt"), "ValueError", msg)
        return slide(lw, a, v, mode, convolve)
    return h


register_all({np.convolve: _sliding("np.convolve", True, "full"),
              np.correlate: _sliding("np.correlate", False, "valid")})


# ---------------------------------------------------------------------- gradient


def _py(lw, x: float) -> Scalar:
    return Scalar(lw.b.const(float(x), F64), True)


class _Arith:
    """NumPy's scalar arithmetic (weak Python numbers, promotion) through ``lw.binop``."""

    def __init__(self, lw, node):
        self.lw, self.node = lw, node

    def __call__(self, op, x, y):
        return self.lw.binop(op, x, y, self.node)

    def add(self, x, y):
        return self(ast.Add(), x, y)

    def sub(self, x, y):
        return self(ast.Sub(), x, y)

    def mul(self, x, y):
        return self(ast.Mult(), x, y)

    def div(self, x, y):
        return self(ast.Div(), x, y)

    def neg(self, x):
        return self.lw.expr_neg(x)


def _spacing(lw, v, f: Array, axis: int, node):
    """One axis's spacing: ("number", Scalar) or ("coordinates", the 1-D Array of their type)."""
    v = operand(lw, v, node)
    if isinstance(v, Scalar):
        if v.type.is_bool:
            raise lw.err(ZymaseTypeError, "np.gradient(): a spacing must be a number, not a bool",
                         node)
        return "number", v
    if v.type.ndim != 1:
        raise lw.err(ZymaseValueError, "np.gradient(): distances must be either scalars or 1d",
                     node)
    dt = v.type.dtype
    if dt.is_bool:
        raise lw.err(ZymaseTypeError, "np.gradient(): coordinates of booleans cannot be "
                     "subtracted (cast them with .astype(float))", node)
    check(lw, lw.b.op(CmpI, lw.dim(v, 0), lw.dim(f, axis), pred="eq"), "ValueError",
          "when 1d, distances must match the length of the corresponding dimension")
    return "coordinates", v


def _gradient_axis(lw, f: Array, axis: int, spacing, edge_order: int, otype, node) -> Array:
    b = lw.b
    ar = _Arith(lw, node)
    ft = f.type.dtype if f.type.dtype.is_inexact else F64
    dims = lw.dims(f)
    n = dims[axis]
    check(lw, b.op(CmpI, n, b.i64(edge_order + 1), pred="ge"), "ValueError",
          "Shape of array too small to calculate a numerical gradient, at least (edge_order + "
          "1) elements are required.")
    out = alloc(lw, otype, dims)
    one = b.i64(1)

    def fv(idx, i):
        at = list(idx)
        at[axis] = i
        return Scalar(b.cast(load(lw, f, at), ft), False)

    def put(v: Scalar, idx, i):
        at = list(idx)
        at[axis] = i
        store(lw, b.cast(v.value, otype), out, at)

    kind, sp = spacing
    if kind == "coordinates":
        ct = sp.type.dtype if sp.type.dtype.is_inexact else F64

        def d(i):  # diffx[i] = x[i + 1] - x[i], a NumPy scalar of the coordinates' type
            x1 = Scalar(b.cast(load(lw, sp, [b.op(AddI, i, one)]), ct), False)
            return ar.sub(x1, Scalar(b.cast(load(lw, sp, [i]), ct), False))

        first = d(b.i64(0))
        cmp = CmpF if ct.is_inexact else CmpI

        def same(idx, acc):
            eq = b.op(cmp, d(idx[0]).value, first.value, pred="eq")
            return [b.op(AndI, acc[0], eq)]

        uniform = nest(lw, [b.op(SubI, n, one)], same, [b.const(True, I1)])[0]
        dx = first
    else:
        dx = sp

    def pick(u: Scalar, other: Scalar) -> Scalar:
        """The uniform value where the coordinates are evenly spaced, else the other."""
        if kind != "coordinates":
            return u
        return Scalar(b.op(Select, uniform, b.cast(u.value, otype), b.cast(other.value, otype)),
                      False)

    # the interior: central differences
    inner = list(dims)
    inner[axis] = b.op(SubI, n, b.i64(2))

    def interior(idx, acc):
        i = b.op(AddI, idx[axis], one)
        lo, mid, hi = fv(idx, b.op(SubI, i, one)), fv(idx, i), fv(idx, b.op(AddI, i, one))
        u = ar.div(ar.sub(hi, lo), ar.mul(_py(lw, 2.0), dx))
        other = u
        if kind == "coordinates":
            dx1, dx2 = d(b.op(SubI, i, one)), d(i)
            ca = ar.div(ar.neg(dx2), ar.mul(dx1, ar.add(dx1, dx2)))
            cb = ar.div(ar.sub(dx2, dx1), ar.mul(dx1, dx2))
            cc = ar.div(dx1, ar.mul(dx2, ar.add(dx1, dx2)))
            other = ar.add(ar.add(ar.mul(ca, lo), ar.mul(cb, mid)), ar.mul(cc, hi))
        put(pick(u, other), idx, i)

    nest(lw, inner, interior, parallel=True)

    # the two ends: one-sided differences
    rest = [dn for k, dn in enumerate(dims) if k != axis]
    last = b.op(SubI, n, one)

    def at(oidx):
        return oidx[:axis] + [None] + oidx[axis:]

    def ends(oidx, acc):
        idx = at(oidx)
        if edge_order == 1:
            f0, f1 = fv(idx, b.i64(0)), fv(idx, one)
            dx0 = dx
            put(ar.div(ar.sub(f1, f0), dx0), idx, b.i64(0))
            fl, fm = fv(idx, last), fv(idx, b.op(SubI, last, one))
            if kind == "coordinates":
                dxn = d(b.op(SubI, last, one))
                put(pick(ar.div(ar.sub(fl, fm), dx), ar.div(ar.sub(fl, fm), dxn)), idx, last)
            else:
                put(ar.div(ar.sub(fl, fm), dx), idx, last)
            return
        f0, f1, f2 = fv(idx, b.i64(0)), fv(idx, one), fv(idx, b.i64(2))

        def combo(ca, cb, cc, x0, x1, x2):
            return ar.add(ar.add(ar.mul(ca, x0), ar.mul(cb, x1)), ar.mul(cc, x2))

        u = combo(ar.div(_py(lw, -1.5), dx), ar.div(_py(lw, 2.0), dx), ar.div(_py(lw, -0.5), dx),
                  f0, f1, f2)
        other = u
        if kind == "coordinates":
            dx1, dx2 = d(b.i64(0)), d(one)
            s = ar.add(dx1, dx2)
            other = combo(ar.div(ar.neg(ar.add(ar.mul(_py(lw, 2.0), dx1), dx2)), ar.mul(dx1, s)),
                          ar.div(ar.add(dx1, dx2), ar.mul(dx1, dx2)),
                          ar.div(ar.neg(dx1), ar.mul(dx2, s)), f0, f1, f2)
        put(pick(u, other), idx, b.i64(0))
        g0, g1, g2 = fv(idx, b.op(SubI, last, b.i64(2))), fv(idx, b.op(SubI, last, one)), \
            fv(idx, last)
        u = combo(ar.div(_py(lw, 0.5), dx), ar.div(_py(lw, -2.0), dx), ar.div(_py(lw, 1.5), dx),
                  g0, g1, g2)
        other = u
        if kind == "coordinates":
            dx1, dx2 = d(b.op(SubI, last, b.i64(2))), d(b.op(SubI, last, one))
            s = ar.add(dx1, dx2)
            other = combo(ar.div(dx2, ar.mul(dx1, s)),
                          ar.div(ar.neg(ar.add(dx2, dx1)), ar.mul(dx1, dx2)),
                          ar.div(ar.add(ar.mul(_py(lw, 2.0), dx2), dx1), ar.mul(dx2, s)),
                          g0, g1, g2)
        put(pick(u, other), idx, last)

    nest(lw, rest, ends, parallel=True)
    return out


def _gradient(lw, args, kwargs, node):
    if not args:
        raise lw.err(ZymaseTypeError, "np.gradient() is missing the argument `f`", node)
    kw = dict(kwargs)
    axis = kw.pop("axis", None)
    edge = kw.pop("edge_order", 1)
    if kw:
        raise lw.err(UnsupportedError, f"np.gradient() keyword argument `{next(iter(kw))}` is "
                     "not supported here (supported: axis, edge_order)", node)
    f = operand(lw, args[0], node)
    if not isinstance(f, Array):
        raise lw.err(ZymaseValueError, "np.gradient() needs an array of at least one "
                     "dimension, not a number", node)
    if f.type.dtype.is_bool:
        raise lw.err(ZymaseTypeError, "np.gradient() of booleans: NumPy subtracts them, which "
                     "is not defined for booleans (cast with .astype(float))", node)
    nd = f.type.ndim
    axes = list(range(nd)) if is_none(axis) else \
        const_axes(lw, axis, nd, "np.gradient(axis=)", node)
    k = edge if isinstance(edge, int) else static(lw, edge)
    if isinstance(k, bool) or k not in (1, 2):
        raise lw.err(ZymaseValueError, "np.gradient(): edge_order must be 1 or 2 (a constant)",
                     node)
    varargs = args[1:]
    if not varargs:
        spacings = [("number", _py(lw, 1.0))] * len(axes)
    elif len(varargs) == 1 and isinstance(operand(lw, varargs[0], node), Scalar):
        spacings = [_spacing(lw, varargs[0], f, axes[0], node)] * len(axes)
    elif len(varargs) == len(axes):
        spacings = [_spacing(lw, v, f, ax, node) for v, ax in zip(varargs, axes)]
    else:
        raise lw.err(ZymaseTypeError, f"np.gradient(): invalid number of arguments (give one "
                     f"spacing, or one per axis: {len(axes)})", node)
    otype = f.type.dtype if f.type.dtype.is_inexact else F64
    outs = [_gradient_axis(lw, f, ax, sp, k, otype, node) for ax, sp in zip(axes, spacings)]
    return outs[0] if len(outs) == 1 else Tup(tuple(outs))


register_all({np.gradient: _gradient})
