"""Expressions: names, constants, attributes, operators, comparisons.

Scalar arithmetic follows Python for Python scalars and NumPy 2 when a NumPy scalar is involved
(see ``typing.result_type``).  Division or modulo of two Python scalars by zero raises
ZeroDivisionError like CPython; NumPy scalars give inf/nan like NumPy.  Array operands are
handed to ``numpy/operators.py`` (``a @ b`` to ``numpy/linalg.py``); subscripts to
``indexing.py``; calls to ``calls.py``.
"""

from __future__ import annotations

import ast
import operator
from types import ModuleType

import numpy as np

from ...errors import (
    UnsupportedError,
    ZymaseNameError,
    ZymaseOverflowError,
    ZymaseTypeError,
    ZymaseValueError,
)
from ...ir.ops import (
    AddF,
    AddI,
    AndI,
    ArrayConst,
    ArrayGlobal,
    Assert,
    CmpF,
    CmpI,
    ComplexIm,
    ComplexRe,
    Constant,
    DivF,
    FloorDivF,
    FloorDivI,
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
    Select,
    ShlI,
    ShrI,
    SubF,
    SubI,
    XorI,
)
from ...ir.types import F64, I1, I64, U64, ArrayType, scalar_from_dtype
from ..captures import attribute_namespace, guarded
from ..numpy import linalg, operators
from ..numpy.registry import METHODS, STRUCT_METHODS
from ..scan import local_names
from ..syntax import symbol, unsupported
from ..typing import (
    EMPTY_LIST,
    UNDEF,
    Array,
    EmptyList,
    FVal,
    ListVal,
    PyObj,
    Scalar,
    Struct,
    SType,
    Tup,
    TupList,
    python_scalar_stype,
    result_type,
    stype,
)
from .calls import BoundMethod, CallMixin
from .indexing import IndexingMixin

# ast operator -> (float op, int op); None means "not defined for that kind"
ARITH = {
    ast.Add: (AddF, AddI),
    ast.Sub: (SubF, SubI),
    ast.Mult: (MulF, MulI),
    ast.Div: (DivF, None),
    ast.FloorDiv: (FloorDivF, FloorDivI),
    ast.Mod: (ModF, ModI),
    ast.Pow: (Pow, PowI),
    ast.BitAnd: (None, AndI),
    ast.BitOr: (None, OrI),
    ast.BitXor: (None, XorI),
    ast.LShift: (None, ShlI),
    ast.RShift: (None, ShrI),
}
BITWISE = (ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift, ast.RShift)
COMPARE = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}
# NumPy booleans (not Python's, which count as ints): `+` is or, `*` is and, `-` is refused
NUMPY_BOOL_OPS = {ast.Add: OrI, ast.Mult: AndI, ast.Sub: None}
SYMBOL = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
          ast.Mod: "%", ast.Pow: "**", ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|",
          ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>"}


class NumpyDelegates:
    """Methods of FunctionLowerer that hand array work to ``numpy/``."""

    def array_binop(self, op, a, b, node):
        return operators.array_binop(self, op, a, b, node)

    def array_unary(self, op, a, node):
        return operators.array_unary(self, op, a, node)

    def array_compare(self, pred, a, b, node):
        return operators.array_compare(self, pred, a, b, node)

    def inplace_binop(self, op, target, value, node):
        return operators.inplace_binop(self, op, target, value, node)

    def matmul(self, a, b, node):
        return linalg.matmul(self, a, b, node)

    def scalar_binop_type(self, opk, st):
        """The element type of ``x <op> y`` for operands of promoted type ``st``."""
        t = st.type
        if opk is ast.Div and not t.is_inexact:
            return F64
        if t.is_bool and not st.weak and opk in NUMPY_BOOL_OPS:
            return t
        if t.is_bool and opk not in (ast.BitAnd, ast.BitOr, ast.BitXor):
            return I64  # (shifts of booleans too, as NumPy)
        return t

    def expr_neg(self, x):
        if x.type.is_bool and not x.weak:
            raise ZymaseTypeError("the NumPy boolean negative, the `-` operator, is not "
                                  "supported: use the `~` operator or np.logical_not", self.b.loc)
        t = I64 if x.type.is_bool else x.type
        return Scalar(self.b.op(NegF if t.is_inexact else NegI,
                                self.b.cast(x.value, t)), x.weak)


def describe_object(obj, describe) -> str:
    """A compile-time Python object in a message (never an internal object's repr)."""
    if obj is None:
        return "None"
    if isinstance(obj, BoundMethod):
        return f"the method `{obj.name}` of {describe(obj.obj)}"
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if callable(obj) and isinstance(name, str):
        return f"the {'class' if isinstance(obj, type) else 'function'} `{name}`"
    if isinstance(obj, type(np)):
        return f"the module `{obj.__name__}`"
    text = repr(obj)
    if " at 0x" in text or len(text) > 60:
        return f"a {type(obj).__qualname__} object"
    return f"the {type(obj).__qualname__} {text}"


