"""Python's builtins (``abs``, ``min``/``max``, ``int``/``float``/``bool``/``complex``,
``round``, ``len``, ``pow``, ``sum``, ``divmod``) and the ``math`` module in compiled code, as
handlers ``handler(lw, args, kwargs, node) -> FVal`` in the registry (``numpy/registry.py``).
The arguments of a builtin are bound as Python binds them (``SIGNATURES``) before its handler
runs.  ``zymase.checkpoint(helper)`` is read here too.
"""

from __future__ import annotations

import ast
import builtins
import math

from ...errors import UnsupportedError, ZymaseTypeError, ZymaseValueError
from ...ir.ops import (
    AbsF,
    AbsI,
    Acos,
    Acosh,
    AddF,
    AddI,
    AndI,
    Asin,
    Asinh,
    Assert,
    Atan,
    Atan2,
    Atanh,
    Ceil,
    CmpF,
    CmpI,
    ComplexAbs,
    ComplexCreate,
    Copysign,
    Cos,
    Cosh,
    DivF,
    Erf,
    Erfc,
    Exp,
    Expm1,
    Floor,
    Fmod,
    Hypot,
    IsFinite,
    IsInf,
    IsNan,
    Lgamma,
    Log,
    Log1p,
    Log2,
    Log10,
    MulF,
    Not,
    Pow,
    RoundEven,
    Select,
    Sin,
    Sinh,
    Sqrt,
    SubF,
    SubI,
    Tan,
    Tanh,
    Tgamma,
    Trunc,
)
from ...ir.types import F64, I1, I64
from ...lang import Checkpointed, checkpoint
from ..emit import finite_to_int, host_call, load, nest
from ..numpy.arrays import list_to_array
from ..numpy.reductions import reduce_all, reduce_axis0
from ..numpy.registry import register, register_all
from ..numpy.ufuncs import elementwise_unary
from ..typing import Array, EmptyList, ListVal, PyObj, Scalar, Tup, result_type, stype

# math function -> IR op (all take and return Python floats)
MATH_UNARY = {
    math.sqrt: Sqrt, math.exp: Exp, math.log1p: Log1p,
    math.expm1: Expm1, math.log10: Log10, math.log2: Log2,
    math.sin: Sin, math.cos: Cos, math.tan: Tan, math.asin: Asin,
    math.acos: Acos, math.atan: Atan, math.sinh: Sinh,
    math.cosh: Cosh, math.tanh: Tanh, math.asinh: Asinh,
    math.acosh: Acosh, math.atanh: Atanh, math.fabs: AbsF,
    math.erf: Erf, math.erfc: Erfc, math.lgamma: Lgamma,
    math.gamma: Tgamma,
}
MATH_BINARY = {math.pow: Pow, math.atan2: Atan2, math.hypot: Hypot,
               math.copysign: Copysign, math.fmod: Fmod}
MATH_TO_INT = {math.floor: Floor, math.ceil: Ceil, math.trunc: Trunc}
MATH_PREDICATES = {math.isnan: IsNan, math.isinf: IsInf,
                   math.isfinite: IsFinite}


def _zero(lw):
    return Scalar(lw.b.f64(0.0), True)


# builtin -> (its parameters, how many are required, those that may be passed by keyword,
# defaults for optional ones a later keyword skips over)
SIGNATURES = {
    builtins.abs: (("x",), 1, (), {}),
    builtins.int: (("x",), 0, (), {}),
    builtins.float: (("x",), 0, (), {}),
    builtins.bool: (("x",), 0, (), {}),
    builtins.complex: (("real", "imag"), 0, ("real", "imag"), {"real": _zero}),
    builtins.round: (("number", "ndigits"), 1, ("number", "ndigits"), {}),
    builtins.len: (("obj",), 1, (), {}),
    builtins.sum: (("iterable", "start"), 1, ("start",), {}),
    builtins.divmod: (("a", "b"), 2, (), {}),
    math.log: (("x", "base"), 1, (), {}),
    math.degrees: (("x",), 1, (), {}),
    math.radians: (("x",), 1, (), {}),
    **{f: (("x",), 1, (), {}) for f in (*MATH_TO_INT, *MATH_PREDICATES)},
}


