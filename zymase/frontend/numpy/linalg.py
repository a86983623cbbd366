"""Matrix products and small linear algebra: ``a @ b``, ``np.dot``/``matmul``/``inner``/``outer``/
``vdot``, ``np.linalg.norm`` (2-norm / Frobenius), ``np.trace``, ``np.diag``, ``np.eye``.

Float and complex matrix products (2-D @ 2-D, 2-D @ 1-D, 1-D @ 2-D) allocate the result and
emit ``linalg.matmul`` (BLAS in the backend); integer and boolean ones are loop nests.  ``@`` and
``np.matmul`` of stacks (ndim > 2, batch dims broadcast) are one ``linalg.matmul`` of stacks
(views with equal batch dims), looping over the batch in the backend; integer ones loop here.  A
vector dot product is a reduction loop.  Inner dimensions are checked at run time (ShapeError).
"""

from __future__ import annotations

import ast

import numpy as np

from ...errors import UnsupportedError, ZymaseTypeError
from ...ir.ops import (
    AbsF,
    AddF,
    AddI,
    Assert,
    CmpI,
    ComplexAbs,
    ComplexIm,
    ComplexRe,
    Conj,
    Matmul,
    MaxI,
    MinI,
    MulF,
    NegI,
    Reshape,
    Sqrt,
    SubI,
    Subview,
    Transpose,
)
from ...ir.types import C64, C128, F32, F64, I32, I64, ArrayType
from .. import library, library_linalg
from ..emit import alloc, arith, check, host_call, load, nest, store
from ..typing import Array, Scalar, Tup, result_type
from .arrays import (
    array_from_sequence,
    as_array,
    broadcast_shapes,
    broadcast_to,
    dtype_arg,
    map_elements,
    operand,
    sdtype,
)
from .copies import protect_copy
from .operators import array_binop
from .params import REQUIRED, bind, is_none, static
from .reductions import keep_dims, pop_keepdims, result_dtype
from .registry import add_methods, register_all
from .shape import ravel

INNER_MISMATCH = ("matmul: the inner dimensions of the operands do not match: {a} columns "
                  "against {b} rows")


def _operands(lw, a, b, fname, node, batched=False):
    a, b = operand(lw, a, node), operand(lw, b, node)
    if not (isinstance(a, Array) and isinstance(b, Array)):
        raise lw.err(
            ZymaseTypeError, f"{fname}: an operand is a scalar, not an array (use * to scale)", node
        )
    if not batched and (a.type.ndim > 2 or b.type.ndim > 2):
        raise lw.err(UnsupportedError, f"{fname} of arrays with ndim > 2 is not supported (use "
                     "@ or np.matmul for stacks of matrices)", node)
    return a, b


def matmul(lw, a, b, node, fname="matmul"):
    """``a @ b`` with NumPy's result types.  Operands of ndim > 2 are stacks of matrices whose
    leading dims broadcast (a 1-D operand is a vector, a 2-D one the same for every matrix)."""
    a, b = _operands(lw, a, b, fname, node, batched=True)
    t = result_type(sdtype(a), sdtype(b)).type
    k, rows = lw.dim(a, a.type.ndim - 1), lw.dim(b, max(b.type.ndim - 2, 0))
    lw.b.create(Assert, [lw.b.op(CmpI, k, rows, pred="eq"), k, rows], [],
                {"kind": "ShapeError", "msg": INNER_MISMATCH})
    if a.type.ndim == b.type.ndim == 1:
        return Scalar(_dot_loop(lw, a, b, t, conj=False), False)
    if t.is_inexact:
        a, b = _as_type(lw, a, t, node), _as_type(lw, b, t, node)
    rows = lw.dims(a)[-2:-1] if a.type.ndim >= 2 else []
    cols = lw.dims(b)[-1:] if b.type.ndim >= 2 else []
    stacks = [x for x in (a, b) if x.type.ndim > 2]
    batch = broadcast_shapes(lw, [lw.dims(x)[:-2] for x in stacks]) if stacks else []
    out = alloc(lw, t, batch + rows + cols)
    if not stacks:
        _product_into(lw, a, b, out, t, k)
    elif t.is_inexact:  # one linalg.matmul of stacks of equal batch dims (views)
        one = lw.b.i64(1)
        o = Array(lw.b.create(Reshape, [out.value, *batch, *(rows or [one]), *(cols or [one])],
                              [ArrayType(t, len(batch) + 2, "C")]).result)
        lw.b.create(Matmul, [_stacked(lw, a, batch, False).value,
                             _stacked(lw, b, batch, True).value, o.value])
    else:  # integer stacks: each broadcast to the batch dims first (a batch dim of size 1)
        a, b = (broadcast_to(lw, x, batch + lw.dims(x)[-2:]) if x.type.ndim > 2 else x
                for x in (a, b))

        def body(idx, acc):
            a_i, b_i = (_matrix_at(lw, x, idx) if x.type.ndim > 2 else x for x in (a, b))
            _product_into(lw, a_i, b_i, _matrix_at(lw, out, idx), t, k)

        nest(lw, batch, body)
    return out