class ExprLowerer(IndexingMixin, CallMixin, NumpyDelegates):
    """Mixin of FunctionLowerer: expression lowering."""

    def expr(self, node) -> FVal:
        visit = getattr(self, "expr_" + type(node).__name__, None)
        if visit is None:
            raise UnsupportedError(unsupported(node), self.src.loc(node))
        with self.b.location(self.src.loc(node)):
            return visit(node)

    def expr_ListComp(self, node):  # the ones desugar.py left in place
        what = "list comprehension" if isinstance(node, ast.ListComp) else "generator expression"
        why = getattr(node, "zy_refusal", None) or (
            "comprehensions compile to a loop run just before their statement, which keeps "
            "Python's order of evaluation in an assignment, `return`, `if` test, `assert` or "
            "`for` iterable, but not in a `while` test, a branch of `a if c else b` inside a "
            "larger expression, or the right side of `and`/`or`")
        raise self.err(UnsupportedError, f"this {what} is not supported here: {why}; compute "
                       "it in a statement of its own", node)

    def expr_GeneratorExp(self, node):
        if getattr(node, "zy_call_arg", False) or getattr(node, "zy_refusal", None):
            return self.expr_ListComp(node)
        raise self.err(UnsupportedError, "a generator expression is supported as the argument "
                       "of sum(), max(), min(), any() and all(); here, write a loop or a list "
                       "comprehension", node)

    def expr_SetComp(self, node):
        raise self.err(UnsupportedError, "set comprehensions are not supported", node)

    def expr_DictComp(self, node):
        raise self.err(UnsupportedError, "dict comprehensions are not supported", node)

    def err(self, cls, msg, node):
        return cls(msg, self.src.loc(node) if node is not None else self.b.loc)

    # ------------------------------------------------------------------ leaves
    def expr_Constant(self, node):
        return self.pyvalue(node.value, node)

    def expr_Name(self, node):
        return self.lookup_name(node.id, node)

    def lookup_name(self, name, node):
        v = self.symtab.get(name, None)
        if v is UNDEF:
            raise self.err(UnsupportedError, f"`{name}` may be used before it is assigned", node)
        if v is not None:
            self.check_bound(name, node)
            return v
        if name in self.local_names():
            raise self.err(UnsupportedError, f"`{name}` is read here before any assignment to "
                           "it (the function assigns it, so it is a local variable); zymase needs "
                           "it assigned on the way to this read: give it a value earlier, e.g. "
                           "before the loop", node)
        try:
            obj, ns = self.src.resolve(name)
        except KeyError:
            raise self.err(ZymaseNameError, f"name `{name}` is not defined", node) from None
        fn = self.src.fn
        kind = "global" if isinstance(ns, dict) else "closure"
        return self.outer_value(ns, name, obj, node, (kind, fn.__module__, fn.__qualname__))

    def outer_value(self, ns, key, obj, node, origin) -> FVal:
        """A value read from outside the function (``ns[key]``: a global, a closure cell, an
        attribute), recorded in the module's ``Captures``: an array by reference, anything
        else as a constant the call checks (``frontend/captures.py``)."""
        if ns is None or not guarded(obj):
            return self.pyvalue(obj, node)
        caps = self.mod.captures
        st = scalar_from_dtype(obj.dtype) if type(obj) is np.ndarray else None
        if st is not None:
            t = ArrayType(st, obj.ndim, "C" if obj.flags.c_contiguous else "A")
            slot = caps.read(ns, key, obj, origin, t).slot
            v = self.b.create(ArrayGlobal, [], [t], {"slot": slot, "name": str(key)})
            return Array(v.result)
        caps.read(ns, key, obj, origin)
        return self.pyvalue(obj, node)

    def local_names(self) -> frozenset:
        names = getattr(self, "_locals", None)
        if names is None:
            names = self._locals = local_names(self.src.tree)
        return names

    def check_bound(self, name, node) -> None:
        """Raise UnboundLocalError at run time where ``name`` is bound on some paths only and
        this one did not bind it (Python's rule; zymase would otherwise read a placeholder)."""
        flag = self.symtab.get("$def:" + name)
        if flag is None or self.constant_of(flag) is True:
            return
        with self.b.location(self.src.loc(node)):
            self.b.create(Assert, [flag.value], [], {
                "kind": "UnboundLocalError",
                "msg": f"cannot access local variable '{name}' where it is not associated "
                       "with a value"})

    def pyvalue(self, obj, node) -> FVal:
        """A Python object known at compile time as an FVal (numbers become IR constants)."""
        st = python_scalar_stype(obj)
        if st is not None:
            if st.type == I64 and not -(2**63) <= obj < 2**63:
                raise self.err(UnsupportedError, f"integer {obj} does not fit in 64 bits", node)
            return Scalar(self.b.const(obj, st.type), True)
        if isinstance(obj, np.generic) and not isinstance(obj, np.ndarray):
            t = scalar_from_dtype(obj.dtype)
            if t is None:
                raise self.err(ZymaseTypeError, f"unsupported NumPy scalar type {obj.dtype}", node)
            return Scalar(self.b.const(obj.item(), t), False)
        if isinstance(obj, np.ndarray):
            return self.const_array(obj, node)
        if isinstance(obj, tuple):
            return Tup(tuple(self.pyvalue(x, node) for x in obj))
        return PyObj(obj)

    def const_array(self, arr: np.ndarray, node) -> Array:
        t = scalar_from_dtype(arr.dtype)
        if t is None:
            raise self.err(ZymaseTypeError, f"arrays of {arr.dtype} are not supported", node)
        data = np.ascontiguousarray(arr)
        v = self.b.create(ArrayConst, [], [ArrayType(t, data.ndim, "C")], {"data": data})
        return Array(v.result)

    def const_bool(self, v: bool) -> Scalar:
        return Scalar(self.b.i1(v), True)

    def const_int(self, v: int) -> Scalar:
        return Scalar(self.b.i64(v), True)

    def python_value(self, v):
        """``(True, value)`` for an FVal known when compiling as a plain Python value (a
        constant held for an argument, a number constant, a tuple of these), else
        ``(False, None)``."""
        if isinstance(v, PyObj):
            return (not isinstance(v.obj, BoundMethod)), v.obj
        if isinstance(v, Scalar) and isinstance(v.value.op, Constant):
            return True, v.value.op.attrs["value"]
        if isinstance(v, Tup) and not isinstance(v, TupList):
            items = [self.python_value(x) for x in v.items]
            if all(ok for ok, _ in items):
                return True, tuple(x for _, x in items)
        return False, None

    def constant_of(self, v):
        """The Python value of a compile-time constant FVal, or None."""
        if isinstance(v, PyObj):
            return v.obj
        if isinstance(v, Scalar) and isinstance(v.value.op, Constant):
            return v.value.op.attrs["value"]
        return None

    def describe(self, v) -> str:
        if isinstance(v, Scalar):
            if v.weak:
                return f"a Python {_PY_KIND.get(v.type.kind, v.type.np_dtype.name)}"
            return f"a {v.type.np_dtype.name} scalar"
        if isinstance(v, Array):
            return f"an array of {v.type.dtype.np_dtype.name} (ndim={v.type.ndim})"
        if isinstance(v, Tup):
            kind = "list" if isinstance(v, TupList) else "tuple"
            n = len(v.items)
            if not 0 < n <= 4 or any(isinstance(x, Tup) for x in v.items):
                return f"a {kind} of {n}"
            return f"a {kind} of {n} ({', '.join(self.describe(x) for x in v.items)})"
        if isinstance(v, ListVal):
            return "a list"
        if isinstance(v, Struct):
            return f"a {v.pytype.__name__}"
        if isinstance(v, PyObj):
            return describe_object(v.obj, self.describe)
        return "unbound"

    # ------------------------------------------------------------------ containers
    def expr_Tuple(self, node):
        return Tup(tuple(self.expr(e) for e in node.elts))

    def expr_List(self, node):
        if not node.elts:
            return EMPTY_LIST
        return TupList(  # read like a tuple, but an index list where NumPy says so
            tuple(self.expr(e) for e in node.elts))

    # ------------------------------------------------------------------ attributes
    def expr_Attribute(self, node):
        base = self.expr(node.value)
        name = node.attr
        if isinstance(base, PyObj):
            if not hasattr(base.obj, name):
                raise self.err(UnsupportedError,
                               f"{self.describe(base)} has no attribute `{name}`", node)
            d = attribute_namespace(base.obj, name)
            if d is not None:
                origin = ("module", base.obj.__name__) if isinstance(base.obj, ModuleType) \
                    else None
                return self.outer_value(d, name, d[name], node, origin)
            return self.pyvalue(getattr(base.obj, name), node)
        if isinstance(base, Struct):
            if base.pytype is dict:
                raise self.err(UnsupportedError, f"a dict has no attribute `{name}` in compiled "
                               "code (read entries as d[\"key\"])", node)
            if name not in base.fields and base.pytype in STRUCT_METHODS:
                return PyObj(BoundMethod(base, name))
            if name not in base.fields:
                raise self.err(UnsupportedError, f"{base.pytype.__name__} has no field `{name}`",
                               node)
            return base.fields[name]
        if isinstance(base, Array):
            got = self.array_attribute(base, name, node)
            if got is not None:
                return got
        if isinstance(base, Scalar) and name in ("real", "imag"):
            return self.scalar_part(base, name)
        if isinstance(base, Scalar) and name == "dtype":
            if base.weak:
                raise self.err(UnsupportedError, "a Python number has no attribute `dtype`", node)
            return PyObj(base.type.np_dtype)
        if isinstance(base, Scalar) and not base.weak and name in ("shape", "ndim", "size"):
            # a NumPy scalar (an element of an array) answers these as a 0-d array
            return {"shape": Tup(()), "ndim": self.const_int(0), "size": self.const_int(1)}[name]
        if not getattr(node, "zy_called", False) and not _known_method(base, name):
            raise self.err(UnsupportedError, self.no_attribute(base, name), node)
        return PyObj(BoundMethod(base, name))

    def no_attribute(self, base, name: str) -> str:
        """The message for ``base.name`` read (not called) where ``base`` has no such attribute
        in compiled code: Python's words where Python has none, else that zymase has none."""
        what = self.describe(base)
        pytype = _python_type(base)
        if pytype is not None and hasattr(pytype, name):
            hint = " (an array's shape, ndim, size, dtype, T, real and imag are)" \
                if isinstance(base, Array) else ""
            return f"the attribute `.{name}` of {what} is not supported in compiled code{hint}"
        hint = ""
        if isinstance(base, Scalar) and name in ("shape", "ndim", "size"):
            hint = " (as in Python; a number has shape (), ndim 0 and size 1)"
        return f"{what} has no attribute `{name}`{hint}"

    def scalar_part(self, v: Scalar, name: str) -> Scalar:
        if not v.type.is_complex:
            return v if name == "real" else Scalar(self.b.const(0, v.type), v.weak)
        return Scalar(self.b.op(ComplexRe if name == "real" else ComplexIm, v.value), v.weak)

    # ------------------------------------------------------------------ operators
    def expr_BinOp(self, node):
        return self.binop(node.op, self.expr(node.left), self.expr(node.right), node)

    def binop(self, op, a, b, node):
        if isinstance(op, ast.MatMult):
            return self.matmul(a, b, node)
        if isinstance(a, Array) or isinstance(b, Array):
            return self.array_binop(op, a, b, node)
        if isinstance(a, Tup) and isinstance(b, Tup) and isinstance(op, ast.Add):
            return Tup(a.items + b.items)
        if isinstance(op, ast.Mult) and (isinstance(a, Tup) or isinstance(b, Tup)):
            return self.repeat_sequence(a, b, node)
        if isinstance(a, Scalar) and isinstance(b, Scalar) and type(op) in ARITH:
            r = self.check_constant_int(type(op), a, b, node)
            if r is not None:  # Python ints known when compiling: a constant (`a.ndim - 1`)
                return Scalar(self.b.const(r, I64), True)
            return self.scalar_binop(type(op), a, b)
        raise self.err(ZymaseTypeError, f"unsupported operand types for {SYMBOL.get(type(op), op)}:"
                       f" {self.describe(a)} and {self.describe(b)}", node)

    def repeat_sequence(self, a, b, node):
        """``(x, y) * 3``: the tuple repeated, for a count known when compiling.  A list
        (``[0.0] * n``) is refused with what to write instead: a list written as ``[...]`` is a
        fixed tuple in compiled code."""
        seq_first = isinstance(a, Tup)
        seq, count = (a, b) if seq_first else (b, a)
        seq_ast, count_ast = _operand_nodes(node, seq_first)
        if isinstance(seq, TupList):
            n = ast.unparse(count_ast) if count_ast is not None else "n"
            elts = seq_ast.elts if isinstance(seq_ast, ast.List) else None
            written = f"{ast.unparse(seq_ast)} * {n}" if seq_ast is not None else f"lst * {n}"
            if elts is not None and len(elts) == 1:
                x = ast.unparse(elts[0])
                fill = "np.zeros" if x in ("0", "0.0") else "np.full"
                array = f"{fill}({n})" if fill == "np.zeros" else f"np.full({n}, {x})"
                how = f"write {array} for an array, or [{x} for _ in range({n})] for a list"
            else:
                seq_text = ast.unparse(seq_ast) if seq_ast is not None else "lst"
                how = f"write np.tile(np.array({seq_text}), {n}) for an array, or build the " \
                      "list with a list comprehension"
            raise self.err(UnsupportedError, f"lists cannot be repeated with `*` in compiled "
                           f"code (`{written}`): {how}", node)
        k = self.constant_of(count) if isinstance(count, Scalar) else None
        if isinstance(k, int):  # (a bool counts as 0 or 1, as in Python)
            return Tup(seq.items * int(k))
        if isinstance(count, Scalar) and (count.type.is_int or count.type == I1):
            raise self.err(UnsupportedError, "a tuple can be repeated with `*` only by an int "
                           "known when compiling; for a count known at run time, build an array "
                           "(np.full(n, x))", node)
        raise self.err(ZymaseTypeError, f"can't multiply a sequence by {self.describe(count)} "
                       "(only by an int)", node)

    def check_constant_int(self, opk, a: Scalar, b: Scalar, node) -> int | None:
        """Python ints known at compile time whose result leaves the 64-bit range (``10**19``)
        would wrap: refused here, where Python would give the big int.  Returns the result of
        ``+``, ``-``, ``*`` and ``**`` (non-negative exponent) of two such ints, else None."""
        x, y = self.constant_of(a), self.constant_of(b)
        if not (a.weak and b.weak and type(x) is int and type(y) is int):
            return None
        ops = {ast.Add: lambda: x + y, ast.Sub: lambda: x - y, ast.Mult: lambda: x * y,
               ast.LShift: lambda: x << min(y, 64) if y >= 0 else None}
        if opk is ast.Pow and y >= 0:
            big = abs(x) > 1 and y > 64
            r = 2**64 if big else x ** y
        elif opk in ops:
            r = ops[opk]()
        else:
            return None
        if r is not None and not -(2**63) <= r < 2**63:
            shown = r if abs(r) < 10**30 else "huge"
            raise self.err(UnsupportedError, f"this integer expression is {shown}, which does not "
                           "fit in 64 bits (zymase's ints are 64-bit and would wrap): write it as "
                           "a float, e.g. 1e19", node)
        return r

    def scalar_binop(self, opk, a: Scalar, b: Scalar) -> Scalar:
        st = result_type(stype(a), stype(b))
        if st.type.is_int and not st.weak and st.type != I64:
            self.check_int_fits(a, b, st.type)
        if opk is ast.Pow:
            return self.scalar_pow(a, b, st)
        if opk in BITWISE:
            if st.type.is_inexact:
                raise ZymaseTypeError(f"the operator {SYMBOL[opk]} needs integers or booleans, "
                                      f"not {st.type.np_dtype}", self.b.loc)
            t = I64 if st.type.is_bool and opk in (ast.LShift, ast.RShift) else st.type
            return Scalar(self.b.op(ARITH[opk][1], self.b.cast(a.value, t),
                                    self.b.cast(b.value, t)), st.weak)
        t = st.type
        if t.is_bool and not st.weak and opk in NUMPY_BOOL_OPS:  # NumPy bools: + is or, * is and
            op = NUMPY_BOOL_OPS[opk]
            if op is None:
                raise ZymaseTypeError("NumPy boolean subtract, the `-` operator, is not "
                                      "supported: use the `^` operator or np.logical_xor",
                                      self.b.loc)
            return Scalar(self.b.op(op, self.b.cast(a.value, t), self.b.cast(b.value, t)), False)
        if t.is_bool or (opk is ast.Div and not t.is_inexact):
            t = I64 if opk is not ast.Div else F64
        if opk in (ast.FloorDiv, ast.Mod) and t.is_complex:
            raise ZymaseTypeError("// and % are not defined for complex numbers", self.b.loc)
        x, y = self.b.cast(a.value, t), self.b.cast(b.value, t)
        name = ARITH[opk][0 if t.is_inexact else 1]
        if t.is_inexact and opk in (ast.Div, ast.FloorDiv, ast.Mod) and a.weak and b.weak:
            self.check_nonzero(y, "float division by zero" if opk is ast.Div else
                               "float modulo" if opk is ast.Mod else "float floor division by zero")
        return Scalar(self.b.op(name, x, y), st.weak)

    def check_int_fits(self, a: Scalar, b: Scalar, t) -> None:
        """NumPy 2 refuses a Python int outside the range of the NumPy int it meets
        (``np.uint8(1) + 300``, ``x_uint8 - (-1)``): OverflowError, here when compiling."""
        for v in (a, b):
            k = self.constant_of(v) if v.weak else None
            if type(k) is int:
                info = np.iinfo(t.np_dtype)
                if not info.min <= k <= info.max:
                    raise ZymaseOverflowError(f"Python integer {k} out of bounds for "
                                              f"{t.np_dtype} (as NumPy); write "
                                              f"np.{t.np_dtype}({k % (info.max + 1 - info.min)}) "
                                              "for the wrapped value, or convert the array with "
                                              ".astype()", self.b.loc)

    def check_nonzero(self, y, msg):
        zero = self.b.const(0, y.type)
        pred = CmpF if y.type.is_inexact else CmpI
        ok = self.b.op(pred, y, zero, pred="ne")
        self.b.create(Assert, [ok], [], {"kind": "ZeroDivisionError", "msg": msg})

    def scalar_pow(self, a: Scalar, b: Scalar, st: SType) -> Scalar:
        k = self.constant_of(b)
        # Python ints: 2 ** -1 is 0.5; NumPy ints raise for any negative power (powi does)
        if st.type.is_int and (not st.weak or not (isinstance(k, int) and k < 0)):
            return Scalar(self.b.op(PowI, *(self.b.cast(v.value, st.type) for v in (a, b))),
                          st.weak)
        t = st.type if st.type.is_inexact else F64
        x = self.b.cast(a.value, t)
        if isinstance(k, (int, float)) and not isinstance(k, bool) and k in (1, 2, 3):
            out = x
            for _ in range(int(k) - 1):
                out = self.b.op(MulF, out, x)
            return Scalar(out, st.weak)
        y = self.b.cast(b.value, t)
        if st.weak and not t.is_complex and not (isinstance(k, (int, float)) and k >= 0):
            self.check_zero_power(x, y)
        return Scalar(self.b.op(Pow, x, y), st.weak)

    def check_zero_power(self, x, y):
        """Python floats: ``0.0 ** y`` raises for a finite negative ``y`` (``** -inf`` is inf)."""
        zero, minus_inf = self.b.const(0.0, x.type), self.b.const(float("-inf"), x.type)
        bad = self.b.op(AndI, self.b.op(CmpF, x, zero, pred="eq"),
                        self.b.op(AndI, self.b.op(CmpF, y, zero, pred="lt"),
                                  self.b.op(CmpF, y, minus_inf, pred="gt")))
        self.b.create(Assert, [self.b.op(Not, bad)], [], {
            "kind": "ZeroDivisionError", "msg": "0.0 cannot be raised to a negative power"})

    def expr_UnaryOp(self, node):
        v = self.expr(node.operand)
        op = node.op
        if isinstance(op, ast.Not):
            return self.negate(self.truth(v, node))
        if isinstance(v, Array):
            return self.array_unary(op, v, node)
        if not isinstance(v, Scalar):
            raise self.err(ZymaseTypeError, f"bad operand for unary operator: {self.describe(v)}",
                           node)
        if isinstance(op, ast.UAdd):
            return v
        if isinstance(op, ast.USub):
            k = self.constant_of(v)
            if k is not None and not isinstance(k, bool):
                return Scalar(self.b.const(-k, v.type), v.weak)
            t = I64 if v.type.is_bool else v.type
            name = NegF if t.is_inexact else NegI
            return Scalar(self.b.op(name, self.b.cast(v.value, t)), v.weak)
        if isinstance(op, ast.Invert) and v.type.is_int:
            return Scalar(self.b.op(XorI, v.value, self.b.const(-1, v.type)), v.weak)
        raise self.err(UnsupportedError, f"unary `{symbol(op)}` is not supported on "
                       f"{v.type.np_dtype} values", node)

    def truth(self, v, node) -> Scalar:
        """Python truthiness as an i1 Scalar."""
        if isinstance(v, Scalar):
            if v.type == I1:
                return v
            if v.type.is_complex:
                re = self.b.op(ComplexRe, v.value)
                im = self.b.op(ComplexIm, v.value)
                z = self.b.const(0, re.type)
                return Scalar(self.b.op(OrI, self.b.op(CmpF, re, z, pred="ne"),
                                        self.b.op(CmpF, im, z, pred="ne")), True)
            pred = CmpF if v.type.is_inexact else CmpI
            return Scalar(self.b.op(pred, v.value, self.b.const(0, v.type), pred="ne"), True)
        if isinstance(v, PyObj):
            return self.const_bool(bool(v.obj))
        if isinstance(v, Tup):
            return self.const_bool(bool(v.items))
        if isinstance(v, ListVal):
            return Scalar(self.b.op(CmpI, v.length, self.b.i64(0), pred="gt"), True)
        raise self.err(ZymaseTypeError, f"the truth value of {self.describe(v)} is ambiguous "
                       "(use a.any() or a.all() for arrays)", node)

    def expr_Compare(self, node):
        left = self.expr(node.left)
        return self._compare_chain(left, list(zip(node.ops, node.comparators)), node)

    def _compare_chain(self, left, pairs, node):
        op, right_node = pairs[0]
        right = self.expr(right_node)
        res = self.compare(op, left, right, node)
        if len(pairs) == 1:
            return res
        if isinstance(res, Array):
            raise self.err(ZymaseValueError,
                           self.chain_message(node, len(node.ops) - len(pairs)), node)
        c = self.constant_of(res)
        if c is not None:  # known when compiling: `0 < x.ndim < 3`
            return self._compare_chain(right, pairs[1:], node) if c else res
        return self.lower_if_value(res, lambda: self._compare_chain(right, pairs[1:], node),
                                   lambda: self.const_bool(False), node,
                                   self.chain_words(node, len(node.ops) - len(pairs)))

    def chain_words(self, node, k: int):
        """(what, what to do) for a chained comparison whose rest gives another type than the
        False of its ``k``-th comparison (``0 < x < a`` of a number ``x`` and an array ``a``)."""
        terms = [node.left, *node.comparators]
        parts = [f"({ast.unparse(x)} {symbol(op)} {ast.unparse(y)})"
                 for x, op, y in zip(terms, node.ops, terms[1:])]
        return (f"the chained comparison `{ast.unparse(node)}` (which means "
                f"`{' and '.join(parts)}`)",
                f"for both outcomes (it is False where {parts[k]} is false); for the elementwise "
                f"test write {' & '.join(parts)}")

    def chain_message(self, node, k: int) -> str:
        """Why ``0 < a < 2`` of an array fails (Python asks for the truth value of ``0 < a``,
        the ``k``-th comparison), with the elementwise form to write."""
        terms = [node.left, *node.comparators]
        parts = [f"({ast.unparse(x)} {symbol(op)} {ast.unparse(y)})"
                 for x, op, y in zip(terms, node.ops, terms[1:])]
        return (f"the truth value of an array with more than one element is ambiguous: the "
                f"chained comparison `{ast.unparse(node)}` means `{' and '.join(parts)}`, which "
                f"asks whether the array {parts[k]} is true; for the elementwise test write "
                f"{' & '.join(parts)}")

    def compare(self, op, a, b, node):
        for v in (a, b):
            if isinstance(v, PyObj) and isinstance(v.obj, BoundMethod):
                raise self.err(UnsupportedError, f"`.{v.obj.name}` is a method or an attribute "
                               "zymase does not know: call it, or read another attribute", node)
        if isinstance(op, (ast.Is, ast.IsNot)):
            for p, q in ((a, b), (b, a)):  # a value compiled code holds is never None
                if isinstance(p, PyObj) and p.obj is None and \
                        isinstance(q, (Scalar, Array, Tup, Struct, ListVal)):
                    return self.const_bool(isinstance(op, ast.IsNot))
            if not (isinstance(a, PyObj) and isinstance(b, PyObj)):
                raise self.err(UnsupportedError, "`is` is only supported between compile-time "
                               "objects such as None", node)
            return self.const_bool((a.obj is b.obj) == isinstance(op, ast.Is))
        known_a, pa = self.python_value(a)
        known_b, pb = self.python_value(b)
        if known_a and known_b and (isinstance(a, PyObj) or isinstance(b, PyObj) or
                                    isinstance(op, (ast.In, ast.NotIn))):
            # constants held for arguments: `mode == "sq"`, `kind in ("a", "b")`
            return self.const_bool(_py_compare(type(op), pa, pb))
        for p, q in ((a, b), (b, a)):  # a string or None never equals a number
            if isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(p, PyObj) and \
                    isinstance(p.obj, (str, bytes, type(None))) and isinstance(q, Scalar):
                return self.const_bool(isinstance(op, ast.NotEq))
        if isinstance(op, (ast.In, ast.NotIn)) and isinstance(b, Tup) and \
                isinstance(a, Scalar) and all(isinstance(x, Scalar) for x in b.items):
            found = self.const_bool(False)  # `i in (0, n - 1)`: any of the equalities
            for x in b.items:
                e = self.compare(ast.Eq(), a, x, node)
                found = e if self.constant_of(found) is False else \
                    Scalar(self.b.op(OrI, found.value, e.value), True)
            return found if isinstance(op, ast.In) else self.negate(found)
        if type(op) not in COMPARE:
            raise self.err(UnsupportedError, f"comparison `{symbol(op)}` is only supported "
                           "between values known when compiling (strings, tuples of numbers "
                           "and of constants)", node)
        if isinstance(a, Array) or isinstance(b, Array):
            return self.array_compare(COMPARE[type(op)], a, b, node)
        ca, cb = self.constant_of(a), self.constant_of(b)
        if type(ca) in (int, bool) and type(cb) in (int, bool):
            # integers known when compiling (a.ndim == 1, len of a tuple): a constant, so that
            # `if` compiles only the branch taken
            return self.const_bool(_py_compare(type(op), ca, cb))
        if isinstance(a, Tup) and isinstance(b, Tup) and isinstance(op, (ast.Eq, ast.NotEq)):
            eq = self._tuples_equal(a, b, node)  # `a.shape == b.shape`, `x.shape != (3,)`
            if isinstance(op, ast.Eq):
                return eq
            return self.negate(eq)
        if not (isinstance(a, Scalar) and isinstance(b, Scalar)):
            if isinstance(a, PyObj) and isinstance(b, PyObj):
                return self.const_bool(_py_compare(type(op), a.obj, b.obj))
            raise self.err(ZymaseTypeError, f"cannot compare {self.describe(a)} with "
                           f"{self.describe(b)}", node)
        return self.scalar_compare(COMPARE[type(op)], a, b)

    def negate(self, t: Scalar) -> Scalar:
        """``not t`` of a truth value: a constant when ``t`` is one."""
        c = self.constant_of(t)
        return self.const_bool(not c) if c is not None else \
            Scalar(self.b.op(Not, t.value), True)

    def _tuples_equal(self, a: Tup, b: Tup, node) -> Scalar:
        """Python's ``a == b`` of two tuples of numbers (or of tuples): same length and equal
        items; a constant when the items are known when compiling (shapes of known rank)."""
        if len(a.items) != len(b.items):
            return self.const_bool(False)
        out = self.const_bool(True)
        for x, y in zip(a.items, b.items):
            if isinstance(x, Array) or isinstance(y, Array):
                raise self.err(UnsupportedError, "comparing tuples that hold arrays is not "
                               "supported", node)
            e = self.compare(ast.Eq(), x, y, node)
            ce, co = self.constant_of(e), self.constant_of(out)
            if ce is False:
                return self.const_bool(False)
            if ce is None:
                out = e if co is True else Scalar(self.b.op(AndI, out.value, e.value),
                                                  True)
        return out

    def scalar_compare(self, pred, a: Scalar, b: Scalar) -> Scalar:
        t = result_type(stype(a), stype(b)).type
        if t.is_complex and pred not in ("eq", "ne"):
            raise ZymaseTypeError("complex numbers are not ordered", self.b.loc)
        if t.is_complex:
            x, y = self.b.cast(a.value, t), self.b.cast(b.value, t)
            parts = [self.b.op(CmpF, self.b.op(p, x), self.b.op(p, y), pred=pred)
                     for p in (ComplexRe, ComplexIm)]
            comb = AndI if pred == "eq" else OrI
            return Scalar(self.b.op(comb, *parts), True)
        if a.weak and b.weak and t == F64 and I64 in (a.type, b.type) and a.type != b.type:
            k = self.constant_of(a if a.type == I64 else b)
            if k is None or abs(k) > 2**53:  # (smaller ints convert to float64 exactly)
                return self.int_float_compare(pred, a, b)
        if t.is_int and t != I64 and a.weak != b.weak:
            return self.small_int_compare(pred, a, b, t)
        name = CmpF if t.is_inexact else CmpI
        return Scalar(self.b.op(name, self.b.cast(a.value, t), self.b.cast(b.value, t), pred=pred),
                      True)

    def small_int_compare(self, pred, a: Scalar, b: Scalar, t) -> Scalar:
        """A NumPy int of another type than int64 against a Python int, by value as NumPy 2
        does (``np.uint8(5) < 300`` is True, ``np.uint64(1) > -1`` too): in int64, and for
        uint64 with the negative Python ints apart (every uint64 is larger)."""
        if t != U64:
            x, y = self.b.cast(a.value, I64), self.b.cast(b.value, I64)
            return Scalar(self.b.op(CmpI, x, y, pred=pred), True)
        weak = self.b.cast((a if a.weak else b).value, I64)
        negative = self.b.op(CmpI, weak, self.b.i64(0), pred="lt")
        as_u = self.b.op(CmpI, self.b.cast(a.value, U64), self.b.cast(b.value, U64), pred=pred)
        larger_left = b.weak  # (the uint64 is the larger one)
        answer = {"eq": False, "ne": True, "lt": not larger_left, "le": not larger_left,
                  "gt": larger_left, "ge": larger_left}[pred]
        return Scalar(self.b.op(Select, negative, self.const_bool(answer).value, as_u), True)

    def int_float_compare(self, pred, a: Scalar, b: Scalar) -> Scalar:
        """A Python int against a Python float, exactly, as CPython compares them
        (``2**53 + 1 == 2.0**53`` is False; NumPy scalars convert the int to float64 instead).

        Where the int converted to float differs from the float, that comparison is already
        right (rounding is monotonic); where they are equal the float is a whole number, and
        the ints are compared (a float of 2**63 exceeds every int64)."""
        b_ = self.b
        swap = a.type != I64
        i, f = (b.value, a.value) if swap else (a.value, b.value)
        if swap:
            pred = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}.get(pred, pred)
        fi = b_.cast(i, F64)
        rounded = b_.op(CmpF, fi, f, pred=pred)
        same = b_.op(CmpF, fi, f, pred="eq")
        big = b_.op(CmpF, f, b_.const(2.0 ** 63, F64), pred="ge")
        whole = b_.cast(b_.op(Select, big, b_.const(0.0, F64), f), I64)
        ints = b_.op(CmpI, i, whole, pred=pred)
        below = b_.i1(pred in ("lt", "le", "ne"))  # i < f when f is 2**63
        exact = b_.op(Select, big, below, ints)
        return Scalar(b_.op(Select, same, exact, rounded), True)

    def expr_BoolOp(self, node):
        is_and = isinstance(node.op, ast.And)
        return self._boolop(is_and, node.values, node)

    def _boolop(self, is_and, values, node):
        first = self.expr(values[0])
        if len(values) == 1:
            return first
        cond = self.truth(first, values[0])
        static = self.constant_of(cond)
        if static is not None:
            return self._boolop(is_and, values[1:], node) if static == is_and else first

        def rest():
            return self._boolop(is_and, values[1:], node)

        def short():
            return first

        what = (f"the value of this `{'and' if is_and else 'or'}` expression (one of its "
                "operands)", "for every operand (convert them to one type)")
        if is_and:
            return self.lower_if_value(cond, rest, short, node, what)
        return self.lower_if_value(cond, short, rest, node, what)

    def expr_IfExp(self, node):
        cond = self.truth(self.expr(node.test), node.test)
        static = self.constant_of(cond)
        if static is not None:
            return self.expr(node.body if static else node.orelse)
        return self.lower_if_value(cond, lambda: self.expr(node.body),
                                   lambda: self.expr(node.orelse), node,
                                   ("the value of this `... if ... else ...` expression",
                                    "for both branches (convert one branch's value to the "
                                    "other's type)"))


