"""A NumPy interpreter for the IR: the oracle every compiled backend is checked against.

    from zymase.ir.interp import run
    y = run(module, "f", 2.0, np.zeros(3))   # one result: the value; several: a tuple; none: None

Values are represented as the compiled code sees them:

=================  =========================================================================
IR type            Python representation
=================  =========================================================================
``f64 f32``        ``np.float64`` / ``np.float32`` (float32 arithmetic stays float32)
``i64 i32``        ``np.int64`` / ``np.int32`` (arithmetic wraps at the type's width)
``i1``             ``np.bool_``
``c128 c64``       ``np.complex128`` / ``np.complex64``
``array<T,n,L>``   an ``np.ndarray``; views share memory, so stores through a view or into an
                   argument are seen by the caller
=================  =========================================================================

Semantics per op family (the ops' docstrings in ``ir/ops/`` are the specification):

=====================  ====================================================================
ops                    computed as
=====================  ====================================================================
``arith.*f``           NumPy scalar arithmetic under ``np.errstate(all="ignore")`` (IEEE:
                       x/0 is inf or nan, never an exception); ``modf``/``floordivf`` port
                       CPython's ``float_rem``/``_float_div_mod`` in the operands' precision
``arith.*i``           NumPy scalar arithmetic (wraps); ``//``/``%`` floor like Python; a zero
                       divisor raises ZeroDivisionError, a negative ``powi`` exponent ValueError
``arith.cast``         NumPy's C casts (``astype``): int->float rounds, float->int truncates,
                       x->i1 is ``!= 0``, i1->x is 0/1, real->complex has a zero imaginary part
``math.*`` (real)      the C library (libm via ctypes, ``sinf`` for f32): exactly the functions
                       compiled code calls, with their special values and no exceptions
``math.*`` (exact)     NumPy ufuncs where every implementation gives the same bits (floor, fabs,
                       copysign, rint, sign, isnan, ...)
``math.*`` (complex)   NumPy ufuncs
``scf``/``array``      Python loops; NumPy views (``as_strided``) for subview/broadcast/transpose
=====================  ====================================================================
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from . import host, ops, special
from .core import Block, Module, Op
from .ops.rt import ShapeError  # one class shared with the runtime
from .parallel import reductions
from .types import ScalarType, Type

Handler = Callable[["Frame", Op, list], Sequence]
TERMINATORS = frozenset({ops.Yield, ops.Condition, ops.Return})

# rt.assert kind -> the exception raised
EXCEPTIONS = {
    "IndexError": IndexError,
    "ValueError": ValueError,
    "ShapeError": ShapeError,
    "ZeroDivisionError": ZeroDivisionError,
    "OverflowError": OverflowError,
    "AssertionError": AssertionError,
    "MemoryError": MemoryError,
    "UnboundLocalError": UnboundLocalError,
    "TypeError": TypeError,
    "RuntimeError": RuntimeError,
    "NotImplementedError": NotImplementedError,
    "ArithmeticError": ArithmeticError,
    "FloatingPointError": FloatingPointError,
    "LinAlgError": np.linalg.LinAlgError,
}


def run(module: Module, func_name: str, *args: Any) -> Any:
    """Run ``func_name`` of ``module`` on ``args``: its result, a tuple of results, or None.

    Scalar arguments are converted to the parameter's type; array arguments must already have
    its dtype and rank (and be C-contiguous for a ``C`` layout) and are mutated in place.
    """
    func = module[func_name]
    if len(args) != len(func.args):
        raise TypeError(f"{func_name} takes {len(func.args)} arguments, got {len(args)}")
    values = [_convert_arg(v.type, a, k) for k, (v, a) in enumerate(zip(func.args, args))]
    with np.errstate(all="ignore"):
        results = Interpreter(module).call(func_name, values)
    if not results:
        return None
    return results[0] if len(results) == 1 else tuple(results)


class Interpreter:
    """Runs the functions of one module; caches constants per op."""

    def __init__(self, module: Module, globals_: Sequence = ()):
        self.module = module
        self.constants: dict[Op, Any] = {}
        self.globals = list(globals_)  # the arrays ``array.global`` reads, by slot

    def call(self, func_name: str, args: list) -> list:
        """The results of ``func_name`` applied to already-converted ``args``."""
        return Frame(self).run(self.module[func_name].body, args)


class Frame:
    """The values of one function activation (SSA values are unique, so one dict suffices)."""

    __slots__ = ("env", "interp")

    def __init__(self, interp: Interpreter):
        self.interp = interp
        self.env: dict = {}

    def run(self, block: Block, args: Sequence) -> list:
        """Bind ``args`` to the block arguments, run its ops; the terminator's operand values."""
        env = self.env
        for a, v in zip(block.args, args):
            env[a] = v
        for op in block.ops:
            values = [env[v] for v in op.operands]
            if type(op) in TERMINATORS:
                return values
            handler = HANDLERS.get(type(op))
            if handler is None:
                raise NotImplementedError(f"interp: no rule for op {op.name!r}")
            try:
                out = handler(self, op, values)
            except Exception as e:
                if getattr(e, "loc", None) is None:
                    e.loc = op.loc  # the user's line (backends/interp reports it)
                raise
            for r, v in zip(op.results, out):
                env[r] = v
        return []