def bind_builtin(lw, obj, args, kwargs, node) -> list:
    """``args`` and ``kwargs`` of a call of builtin ``obj`` as its positional arguments, with
    Python's TypeErrors for unknown keywords and wrong counts (extra arguments were ignored
    and keywords such as ``round(x, ndigits=2)`` dropped before)."""
    params, required, by_keyword, defaults = SIGNATURES[obj]
    name = getattr(obj, "__name__", str(obj))
    if len(args) > len(params):
        raise lw.err(ZymaseTypeError, f"{name}() takes at most {len(params)} argument(s) "
                     f"({len(args)} given)", node)
    out = list(args)
    for k in kwargs:
        if k not in by_keyword:
            raise lw.err(ZymaseTypeError, f"{name}() got an unexpected keyword argument {k!r}",
                         node)
        if params.index(k) < len(args):
            raise lw.err(ZymaseTypeError, f"{name}() got multiple values for argument {k!r}",
                         node)
    for k in params[len(args):]:
        if k in kwargs:
            while len(out) < params.index(k):
                missing = params[len(out)]
                if missing not in defaults:
                    raise lw.err(ZymaseTypeError, f"{name}() missing argument {missing!r}", node)
                out.append(defaults[missing](lw))
            out.append(kwargs[k])
    if len(out) < required:
        raise lw.err(ZymaseTypeError, f"{name}() missing required argument "
                     f"{params[len(out)]!r}", node)
    return out


def no_kwargs(lw, kwargs, node, name):
    if kwargs:
        raise lw.err(UnsupportedError, f"{name}() keyword arguments {sorted(kwargs)} are not "
                     "supported", node)


def as_float(lw, v, node, fname) -> Scalar:
    """A math-module argument: a real scalar converted to a Python float."""
    if isinstance(v, Array):
        raise lw.err(ZymaseTypeError, f"{fname}() takes a scalar, not an array; use the NumPy "
                     "function for arrays", node)
    if not isinstance(v, Scalar) or v.type.is_complex:
        raise lw.err(ZymaseTypeError, f"{fname}() needs a real number, not {lw.describe(v)}",
                     node)
    return Scalar(lw.b.cast(v.value, F64), True)


def _math_unary(op):
    def h(lw, args, kwargs, node):
        no_kwargs(lw, kwargs, node, op.name)
        _arity(lw, args, 1, node, op.name)
        x = as_float(lw, args[0], node, op.name)
        return Scalar(lw.b.op(op, x.value), True)
    return h


def _math_binary(op):
    def h(lw, args, kwargs, node):
        no_kwargs(lw, kwargs, node, op.name)
        _arity(lw, args, 2, node, op.name)
        x, y = (as_float(lw, a, node, op.name) for a in args)
        return Scalar(lw.b.op(op, x.value, y.value), True)
    return h


def _math_to_int(op):
    def h(lw, args, kwargs, node):
        _arity(lw, args, 1, node, op.name)
        v = args[0]
        if isinstance(v, Scalar) and (v.type.is_int or v.type.is_bool):
            return Scalar(lw.b.cast(v.value, I64), True)
        x = as_float(lw, v, node, op.name)
        return Scalar(finite_to_int(lw, Scalar(lw.b.op(op, x.value))), True)
    return h


def _math_predicate(op):
    def h(lw, args, kwargs, node):
        _arity(lw, args, 1, node, op.name)
        return Scalar(lw.b.op(op, as_float(lw, args[0], node, op.name).value), True)
    return h


for _f, _op in MATH_UNARY.items():
    register_all({_f: _math_unary(_op)})
for _f, _op in MATH_BINARY.items():
    register_all({_f: _math_binary(_op)})
for _f, _op in MATH_TO_INT.items():
    register_all({_f: _math_to_int(_op)})
for _f, _op in MATH_PREDICATES.items():
    register_all({_f: _math_predicate(_op)})


def _arity(lw, args, n, node, name):
    if len(args) != n:
        raise lw.err(ZymaseTypeError, f"{name}() takes {n} argument(s), got {len(args)}", node)


@register(math.log)
def _log(lw, args, kwargs, node):
    x = as_float(lw, args[0], node, Log.name)
    out = lw.b.op(Log, x.value)
    if len(args) == 2:
        base = as_float(lw, args[1], node, Log.name)
        den = lw.b.op(Log, base.value)
        # CPython divides the logarithms and raises for base 1 (log(base) == 0)
        ok = lw.b.op(CmpF, den, lw.b.f64(0.0), pred="ne")
        lw.b.create(Assert, [ok], [], {"kind": "ZeroDivisionError",
                                            "msg": "float division by zero (math.log with base 1)"})
        out = lw.b.op(DivF, out, den)
    return Scalar(out, True)