def _stacked(lw, x: Array, batch, column: bool) -> Array:
    """``x`` viewed as a stack of matrices with batch dims ``batch``: a vector as one row (or,
    with ``column``, one column), a matrix repeated, a stack broadcast."""
    if x.type.ndim == 1:
        x = broadcast_to(lw, x, [lw.b.i64(1), lw.dim(x, 0)])
        if column:
            x = Array(lw.b.op(Transpose, x.value, perm=[1, 0]))
    return broadcast_to(lw, x, batch + lw.dims(x)[-2:])


def _matrix_at(lw, x: Array, idx) -> Array:
    """The matrix (or vector) at batch index ``idx`` of a stack, as a view."""
    keep = x.type.ndim - len(idx)
    offs = list(idx) + [lw.b.i64(0)] * keep
    rest = [v for d in lw.dims(x)[len(idx):] for v in (d, lw.b.i64(1))]
    t = ArrayType(x.type.dtype, keep, x.type.layout)
    return Array(lw.b.create(Subview, [x.value, *offs, *rest], [t],
                             {"keep": [False] * len(idx) + [True] * keep}).result)


def _as_type(lw, a: Array, t, node) -> Array:
    return a if a.type.dtype == t else map_elements(lw, [a], lambda x: x, t, node)


def _dot_loop(lw, a, b, t, conj):
    """sum(a[i] * b[i]) of two 1-D arrays of equal length, in type ``t``."""

    def body(idx, acc):
        x, y = (lw.b.cast(load(lw, v, idx), t) for v in (a, b))
        if conj and t.is_complex:
            x = lw.b.op(Conj, x)
        return [arith(lw, "add", acc[0], arith(lw, "mul", x, y))]

    return nest(lw, [lw.dim(a, 0)], body, [lw.b.const(0, t)])[0]


def _product_into(lw, a, b, out, t, k):
    """``out = a @ b`` for 1-D and 2-D operands: ``linalg.matmul`` for float and complex ones
    (already of type ``t``), a loop nest for integers and booleans."""
    if t.is_inexact:
        lw.b.create(Matmul, [a.value, b.value, out.value])
        return

    def body(oidx, acc):
        i = oidx[:1] if a.type.ndim == 2 else []
        j = oidx[len(i) :]

        def inner(kk, s):
            x = lw.b.cast(load(lw, a, i + kk), t)
            y = lw.b.cast(load(lw, b, kk + j), t)
            return [arith(lw, "add", s[0], arith(lw, "mul", x, y))]

        store(lw, nest(lw, [k], inner, [lw.b.const(0, t)])[0], out, oidx)

    nest(lw, lw.dims(out), body)


def dot(lw, a, b, node):
    """``np.dot``: a product with a scalar multiplies; 1-D/2-D operands as ``matmul``."""
    a, b = (_strong(operand(lw, v, node)) for v in (a, b))
    if isinstance(a, Scalar) or isinstance(b, Scalar):
        return (
            array_binop(lw, ast.Mult(), a, b, node)
            if (isinstance(a, Array) or isinstance(b, Array))
            else lw.binop(ast.Mult(), a, b, node)
        )
    a, b = _operands(lw, a, b, "np.dot", node)
    return matmul(lw, a, b, node)