def _convert_arg(t: Type, a: Any, k: int) -> Any:
    if isinstance(t, ScalarType):
        if np.ndim(a) != 0:
            raise TypeError(f"argument {k}: expected a scalar for {t}, got {_describe(a)}")
        return t.np_dtype.type(a)
    if not isinstance(a, np.ndarray) or a.dtype != t.dtype.np_dtype or a.ndim != t.ndim:
        raise TypeError(f"argument {k}: expected an ndarray for {t}, got {_describe(a)}")
    if t.layout == "C" and not a.flags.c_contiguous:
        raise TypeError(f"argument {k}: {t} needs a C-contiguous array")
    return a


def _describe(a: Any) -> str:
    if isinstance(a, np.ndarray):
        return f"ndarray of {a.dtype} with {a.ndim} dims"
    return type(a).__name__


# ---------------------------------------------------------------- C library (libm)

# op class -> C function; the float32 variant adds "f" (sinf).  All of them are total in C:
# domain errors give nan, poles give +-inf, overflow gives +-inf.
LIBM: dict[type[Op], str] = {
    ops.Sqrt: "sqrt", ops.Exp: "exp", ops.Log: "log", ops.Log1p: "log1p",
    ops.Expm1: "expm1", ops.Log10: "log10", ops.Log2: "log2", ops.Sin: "sin",
    ops.Cos: "cos", ops.Tan: "tan", ops.Asin: "asin", ops.Acos: "acos",
    ops.Atan: "atan", ops.Sinh: "sinh", ops.Cosh: "cosh", ops.Tanh: "tanh",
    ops.Asinh: "asinh", ops.Acosh: "acosh", ops.Atanh: "atanh", ops.Erf: "erf",
    ops.Erfc: "erfc", ops.Lgamma: "lgamma", ops.Tgamma: "tgamma",
    ops.Atan2: "atan2", ops.Pow: "pow", ops.Hypot: "hypot", ops.Fmod: "fmod",
}  # fmt: skip
# ops that also take complex operands -> the NumPy function used for them
COMPLEX_MATH: dict[type[Op], Callable] = {
    ops.Sqrt: np.sqrt, ops.Exp: np.exp, ops.Log: np.log, ops.Sin: np.sin,
    ops.Cos: np.cos, ops.Tanh: np.tanh, ops.Pow: np.power,
}  # fmt: skip
_C_TYPES = {
    np.dtype(np.float64): ("", ctypes.c_double),
    np.dtype(np.float32): ("f", ctypes.c_float),
}


