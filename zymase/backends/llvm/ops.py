"""The LLVM emitters of scalar ops (``table.py`` holds them all: ``OP_EMITTERS[cls](em, op) ->
[result operands]``).

Scalar math maps to LLVM intrinsics or libm (``MATH``); Python-specific integer and float
division live in the runtime module (``runtime.py``).  Array ops build and read the array struct
(see ``types.py``); addresses of C-contiguous arrays are computed from the shape so that LLVM sees
a unit inner stride and vectorizes.
"""

from __future__ import annotations

import llvmlite.binding as llvm_binding

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
    Cast,
    Ceil,
    CmpF,
    CmpI,
    ComplexAbs,
    ComplexCreate,
    ComplexIm,
    ComplexRe,
    Conj,
    Constant,
    Copysign,
    Cos,
    Cosh,
    Digamma,
    DivF,
    Erf,
    Erfc,
    Exp,
    Expm1,
    Floor,
    FloorDivF,
    FloorDivI,
    Fmod,
    Hypot,
    Index,
    IsFinite,
    IsInf,
    IsNan,
    Lgamma,
    Log,
    Log1p,
    Log2,
    Log10,
    MaxI,
    MaximumF,
    MinI,
    MinimumF,
    ModF,
    ModI,
    MulF,
    MulI,
    NegF,
    NegI,
    Not,
    OrI,
    Pow,
    PowI,
    RoundEven,
    Select,
    ShlI,
    ShrI,
    Sign,
    Sin,
    Sinh,
    Sqrt,
    SubF,
    SubI,
    Tan,
    Tanh,
    Tgamma,
    Trigamma,
    Trunc,
    XorI,
)
from .table import emitter
from .types import SCALAR, literal, ltype


def _ops(em, op):
    return [em.val(v) for v in op.operands]


def _fp(t) -> str:
    return SCALAR[str(t)]


# ---------------------------------------------------------------------- arith
@emitter(Constant)
def _constant(em, op):
    return [literal(op.attrs["value"], op.results[0].type)]


_FLOAT_BIN = {AddF: "fadd", SubF: "fsub", MulF: "fmul",
              DivF: "fdiv"}
_INT_BIN = {AddI: "add", SubI: "sub", MulI: "mul", AndI: "and",
            OrI: "or", XorI: "xor"}


@emitter(*_FLOAT_BIN)
def _float_bin(em, op):
    t = op.results[0].type
    a, b = _ops(em, op)
    if t.is_complex:
        return [em.assign(f"call {ltype(t)} @zy.c{_FLOAT_BIN[type(op)]}.{t}({ltype(t)} {a}, "
                          f"{ltype(t)} {b})")]
    nsz = "nsz " if op.attrs.get("nsz") else ""  # adjoint accumulations (canonicalize.py)
    return [em.assign(f"{_FLOAT_BIN[type(op)]} {em.fm}{nsz}{_fp(t)} {a}, {b}")]


@emitter(*_INT_BIN)
def _int_bin(em, op):
    a, b = _ops(em, op)
    return [em.assign(f"{_INT_BIN[type(op)]} {ltype(op.results[0].type)} {a}, {b}")]


@emitter(NegF)
def _negf(em, op):
    t = op.results[0].type
    (a,) = _ops(em, op)
    if t.is_complex:
        ft = _fp(t.real_type)
        parts = [em.assign(f"fneg {ft} {em.assign(f'extractvalue {ltype(t)} {a}, {k}')}")
                 for k in (0, 1)]
        return [_pack(em, t, *parts)]
    return [em.assign(f"fneg {_fp(t)} {a}")]


@emitter(NegI)
def _negi(em, op):
    (a,) = _ops(em, op)
    return [em.assign(f"sub {ltype(op.results[0].type)} 0, {a}")]


@emitter(Not)
def _not(em, op):
    (a,) = _ops(em, op)
    return [em.assign(f"xor i1 {a}, true")]


@emitter(AbsI)
def _absi(em, op):
    t = ltype(op.results[0].type)
    (a,) = _ops(em, op)
    if op.results[0].type.unsigned:
        return [a]
    return [em.assign(f"call {t} @llvm.abs.{t}({t} {a}, i1 false)")]