def _strong(v):
    """np.dot and friends convert Python scalars to arrays: they promote like float64/int64."""
    return Scalar(v.value, False) if isinstance(v, Scalar) else v


def _dot(lw, args, kwargs, node):
    p = bind(lw, "np.dot", args, kwargs, node, [("a", REQUIRED), ("b", REQUIRED)], {"out": None})
    return dot(lw, p["a"], p["b"], node)


def _matmul(lw, args, kwargs, node):
    p = bind(
        lw, "np.matmul", args, kwargs, node, [("x1", REQUIRED), ("x2", REQUIRED)], {"out": None}
    )
    return matmul(lw, p["x1"], p["x2"], node, "np.matmul")


def _inner(lw, args, kwargs, node):
    """``np.inner(a, b)`` = ``a @ b.T`` for 1-D and 2-D operands."""
    p = bind(lw, "np.inner", args, kwargs, node, [("a", REQUIRED), ("b", REQUIRED)])
    a, b = operand(lw, p["a"], node), operand(lw, p["b"], node)
    if isinstance(a, Array) and isinstance(b, Array) and b.type.ndim == 2:
        b = Array(lw.b.op(Transpose, b.value, perm=[1, 0]))
    return dot(lw, a, b, node)


def _outer(lw, args, kwargs, node):
    p = bind(lw, "np.outer", args, kwargs, node, [("a", REQUIRED), ("b", REQUIRED)], {"out": None})
    a, b = (_flat(lw, p[k], "np.outer", node) for k in ("a", "b"))
    t = result_type(sdtype(a), sdtype(b)).type
    out = alloc(lw, t, [lw.dim(a, 0), lw.dim(b, 0)])

    def body(idx, acc):
        x = lw.b.cast(load(lw, a, idx[:1]), t)
        y = lw.b.cast(load(lw, b, idx[1:]), t)
        store(lw, arith(lw, "mul", x, y), out, idx)

    nest(lw, lw.dims(out), body)
    return out


def _flat(lw, v, fname, node) -> Array:
    v = operand(lw, v, node)
    a = array_from_sequence(lw, Tup((v,)), node) if isinstance(v, Scalar) else v
    return a if a.type.ndim == 1 else ravel(lw, a)


def _vdot(lw, args, kwargs, node):
    """``np.vdot``: the dot product of the flattened operands, the first one conjugated."""
    p = bind(lw, "np.vdot", args, kwargs, node, [("a", REQUIRED), ("b", REQUIRED)])
    a, b = (_flat(lw, p[k], "np.vdot", node) for k in ("a", "b"))
    t = result_type(sdtype(a), sdtype(b)).type
    check(
        lw,
        lw.b.op(CmpI, lw.dim(a, 0), lw.dim(b, 0), pred="eq"),
        "ShapeError",
        "vdot: the operands have different sizes",
    )
    return Scalar(_dot_loop(lw, a, b, t, conj=True), False)


# ---------------------------------------------------------------------- solve, inv


def _library_call(name, nargs):
    """``np.linalg.solve`` / ``inv`` of real or complex matrices: ``library.py``'s elimination,
    compiled like a helper, in float64 or complex128 (batched, ndim > 2, inputs are refused)."""
    fname = f"np.linalg.{name}"

    def h(lw, args, kwargs, node):
        p = bind(lw, fname, args, kwargs, node, [(k, REQUIRED) for k in ("a", "b")[:nargs]])
        given = [as_array(lw, p[k], fname, node) for k in ("a", "b")[:nargs]]
        if given[0].type.ndim != 2 or (nargs == 2 and given[1].type.ndim > 2):
            raise lw.err(UnsupportedError, f"{fname}() is supported for one matrix (ndim 2; "
                         "stacks of matrices are not)", node)
        wide = C128 if any(x.type.dtype.is_complex for x in given) else F64
        arrays = [x if x.type.dtype == wide else map_elements(lw, [x], lambda v: v, wide, node)
                  for x in given]
        out = lw.call_library(getattr(library, name), arrays, node)
        dts = {x.type.dtype for x in given}
        narrow = F32 if dts == {F32} else C64 if dts <= {F32, C64} and C64 in dts else None
        if narrow is not None:  # NumPy keeps single precision (computed in double)
            out = map_elements(lw, [out], lambda v: Scalar(lw.b.cast(v.value, narrow), False),
                               narrow, node)
        return out

    return h


