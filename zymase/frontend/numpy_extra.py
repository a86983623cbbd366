"""More of NumPy: argument binding shared by the handlers, elementwise functions (``np.where``,
``np.clip``, ``np.isnan``, ``np.hypot``, ``np.real``/``np.conj``/``np.angle``, ...), NumPy scalar
constructors (``np.float64(x)``), and the keyword checks of the reductions.

The rest lives beside this module and registers on import (see the bottom):
``numpy_linalg.py`` (matrix products, norms, ``eye``/``diag``/``trace``), ``numpy_shape.py``
(reshaping copies, joins, ``roll``/``diff``/``cumsum``), ``numpy_ranges.py`` (``arange``,
``linspace``), ``numpy_stats.py`` (``var``/``std``/``count_nonzero``) and ``numpy_fancy.py``
(``x[mask]``, ``x[idx]``).  Scalars given to a NumPy function give NumPy scalars (strong types),
as in NumPy.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import UnsupportedError, ZymaseTypeError
from ..ir.types import C64, C128, F32, F64, I1, I32, I64, ArrayType, ScalarType
from .calls import CALLS, finite_to_int
from .numpy import (
    METHODS,
    alloc,
    array_from_sequence,
    complex_part,
    float_type,
    list_to_array,
    load,
    map_elements,
    nest,
    store,
)
from .typing import Array, FVal, ListVal, PyObj, Scalar, SType, Tup, result_type, stype

REQUIRED = object()  # marks a parameter without a default in ``bind``

# ---------------------------------------------------------------------- arguments


def bind(lw, fname, args, kwargs, node, params, ignorable=None):
    """Python's binding of ``args``/``kwargs`` to ``params`` ((name, default) pairs).

    Returns ``{name: FVal or the default}``.  A keyword outside ``params`` is refused with
    UnsupportedError unless ``ignorable`` maps it to the constant it was given (``keepdims=False``).
    """
    names = [p for p, _ in params]
    if len(args) > len(params):
        raise lw.err(
            ZymaseTypeError,
            f"{fname}() takes at most {len(params)} positional argument(s) here, got {len(args)}",
            node,
        )
    out = dict(params)
    out.update(zip(names, args))
    for k, v in kwargs.items():
        if k in names[: len(args)]:
            raise lw.err(ZymaseTypeError, f"{fname}() got multiple values for `{k}`", node)
        if k in names:
            out[k] = v
        elif not (ignorable and k in ignorable and _same_constant(lw, v, ignorable[k])):
            raise lw.err(
                UnsupportedError,
                f"{fname}() keyword argument `{k}` is not supported "
                f"here (supported: {', '.join(names) or 'none'})",
                node,
            )
    missing = [k for k, v in out.items() if v is REQUIRED]
    if missing:
        raise lw.err(ZymaseTypeError, f"{fname}() is missing the argument `{missing[0]}`", node)
    return out


def _same_constant(lw, v, default):
    if default is None:
        return is_none(v)
    c = static(lw, v)
    return c is not None and type(c) is type(default) and c == default


def static(lw, v):
    """The Python value of a bound argument known at compile time (None when it is not); a
    negated constant (``axis=-1``) counts as one."""
    if not isinstance(v, FVal):
        return v
    c = lw.constant_of(v)
    op = v.value.op if isinstance(v, Scalar) else None
    if c is None and op is not None and op.name in ("arith.negi", "arith.negf"):
        inner = lw.constant_of(Scalar(op.operands[0]))
        return None if inner is None or isinstance(inner, bool) else -inner
    return c


def is_none(v) -> bool:
    return v is None or (isinstance(v, PyObj) and v.obj is None)


def const_int(lw, v, what, node) -> int:
    k = static(lw, v)
    if isinstance(k, bool) or not isinstance(k, int):
        raise lw.err(UnsupportedError, f"{what} must be a constant integer", node)
    return k


def norm_axis(lw, axis: int, ndim: int, node) -> int:
    if not -ndim <= axis < ndim:
        raise lw.err(
            ZymaseTypeError, f"axis {axis} is out of bounds for an array of dimension {ndim}", node
        )
    return axis % ndim


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


def sdtype(v) -> SType:
    return SType(v.type.dtype, False) if isinstance(v, Array) else stype(v)


def common_type(vals) -> ScalarType:
    st = sdtype(vals[0])
    for v in vals[1:]:
        st = result_type(st, sdtype(v))
    return st.type


def size_of(lw, dims):
    n = lw.b.i64(1)
    for d in dims:
        n = lw.b.op("arith.muli", n, d)
    return n


def check(lw, ok, kind, msg):
    lw.b.create("rt.assert", [ok], [], {"kind": kind, "msg": msg})


# typed arithmetic on Values already of type t: (float/complex op, int op, bool op)
ARITH = {
    "add": ("arith.addf", "arith.addi", "arith.ori"),
    "sub": ("arith.subf", "arith.subi", "arith.xori"),
    "mul": ("arith.mulf", "arith.muli", "arith.andi"),
    "max": ("arith.maximumf", "arith.maxi", "arith.ori"),
    "min": ("arith.minimumf", "arith.mini", "arith.andi"),
}


def arith(lw, kind, x, y):
    t = x.type
    return lw.b.op(ARITH[kind][0 if t.is_inexact else 1 if t.is_int else 2], x, y)


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


def register_all(table):
    for f, h in table.items():
        CALLS[f] = h


# ---------------------------------------------------------------------- where / clip


def _where(lw, args, kwargs, node):
    if kwargs or len(args) not in (1, 3):
        raise lw.err(ZymaseTypeError, "np.where() takes (condition, x, y)", node)
    if len(args) == 1:
        raise lw.err(
            UnsupportedError,
            "np.where(condition) with one argument (np.nonzero) is "
            "not supported; use np.where(condition, x, y)",
            node,
        )
    cond, x, y = (operand(lw, a, node) for a in args)
    if not any(isinstance(v, Array) for v in (cond, x, y)):
        raise lw.err(
            UnsupportedError,
            "np.where() of three scalars makes a 0-d array, which is "
            "not supported; use `x if condition else y`",
            node,
        )
    t = result_type(sdtype(x), sdtype(y)).type

    def elem(c, a, b):
        c = lw.truth(c, node).value
        return Scalar(lw.b.op("arith.select", c, lw.b.cast(a.value, t), lw.b.cast(b.value, t)))

    return map_elements(lw, [cond, x, y], elem, t, node)


def clip(lw, a, lo, hi, node):
    """``np.clip(a, lo, hi)``: ``min(max(a, lo), hi)`` with NaN propagating, either bound None."""
    bounds = [(k, operand(lw, v, node)) for k, v in (("max", lo), ("min", hi)) if not is_none(v)]
    a = operand(lw, a, node)
    vals = [a] + [v for _, v in bounds]
    t = common_type(vals)
    if t.is_complex:
        raise lw.err(
            ZymaseTypeError,
            "np.clip() of complex numbers is not supported (they are not ordered)",
            node,
        )

    def elem(x, *bs):
        out = lw.b.cast(x.value, t)
        for (kind, _), bnd in zip(bounds, bs):
            out = arith(lw, kind, out, lw.b.cast(bnd.value, t))
        return Scalar(out, False)

    if all(isinstance(v, Scalar) for v in vals):
        return elem(*vals)
    return map_elements(lw, vals, elem, t, node)


def _clip(lw, args, kwargs, node):
    b = bind(
        lw,
        "np.clip",
        args,
        kwargs,
        node,
        [("a", REQUIRED), ("a_min", None), ("a_max", None), ("min", None), ("max", None)],
        {"out": None},
    )
    lo = b["min"] if is_none(b["a_min"]) else b["a_min"]
    hi = b["max"] if is_none(b["a_max"]) else b["a_max"]
    return clip(lw, b["a"], lo, hi, node)


def _m_clip(lw, a, args, kwargs, node):
    return _clip(lw, [a, *args], kwargs, node)


# ---------------------------------------------------------------------- elementwise functions


def _is_test(name):
    """np.isnan/isinf/isfinite: False/False/True for ints; complex tests both parts."""

    def elem(lw, x):
        t = x.type
        if not t.is_inexact:
            return lw.b.i1(name == "math.isfinite")
        if not t.is_complex:
            return lw.b.op(name, x.value)
        re, im = (lw.b.op(name, lw.b.op(p, x.value)) for p in ("complex.re", "complex.im"))
        return lw.b.op("arith.andi" if name == "math.isfinite" else "arith.ori", re, im)

    def h(lw, args, kwargs, node):
        b = bind(lw, name.replace("math.", "np."), args, kwargs, node, [("x", REQUIRED)])
        return elementwise(lw, b["x"], lambda x: elem(lw, x), I1, node)

    return h


def _real_ufunc(opname, fname):
    """A float ufunc (ints give float64) built from one ``math`` op and constant operands."""

    def h(lw, args, kwargs, node):
        b = bind(lw, fname, args, kwargs, node, [("x", REQUIRED)])
        x = operand(lw, b["x"], node)
        t = float_type(sdtype(x).type)
        if t.is_complex and opname != "math.pow":
            raise lw.err(UnsupportedError, f"{fname}() of complex numbers is not supported", node)

        def elem(v):
            if opname == "math.pow":  # exp2
                return lw.b.op("math.pow", lw.b.const(2, t), lw.b.cast(v.value, t))
            return lw.b.op(opname, lw.b.cast(v.value, t))

        return elementwise(lw, x, elem, t, node)

    return h


def _hypot(lw, args, kwargs, node):
    b = bind(lw, "np.hypot", args, kwargs, node, [("x1", REQUIRED), ("x2", REQUIRED)])

    def elem(x, y, t):
        ft = float_type(t)
        if ft.is_complex:
            raise lw.err(ZymaseTypeError, "np.hypot() of complex numbers is not defined", node)
        return lw.b.op("math.hypot", lw.b.cast(x.value, ft), lw.b.cast(y.value, ft))

    return elementwise2(lw, b["x1"], b["x2"], elem, float_type, node)


def _isclose(lw, args, kwargs, node, fname="np.isclose"):
    """NumPy 2's ``isclose``: ``|a - b| <= atol + rtol * |b|`` with ``b`` finite, or ``a == b``
    (so inf is close to inf only, and equal values always), NaN close to NaN only with
    ``equal_nan``; computed in the inputs' float type (float32 stays float32, as in NumPy)."""
    p = bind(lw, fname, args, kwargs, node, [("a", REQUIRED), ("b", REQUIRED), ("rtol", 1e-05),
                                             ("atol", 1e-08), ("equal_nan", False)])
    equal_nan = static(lw, p["equal_nan"])
    if not isinstance(equal_nan, (bool, np.bool_)):
        raise lw.err(UnsupportedError, f"{fname}(equal_nan=...) must be True or False, known "
                     "at compile time", node)
    tols = []
    for k in ("rtol", "atol"):
        v = p[k] if isinstance(p[k], FVal) else Scalar(lw.b.f64(p[k]), True)
        if not isinstance(v, Scalar) or v.type.is_complex:
            raise lw.err(ZymaseTypeError, f"{fname}({k}=...) must be a real number", node)
        tols.append(v)
    b = lw.b

    def elem(x, y, t):
        ft = float_type(t)
        if ft.is_complex:
            raise lw.err(UnsupportedError, f"{fname}() of complex numbers is not supported",
                         node)
        x, y = b.cast(x.value, ft), b.cast(y.value, ft)
        rtol, atol = (b.cast(v.value, ft) for v in tols)
        diff = b.op("math.absf", b.op("arith.subf", x, y))
        tol = b.op("arith.addf", atol, b.op("arith.mulf", rtol, b.op("math.absf", y)))
        close = b.op("arith.andi", b.op("arith.cmpf", diff, tol, pred="le"),
                     b.op("math.isfinite", y))
        r = b.op("arith.ori", close, b.op("arith.cmpf", x, y, pred="eq"))  # NumPy 2's rule
        if equal_nan:
            both = b.op("arith.andi", b.op("math.isnan", x), b.op("math.isnan", y))
            r = b.op("arith.ori", r, both)
        return r

    return elementwise2(lw, p["a"], p["b"], elem, lambda t: I1, node)