@register(math.degrees, math.radians)
def _degrees(lw, args, kwargs, node):
    x = as_float(lw, args[0], node, "math.degrees")
    f = 180.0 / math.pi if node.func.attr == "degrees" else math.pi / 180.0
    return Scalar(lw.b.op(MulF, x.value, lw.b.f64(f)), True)


# ---------------------------------------------------------------------- builtins
@register(builtins.abs)
def _abs(lw, args, kwargs, node):
    v = args[0]
    if isinstance(v, Array):
        return elementwise_unary(lw, "abs", v, node)
    if not isinstance(v, Scalar):
        raise lw.err(ZymaseTypeError, f"bad operand for abs(): {lw.describe(v)}", node)
    if v.type.is_complex:
        return Scalar(lw.b.op(ComplexAbs, v.value), v.weak)
    if v.type.is_inexact:
        return Scalar(lw.b.op(AbsF, v.value), v.weak)
    return Scalar(lw.b.op(AbsI, lw.b.cast(v.value, I64 if v.type == I1 else v.type)),
                  v.weak)


def _minmax(is_max):
    def h(lw, args, kwargs, node):
        no_kwargs(lw, kwargs, node, "max" if is_max else "min")
        if len(args) == 1:
            v = args[0]
            if isinstance(v, Tup):
                args = list(v.items)
            else:
                return reduce_all(lw, "max" if is_max else "min", v, node, python=True)
        if not all(isinstance(a, Scalar) for a in args):
            raise lw.err(ZymaseTypeError, "min()/max() of several arguments needs scalars", node)
        best = args[0]
        for v in args[1:]:
            st = result_type(stype(best), stype(v))
            x, y = lw.b.cast(best.value, st.type), lw.b.cast(v.value, st.type)
            better = lw.scalar_compare("gt" if is_max else "lt", Scalar(y), Scalar(x)).value
            best = Scalar(lw.b.op(Select, better, y, x), st.weak)
        return best
    return h


register_all({builtins.max: _minmax(True), builtins.min: _minmax(False)})


@register(builtins.int)
def _int(lw, args, kwargs, node):
    v = args[0] if args else lw.const_int(0)
    if not isinstance(v, Scalar) or v.type.is_complex:
        raise lw.err(ZymaseTypeError, f"int() needs a real number, not {lw.describe(v)}", node)
    if v.type.is_inexact:
        return Scalar(finite_to_int(lw, v), True)
    return Scalar(lw.b.cast(v.value, I64), True)


@register(builtins.float)
def _float(lw, args, kwargs, node):
    v = args[0] if args else Scalar(lw.b.f64(0.0), True)
    if isinstance(v, PyObj) and isinstance(v.obj, str):  # float("inf"), float("-inf"), ...
        try:
            return Scalar(lw.b.f64(float(v.obj)), True)
        except ValueError:
            raise lw.err(ZymaseValueError, f"could not convert string to float: {v.obj!r}",
                         node) from None
    if not isinstance(v, Scalar) or v.type.is_complex:
        raise lw.err(ZymaseTypeError, f"float() needs a real number, not {lw.describe(v)}", node)
    return Scalar(lw.b.cast(v.value, F64), True)


@register(builtins.bool)
def _bool(lw, args, kwargs, node):
    return lw.truth(args[0], node) if args else lw.const_bool(False)


@register(builtins.complex)
def _complex(lw, args, kwargs, node):
    re = as_float(lw, args[0], node, "complex") if args else Scalar(lw.b.f64(0.0), True)
    im = as_float(lw, args[1], node, "complex") if len(args) > 1 else Scalar(lw.b.f64(0.0), True)
    return Scalar(lw.b.op(ComplexCreate, re.value, im.value), True)