@emitter(MaxI, MinI)
def _minmaxi(em, op):
    t = ltype(op.results[0].type)
    a, b = _ops(em, op)
    fn = ("u" if op.results[0].type.unsigned else "s") + ("max" if isinstance(op, MaxI) else
                                                           "min")
    return [em.assign(f"call {t} @llvm.{fn}.{t}({t} {a}, {t} {b})")]


@emitter(ShlI, ShrI)
def _shift(em, op):
    """``a << b`` / ``a >> b`` as NumPy's: a shift by the width or more gives 0 (or -1 for ``>>``
    of a negative signed value); a negative shift raises ValueError, as Python's."""
    t = op.results[0].type
    lt = ltype(t)
    a, b = _ops(em, op)
    if not t.unsigned:
        ok = em.assign(f"icmp sge {lt} {b}, 0")
        em.raise_if_not(ok, "ValueError", "negative shift count", op.loc)
    big = em.assign(f"icmp uge {lt} {b}, {t.bits}")
    if isinstance(op, ShlI):
        shifted, over = em.assign(f"shl {lt} {a}, {b}"), "0"
    elif t.unsigned:
        shifted, over = em.assign(f"lshr {lt} {a}, {b}"), "0"
    else:
        shifted = em.assign(f"ashr {lt} {a}, {b}")
        over = em.assign(f"ashr {lt} {a}, {t.bits - 1}")
    return [em.assign(f"select i1 {big}, {lt} {over}, {lt} {shifted}")]


@emitter(MaximumF, MinimumF)
def _minmaxf(em, op):
    t = _fp(op.results[0].type)
    a, b = _ops(em, op)
    fn = "maximum" if isinstance(op, MaximumF) else "minimum"
    return [em.assign(f"call {t} @llvm.{fn}.{_suffix(op.results[0].type)}({t} {a}, {t} {b})")]


@emitter(FloorDivI, ModI, PowI)
def _int_div(em, op):
    t = op.results[0].type
    lt = ltype(t)
    a, b = _ops(em, op)
    em.mod.request_int_runtime(t)
    if isinstance(op, PowI):
        if not t.unsigned:
            ok = em.assign(f"icmp sge {lt} {b}, 0")
            em.raise_if_not(ok, "ValueError", "negative integer power in compiled code (use a "
                            "float base)", op.loc)
        return [em.assign(f"call {lt} @zy.powi.{t}({lt} {a}, {lt} {b})")]
    ok = em.assign(f"icmp ne {lt} {b}, 0")
    em.raise_if_not(ok, "ZeroDivisionError", "integer division or modulo by zero", op.loc)
    if t.unsigned:  # (floor division and modulo of nonnegative numbers)
        return [em.assign(f"{'udiv' if isinstance(op, FloorDivI) else 'urem'} {lt} {a}, {b}")]
    fn = "floordiv" if isinstance(op, FloorDivI) else "mod"
    return [em.assign(f"call {lt} @zy.{fn}.{t}({lt} {a}, {lt} {b})")]


@emitter(ModF, FloorDivF)
def _py_float_div(em, op):
    t = op.results[0].type
    ft = _fp(t)
    a, b = _ops(em, op)
    fn = "pymod" if isinstance(op, ModF) else "pyfloordiv"
    return [em.assign(f"call {ft} @zy.{fn}.{t}({ft} {a}, {ft} {b})")]


_FCMP = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge"}
_ICMP = {"eq": "eq", "ne": "ne", "lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge"}
_UCMP = {"eq": "eq", "ne": "ne", "lt": "ult", "le": "ule", "gt": "ugt", "ge": "uge"}


@emitter(CmpF)
def _cmpf(em, op):
    t = op.operands[0].type
    a, b = _ops(em, op)
    pred = op.attrs["pred"]
    if t.is_complex:
        lt = ltype(t)
        ft = _fp(t.real_type)
        parts = []
        for k in (0, 1):
            x = em.assign(f"extractvalue {lt} {a}, {k}")
            y = em.assign(f"extractvalue {lt} {b}, {k}")
            parts.append(em.assign(f"fcmp {_FCMP[pred]} {ft} {x}, {y}"))
        comb = "and" if pred == "eq" else "or"
        return [em.assign(f"{comb} i1 {parts[0]}, {parts[1]}")]
    return [em.assign(f"fcmp {_FCMP[pred]} {_fp(t)} {a}, {b}")]