def _allclose(lw, args, kwargs, node):
    close = _isclose(lw, args, kwargs, node, "np.allclose")
    if isinstance(close, Array):
        from .numpy import reduce_all
        close = reduce_all(lw, "all", close, node)
    return Scalar(close.value, True)  # a Python bool, as NumPy's allclose returns


def _reciprocal(lw, args, kwargs, node):
    """1/x; on integers NumPy's C division: 1 and -1 map to themselves, 0 to the minimum int."""
    b = bind(lw, "np.reciprocal", args, kwargs, node, [("x", REQUIRED)])
    x = operand(lw, b["x"], node)
    t = sdtype(x).type
    if t.is_bool:
        raise lw.err(ZymaseTypeError, "np.reciprocal() of booleans is not supported", node)

    def elem(v):
        if t.is_inexact:
            return lw.b.op("arith.divf", lw.b.const(1, t), v.value)

        def eq(k):
            return lw.b.op("arith.cmpi", v.value, lw.b.const(k, t), pred="eq")

        out = lw.b.op("arith.select", eq(0), lw.b.const(-(2 ** (t.bits - 1)), t), lw.b.const(0, t))
        for k in (1, -1):
            out = lw.b.op("arith.select", eq(k), lw.b.const(k, t), out)
        return out

    return elementwise(lw, x, elem, t, node)


