"""NumPy's ufuncs called by name: ``np.add(a, b)`` means ``a + b``, ``np.less(a, b)`` means
``a < b``, ``np.logical_and(a, b)`` the elementwise and of their truth values, and so on for
the arithmetic, comparison, logical and bitwise ufuncs; with ``out=`` the result is written
into that array (NumPy's same-kind casting).  Numbers give NumPy scalars (strong types), as in
NumPy.  Their methods: ``ufunc.outer(a, b)`` (every pair: shape ``a.shape + b.shape``),
``ufunc.reduce(a, axis=0)`` (``np.add`` is ``np.sum``, ``np.multiply`` ``np.prod``,
``np.maximum``/``np.minimum`` ``np.max``/``np.min``, ``np.logical_and``/``or``
``np.all``/``np.any``), ``ufunc.accumulate(a, axis=0)`` (``np.cumsum``, ``np.cumprod``) and
``ufunc.at(a, indices, b)``: ``a[indices] op= b`` unbuffered, so a repeated index counts each
time (``np.add.at`` is the scatter-add of histograms and assembly loops).

    >>> def f(a, b):
    ...     return np.sum(np.where(np.logical_and(np.less(a, b), b > 0.0),
    ...                            np.subtract(b, a), 0.0))
"""

from __future__ import annotations

import ast

import numpy as np

from ...errors import ZymaseTypeError
from ...ir.ops import AndI, Assert, CmpI, Load, Not, OrI, Select, Store, XorI
from ...ir.types import I1
from ..emit import alloc, load, nest, store
from ..typing import Array, PyObj, Scalar, Tup
from .arrays import as_operand, map_elements, sdtype
from .registry import CALLS, register_all

ARITHMETIC = {
    np.add: ast.Add, np.subtract: ast.Sub, np.multiply: ast.Mult, np.divide: ast.Div,
    np.floor_divide: ast.FloorDiv, np.mod: ast.Mod, np.bitwise_and: ast.BitAnd,
    np.bitwise_or: ast.BitOr, np.bitwise_xor: ast.BitXor,
}  # fmt: skip  (np.true_divide is np.divide, np.remainder is np.mod)
COMPARISONS = {
    np.less: ast.Lt, np.less_equal: ast.LtE, np.greater: ast.Gt, np.greater_equal: ast.GtE,
    np.equal: ast.Eq, np.not_equal: ast.NotEq,
}  # fmt: skip
LOGICAL = {np.logical_and: AndI, np.logical_or: OrI, np.logical_xor: XorI}


def _operands(lw, name, args, kwargs, n, node):
    """The ``n`` operands of ``np.<name>(...)`` and its destination: None, or (the ``out=``
    array, the ``where=`` mask or None)."""
    out = kwargs.pop("out", None)
    where = kwargs.pop("where", None)
    if isinstance(out, Tup) and len(out.items) == 1:  # out=(a,), NumPy's tuple form
        out = out.items[0]
    if kwargs:
        raise lw.err(ZymaseTypeError, f"np.{name}() takes no keyword arguments "
                     f"{sorted(kwargs)} in compiled code (out= and where= are supported)", node)
    if len(args) == n + 1 and out is None:
        *args, out = args
    if len(args) != n:
        raise lw.err(ZymaseTypeError, f"np.{name}() takes {n} operand(s), got {len(args)}",
                     node)
    if out is not None and not isinstance(out, Array):
        raise lw.err(ZymaseTypeError, f"np.{name}(out=...) needs an array, not "
                     f"{lw.describe(out)}", node)
    if where is not None and out is None:
        raise lw.err(ZymaseTypeError, f"np.{name}(where=...) without out= leaves the other "
                     "elements undefined (as in NumPy): pass out= (the array they keep)", node)
    operands = [as_operand(lw, a, node) for a in args]
    return operands, None if out is None else (out, None if where is None else
                                               as_operand(lw, where, node))


def _finish(lw, result, dest, name, node):
    """A strong NumPy scalar, or the result written into ``out`` (where ``where`` is true)."""
    if dest is None:
        return Scalar(result.value, False) if isinstance(result, Scalar) else result
    out, where = dest
    got = sdtype(result).type
    want = out.type.dtype
    if not np.can_cast(got.np_dtype, want.np_dtype, casting="same_kind"):
        raise lw.err(ZymaseTypeError, f"np.{name}(out=...): cannot cast the {got.np_dtype} "
                     f"result to the {want.np_dtype} array (casting rule 'same_kind')", node)
    if where is None:
        map_elements(lw, [result], lambda x: x, None, node, out=out)
        return out

    def keep(x, w, old):  # the result where the mask is true, the old element elsewhere
        return Scalar(lw.b.op(Select, lw.truth(w, node).value, lw.b.cast(x.value, want),
                              old.value), False)

    map_elements(lw, [result, where, out], keep, None, node, out=out)
    return out