@emitter(CmpI)
def _cmpi(em, op):
    t = op.operands[0].type
    a, b = _ops(em, op)
    table = _UCMP if t.is_bool or t.unsigned else _ICMP
    return [em.assign(f"icmp {table[op.attrs['pred']]} {ltype(t)} {a}, {b}")]


@emitter(Select)
def _select(em, op):
    c, a, b = _ops(em, op)
    t = ltype(op.results[0].type)
    return [em.assign(f"select i1 {c}, {t} {a}, {t} {b}")]


@emitter(Cast)
def _cast(em, op):
    (a,) = _ops(em, op)
    return [cast(em, a, op.operands[0].type, op.results[0].type)]


def cast(em, a: str, src, dst) -> str:
    if src == dst:
        return a
    if dst.is_complex:
        ft = dst.real_type
        if src.is_complex:
            parts = [cast(em, em.assign(f"extractvalue {ltype(src)} {a}, {k}"), src.real_type, ft)
                     for k in (0, 1)]
            return _pack(em, dst, *parts)
        return _pack(em, dst, cast(em, a, src, ft), literal(0.0, ft))
    if dst.is_bool:
        if src.is_complex:  # nonzero: either part (NumPy's truth of a complex number)
            re, im = (cast(em, em.assign(f"extractvalue {ltype(src)} {a}, {k}"), src.real_type,
                           dst) for k in (0, 1))
            return em.assign(f"or i1 {re}, {im}")
        if src.is_inexact:
            return em.assign(f"fcmp une {_fp(src)} {a}, {literal(0.0, src)}")
        return em.assign(f"icmp ne {ltype(src)} {a}, 0")
    if dst.is_int:
        if src.is_bool:
            return em.assign(f"zext i1 {a} to {ltype(dst)}")
        if src.is_int:
            if dst.bits == src.bits:
                return a  # (the same bits read with the other sign)
            op = ("zext" if src.unsigned else "sext") if dst.bits > src.bits else "trunc"
            return em.assign(f"{op} {ltype(src)} {a} to {ltype(dst)}")
        d, s = ltype(dst), _fp(src)
        fn = "fptoui" if dst.unsigned else "fptosi"
        return em.assign(f"call {d} @llvm.{fn}.sat.{d}.{_suffix(src)}({s} {a})")
    if src.is_bool:
        return em.assign(f"uitofp i1 {a} to {_fp(dst)}")
    if src.is_int:
        return em.assign(f"{'uitofp' if src.unsigned else 'sitofp'} {ltype(src)} {a} to "
                         f"{_fp(dst)}")
    op = "fpext" if dst.bits > src.bits else "fptrunc"
    return em.assign(f"{op} {_fp(src)} {a} to {_fp(dst)}")


def _suffix(t) -> str:
    return "f64" if t.bits == 64 else "f32"


def _pack(em, t, re: str, im: str) -> str:
    lt = ltype(t)
    ft = _fp(t.real_type)
    x = em.assign(f"insertvalue {lt} poison, {ft} {re}, 0")
    return em.assign(f"insertvalue {lt} {x}, {ft} {im}, 1")


# ---------------------------------------------------------------------- math
INTRINSIC = {Sqrt: "sqrt", Exp: "exp", Log: "log", Log10: "log10",
             Log2: "log2", Sin: "sin", Cos: "cos", AbsF: "fabs",
             Floor: "floor", Ceil: "ceil", Trunc: "trunc",
             RoundEven: "roundeven", Pow: "pow", Copysign: "copysign",
             Tan: "tan", Asin: "asin", Acos: "acos", Atan: "atan",
             Sinh: "sinh", Cosh: "cosh", Tanh: "tanh",
             Atan2: "atan2"}
LIBM = {Log1p: "log1p", Expm1: "expm1", Erf: "erf", Erfc: "erfc",
        Lgamma: "lgamma", Tgamma: "tgamma", Asinh: "asinh",
        Acosh: "acosh", Atanh: "atanh", Hypot: "hypot", Fmod: "fmod"}
COMPLEX_LIBM = {Sqrt: "csqrt", Exp: "cexp", Log: "clog", Sin: "csin",
                Cos: "ccos", Tanh: "ctanh", Pow: "cpow"}