@functools.cache
def _libc() -> ctypes.CDLL:
    """The C math library of this process (the one compiled code links against)."""
    for name in (ctypes.util.find_library("m"), "libm.so.6", "ucrtbase", "msvcrt", None):
        try:
            lib = ctypes.CDLL(name)
            lib.cos  # noqa: B018  (check that it has the math functions)
            return lib
        except (OSError, AttributeError):
            continue
    raise OSError("interp: cannot find the C math library")


@functools.cache
def _c_function(name: str, dtype: np.dtype, nargs: int) -> Callable:
    suffix, ctype = _C_TYPES[dtype]
    fn = getattr(_libc(), name + suffix)
    fn.restype, fn.argtypes = ctype, [ctype] * nargs
    wrap = dtype.type
    return lambda *xs: wrap(fn(*map(float, xs)))


def _math(cls: type[Op]) -> Callable:
    """The elementwise function of a libm op (complex operands go to NumPy)."""
    c_name, complex_fn, nargs = LIBM[cls], COMPLEX_MATH.get(cls), cls.n_operands

    def apply(*xs):
        if complex_fn is not None and isinstance(xs[0], np.complexfloating):
            return complex_fn(*xs)
        return _c_function(c_name, xs[0].dtype, nargs)(*xs)

    return apply


# ---------------------------------------------------------------- scalar arithmetic


def float_divmod(vx: np.floating, wx: np.floating) -> tuple[np.floating, np.floating]:
    """CPython's ``_float_div_mod`` (Objects/floatobject.c), in the operands' precision."""
    zero = vx.dtype.type(0)
    mod = np.fmod(vx, wx)
    div = (vx - mod) / wx
    if mod:
        if (wx < 0) != (mod < 0):  # the remainder takes the sign of the divisor
            mod += wx
            div -= 1
    else:
        mod = np.copysign(zero, wx)
    if div:  # snap the quotient to the nearest integral value
        floordiv = np.floor(div)
        if div - floordiv > 0.5:
            floordiv += 1
    else:
        floordiv = np.copysign(zero, vx / wx)
    return floordiv, mod


def float_mod(a: np.floating, b: np.floating) -> np.floating:
    """Python's ``a % b`` on floats (a zero divisor gives NaN; the frontend checks first where
    Python would raise)."""
    return float_divmod(a, b)[1]


def float_floordiv(a: np.floating, b: np.floating) -> np.floating:
    """Python's ``a // b`` on floats; a zero divisor gives ``a / b`` (inf, -inf or NaN), as
    NumPy's floor_divide does (Python's floats raise before they get here)."""
    if b == 0:
        with np.errstate(divide="ignore", invalid="ignore"):
            return a / b
    return float_divmod(a, b)[0]


def _int_divisor(fn: Callable) -> Callable:
    def checked(a, b):
        if b == 0:
            raise ZeroDivisionError("integer division or modulo by zero")
        return fn(a, b)

    return checked


def int_pow(a: np.integer, b: np.integer) -> np.integer:
    """``a ** b`` for a non-negative ``b``, wrapping at the type's width."""
    if b < 0:
        raise ValueError("negative integer power")
    return a**b


def int_shift(left: bool) -> Callable:
    """``a << b`` / ``a >> b`` of NumPy ints: 0 (or -1 for ``>>`` of a negative value) past the
    width, ValueError for a negative count."""
    def shift(a: np.integer, b: np.integer) -> np.integer:
        bits = a.dtype.itemsize * 8
        if b < 0:
            raise ValueError("negative shift count")
        if b >= bits:
            return a.dtype.type(-1 if (not left and a < 0) else 0)
        return (np.left_shift if left else np.right_shift)(a, a.dtype.type(b))
    return shift


def complex_create(re: np.floating, im: np.floating) -> np.complexfloating:
    return _COMPLEX_OF[re.dtype](complex(re, im))


_COMPLEX_OF = {np.dtype(np.float64): np.complex128, np.dtype(np.float32): np.complex64}