def _arithmetic(ufunc, opk):
    def h(lw, args, kwargs, node):
        (a, b), out = _operands(lw, ufunc.__name__, args, dict(kwargs), 2, node)
        return _finish(lw, lw.binop(opk(), a, b, node), out, ufunc.__name__, node)
    return h


def _comparison(ufunc, opk):
    def h(lw, args, kwargs, node):
        (a, b), out = _operands(lw, ufunc.__name__, args, dict(kwargs), 2, node)
        return _finish(lw, lw.compare(opk(), a, b, node), out, ufunc.__name__, node)
    return h


def truth(lw, x: Scalar) -> Scalar:
    """``x != 0`` (booleans as they are)."""
    if x.type == I1:
        return x
    return lw.scalar_compare("ne", x, Scalar(lw.b.const(0, x.type), False))


def _logical(ufunc, op):
    def h(lw, args, kwargs, node):
        (a, b), out = _operands(lw, ufunc.__name__, args, dict(kwargs), 2, node)

        def elem(x, y):
            return Scalar(lw.b.op(op, truth(lw, x).value, truth(lw, y).value), False)

        if isinstance(a, Scalar) and isinstance(b, Scalar):
            r = elem(a, b)
        else:
            r = map_elements(lw, [a, b], elem, I1, node)
        return _finish(lw, r, out, ufunc.__name__, node)
    return h


def _logical_not(lw, args, kwargs, node):
    (a,), out = _operands(lw, "logical_not", args, dict(kwargs), 1, node)

    def elem(x):
        return Scalar(lw.b.op(Not, truth(lw, x).value), False)

    r = elem(a) if isinstance(a, Scalar) else map_elements(lw, [a], elem, I1, node)
    return _finish(lw, r, out, "logical_not", node)


def _invert(lw, args, kwargs, node):
    (a,), out = _operands(lw, "invert", args, dict(kwargs), 1, node)
    t = sdtype(a).type
    if t.is_inexact:
        raise lw.err(ZymaseTypeError, "np.invert() of floats is not defined (NumPy refuses "
                     "it too)", node)

    def elem(x):
        if x.type == I1:
            return Scalar(lw.b.op(Not, x.value), False)
        return Scalar(lw.b.op(XorI, x.value, lw.b.const(-1, x.type)), False)

    r = elem(a) if isinstance(a, Scalar) else map_elements(lw, [a], elem, t, node)
    return _finish(lw, r, out, "invert", node)


# ---------------------------------------------------------------------- methods


def _elementwise(ufunc):
    """The scalar function of a binary ufunc by name (for ``outer`` and ``at``)."""
    if ufunc in ARITHMETIC:
        return lambda lw, x, y, node: lw.binop(ARITHMETIC[ufunc](), x, y, node)
    if ufunc in COMPARISONS:
        return lambda lw, x, y, node: lw.compare(COMPARISONS[ufunc](), x, y, node)
    if ufunc in LOGICAL:
        op = LOGICAL[ufunc]
        return lambda lw, x, y, node: Scalar(lw.b.op(op, truth(lw, x).value,
                                                     truth(lw, y).value), False)
    return lambda lw, x, y, node: CALLS[ufunc](lw, [x, y], {}, node)


REDUCES = {np.add: np.sum, np.multiply: np.prod, np.maximum: np.max, np.minimum: np.min,
           np.logical_and: np.all, np.logical_or: np.any}
ACCUMULATES = {np.add: np.cumsum, np.multiply: np.cumprod}


def _reduce(ufunc, table, what):
    def h(lw, args, kwargs, node):
        name = f"np.{ufunc.__name__}.{what}"
        target = table.get(ufunc)
        if target is None:
            raise lw.err(ZymaseTypeError, f"{name}() is not supported in compiled code (the "
                         f"supported ones: {', '.join(f'np.{u.__name__}.{what}' for u in table)})"
                         "; write the loop", node)
        kwargs = dict(kwargs)
        if len(args) > 1:
            kwargs["axis"] = args[1]
            args = args[:1]
        unknown = set(kwargs) - {"axis"}
        if unknown or len(args) != 1:
            raise lw.err(ZymaseTypeError, f"{name}(a, axis=0) takes an array and an axis "
                         f"(got {len(args)} operands, keywords {sorted(unknown)})", node)
        kwargs.setdefault("axis", lw.const_int(0))  # (a ufunc reduces axis 0 by default)
        return CALLS[target](lw, list(args), kwargs, node)
    return h