def _negative(lw, args, kwargs, node):
    b = bind(lw, "np.negative", args, kwargs, node, [("x", REQUIRED)])
    x = operand(lw, b["x"], node)
    if sdtype(x).type.is_bool:
        raise lw.err(
            ZymaseTypeError,
            "the numpy boolean negative is not supported; use `~` or np.logical_not",
            node,
        )
    return elementwise(lw, x, lambda v: lw.expr_neg(v).value, sdtype(x).type, node)


def _sign(lw, args, kwargs, node):
    """np.sign: -1/0/+1 in the operand's type (ints stay ints); NaN stays NaN."""
    b = bind(lw, "np.sign", args, kwargs, node, [("x", REQUIRED)])
    x = operand(lw, b["x"], node)
    t = sdtype(x).type
    if t.is_bool or t.is_complex:
        raise lw.err(ZymaseTypeError, f"np.sign() of {t.np_dtype.name} is not supported", node)

    def elem(v):
        if t.is_inexact:
            return lw.b.op("math.sign", v.value)
        pos = lw.b.cast(lw.b.op("arith.cmpi", v.value, lw.b.const(0, t), pred="gt"), t)
        neg = lw.b.cast(lw.b.op("arith.cmpi", v.value, lw.b.const(0, t), pred="lt"), t)
        return lw.b.op("arith.subi", pos, neg)

    return elementwise(lw, x, elem, t, node)