def _square_f64(lw, v, fname, node) -> Array:
    """The float64 matrix of a real (or int/bool) 2-D argument, checked square when running."""
    a = as_array(lw, v, fname, node)
    if a.type.dtype.is_complex:
        raise lw.err(UnsupportedError, f"{fname}() of complex matrices is not supported (real "
                     "matrices are)", node)
    if a.type.ndim != 2:
        raise lw.err(UnsupportedError, f"{fname}() is supported for one matrix (ndim 2; stacks "
                     "of matrices are not)", node)
    if fname != "np.linalg.qr":
        d0, d1 = lw.dims(a)
        check(lw, lw.b.op(CmpI, d0, d1, pred="eq"), "LinAlgError",
              "Last 2 dimensions of the array must be square")
    if a.type.dtype != F64:
        a = map_elements(lw, [a], lambda x: x, F64, node)
    return a


def _like_input(lw, v, a_type, node):
    """float32 inputs give float32 results (computed in double), as NumPy's LAPACK wrappers."""
    if isinstance(v, Scalar):  # a NumPy scalar, as NumPy returns
        return Scalar(lw.b.cast(v.value, F32) if a_type == F32 else v.value, False)
    if a_type != F32:
        return v
    return map_elements(lw, [v], lambda x: Scalar(lw.b.cast(x.value, F32), False), F32, node)


def _factorization(name):
    """``np.linalg.cholesky/det/slogdet/eigh/eigvalsh/qr`` of a real matrix: the routines of
    ``library_linalg.py`` (compiled like helpers, with their derivative rules)."""
    fname = f"np.linalg.{name}"
    extra = {"eigh": [("UPLO", "L")], "eigvalsh": [("UPLO", "L")],
             "qr": [("mode", "reduced")], "cholesky": [("upper", False)]}.get(name, [])

    def h(lw, args, kwargs, node):
        p = bind(lw, fname, args, kwargs, node, [("a", REQUIRED), *extra])
        given = as_array(lw, p["a"], fname, node)
        a = _square_f64(lw, given, fname, node)
        if static(lw, p.get("UPLO", "L")) == "U" or static(lw, p.get("upper", False)):
            a = Array(lw.b.op(Transpose, a.value, perm=[1, 0]))  # the upper triangle, read
        elif static(lw, p.get("UPLO", "L")) not in ("L", None) or static(
                lw, p.get("upper", False)) not in (False, None):
            raise lw.err(ZymaseTypeError, f"{fname}(): UPLO is 'L' or 'U'", node)

        def call(fn, *xs):
            return _like_input(lw, lw.call_library(fn, list(xs), node), given.type.dtype, node)

        if name == "cholesky":
            low = call(library_linalg.cholesky, a)
            if static(lw, p["upper"]):
                return Array(lw.b.op(Transpose, low.value, perm=[1, 0]))
            return low
        if name == "det":
            return call(library_linalg.det, a)
        if name == "slogdet":
            return Tup((call(library_linalg.slogdet_sign, a), call(library_linalg.logabsdet, a)))
        if name == "eigvalsh":
            return call(library_linalg.eigh_values, a)
        if name == "eigh":
            w, v = lw.call_library(library_linalg.eigh, [a], node).items
            return Tup((_like_input(lw, w, given.type.dtype, node),
                        _like_input(lw, v, given.type.dtype, node)))
        mode = static(lw, p["mode"])
        if mode not in ("reduced", "r"):
            raise lw.err(UnsupportedError, f"np.linalg.qr(mode={mode!r}) is not supported; "
                         "mode='reduced' and 'r' are", node)
        d0, d1 = lw.dims(a)
        check(lw, lw.b.op(CmpI, d0, d1, pred="ge"), "LinAlgError",
              "np.linalg.qr() in compiled code needs at least as many rows as columns")
        if mode == "r":
            return call(library_linalg.qr_r, a)
        q, r = lw.call_library(library_linalg.qr, [a], node).items
        return Tup((_like_input(lw, q, given.type.dtype, node),
                    _like_input(lw, r, given.type.dtype, node)))

    return h


