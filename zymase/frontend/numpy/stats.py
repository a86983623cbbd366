"""Statistics beyond the plain reductions: ``np.var``/``np.std`` (two passes, NumPy's formula:
``mean(|x - mean(x)|**2)`` with ``ddof``) and ``np.count_nonzero``, over all elements or along one
axis, with NumPy's result types (integers give float64, complex gives its real type)."""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedError, ZymaseTypeError
from ...ir.ops import (
    AddF,
    AddI,
    CmpI,
    ComplexIm,
    ComplexRe,
    DivF,
    MaximumF,
    MulF,
    Sqrt,
    SubF,
    SubI,
    Transpose,
)
from ...ir.types import F64, I1, I64
from ..emit import alloc, check, load, nest, size_of, store
from ..library import corrcoef as library_corrcoef
from ..library import cov as library_cov
from ..library import interp as library_interp
from ..library import trapezoid as library_trapezoid
from ..typing import Array, Scalar, Tup
from .arrays import array_from_sequence, as_array, operand, sdtype
from .params import REQUIRED, bind, const_int, is_none, norm_axis, static
from .reductions import keep_dims, pop_keepdims
from .registry import add_methods, register_all
from .shape import ravel, reshaped


def over_lines(lw, a: Array, axis, rt, line):
    """``line(loop_dims, to_index) -> Value`` over all of ``a`` (axis None: a Scalar of type ``rt``)
    or over every line along ``axis`` (a new array of ``rt``)."""
    dims = lw.dims(a)
    if axis is None:
        return Scalar(line(dims, lambda idx: idx), False)
    out_dims = dims[:axis] + dims[axis + 1 :]
    out = alloc(lw, rt, out_dims)

    def body(oidx, acc):
        store(lw, line([dims[axis]], lambda k: oidx[:axis] + k + oidx[axis:]), out, oidx)

    nest(lw, out_dims, body)
    return out


def _axis(lw, v, a, node):
    if is_none(v):
        return None
    axis = norm_axis(lw, const_int(lw, v, "axis", node), a.type.ndim, node)
    return None if a.type.ndim == 1 else axis


def variance(lw, a: Array, axis, ddof, sqrt: bool):
    """``sum(|x - mean|**2) / max(n - ddof, 0)`` per line, its square root for ``std``."""
    b = lw.b
    dt = a.type.dtype
    ct = dt if dt.is_inexact else F64  # the type of the mean and of the deviations
    rt = ct.real_type

    def line(dims, to_index):
        def total(fn, t):
            return nest(
                lw, dims, lambda idx, acc: [b.op(AddF, acc[0], fn(idx))], [b.const(0, t)]
            )[0]

        n = size_of(lw, dims)
        mean = b.op(
            DivF,
            total(lambda idx: b.cast(load(lw, a, to_index(idx)), ct), ct),
            b.cast(n, ct),
        )

        def square(idx):
            x = b.op(SubF, b.cast(load(lw, a, to_index(idx)), ct), mean)
            parts = [b.op(ComplexRe, x), b.op(ComplexIm, x)] if ct.is_complex else [x]
            sq = [b.op(MulF, p, p) for p in parts]
            return sq[0] if len(sq) == 1 else b.op(AddF, *sq)

        count = b.op(MaximumF, b.op(SubF, b.cast(n, F64), ddof), b.f64(0.0))
        v = b.op(DivF, total(square, rt), b.cast(count, rt))
        return b.op(Sqrt, v) if sqrt else v

    return over_lines(lw, a, axis, rt, line)


def _var(sqrt):
    fname = "np.std" if sqrt else "np.var"

    def h(lw, args, kwargs, node):
        kwargs, keep = pop_keepdims(lw, kwargs, fname, node)
        p = bind(
            lw,
            fname,
            args,
            kwargs,
            node,
            [("a", REQUIRED), ("axis", None), ("dtype", None), ("out", None), ("ddof", 0)],
        )
        for k in ("dtype", "out"):
            if not is_none(p[k]):
                raise lw.err(UnsupportedError, f"{fname}({k}=...) is not supported", node)
        a = as_array(lw, p["a"], fname, node)
        ddof = p["ddof"]
        ddof = lw.b.f64(float(ddof)) if isinstance(ddof, int) else _real(lw, ddof, fname, node)
        r = variance(lw, a, _axis(lw, p["axis"], a, node), ddof, sqrt)
        return keep_dims(lw, r, a, p["axis"], node) if keep else r

    return h


def _real(lw, v, fname, node):
    if not isinstance(v, Scalar) or v.type.is_complex:
        raise lw.err(UnsupportedError, f"{fname}(ddof=...) must be a real number", node)
    return lw.b.cast(v.value, F64)


def _count_nonzero(lw, args, kwargs, node):
    p = bind(
        lw,
        "np.count_nonzero",
        args,
        kwargs,
        node,
        [("a", REQUIRED), ("axis", None)],
        {"keepdims": False},
    )
    a = as_array(lw, p["a"], "np.count_nonzero", node)
    b = lw.b

    def line(dims, to_index):
        def body(idx, acc):
            x = Scalar(load(lw, a, to_index(idx)), False)
            return [b.op(AddI, acc[0], b.cast(lw.truth(x, node).value, I64))]

        return nest(lw, dims, body, [b.i64(0)])[0]

    return over_lines(lw, a, _axis(lw, p["axis"], a, node), I64, line)