@register(builtins.round)
def _round(lw, args, kwargs, node):
    x = as_float(lw, args[0], node, "round")
    if isinstance(args[0], Scalar) and args[0].type.is_int:
        return args[0]
    r = lw.b.op(RoundEven, x.value)
    if len(args) == 2 and isinstance(args[1], PyObj) and args[1].obj is None:
        args = args[:1]
    if len(args) == 1:
        return Scalar(finite_to_int(lw, Scalar(r)), True)
    nd = lw.constant_of(args[1])
    if not isinstance(nd, int):
        raise lw.err(UnsupportedError, "round(x, ndigits) needs a constant ndigits", node)
    if not args[0].weak:  # NumPy scalars round as np.round does: (x * 10**n) rounded, / 10**n
        t = args[0].type
        scale = lw.b.const(10.0 ** nd, t)
        y = lw.b.op(RoundEven, lw.b.op(MulF, lw.b.cast(args[0].value, t), scale))
        return Scalar(lw.b.op(DivF, y, scale), False)
    if not 0 <= nd <= 22:
        raise lw.err(UnsupportedError, "round(x, ndigits) of a Python float is supported for "
                     "0 <= ndigits <= 22 (where 10**ndigits is an exact float)", node)
    return Scalar(_round_digits(lw, x.value, nd), True)


def _round_digits(lw, x, nd: int):
    """Python's correctly rounded ``round(x, nd)``: the exact x * 10**nd rounded half to even,
    over 10**nd.  The float product p can land on a half that the exact product is not on
    (0.15 * 10 == 1.5, though 0.15 is 0.1499...), or on an integer next to an exact half
    (|p| >= 2**52): the product's exact error (Dekker's split, no FMA needed) settles both.
    |p| >= 2**53 leaves x as it is (so do inf and nan)."""
    b = lw.b
    scale = b.f64(10.0 ** nd)
    p = b.op(MulF, x, scale)
    r = b.op(RoundEven, p)
    lo, hi = b.op(Floor, p), b.op(Ceil, p)
    tie = b.op(CmpF, b.op(SubF, p, lo), b.f64(0.5), pred="eq")
    err = _product_error(lw, x, scale, p)
    zero = b.f64(0.0)
    r = b.op(Select, b.op(AndI, tie, b.op(CmpF, err, zero, pred="gt")),
             hi, r)
    r = b.op(Select, b.op(AndI, tie, b.op(CmpF, err, zero, pred="lt")),
             lo, r)
    # 2**52 <= |p| < 2**53: p is an integer, and exactly halfway to its neighbour when the
    # error is +-0.5: the even one of the two
    half_off = b.op(CmpF, b.op(AbsF, err), b.f64(0.5), pred="eq")
    half = b.op(MulF, p, b.f64(0.5))
    even = b.op(CmpF, half, b.op(Floor, half), pred="eq")
    away = b.op(AddF, p, b.op(Copysign, b.f64(1.0), err))
    r = b.op(Select, b.op(AndI, half_off, b.op(Not, even)), away, r)
    small = b.op(CmpF, b.op(AbsF, p), b.f64(2.0 ** 53), pred="lt")
    return b.op(Select, small, b.op(DivF, r, scale), x)


def _product_error(lw, x, y, p):
    """x * y - p exactly, for p = fl(x * y) with no overflow (Dekker's TwoProduct)."""
    b = lw.b

    def split(v):
        t = b.op(MulF, b.f64(134217729.0), v)  # 2**27 + 1
        hi = b.op(SubF, t, b.op(SubF, t, v))
        return hi, b.op(SubF, v, hi)

    (xh, xl), (yh, yl) = split(x), split(y)
    e = b.op(SubF, b.op(MulF, xh, yh), p)
    e = b.op(AddF, e, b.op(MulF, xh, yl))
    e = b.op(AddF, e, b.op(MulF, xl, yh))
    return b.op(AddF, e, b.op(MulF, xl, yl))


@register(builtins.len)
def _len(lw, args, kwargs, node):
    v = args[0]
    if isinstance(v, Array):
        if v.type.ndim == 0:
            raise lw.err(ZymaseTypeError, "len() of a 0-d array", node)
        return Scalar(lw.dim(v, 0), True)
    if isinstance(v, Tup):
        return lw.const_int(len(v.items))
    if isinstance(v, ListVal):
        return Scalar(v.length, True)
    if isinstance(v, EmptyList):
        return lw.const_int(0)
    if isinstance(v, PyObj) and isinstance(v.obj, (str, bytes)):
        return lw.const_int(len(v.obj))
    raise lw.err(ZymaseTypeError, f"len() of {lw.describe(v)}", node)


@register(builtins.pow)
def _pow(lw, args, kwargs, node):
    if len(args) != 2 or kwargs:
        raise lw.err(UnsupportedError, "pow() takes two arguments in compiled code (pow(a, b, m) "
                     "with a modulus is not supported)", node)
    return lw.binop(ast.Pow(), args[0], args[1], node)