def _lapack(lw, args, kwargs, node):
    """``library_linalg.lapack(name, a)``: the results allocated here, filled by NumPy's LAPACK
    (``ir/host.py``'s ``lapack``)."""
    name, a = static(lw, args[0]), args[1]
    b = lw.b
    m, n = lw.dims(a)
    k = b.op(MinI, m, n)
    shapes = {"cholesky": [[m, n]], "eigh": [[n], [n, n]], "qr": [[m, k], [k, n]],
              "svd": [[m, k], [k], [k, n]]}[name]
    outs = [alloc(lw, F64, dims) for dims in shapes]
    host_call(lw, "lapack", [a.value, *(o.value for o in outs)],
              writes=list(range(1, len(outs) + 1)), name=name)
    return outs[0] if len(outs) == 1 else Tup(tuple(outs))


def _svd(lw, args, kwargs, node):
    """``np.linalg.svd`` of a real matrix (NumPy's LAPACK, ``library_linalg.py``, with the
    derivative rules there): the reduced factors, or all of them for a square matrix."""
    p = bind(lw, "np.linalg.svd", args, kwargs, node,
             [("a", REQUIRED), ("full_matrices", True), ("compute_uv", True),
              ("hermitian", False)])
    given = as_array(lw, p["a"], "np.linalg.svd", node)
    a = _real_matrix(lw, given, "np.linalg.svd", node)

    def call(fn):
        return _like_input(lw, lw.call_library(fn, [a], node), given.type.dtype, node)

    if not static(lw, p["compute_uv"]):
        return call(library_linalg.svd_values)
    if static(lw, p["full_matrices"]):
        d0, d1 = lw.dims(a)
        check(lw, lw.b.op(CmpI, d0, d1, pred="eq"), "ValueError",
              "np.linalg.svd(a) of a non-square matrix with full_matrices=True (NumPy's "
              "default) is not supported in compiled code: pass full_matrices=False")
    u, s, vt = lw.call_library(library_linalg.svd, [a], node).items
    return Tup(tuple(_like_input(lw, x, given.type.dtype, node) for x in (u, s, vt)))


def _svdvals(lw, args, kwargs, node):
    p = bind(lw, "np.linalg.svdvals", args, kwargs, node, [("x", REQUIRED)])
    given = as_array(lw, p["x"], "np.linalg.svdvals", node)
    a = _real_matrix(lw, given, "np.linalg.svdvals", node)
    return _like_input(lw, lw.call_library(library_linalg.svd_values, [a], node),
                       given.type.dtype, node)


def _pinv(lw, args, kwargs, node):
    p = bind(lw, "np.linalg.pinv", args, kwargs, node,
             [("a", REQUIRED), ("rcond", None), ("hermitian", False)], {"rtol": None})
    given = as_array(lw, p["a"], "np.linalg.pinv", node)
    a = _real_matrix(lw, given, "np.linalg.pinv", node)
    rcond = p["rcond"] if not is_none(p["rcond"]) else p.get("rtol")
    rcond = Scalar(lw.b.const(1e-15, F64), True) if is_none(rcond) else rcond
    return _like_input(lw, lw.call_library(library_linalg.pinv, [a, rcond], node),
                       given.type.dtype, node)