# op class -> function of its operand values (one result)
ELEMENTWISE: dict[type[Op], Callable] = {
    # floats (complex too): IEEE, no exceptions
    ops.AddF: operator.add, ops.SubF: operator.sub, ops.MulF: operator.mul,
    ops.DivF: operator.truediv, ops.NegF: operator.neg,
    ops.ModF: float_mod, ops.FloorDivF: float_floordiv,
    ops.MaximumF: np.maximum, ops.MinimumF: np.minimum,  # NaN propagates
    # ints: NumPy scalars wrap; // and % floor as in Python
    ops.AddI: operator.add, ops.SubI: operator.sub, ops.MulI: operator.mul,
    ops.NegI: operator.neg, ops.AbsI: np.abs, ops.MaxI: np.maximum, ops.MinI: np.minimum,
    ops.FloorDivI: _int_divisor(operator.floordiv), ops.ModI: _int_divisor(operator.mod),
    ops.PowI: int_pow,
    # bitwise on ints, logical on i1
    ops.AndI: operator.and_, ops.OrI: operator.or_, ops.XorI: operator.xor,
    ops.Not: operator.invert, ops.ShlI: int_shift(True), ops.ShrI: int_shift(False),
    # exact math: every implementation gives the same bits
    ops.AbsF: np.fabs, ops.Floor: np.floor, ops.Ceil: np.ceil, ops.Trunc: np.trunc,
    ops.RoundEven: np.rint, ops.Sign: np.sign, ops.Copysign: np.copysign,
    ops.IsNan: np.isnan, ops.IsInf: np.isinf, ops.IsFinite: np.isfinite,
    # complex
    ops.ComplexCreate: complex_create, ops.ComplexRe: np.real, ops.ComplexIm: np.imag,
    ops.ComplexAbs: np.abs, ops.Conj: np.conj,
    # the C library
    **{cls: _math(cls) for cls in LIBM},
}  # fmt: skip

COMPARE = {
    "eq": operator.eq, "ne": operator.ne, "lt": operator.lt,
    "le": operator.le, "gt": operator.gt, "ge": operator.ge,
}  # fmt: skip


def _elementwise(fn: Callable) -> Handler:
    return lambda frame, op, args: (fn(*args),)


def _constant(frame: Frame, op: Op, args: list) -> Sequence:
    cache = frame.interp.constants
    if op not in cache:
        cache[op] = op.results[0].type.np_dtype.type(op.attrs["value"])
    return (cache[op],)


def _compare(frame: Frame, op: Op, args: list) -> Sequence:
    # Python's operators on NumPy scalars: ordered (False on NaN) except ``ne``; i1 is 0/1
    return (np.bool_(COMPARE[op.attrs["pred"]](*args)),)


def _select(frame: Frame, op: Op, args: list) -> Sequence:
    cond, a, b = args
    return (a if cond else b,)


def _cast(frame: Frame, op: Op, args: list) -> Sequence:
    return (args[0].astype(op.results[0].type.np_dtype),)


def _assert(frame: Frame, op: Op, args: list) -> Sequence:
    if not args[0]:
        a, b = (list(args[1:]) + [0, 0])[:2]
        raise EXCEPTIONS[op.attrs["kind"]](op.attrs.get("msg", "").format(a=int(a), b=int(b)))
    return ()


def _host_call(frame: Frame, op: Op, args: list) -> Sequence:
    if not host.run(op.attrs["fn"], op.attrs.get("kw", "{}"), list(args)):
        raise host.take_error()
    return ()


def _call(frame: Frame, op: Op, args: list) -> Sequence:
    return frame.interp.call(str(op.attrs["callee"]), args)


# ---------------------------------------------------------------- structured control flow


def _for(frame: Frame, op: Op, args: list) -> Sequence:
    lb, ub, step, *carried = args
    if step == 0:
        raise ValueError("scf.for: step must not be zero")
    body = op.regions[0].block
    for i in range(int(lb), int(ub), int(step)):
        carried = frame.run(body, [np.int64(i), *carried])
    return carried


# a ``random.Random``: run the iterations of ``scf.parallel`` loops in its order (the tests use
# it to find code that depends on the order of a parallel loop's iterations)
SHUFFLE = None