def _rounding(opname, fname):
    """np.floor/ceil/trunc: integers and booleans keep their type (NumPy 2.3+)."""

    def h(lw, args, kwargs, node):
        b = bind(lw, fname, args, kwargs, node, [("x", REQUIRED)])
        x = operand(lw, b["x"], node)
        t = sdtype(x).type
        if t.is_complex:
            raise lw.err(ZymaseTypeError, f"{fname}() of complex numbers is not defined", node)
        if t.is_inexact:
            return elementwise(lw, x, lambda v: lw.b.op(opname, v.value), t, node)
        return elementwise(lw, x, lambda v: v.value, t, node)

    return h


def _np_round(lw, args, kwargs, node):
    """``np.round(a, decimals=0)`` / ``np.around`` / ``a.round()``, NumPy's way (not Python's
    correctly rounded ``round``): ``rint(a * 10**d) / 10**d``, or ``rint(a / 10**-d) * 10**-d``
    for negative ``d``; integers are returned as they are for ``d >= 0``."""
    b = bind(lw, "np.round", args, kwargs, node, [("a", REQUIRED), ("decimals", 0),
                                                     ("out", None)])
    if not is_none(b["out"]):
        raise lw.err(UnsupportedError, "np.round(out=...) is not supported", node)
    d = const_int(lw, b["decimals"], "np.round(decimals=...)", node)
    x = operand(lw, b["a"], node)
    t = sdtype(x).type
    if t.is_complex:
        raise lw.err(UnsupportedError, "np.round() of complex numbers is not supported", node)
    if t.is_bool:
        raise lw.err(UnsupportedError, "np.round() of booleans is not supported (NumPy gives "
                     "float16)", node)
    if not t.is_inexact:
        if d < 0:
            raise lw.err(UnsupportedError, "np.round() of integers with negative decimals is "
                         "not supported", node)
        return elementwise(lw, x, lambda v: v.value, t, node)
    ops = lw.b

    def rnd(v):
        if d == 0:
            return ops.op("math.roundeven", v.value)
        try:
            scale = 10.0 ** abs(d)
        except OverflowError:
            scale = math.inf
        if t == F32 and scale > float(np.finfo(np.float32).max):
            scale = math.inf  # NumPy's factor in float32: inf (and the result nan, as there)
        f = ops.const(scale, t)
        scale, back = ("arith.mulf", "arith.divf") if d > 0 else ("arith.divf", "arith.mulf")
        return ops.op(back, ops.op("math.roundeven", ops.op(scale, v.value, f)), f)

    return elementwise(lw, x, rnd, t, node)


# ---------------------------------------------------------------------- complex parts