@register(builtins.sum)
def _sum(lw, args, kwargs, node):
    v = args[0]
    if isinstance(v, ListVal):  # Python's order: ((start + l[0]) + l[1]) + ...
        v = list_to_array(lw, v)
        args = [v, args[1] if len(args) > 1 else lw.const_int(0)]
    if isinstance(v, Tup):
        out = args[1] if len(args) > 1 else lw.const_int(0)
        for x in v.items:
            out = lw.binop(ast.Add(), out, x, node)
        return out

    if len(args) > 1 and isinstance(v, Array) and v.type.ndim == 1:
        # Python adds from start on, one element at a time: ((start + a[0]) + a[1]) + ...
        first = lw.binop(ast.Add(), args[1], Scalar(load(lw, v, [lw.b.i64(0)]), False), node)

        def body(idx, acc):
            x = Scalar(load(lw, v, [lw.b.op(AddI, idx[0], lw.b.i64(1))]), False)
            return [lw.binop(ast.Add(), Scalar(acc[0], first.weak), x, node).value]

        n = lw.b.op(SubI, lw.dim(v, 0), lw.b.i64(1))
        total = Scalar(nest(lw, [n], body, [first.value])[0], first.weak)
        empty = lw.b.op(CmpI, lw.dim(v, 0), lw.b.i64(0), pred="eq")
        start = lw.b.cast(args[1].value, total.type) if isinstance(args[1], Scalar) else None
        if start is None:
            raise lw.err(ZymaseTypeError, "sum(): start must be a number", node)
        return Scalar(lw.b.op(Select, empty, start, total.value), total.weak)
    total = reduce_axis0(lw, "sum", v, node)
    if len(args) > 1:  # start + the sum of the rows
        return lw.binop(ast.Add(), args[1], total, node)
    return total


@register(builtins.divmod)
def _divmod(lw, args, kwargs, node):
    a, b = args
    return Tup((lw.binop(ast.FloorDiv(), a, b, node), lw.binop(ast.Mod(), a, b, node)))


@register(builtins.print)
def _print(lw, args, kwargs, node):
    """``print(*values, sep=" ", end="\\n")`` of numbers, arrays and string constants, as
    Python prints them (through ``ir/host.py``'s ``print``, when the line runs)."""
    opts = {"sep": " ", "end": "\n"}
    for k, v in kwargs.items():
        if k not in opts or not (isinstance(v, PyObj) and isinstance(v.obj, str)):
            raise lw.err(UnsupportedError, f"print({k}=...) is not supported in compiled code "
                         "(sep= and end= with string constants are)", node)
        opts[k] = v.obj
    values, texts = [], []
    for v in args:
        if isinstance(v, PyObj) and isinstance(v.obj, (str, type(None))):
            texts.append(str(v.obj))
        elif isinstance(v, (Scalar, Array)):
            values.append(v.value)
            texts.append(None)
        elif isinstance(v, ListVal):
            values.append(list_to_array(lw, v).value)
            texts.append(None)
        else:
            raise lw.err(UnsupportedError, f"print() of {lw.describe(v)} is not supported in "
                         "compiled code (numbers, arrays and string constants are)", node)
    host_call(lw, "print", values, texts=texts, **opts)
    return PyObj(None)


@register(builtins.isinstance)
def _isinstance(lw, args, kwargs, node):
    raise lw.err(UnsupportedError, "isinstance() is not supported in compiled code: zymase "
                 "compiles one version of the function for each combination of argument types, "
                 "so there is nothing to test at run time; choose on the type before calling the "
                 "compiled function (a string argument is held constant: `if kind == \"vector\":` "
                 "compiles only the branch taken), or for arrays test `a.ndim`", node)


def _checkpoint_call(lw, args, kwargs, node):
    """``zymase.checkpoint(helper)`` in compiled code: the marked helper, called later (a
    loop's ``zymase.checkpoint(range(...))`` is read by the ``for`` statement instead)."""
    if len(args) == 1 and not kwargs and isinstance(args[0], PyObj) and callable(args[0].obj):
        return PyObj(Checkpointed(args[0].obj))
    raise lw.err(UnsupportedError, "zymase.checkpoint(...) in compiled code takes a helper "
                 "function (or, as a for loop's iterable, a range)", node)


register_all({checkpoint: _checkpoint_call})