def _matrix_rank(lw, args, kwargs, node):
    p = bind(lw, "np.linalg.matrix_rank", args, kwargs, node,
             [("A", REQUIRED), ("tol", None), ("hermitian", False)], {"rtol": None})
    a = _real_matrix(lw, as_array(lw, p["A"], "np.linalg.matrix_rank", node),
                     "np.linalg.matrix_rank", node)
    tol = Scalar(lw.b.const(-1.0, F64), True) if is_none(p["tol"]) else p["tol"]
    return lw.call_library(library_linalg.matrix_rank, [a, tol], node)


def _lstsq(lw, args, kwargs, node):
    p = bind(lw, "np.linalg.lstsq", args, kwargs, node,
             [("a", REQUIRED), ("b", REQUIRED), ("rcond", None)])
    given = as_array(lw, p["a"], "np.linalg.lstsq", node)
    a = _real_matrix(lw, given, "np.linalg.lstsq", node)
    b = _real_matrix(lw, as_array(lw, p["b"], "np.linalg.lstsq", node), "np.linalg.lstsq",
                     node, vector=True)
    one = b.type.ndim == 1
    if one:  # a column (a fresh contiguous copy, reshaped)
        col = alloc(lw, F64, lw.dims(b))
        nest(lw, lw.dims(b), lambda idx, acc: store(lw, load(lw, b, idx), col, idx))
        b = Array(lw.b.create(Reshape, [col.value, lw.dim(b, 0), lw.b.i64(1)],
                              [ArrayType(F64, 2, "C")]).result)
    d0 = lw.dims(a)[0]
    check(lw, lw.b.op(CmpI, lw.dims(b)[0], d0, pred="eq"), "LinAlgError",
          "Incompatible dimensions")
    rcond = Scalar(lw.b.const(-1.0, F64), True) if is_none(p["rcond"]) else p["rcond"]
    x, res, rank, s = lw.call_library(library_linalg.lstsq, [a, b, rcond], node).items
    if one:  # x[:, 0]
        x = Array(lw.subview(x, [("slice", None, None, None), ("int", lw.const_int(0))], node))
    rank = Scalar(lw.b.cast(rank.value, I32), False)  # (LAPACK's int, as NumPy returns it)
    return Tup((x, res, rank, s))


def _real_matrix(lw, a: Array, fname, node, vector=False) -> Array:
    """``a`` as float64, refused when complex or not a matrix (a vector too when ``vector``)."""
    if a.type.dtype.is_complex:
        raise lw.err(UnsupportedError, f"{fname}() of complex matrices is not supported (real "
                     "matrices are)", node)
    if a.type.ndim != 2 and not (vector and a.type.ndim == 1):
        raise lw.err(UnsupportedError, f"{fname}() is supported for one matrix (ndim 2; stacks "
                     "of matrices are not)", node)
    return a if a.type.dtype == F64 else map_elements(lw, [a], lambda x: x, F64, node)


# ---------------------------------------------------------------------- norm


def _norm(lw, args, kwargs, node):
    """``np.linalg.norm(x)``: sqrt of the sum of squared magnitudes (vector 2-norm, Frobenius)."""
    kwargs, keep = pop_keepdims(lw, kwargs, "np.linalg.norm", node)
    p = bind(
        lw,
        "np.linalg.norm",
        args,
        kwargs,
        node,
        [("x", REQUIRED), ("ord", None), ("axis", None)],
    )
    for k in ("ord", "axis"):
        if not is_none(p[k]):
            raise lw.err(
                UnsupportedError,
                f"np.linalg.norm({k}=...) is not supported (only the "
                "default 2-norm of a vector and Frobenius norm of a matrix)",
                node,
            )
    x = operand(lw, p["x"], node)
    xt = sdtype(x).type
    t = xt.real_type if xt.is_complex else xt if xt.is_inexact else F64
    if isinstance(x, Scalar):
        return Scalar(_abs_value(lw, x.value, t), False)

    def body(idx, acc):
        v = load(lw, x, idx)
        parts = (
            [lw.b.op(ComplexRe, v), lw.b.op(ComplexIm, v)]
            if xt.is_complex
            else [lw.b.cast(v, t)]
        )
        s = acc[0]
        for q in parts:
            s = lw.b.op(AddF, s, lw.b.op(MulF, q, q))
        return [s]

    total = nest(lw, lw.dims(x), body, [lw.b.const(0, t)])[0]
    r = Scalar(lw.b.op(Sqrt, total), False)
    return keep_dims(lw, r, x, None, node) if keep else r