register_all({np.var: _var(False), np.std: _var(True), np.count_nonzero: _count_nonzero})
add_methods({
    "var": lambda lw, a, args, kwargs, node: _var(False)(lw, [a, *args], kwargs, node),
    "std": lambda lw, a, args, kwargs, node: _var(True)(lw, [a, *args], kwargs, node),
})


# ---------------------------------------------------------------------- interpolation


def _interp(lw, args, kwargs, node):
    """``np.interp(x, xp, fp, left=None, right=None)``: ``library.interp`` on ``x`` raveled
    (a number gives a NumPy float, an array the array's shape)."""
    p = bind(lw, "np.interp", args, kwargs, node,
             [("x", REQUIRED), ("xp", REQUIRED), ("fp", REQUIRED), ("left", None),
              ("right", None), ("period", None)])
    if not is_none(p["period"]):
        raise lw.err(UnsupportedError, "np.interp(period=...) is not supported in compiled "
                     "code", node)
    x = operand(lw, p["x"], node)
    xp = as_array(lw, p["xp"], "np.interp", node)
    fp = as_array(lw, p["fp"], "np.interp", node)
    if xp.type.ndim != 1 or fp.type.ndim != 1:
        raise lw.err(ZymaseTypeError, "np.interp(): xp and fp must be 1-D sequences", node)
    if any(sdtype(v).type.is_complex for v in (x, xp, fp)):
        raise lw.err(UnsupportedError, "np.interp() of complex numbers is not supported", node)
    b = lw.b
    ok = b.op(CmpI, lw.dim(xp, 0), lw.dim(fp, 0), pred="eq")
    check(lw, ok, "ValueError", "fp and xp are not of the same length.")
    check(lw, b.op(CmpI, lw.dim(xp, 0), b.i64(0), pred="gt"), "ValueError",
          "array of sample points is empty")
    ends = []
    for key, at in (("left", b.i64(0)), ("right", b.op(SubI, lw.dim(fp, 0), b.i64(1)))):
        v = p[key]
        ends.append(Scalar(b.cast(load(lw, fp, [at]), F64), False) if is_none(v) else
                    Scalar(b.cast(operand(lw, v, node).value, F64), False))
    flat = array_from_sequence(lw, Tup((x,)), node) if isinstance(x, Scalar) else \
        x if x.type.ndim == 1 else ravel(lw, x)
    out = lw.call_library(library_interp, [flat, xp, fp, *ends], node)
    if isinstance(x, Scalar):
        return Scalar(load(lw, out, [b.i64(0)]), False)
    return out if x.type.ndim == 1 else reshaped(lw, out, lw.dims(x))


register_all({np.interp: _interp})


# ---------------------------------------------------------------------- covariance


def _covariance(fname):
    def h(lw, args, kwargs, node):
        params = [("m", REQUIRED), ("y", None), ("rowvar", True)]
        if fname == "np.cov":
            params += [("bias", False), ("ddof", None)]
        p = bind(lw, fname, args, kwargs, node, params)
        if not is_none(p["y"]):
            raise lw.err(UnsupportedError, f"{fname}(m, y) is not supported: stack the "
                         "variables into one array (np.vstack((x, y)))", node)
        m = as_array(lw, p["m"], fname, node)
        if m.type.ndim != 2 or m.type.dtype.is_complex:
            raise lw.err(UnsupportedError, f"{fname}() is supported for a 2-D real array of "
                         "variables (for one 1-D variable NumPy gives a 0-d array: use "
                         "np.var(x, ddof=1))", node)
        if not static(lw, p["rowvar"]):
            m = Array(lw.b.op(Transpose, m.value, perm=[1, 0]))
        if fname == "np.corrcoef":
            return lw.call_library(library_corrcoef, [m], node)
        ddof = p["ddof"]
        k = (0 if static(lw, p["bias"]) else 1) if is_none(ddof) else \
            const_int(lw, ddof, "ddof", node)
        return lw.call_library(library_cov, [m, Scalar(lw.b.const(k, I64), True)], node)
    return h


register_all({np.cov: _covariance("np.cov"), np.corrcoef: _covariance("np.corrcoef")})


def _trapezoid(lw, args, kwargs, node):
    p = bind(lw, "np.trapezoid", args, kwargs, node,
             [("y", REQUIRED), ("x", None), ("dx", 1.0), ("axis", -1)])
    y = as_array(lw, p["y"], "np.trapezoid", node)
    if y.type.ndim != 1 or y.type.dtype.is_complex:
        raise lw.err(UnsupportedError, "np.trapezoid() is supported for 1-D real samples "
                     "(integrate each row in a loop)", node)
    with_x = not is_none(p["x"])
    x = as_array(lw, p["x"], "np.trapezoid", node) if with_x else y
    if with_x:
        check(lw, lw.b.op(CmpI, lw.dim(x, 0), lw.dim(y, 0), pred="eq"), "ValueError",
              "np.trapezoid(): x and y have different lengths")
    dx = p["dx"] if isinstance(p["dx"], Scalar) else Scalar(lw.b.const(float(p["dx"]), F64),
                                                            True)
    flag = Scalar(lw.b.const(with_x, I1), True)
    out = lw.call_library(library_trapezoid, [y, x, dx, flag], node)
    return Scalar(lw.b.cast(out.value, F64), False)


register_all({np.trapezoid: _trapezoid})