@emitter(*INTRINSIC, *LIBM)
def _math(em, op):
    t = op.results[0].type
    args = _ops(em, op)
    if t.is_complex:
        return [_complex_libm(em, op, t, args)]
    ft = _fp(t)
    sig = ", ".join(f"{ft} {a}" for a in args)
    if isinstance(op, Fmod):
        return [em.assign(f"frem {ft} {args[0]}, {args[1]}")]
    if type(op) in INTRINSIC:
        return [em.assign(f"call {em.fm}{ft} @llvm.{INTRINSIC[type(op)]}.{_suffix(t)}({sig})")]
    if isinstance(op, (Log1p, Expm1)) and em.mod.vector_math:
        return [_kahan(em, op, t, args[0])]
    name = LIBM[type(op)] + ("f" if t.bits == 32 else "")
    em.mod.declare(f"declare {ft} @{name}({', '.join([ft] * len(args))}) #1")
    return [em.assign(f"call {ft} @{name}({sig})")]


def _kahan(em, op, t, x: str) -> str:
    """log1p and expm1 without a branch, from the exp and log intrinsics (which the vectorizer
    widens and ``veclib.py`` sends to libmvec), by Kahan's corrections:

        log1p(x) = x                       where u = 1 + x rounds to 1,
                   log(u) * (x / (u - 1))  else (u - 1 is exact: the factor undoes u's
                                            rounding);
        expm1(x) = x                       where u = exp(x) rounds to 1,
                   -1                      where u - 1 rounds to -1,
                   (u - 1) * (x / log(u))  else;

    both +inf where u is (x = +inf, or exp overflowing).  Within 4 ulp of the exact values
    (tested on dense sweeps, ``tests/test_vector_math.py``)."""
    ft, sfx, fm = _fp(t), _suffix(t), em.fm
    one, inf = literal(1.0, t), literal(float("inf"), t)
    if isinstance(op, Log1p):
        u = em.assign(f"fadd {ft} {x}, {one}")
        big = em.assign(f"call {fm}{ft} @llvm.log.{sfx}({ft} {u})")
        um1 = em.assign(f"fsub {ft} {u}, {one}")
        r = em.assign(f"fmul {ft} {big}, {em.assign(f'fdiv {ft} {x}, {um1}')}")
    else:
        u = em.assign(f"call {fm}{ft} @llvm.exp.{sfx}({ft} {x})")
        um1 = em.assign(f"fsub {ft} {u}, {one}")
        lu = em.assign(f"call {fm}{ft} @llvm.log.{sfx}({ft} {u})")
        r = em.assign(f"fmul {ft} {um1}, {em.assign(f'fdiv {ft} {x}, {lu}')}")
        minus = em.assign(f"fcmp oeq {ft} {um1}, {literal(-1.0, t)}")
        r = em.assign(f"select i1 {minus}, {ft} {literal(-1.0, t)}, {ft} {r}")
    exact = em.assign(f"fcmp oeq {ft} {u}, {one}")
    r = em.assign(f"select i1 {exact}, {ft} {x}, {ft} {r}")
    top = em.assign(f"fcmp oeq {ft} {u}, {inf}")
    return em.assign(f"select i1 {top}, {ft} {u}, {ft} {r}")


def _complex_libm(em, op, t, args):
    name = COMPLEX_LIBM.get(type(op))
    if name is None:
        raise NotImplementedError(f"{op.name} on complex numbers")
    ft, lt = _fp(t.real_type), ltype(t)
    if t.bits == 64 and _PACKED_COMPLEX_FLOAT:  # float complex is one <2 x float> register
        return _complex_libm_f32(em, name + "f", lt, args)  # each way on x86-64 (SysV)
    name += "f" if t.bits == 64 else ""
    flat = []
    for a in args:
        flat += [f"{ft} {em.assign(f'extractvalue {lt} {a}, {k}')}" for k in (0, 1)]
    em.mod.declare(f"declare {lt} @{name}({', '.join([ft] * len(flat))}) #1")
    return em.assign(f"call {lt} @{name}({', '.join(flat)})")


_PACKED_COMPLEX_FLOAT = llvm_binding.get_default_triple().startswith("x86_64")


def _complex_libm_f32(em, name, lt, args):
    packed = []
    for a in args:
        v = "poison"
        for k in (0, 1):
            part = em.assign(f"extractvalue {lt} {a}, {k}")
            v = em.assign(f"insertelement <2 x float> {v}, float {part}, i32 {k}")
        packed.append(f"<2 x float> {v}")
    em.mod.declare(f"declare <2 x float> @{name}({', '.join(['<2 x float>'] * len(args))}) #1")
    r = em.assign(f"call <2 x float> @{name}({', '.join(packed)})")
    out = "poison"
    for k in (0, 1):
        part = em.assign(f"extractelement <2 x float> {r}, i32 {k}")
        out = em.assign(f"insertvalue {lt} {out}, float {part}, {k}")
    return out