def _part(name):
    def h(lw, args, kwargs, node):
        b = bind(lw, f"np.{name}", args, kwargs, node, [("val", REQUIRED)])
        v = operand(lw, b["val"], node)
        if isinstance(v, Scalar):
            return lw.scalar_part(v, name)
        return complex_part(lw, v, name, node)

    return h


def conj(lw, v, node):
    v = operand(lw, v, node)
    if not sdtype(v).type.is_complex:
        return elementwise(lw, v, lambda x: x.value, sdtype(v).type, node)
    return elementwise(lw, v, lambda x: lw.b.op("complex.conj", x.value), sdtype(v).type, node)


def _conj(lw, args, kwargs, node):
    b = bind(lw, "np.conj", args, kwargs, node, [("x", REQUIRED)])
    return conj(lw, b["x"], node)


def _angle(lw, args, kwargs, node):
    """atan2(imag, real), in degrees with ``deg=True`` (np.angle's own formula)."""
    b = bind(lw, "np.angle", args, kwargs, node, [("z", REQUIRED), ("deg", False)])
    z = operand(lw, b["z"], node)
    deg = static(lw, b["deg"])
    if not isinstance(deg, bool):
        raise lw.err(UnsupportedError, "np.angle(deg=...) must be a constant", node)
    zt = sdtype(z).type
    t = zt.real_type if zt.is_complex else float_type(zt)

    def elem(x):
        if zt.is_complex:
            im, re = lw.b.op("complex.im", x.value), lw.b.op("complex.re", x.value)
        else:
            im, re = lw.b.const(0, t), lw.b.cast(x.value, t)
        out = lw.b.op("math.atan2", im, re)
        return lw.b.op("arith.mulf", out, lw.b.const(180 / math.pi, t)) if deg else out

    return elementwise(lw, z, elem, t, node)


# ---------------------------------------------------------------------- scalar constructors


def _scalar_ctor(t: ScalarType, fname):
    """``np.float64(x)`` and friends: a strong scalar of type ``t`` (an array: a cast copy)."""

    def h(lw, args, kwargs, node):
        if kwargs or len(args) > (2 if t.is_complex else 1):
            raise lw.err(ZymaseTypeError, f"{fname}() takes one value", node)
        if not args:
            return Scalar(lw.b.const(0, t), False)
        if len(args) == 2:
            re, im = (_convert(lw, operand(lw, a, node), t.real_type, fname, node) for a in args)
            return Scalar(lw.b.op("complex.create", re.value, im.value), False)
        return _convert(lw, operand(lw, args[0], node), t, fname, node)

    return h


def _convert(lw, v, t, fname, node):
    if sdtype(v).type.is_complex and not t.is_complex:
        raise lw.err(ZymaseTypeError, f"{fname}() cannot convert a complex value", node)

    def elem(x):
        if t.is_bool:
            return lw.truth(x, node).value
        if t.is_int and x.type.is_inexact:
            return finite_to_int(lw, x, t)
        return lw.b.cast(x.value, t)

    return elementwise(lw, v, elem, t, node)


SCALAR_TYPES = {
    np.float64: F64,
    np.float32: F32,
    np.int64: I64,
    np.int32: I32,
    np.complex128: C128,
    np.complex64: C64,
    np.bool_: I1,
}

# ---------------------------------------------------------------------- reductions' keywords


def _checked_reducer(original, fname):
    """The reducer of numpy.py with its keywords checked: ``keepdims=`` is honoured,
    ``dtype=...`` and ``out=...`` are refused instead of being ignored."""

    def h(lw, args, kwargs, node):
        kwargs, keep = pop_keepdims(lw, kwargs, fname, node)
        b = bind(
            lw,
            fname,
            args,
            kwargs,
            node,
            [("a", REQUIRED), ("axis", None)],
            {"out": None, "dtype": None},
        )
        axis = _axis_kw(lw, b["axis"], node)
        r = original(lw, [b["a"]], axis, node)
        return keep_dims(lw, r, b["a"], b["axis"], node) if keep else r

    return h


def _checked_method(original, name):
    def m(lw, a, args, kwargs, node):
        kwargs, keep = pop_keepdims(lw, kwargs, f"ndarray.{name}", node)
        b = bind(
            lw,
            f"ndarray.{name}",
            args,
            kwargs,
            node,
            [("axis", None)],
            {"out": None, "dtype": None},
        )
        r = original(lw, a, [], _axis_kw(lw, b["axis"], node), node)
        return keep_dims(lw, r, a, b["axis"], node) if keep else r

    return m