def _parallel(frame: Frame, op: Op, args: list) -> Sequence:
    kinds = reductions(op)
    if SHUFFLE is None or kinds is None:
        return _for(frame, op, args)
    lb, ub, step, *carried = args
    order = list(range(int(lb), int(ub), int(step)))
    last = order[-1] if order else None
    SHUFFLE.shuffle(order)
    body = op.regions[0].block
    out = list(carried)
    for i in order:
        carried = frame.run(body, [np.int64(i), *carried])
        for k, r in enumerate(kinds):
            if r.kind != "private" or i == last:
                out[k] = carried[k]
    return out


def _while(frame: Frame, op: Op, args: list) -> Sequence:
    before, after = op.regions[0].block, op.regions[1].block
    values = args
    while True:
        cond, *fwd = frame.run(before, values)
        if not cond:
            return fwd
        values = frame.run(after, fwd)


def _if(frame: Frame, op: Op, args: list) -> Sequence:
    return frame.run(op.regions[0 if args[0] else 1].block, [])


# ---------------------------------------------------------------- arrays


def _alloc(frame: Frame, op: Op, args: list) -> Sequence:
    # init = "none" also gets zeros: uninitialized memory reads deterministically
    try:
        return (np.zeros([int(d) for d in args], op.results[0].type.dtype.np_dtype),)
    except ValueError as e:  # NumPy's "array is too big": what compiled code reports as
        raise MemoryError(f"cannot allocate an array of shape {tuple(map(int, args))}") from e


def _array_const(frame: Frame, op: Op, args: list) -> Sequence:
    cache = frame.interp.constants
    if op not in cache:
        data = np.array(op.attrs["data"], dtype=op.results[0].type.dtype.np_dtype, order="C")
        data.flags.writeable = False
        cache[op] = data
    return (cache[op],)


def _array_global(frame: Frame, op: Op, args: list) -> Sequence:
    view = frame.interp.globals[op.attrs["slot"]].view()
    view.flags.writeable = False  # never written (the frontend refuses it)
    return (view,)


def _dim(frame: Frame, op: Op, args: list) -> Sequence:
    return (np.int64(args[0].shape[op.attrs["axis"]]),)