def _abs_value(lw, v, t):
    if v.type.is_complex:
        return lw.b.op(ComplexAbs, v)
    return lw.b.op(AbsF, lw.b.cast(v, t))


# ---------------------------------------------------------------------- diagonals


def _diag_start(lw, k):
    """(first row, first column) of diagonal ``k``: (max(-k, 0), max(k, 0))."""
    zero = lw.b.i64(0)
    return (lw.b.op(MaxI, lw.b.op(NegI, k), zero), lw.b.op(MaxI, k, zero))


def _diag_length(lw, rows, cols, r0, c0):
    n = lw.b.op(MinI, lw.b.op(SubI, rows, r0), lw.b.op(SubI, cols, c0))
    return lw.b.op(MaxI, n, lw.b.i64(0))


def _offset(lw, v, what, node):
    if isinstance(v, int):
        return lw.b.i64(v)
    if not (isinstance(v, Scalar) and (v.type.is_int or v.type.is_bool)):
        raise lw.err(ZymaseTypeError, f"{what} must be an integer", node)
    return lw.b.cast(v.value, I64)


def _matrix(lw, v, fname, node) -> Array:
    a = as_array(lw, v, fname, node)
    if a.type.ndim != 2:
        raise lw.err(
            UnsupportedError,
            f"{fname}() of an array with ndim={a.type.ndim} is not supported (2-D only)",
            node,
        )
    return a


def trace(lw, a, offset, dtype, node):
    a = _matrix(lw, a, "np.trace", node)
    t = result_dtype("sum", a.type.dtype) if is_none(dtype) else _dtype(lw, dtype, node)
    r0, c0 = _diag_start(lw, _offset(lw, offset, "offset", node))
    n = _diag_length(lw, lw.dim(a, 0), lw.dim(a, 1), r0, c0)

    def body(idx, acc):
        i = idx[0]
        x = load(lw, a, [lw.b.op(AddI, r0, i), lw.b.op(AddI, c0, i)])
        return [arith(lw, "add", acc[0], lw.b.cast(x, t))]

    return Scalar(nest(lw, [n], body, [lw.b.const(0, t)])[0], False)


def _dtype(lw, v, node):
    return dtype_arg(lw, v, None, node)


def _trace(lw, args, kwargs, node):
    p = bind(
        lw,
        "np.trace",
        args,
        kwargs,
        node,
        [("a", REQUIRED), ("offset", 0), ("axis1", 0), ("axis2", 1), ("dtype", None)],
        {"out": None},
    )
    if (static(lw, p["axis1"]), static(lw, p["axis2"])) != (0, 1):
        raise lw.err(
            UnsupportedError, "np.trace(axis1=, axis2=) other than (0, 1) is not supported", node
        )
    return trace(lw, p["a"], p["offset"], p["dtype"], node)


def diagonal(lw, a, k, node) -> Array:
    """The ``k``-th diagonal of a matrix, copied into a new 1-D array."""
    a = _matrix(lw, a, "np.diagonal", node)
    r0, c0 = _diag_start(lw, _offset(lw, k, "k", node))
    n = _diag_length(lw, lw.dim(a, 0), lw.dim(a, 1), r0, c0)
    block, start = lw.b.block, len(lw.b.block.ops)
    out = alloc(lw, a.type.dtype, [n])

    def body(idx, acc):
        i = idx[0]
        store(
            lw, load(lw, a, [lw.b.op(AddI, r0, i), lw.b.op(AddI, c0, i)]), out, idx
        )

    nest(lw, [n], body)
    protect_copy(block, start, out, "diagonal")  # NumPy: a read-only view
    return out