_PY_KIND = {"f": "float", "i": "int", "b": "bool", "c": "complex"}
_PY_TYPES = {"f": float, "i": int, "b": bool, "c": complex}


def _known_method(base, name: str) -> bool:
    """Whether compiled code has a method ``name`` for ``base`` (read now, called later)."""
    if isinstance(base, Array):
        return name in METHODS
    if isinstance(base, (ListVal, EmptyList)):
        return name == "append"
    if isinstance(base, Tup):
        return name in ("append", "extend", "insert", "pop")  # (refused when called, saying why)
    if isinstance(base, Scalar):
        return name == "conjugate"
    return True


def _python_type(base):
    """The Python type ``base`` stands for (for what attributes it has), or None."""
    if isinstance(base, Array):
        return np.ndarray
    if isinstance(base, Scalar):
        return _PY_TYPES.get(base.type.kind) if base.weak else base.type.np_dtype.type
    if isinstance(base, TupList) or isinstance(base, (ListVal, EmptyList)):
        return list
    if isinstance(base, Tup):
        return tuple
    return None


def _operand_nodes(node, first: bool):
    """The syntax of the (sequence, count) operands of ``node``, a ``BinOp`` or an
    ``AugAssign`` (``first``: the sequence is the left operand); None where not known."""
    if isinstance(node, ast.BinOp):
        left, right = node.left, node.right
    elif isinstance(node, ast.AugAssign):
        left, right = node.target, node.value
    else:
        return None, None
    return (left, right) if first else (right, left)


def _py_compare(opk, a, b):
    ops = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
           ast.Gt: operator.gt, ast.GtE: operator.ge, ast.In: lambda x, y: x in y,
           ast.NotIn: lambda x, y: x not in y}
    return bool(ops[opk](a, b))