def _stride(frame: Frame, op: Op, args: list) -> Sequence:
    a = args[0]
    return (np.int64(a.strides[op.attrs["axis"]] // a.itemsize),)


def _load(frame: Frame, op: Op, args: list) -> Sequence:
    a, *idx = args
    return (a[tuple(idx)],)


def _store(frame: Frame, op: Op, args: list) -> Sequence:
    v, a, *idx = args
    a[tuple(idx)] = v
    return ()


def _atomic_add(frame: Frame, op: Op, args: list) -> Sequence:
    v, a, *idx = args
    a[tuple(idx)] += v
    return ()


def subview(
    src: np.ndarray, offsets: Sequence[int], kept: Sequence[tuple[int, int]], keep: Sequence[bool]
) -> np.ndarray:
    """The view of ``array.subview``: start at ``offsets``; kept dim k gets (size, step)."""
    start = tuple(slice(min(max(o, 0), n), None) for o, n in zip(offsets, src.shape))
    base = src[start] if start else src
    shape = [size for size, _ in kept]
    kept_strides = [s for s, flag in zip(src.strides, keep) if flag]
    strides = [s * step for s, (_, step) in zip(kept_strides, kept)]
    return as_strided(base, shape, strides)


def _subview(frame: Frame, op: Op, args: list) -> Sequence:
    src = args[0]
    offsets = [int(v) for v in args[1 : 1 + src.ndim]]
    rest = [int(v) for v in args[1 + src.ndim :]]
    kept = list(zip(rest[0::2], rest[1::2]))
    return (subview(src, offsets, kept, op.attrs["keep"]),)


def broadcast(src: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    """A view of ``src`` with ``shape``: trailing dims align, size-1 and new dims get stride 0."""
    lead = len(shape) - src.ndim
    if lead < 0:
        raise ValueError(f"array.broadcast: cannot broadcast rank {src.ndim} to {len(shape)}")
    strides = [0] * lead
    for n, s, d in zip(src.shape, src.strides, shape[lead:]):
        if n != 1 and n != d:
            raise ValueError(f"array.broadcast: cannot broadcast {src.shape} to {tuple(shape)}")
        strides.append(0 if n == 1 else s)
    return as_strided(src, tuple(shape), strides)


def _broadcast(frame: Frame, op: Op, args: list) -> Sequence:
    return (broadcast(args[0], [int(d) for d in args[1:]]),)


def _index(frame: Frame, op: Op, args: list) -> Sequence:
    i, n = args
    j = i + n if op.attrs.get("wrap") and i < 0 else i
    if op.attrs.get("check") and not 0 <= j < n:
        raise IndexError(f"index {i} is out of bounds for size {n}")
    return (j,)


def _relayout(frame: Frame, op: Op, args: list) -> Sequence:
    return args


def _transpose(frame: Frame, op: Op, args: list) -> Sequence:
    return (np.transpose(args[0], op.attrs["perm"]),)


def _reshape(frame: Frame, op: Op, args: list) -> Sequence:
    view = args[0].view()
    view.shape = tuple(int(d) for d in args[1:])  # a view, never a copy (raises if it cannot)
    return (view,)


def _free(frame: Frame, op: Op, args: list) -> Sequence:
    return ()


def _matmul(frame: Frame, op: Op, args: list) -> Sequence:
    """One matrix at a time for stacks: a shadow accumulated into may be a broadcast view, whose
    matrices share memory (NumPy's ``+=`` would keep one of the sums)."""
    a, b, out = args
    for idx in np.ndindex(out.shape[:-2]) if out.ndim > 2 else [()]:
        if op.attrs.get("acc"):
            out[idx] += a[idx] @ b[idx]
        else:
            out[idx] = a[idx] @ b[idx]
    return ()


def _special(fn):
    def handler(frame: Frame, op: Op, args: list) -> Sequence:
        t = op.results[0].type.np_dtype.type
        return (t(fn(float(args[0]))),)
    return handler


def _tape_new(frame: Frame, op: Op, args: list) -> Sequence:
    return ([],)


def _tape_push(frame: Frame, op: Op, args: list) -> Sequence:
    args[0].append(args[1])
    return ()


def _tape_pop(frame: Frame, op: Op, args: list) -> Sequence:
    return (op.results[0].type.np_dtype.type(args[0].pop()),)


def _tape_mark(frame: Frame, op: Op, args: list) -> Sequence:
    return (np.int64(len(args[0])),)


def _tape_push_array(frame: Frame, op: Op, args: list) -> Sequence:
    args[0].extend(np.asarray(args[1]).ravel().tolist())
    return ()


def _tape_read(frame: Frame, op: Op, args: list) -> Sequence:
    return (op.results[0].type.np_dtype.type(args[0][int(args[1])]),)


_EXPORTED: dict[int, list] = {}  # tapes handed from a split forward function to its adjoint


def _tape_push_ref(frame: Frame, op: Op, args: list) -> Sequence:
    args[0].append(args[1])
    return ()


def _tape_pop_ref(frame: Frame, op: Op, args: list) -> Sequence:
    return (args[0].pop(),)


def _tape_export(frame: Frame, op: Op, args: list) -> Sequence:
    _EXPORTED[id(args[0])] = args[0]
    return (np.int64(id(args[0])), np.int64(len(args[0])))


def release_exported(token: int) -> None:
    """Drop a tape ``tape.export`` handed out that no ``tape.adopt`` took back."""
    _EXPORTED.pop(int(token), None)


def _tape_adopt(frame: Frame, op: Op, args: list) -> Sequence:
    return (_EXPORTED.pop(int(args[0]))[:int(args[1])],)


_SETS: dict[int, dict] = {}  # tape.set_new handle -> its tape and records (until set_free)


def _tape_set_new(frame: Frame, op: Op, args: list) -> Sequence:
    tapes = {"tape": [], "end": {}}
    _SETS[id(tapes)] = tapes
    return (np.int64(id(tapes)),)


def _tape_chunk(frame: Frame, op: Op, args: list) -> Sequence:
    """(The interpreter runs iterations one after the other: one tape for all.)"""
    return (_SETS[int(args[0])]["tape"],)


def _tape_close(frame: Frame, op: Op, args: list) -> Sequence:
    _SETS[int(args[0])]["end"][int(args[1])] = len(args[2])
    return ()


def _tape_at(frame: Frame, op: Op, args: list) -> Sequence:
    """The tape up to where iteration ``k``'s values end (a copy: positions stay absolute,
    for snapshot reads, and the pops of one iteration leave the others' values alone)."""
    s = _SETS[int(args[0])]
    return (s["tape"][:s["end"][int(args[1])]],)


def _tape_set_free(frame: Frame, op: Op, args: list) -> Sequence:
    _SETS.pop(int(args[0]))
    return ()


def _tape_drop(frame: Frame, op: Op, args: list) -> Sequence:
    del args[0][len(args[0]) - int(args[1]):]
    return ()


def _data_ptr(frame: Frame, op: Op, args: list) -> Sequence:
    return (np.int64(args[0].__array_interface__["data"][0]),)


def _array_offset(frame: Frame, op: Op, args: list) -> Sequence:
    view, root = args
    delta = view.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return (np.int64(delta // view.itemsize),)


def _nothing(frame: Frame, op: Op, args: list) -> Sequence:
    return ()


# op class -> handler (dispatched on ``type(op)``); terminators are handled by ``Frame.run``
HANDLERS: dict[type[Op], Handler] = {
    ops.Digamma: _special(special.digamma), ops.Trigamma: _special(special.trigamma),
    ops.TapeNew: _tape_new, ops.TapePush: _tape_push, ops.TapePop: _tape_pop,
    ops.TapeReserve: _nothing, ops.TapeFree: _nothing,
    ops.TapeMark: _tape_mark, ops.TapePushArray: _tape_push_array, ops.TapeRead: _tape_read,
    ops.TapeDrop: _tape_drop, ops.TapeExport: _tape_export,
    ops.TapePushRef: _tape_push_ref, ops.TapePopRef: _tape_pop_ref, ops.TapeAdopt: _tape_adopt,
    ops.TapeSetNew: _tape_set_new, ops.TapeAt: _tape_at, ops.TapeSetFree: _tape_set_free,
    ops.TapeChunk: _tape_chunk, ops.TapeClose: _tape_close,
    ops.ThreadCount: lambda frame, op, args: (np.int64(1),),  # (parallel loops run serially)
    ops.ThreadSlot: lambda frame, op, args: (np.int64(0),),
    ops.Offset: _array_offset, ops.DataPtr: _data_ptr,
    **{cls: _elementwise(fn) for cls, fn in ELEMENTWISE.items()},
    ops.Constant: _constant, ops.CmpF: _compare, ops.CmpI: _compare,
    ops.Select: _select, ops.Cast: _cast,
    ops.For: _for, ops.Parallel: _parallel, ops.While: _while, ops.If: _if,
    ops.Alloc: _alloc, ops.ArrayConst: _array_const,
    ops.ArrayGlobal: _array_global, ops.Dim: _dim,
    ops.Stride: _stride, ops.Load: _load, ops.Store: _store, ops.AtomicAdd: _atomic_add,
    ops.Subview: _subview, ops.Broadcast: _broadcast, ops.Transpose: _transpose,
    ops.Reshape: _reshape,
    ops.Index: _index, ops.Relayout: _relayout, ops.ArrayFree: _free,
    ops.Matmul: _matmul,
    ops.Call: _call, ops.Assert: _assert, ops.HostCall: _host_call,
}  # fmt: skip