def _diag(lw, args, kwargs, node):
    """``np.diag(v, k)``: a 1-D ``v`` gives a square matrix, a matrix gives its diagonal."""
    p = bind(lw, "np.diag", args, kwargs, node, [("v", REQUIRED), ("k", 0)])
    v = as_array(lw, p["v"], "np.diag", node)
    if v.type.ndim != 1:
        return diagonal(lw, v, p["k"], node)
    r0, c0 = _diag_start(lw, _offset(lw, p["k"], "k", node))
    n = lw.dim(v, 0)
    size = lw.b.op(AddI, n, lw.b.op(AddI, r0, c0))
    out = alloc(lw, v.type.dtype, [size, size], "zero")

    def body(idx, acc):
        i = idx[0]
        store(
            lw, load(lw, v, idx), out, [lw.b.op(AddI, r0, i), lw.b.op(AddI, c0, i)]
        )

    nest(lw, [n], body)
    return out


def _diagonal(lw, args, kwargs, node):
    p = bind(lw, "np.diagonal", args, kwargs, node, [("a", REQUIRED), ("offset", 0)])
    return diagonal(lw, p["a"], p["offset"], node)


def eye(lw, n, m, k, dtype, node) -> Array:
    t = dtype_arg(lw, None if is_none(dtype) else dtype, F64, node)
    rows = _size(lw, n, "N", node)
    cols = rows if is_none(m) else _size(lw, m, "M", node)
    out = alloc(lw, t, [rows, cols], "zero")
    r0, c0 = _diag_start(lw, _offset(lw, k, "k", node))
    one = lw.b.const(1, t)

    def body(idx, acc):
        i = idx[0]
        store(lw, one, out, [lw.b.op(AddI, r0, i), lw.b.op(AddI, c0, i)])

    nest(lw, [_diag_length(lw, rows, cols, r0, c0)], body)
    return out


def _size(lw, v, what, node):
    d = _offset(lw, v, what, node)
    check(
        lw,
        lw.b.op(CmpI, d, lw.b.i64(0), pred="ge"),
        "ValueError",
        "negative dimensions are not allowed",
    )
    return d


def _eye(lw, args, kwargs, node):
    p = bind(
        lw,
        "np.eye",
        args,
        kwargs,
        node,
        [("N", REQUIRED), ("M", None), ("k", 0), ("dtype", None)],
        {"order": "C"},
    )
    return eye(lw, p["N"], p["M"], p["k"], p["dtype"], node)


def _identity(lw, args, kwargs, node):
    p = bind(lw, "np.identity", args, kwargs, node, [("n", REQUIRED), ("dtype", None)])
    return eye(lw, p["n"], None, 0, p["dtype"], node)


register_all(
    {
        np.dot: _dot,
        np.matmul: _matmul,
        np.inner: _inner,
        np.outer: _outer,
        np.vdot: _vdot,
        np.linalg.norm: _norm,
        np.linalg.solve: _library_call("solve", 2),
        np.linalg.inv: _library_call("inv", 1),
        np.linalg.cholesky: _factorization("cholesky"),
        np.linalg.det: _factorization("det"),
        np.linalg.slogdet: _factorization("slogdet"),
        np.linalg.eigh: _factorization("eigh"),
        np.linalg.eigvalsh: _factorization("eigvalsh"),
        np.linalg.qr: _factorization("qr"),
        np.linalg.svd: _svd,
        library_linalg.lapack: _lapack,
        np.linalg.svdvals: _svdvals,
        np.linalg.pinv: _pinv,
        np.linalg.matrix_rank: _matrix_rank,
        np.linalg.lstsq: _lstsq,
        np.trace: _trace,
        np.diag: _diag,
        np.diagonal: _diagonal,
        np.eye: _eye,
        np.identity: _identity,
    }
)
add_methods({
    "dot": lambda lw, a, args, kwargs, node: _dot(lw, [a, *args], kwargs, node),
    "trace": lambda lw, a, args, kwargs, node: _trace(lw, [a, *args], kwargs, node),
    "diagonal": lambda lw, a, args, kwargs, node: _diagonal(lw, [a, *args], kwargs, node),
})