@emitter(IsNan, IsInf, IsFinite)
def _float_test(em, op):
    t = op.operands[0].type
    ft = _fp(t)
    (a,) = _ops(em, op)
    if isinstance(op, IsNan):
        return [em.assign(f"fcmp uno {ft} {a}, {a}")]
    mag = em.assign(f"call {ft} @llvm.fabs.{_suffix(t)}({ft} {a})")
    inf = literal(float("inf"), t)
    pred = "oeq" if isinstance(op, IsInf) else "one"
    return [em.assign(f"fcmp {pred} {ft} {mag}, {inf}")]


@emitter(Sign)
def _sign(em, op):
    t = op.results[0].type
    ft = _fp(t)
    (a,) = _ops(em, op)
    pos = em.assign(f"fcmp ogt {ft} {a}, {literal(0.0, t)}")
    neg = em.assign(f"fcmp olt {ft} {a}, {literal(0.0, t)}")
    s = em.assign(f"select i1 {neg}, {ft} {literal(-1.0, t)}, {ft} {literal(0.0, t)}")
    s = em.assign(f"select i1 {pos}, {ft} {literal(1.0, t)}, {ft} {s}")
    nan = em.assign(f"fcmp uno {ft} {a}, {a}")
    return [em.assign(f"select i1 {nan}, {ft} {a}, {ft} {s}")]


# ---------------------------------------------------------------------- complex
@emitter(ComplexCreate)
def _create(em, op):
    re, im = _ops(em, op)
    return [_pack(em, op.results[0].type, re, im)]


@emitter(ComplexRe, ComplexIm)
def _part(em, op):
    (a,) = _ops(em, op)
    k = 0 if isinstance(op, ComplexRe) else 1
    return [em.assign(f"extractvalue {ltype(op.operands[0].type)} {a}, {k}")]


@emitter(Conj)
def _conj(em, op):
    t = op.results[0].type
    (a,) = _ops(em, op)
    lt, ft = ltype(t), _fp(t.real_type)
    im = em.assign(f"extractvalue {lt} {a}, 1")
    return [em.assign(f"insertvalue {lt} {a}, {ft} {em.assign(f'fneg {ft} {im}')}, 1")]


@emitter(ComplexAbs)
def _cabs(em, op):
    t = op.operands[0].type
    (a,) = _ops(em, op)
    lt, ft = ltype(t), _fp(t.real_type)
    re, im = (em.assign(f"extractvalue {lt} {a}, {k}") for k in (0, 1))
    name = "hypot" + ("f" if t.bits == 64 else "")
    em.mod.declare(f"declare {ft} @{name}({ft}, {ft}) #1")
    return [em.assign(f"call {ft} @{name}({ft} {re}, {ft} {im})")]


# ---------------------------------------------------------------------- checks
@emitter(Assert)
def _assert(em, op):
    ok, *payload = _ops(em, op)
    em.raise_if_not(ok, op.attrs["kind"], op.attrs["msg"], op.loc, *payload)
    return []


@emitter(Index)
def _index(em, op):
    i, n = _ops(em, op)
    j = i
    if op.attrs.get("wrap", True):
        neg = em.assign(f"icmp slt i64 {i}, 0")
        j = em.assign(f"select i1 {neg}, i64 {em.assign(f'add i64 {i}, {n}')}, i64 {i}")
    if op.attrs.get("check", True):
        ok = em.assign(f"icmp ult i64 {j}, {n}")
        em.raise_if_not(ok, "IndexError", "index {a} is out of bounds for size {b}", op.loc, i, n)
    return [j]


@emitter(Digamma, Trigamma)
def _special(em, op):
    t = op.results[0].type
    (a,) = _ops(em, op)
    fn = op.name.split(".")[1]
    if t.bits == 64:
        return [em.assign(f"call double @zy.{fn}(double {a})")]
    wide = em.assign(f"fpext float {a} to double")
    wide_result = em.assign(f"call double @zy.{fn}(double {wide})")
    return [em.assign(f"fptrunc double {wide_result} to float")]