def pop_keepdims(lw, kwargs, fname, node):
    """(the other keywords, the value of ``keepdims=``: a bool known at compile time)."""
    if "keepdims" not in kwargs:
        return kwargs, False
    rest = dict(kwargs)
    k = static(lw, rest.pop("keepdims"))
    if not isinstance(k, (bool, np.bool_)):
        raise lw.err(UnsupportedError, f"{fname}(keepdims=...) must be True or False, known at "
                     "compile time", node)
    return rest, bool(k)


def keep_dims(lw, r, a, axis, node):
    """The reduction ``r`` of ``a`` with the reduced axis kept as a length-1 axis (all axes
    for ``axis=None``), as NumPy's ``keepdims=True``: a view of a fresh result."""
    if not isinstance(a, Array):
        return r  # a scalar's reduction is the scalar, and keepdims keeps it 0-d
    nd = a.type.ndim
    b = lw.b
    if is_none(axis):
        r = r if isinstance(r, Scalar) else Scalar(load(lw, r, []))
        out = alloc(lw, r.type, [b.i64(1)] * nd)
        store(lw, r.value, out, [b.i64(0)] * nd)
        return out
    if nd == 1:  # reduced to a scalar
        out = alloc(lw, r.type, [b.i64(1)])
        store(lw, r.value, out, [b.i64(0)])
        return out
    k = norm_axis(lw, const_int(lw, axis, "axis=", node), nd, node)
    if r.type.layout != "C":
        copy = alloc(lw, r.type.dtype, lw.dims(r))
        nest(lw, lw.dims(r), lambda idx, acc: store(lw, load(lw, r, idx), copy, idx))
        r = copy
    dims = lw.dims(r)
    dims = dims[:k] + [b.i64(1)] + dims[k:]
    t = ArrayType(r.type.dtype, nd, "C")
    return Array(b.create("array.reshape", [r.value, *dims], [t]).result)


def _axis_kw(lw, axis, node):
    if is_none(axis):
        return {}
    return {"axis": lw.const_int(const_int(lw, axis, "axis=", node))}


REDUCER_NAMES = {
    np.sum: "sum",
    np.prod: "prod",
    np.max: "max",
    np.amax: "max",
    np.min: "min",
    np.amin: "min",
    np.mean: "mean",
    np.argmax: "argmax",
    np.argmin: "argmin",
    np.any: "any",
    np.all: "all",
}


def _register_checked_reducers():
    for f in REDUCER_NAMES:
        CALLS[f] = _checked_reducer(CALLS[f], f"np.{f.__name__}")
    for kind in set(REDUCER_NAMES.values()):
        METHODS[kind] = _checked_method(METHODS[kind], kind)


# ---------------------------------------------------------------------- registration

register_all(
    {
        np.where: _where,
        np.clip: _clip,
        np.isclose: _isclose,
        np.allclose: _allclose,
        np.isnan: _is_test("math.isnan"),
        np.isinf: _is_test("math.isinf"),
        np.isfinite: _is_test("math.isfinite"),
        np.hypot: _hypot,
        np.exp2: _real_ufunc("math.pow", "np.exp2"),
        np.reciprocal: _reciprocal,
        np.negative: _negative,
        np.sign: _sign,
        np.round: _np_round,
        np.around: _np_round,
        np.floor: _rounding("math.floor", "np.floor"),
        np.ceil: _rounding("math.ceil", "np.ceil"),
        np.trunc: _rounding("math.trunc", "np.trunc"),
        np.real: _part("real"),
        np.imag: _part("imag"),
        np.conj: _conj,
        np.conjugate: _conj,
        np.angle: _angle,
        **{f: _scalar_ctor(t, f"np.{f.__name__}") for f, t in SCALAR_TYPES.items()},
    }
)
_register_checked_reducers()
METHODS["clip"] = _m_clip
METHODS["round"] = lambda lw, a, args, kwargs, node: _np_round(lw, [a, *args], kwargs, node)
METHODS["conj"] = METHODS["conjugate"] = lambda lw, a, args, kwargs, node: _conj(
    lw, [a, *args], kwargs, node
)

from . import (  # noqa: E402,F401
    numpy_fancy,
    numpy_linalg,
    numpy_ranges,
    numpy_shape,
    numpy_sort,
    numpy_stats,
)
from .numpy_fancy import fancy_read, fancy_write  # noqa: E402,F401
from .numpy_linalg import matmul  # noqa: E402,F401