def _outer(ufunc):
    fn = _elementwise(ufunc)

    def h(lw, args, kwargs, node):
        name = f"np.{ufunc.__name__}.outer"
        if kwargs or len(args) != 2:
            raise lw.err(ZymaseTypeError, f"{name}(a, b) takes two operands", node)
        a, b = (as_operand(lw, x, node) for x in args)
        if isinstance(a, Scalar) and isinstance(b, Scalar):
            return Scalar(fn(lw, a, b, node).value, False)
        dims_a = lw.dims(a) if isinstance(a, Array) else []
        dims_b = lw.dims(b) if isinstance(b, Array) else []
        sample = fn(lw, Scalar(lw.b.const(0, sdtype(a).type), False),
                    Scalar(lw.b.const(0, sdtype(b).type), False), node)
        out = alloc(lw, sample.type, dims_a + dims_b)

        def body(idx, acc):
            x = Scalar(load(lw, a, idx[:len(dims_a)]), False) if dims_a else a
            y = Scalar(load(lw, b, idx[len(dims_a):]), False) if dims_b else b
            store(lw, lw.b.cast(fn(lw, x, y, node).value, out.type.dtype), out, idx)

        nest(lw, dims_a + dims_b, body)
        return out
    return h


def _at(ufunc):
    fn = _elementwise(ufunc)

    def h(lw, args, kwargs, node):
        name = f"np.{ufunc.__name__}.at"
        if kwargs or len(args) != 3:
            raise lw.err(ZymaseTypeError, f"{name}(a, indices, b) takes the array, the "
                         "indices and the values", node)
        a, indices, b = args
        if not isinstance(a, Array):
            raise lw.err(ZymaseTypeError, f"{name}() updates an array in place, not "
                         f"{lw.describe(a)}", node)
        idx = list(indices.items) if isinstance(indices, Tup) else [indices]
        idx = [as_operand(lw, i, node) for i in idx]
        if len(idx) != a.type.ndim or any(sdtype(i).type.is_inexact for i in idx):
            raise lw.err(ZymaseTypeError, f"{name}() takes integer indices, one (array or "
                         f"number) per dimension of the array ({a.type.ndim})", node)
        b = as_operand(lw, b, node)
        arrays = [i for i in idx if isinstance(i, Array)]
        if any(i.type.ndim != 1 for i in arrays) or \
                (isinstance(b, Array) and b.type.ndim != 1):
            raise lw.err(ZymaseTypeError, f"{name}(): index arrays and values must be 1-D (or "
                         "numbers)", node)
        n = lw.dim(arrays[0], 0) if arrays else lw.b.i64(1)
        for v in arrays[1:] + ([b] if isinstance(b, Array) else []):
            ok = lw.b.op(CmpI, lw.dim(v, 0), n, pred="eq")
            lw.b.create(Assert, [ok, lw.dim(v, 0), n], [], {
                "kind": "ShapeError",
                "msg": f"{name}(): the index arrays and values have lengths {{a}} and {{b}}"})
        t = a.type.dtype

        def body(k, acc):
            where = [lw.norm_index(Scalar(load(lw, i, k), False) if isinstance(i, Array)
                                   else i, lw.dim(a, d), node) for d, i in enumerate(idx)]
            old = Scalar(lw.b.op(Load, a.value, *where), False)
            y = Scalar(load(lw, b, k), False) if isinstance(b, Array) else b
            lw.b.create(Store, [lw.b.cast(fn(lw, old, y, node).value, t), a.value, *where])

        nest(lw, [n], body)
        return PyObj(None)
    return h


register_all({f: h for f, h in {
    **{f: _arithmetic(f, opk) for f, opk in ARITHMETIC.items()},
    **{f: _comparison(f, opk) for f, opk in COMPARISONS.items()},
    **{f: _logical(f, op) for f, op in LOGICAL.items()},
    np.logical_not: _logical_not, np.invert: _invert,
}.items() if f not in CALLS})

_BINARY = [*ARITHMETIC, *COMPARISONS, *LOGICAL, np.maximum, np.minimum, np.power, np.arctan2,
           np.hypot]
register_all({
    **{u.outer: _outer(u) for u in _BINARY},
    **{u.at: _at(u) for u in _BINARY},
    **{u.reduce: _reduce(u, REDUCES, "reduce") for u in _BINARY},
    **{u.accumulate: _reduce(u, ACCUMULATES, "accumulate") for u in _BINARY},
})
