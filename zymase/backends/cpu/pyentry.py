"""A CPython-API entry point (``METH_FASTCALL | METH_KEYWORDS``) generated in LLVM IR: the fast
call path.

    PyObject* zy.fast.<f>(State* state, PyObject* const* args, Py_ssize_t nargs,
                          PyObject* kwnames)

``state`` is ``{fast entry, fallback, raiser, guards, boxer}`` (see ``dispatch.py``).  It checks
that every argument has exactly the type this specialization was compiled for (Python
float/int/bool by type pointer, NumPy arrays by type, descriptor, rank and C-contiguity, and for
``noalias`` specializations that contiguous arrays do not overlap), unboxes them, releases the
GIL around the compiled body (holding a reference to each global array it read), and boxes the
results as the general path does (``pybox.py``: floats, ints, bools, arrays; several as a
tuple).  When the arguments do not match, or come with keywords (``METH_FASTCALL |
METH_KEYWORDS``), it returns
``fallback(*args, **kwargs)`` (the general path, which compiles what is missing); when the
body raised it returns ``raiser(err_id, a, b)``, which raises the user's exception.

Before unboxing it checks what the code read from outside its arguments
(``frontend/captures.py``): ``guards`` holds ``(namespace, key, expected)`` object pointers per
capture; a name compiled in as a constant must still hold ``expected`` (else the general path
decides: an equal number, or a recompile), and an array read by reference is looked up, checked
like an argument (and, where the code writes arguments, to share no memory with them) and put in
the call's table of global arrays (``ctx + CTX_GLOBALS``).  Python
objects it needs are referenced through symbols bound at load time
(``python_symbols``), so its object code can be cached on disk.
"""

from __future__ import annotations

import ctypes

import numpy as np

from ...ir.core import Func
from ...ir.types import DTYPE_NAMES, F64, I1, I64, ArrayType
from ..llvm.emit import result_type, symbol
from ..llvm.types import (
    CTX_BYTES,
    CTX_GLOBALS,
    PYARRAY_DATA,
    PYARRAY_DIMS,
    PYARRAY_STRIDES,
    array_struct,
    ltype,
)
from . import pybox

PYARRAY_ND, PYARRAY_DESCR, PYARRAY_FLAGS = 24, 56, 64
NPY_C_CONTIGUOUS = 1
NPY_WRITEABLE = 0x0400
API = ("PyFloat_FromDouble", "PyLong_FromLongLong", "PyLong_AsLongLong", "PyErr_Occurred",
       "PyErr_Clear", "Py_IncRef", "PyEval_SaveThread", "PyEval_RestoreThread",
       "PyObject_Vectorcall", "PyObject_CallFunction", "PyCapsule_GetPointer", "PyDict_GetItem",
       "PyTuple_New", "PyTuple_SetItem", "Py_DecRef", "PyCapsule_New")


MAX_RESULTS = 8


def supported(func: Func) -> bool:
    """Can this entry use the fast path? (scalar/array parameters, f64/i64/i1 or array results:
    one is returned as it is, several as a tuple)"""
    for t in func.arg_types:
        if not (isinstance(t, ArrayType) or t in (F64, I64, I1)):
            return False
    return len(func.result_types) <= MAX_RESULTS and all(map(pybox.boxable, func.result_types))


def python_symbols() -> dict[str, int]:
    """Addresses of the C-API functions and Python objects the fast entry references."""
    api = ctypes.pythonapi
    syms = {f"zy.py.{n}": ctypes.cast(getattr(api, n), ctypes.c_void_p).value for n in API}
    syms.update(pybox.numpy_symbols())
    syms.update({"zy.py.float": id(float), "zy.py.int": id(int), "zy.py.True": id(True),
                 "zy.py.False": id(False), "zy.py.None": id(None), "zy.py.ndarray": id(np.ndarray)})
    for t in DTYPE_NAMES:
        syms[f"zy.py.dtype.{t}"] = id(np.dtype(t))
    return syms


def declarations() -> str:
    decls = ["@zy.py.float = external global i8", "@zy.py.int = external global i8",
             "@zy.py.True = external global i8", "@zy.py.False = external global i8",
             "@zy.py.None = external global i8", "@zy.py.ndarray = external global i8"]
    decls += [f"@zy.py.dtype.{t} = external global i8" for t in DTYPE_NAMES]
    decls += ["declare ptr @zy.py.PyFloat_FromDouble(double)",
              "declare ptr @zy.py.PyLong_FromLongLong(i64)",
              "declare i64 @zy.py.PyLong_AsLongLong(ptr)", "declare ptr @zy.py.PyErr_Occurred()",
              "declare void @zy.py.PyErr_Clear()", "declare void @zy.py.Py_IncRef(ptr)",
              "declare void @zy.py.Py_DecRef(ptr)",
              "declare ptr @zy.py.PyEval_SaveThread()",
              "declare void @zy.py.PyEval_RestoreThread(ptr)",
              "declare ptr @zy.py.PyObject_Vectorcall(ptr, ptr, i64, ptr)",
              "declare ptr @zy.py.PyObject_CallFunction(ptr, ptr, ...)",
              "declare ptr @zy.py.PyDict_GetItem(ptr, ptr)",
              "declare ptr @zy.py.PyTuple_New(i64)",
              "declare i32 @zy.py.PyTuple_SetItem(ptr, i64, ptr)",
              '@zy.py.fmt_err = private unnamed_addr constant [4 x i8] c"LLL\\00"',
              pybox.declarations()]
    return "\n".join(decls)


class _Gen:
    def __init__(self):
        self.lines: list[str] = []
        self.n = 0

    def v(self, rhs: str) -> str:
        self.n += 1
        self.lines.append(f"  %t{self.n} = {rhs}")
        return f"%t{self.n}"

    def check(self, ok: str) -> None:
        self.n += 1
        self.lines += [f"  br i1 {ok}, label %c{self.n}, label %mismatch", f"c{self.n}:"]

    def field(self, obj: str, offset: int, ty: str) -> str:
        return self.v(f"load {ty}, ptr {self.v(f'getelementptr i8, ptr {obj}, i64 {offset}')}")


def fast_entry_ir(func: Func, noalias: bool, written=(), captures=()) -> str:
    """``written``: array arguments the code may write; a read-only one takes the general
    path (which refuses it).  ``captures``: ``(kind, array type or None)`` per guard
    (``Captures.layout()``)."""
    g = _Gen()
    n_slots = sum(1 for _, t in captures if t is not None)
    g.lines += [f"  %ctx = alloca [{CTX_BYTES // 8} x i64], align 8",
                f"  %outer = alloca [{max(1, n_slots)} x ptr], align 8"]
    g.check(g.v("icmp eq ptr %kwnames, null"))
    g.check(g.v(f"icmp eq i64 %nargs, {len(func.args)}"))
    held: list = []  # (object, type, unboxed struct) of each global array read
    outer = _guards(g, captures, held)
    args, arg_objs, owners, arrays, writes = [], [], [], [], []
    for k, t in enumerate(func.arg_types):
        obj = g.v(f"load ptr, ptr {g.v(f'getelementptr ptr, ptr %args, i64 {k}')}")
        arg_objs.append(obj)
        args.append(f"{ltype(t)} {_unbox(g, obj, t, arrays)}")
        if isinstance(t, ArrayType):
            owners.append((obj, t, args[-1].split()[-1]))
        if k in written:
            flags = g.field(obj, PYARRAY_FLAGS, "i32")
            g.check(g.v(f"icmp ne i32 {g.v(f'and i32 {flags}, {NPY_WRITEABLE}')}, 0"))
            writes.append(arrays[-1])
    if noalias and len(arrays) > 1:
        _check_disjoint(g, arrays)
    if outer and writes:
        _check_apart(g, writes, outer)
    rt = result_type(func)
    for obj, _, _ in held:  # (a global rebound by another thread while the GIL is released)
        g.lines.append(f"  call void @zy.py.Py_IncRef(ptr {obj})")
    tstate = g.v("call ptr @zy.py.PyEval_SaveThread()")
    g.lines.append(f"  call void @llvm.memset.p0.i64(ptr %ctx, i8 0, i64 {CTX_BYTES}, i1 false)")
    at = g.v(f"getelementptr i8, ptr %ctx, i64 {CTX_GLOBALS}")
    g.lines.append(f"  store ptr %outer, ptr {at}")
    r = g.v(f"call {rt} {symbol(func)}(ptr %ctx{''.join(', ' + a for a in args)})")
    ok = g.v(f"icmp eq i32 {g.v(f'extractvalue {rt} {r}, 0')}, 0")
    pybox.keep_fresh(g, func, rt, r, ok)
    g.lines.append("  call void @zy.arena_free_all(ptr %ctx)")
    g.lines.append(f"  call void @zy.py.PyEval_RestoreThread(ptr {tstate})")
    g.lines.append(f"  br i1 {ok}, label %ok, label %raised")
    g.lines.append("ok:")
    held_objs = [h[0] for h in held]
    pybox.box(g, func, rt, r, [*arg_objs, *held_objs], owners + held, held_objs)
    g.lines += ["raised:", *[f"  call void @zy.py.Py_DecRef(ptr {h[0]})" for h in held],
                "  %eid = load i64, ptr %ctx",
                "  %pa = getelementptr i8, ptr %ctx, i64 8", "  %ea = load i64, ptr %pa",
                "  %pb = getelementptr i8, ptr %ctx, i64 16", "  %eb = load i64, ptr %pb",
                "  %rsp = getelementptr i8, ptr %state, i64 16", "  %rs = load ptr, ptr %rsp",
                "  %err = call ptr (ptr, ptr, ...) @zy.py.PyObject_CallFunction(ptr %rs, "
                "ptr @zy.py.fmt_err, i64 %eid, i64 %ea, i64 %eb)", "  ret ptr %err",
                *MISMATCH]
    head = (f"define ptr @zy.fast.{func.sym_name}(ptr %state, ptr %args, i64 %nargs, "
            "ptr %kwnames) #0 {")
    return "\n".join([head, "entry:", *g.lines, "}"])


MISMATCH = ["mismatch:",
            "  %fbp = getelementptr i8, ptr %state, i64 8", "  %fb = load ptr, ptr %fbp",
            "  %slow = call ptr @zy.py.PyObject_Vectorcall(ptr %fb, ptr %args, i64 %nargs, "
            "ptr %kwnames)", "  ret ptr %slow"]


def dispatch_ir() -> str:
    """The trampoline (the one builtin per JitFunction) and the entry used before any fast
    specialization exists (it always takes the general path)."""
    return "\n".join([
        "declare ptr @zy.py.PyCapsule_GetPointer(ptr, ptr)",
        "declare ptr @zy.py.PyObject_Vectorcall(ptr, ptr, i64, ptr)",
        "define ptr @zy.trampoline(ptr %cap, ptr %args, i64 %nargs, ptr %kwnames) {",
        "  %cell = call ptr @zy.py.PyCapsule_GetPointer(ptr %cap, ptr null)",
        "  %state = load ptr, ptr %cell", "  %f = load ptr, ptr %state",
        "  %r = musttail call ptr %f(ptr %state, ptr %args, i64 %nargs, ptr %kwnames)",
        "  ret ptr %r", "}",
        "define ptr @zy.general(ptr %state, ptr %args, i64 %nargs, ptr %kwnames) {", "entry:",
        "  br label %mismatch", *MISMATCH, "}"])


def _guards(g: _Gen, captures, held: list) -> list:
    """Check every capture (see the module docstring); the global arrays' (data, bytes, layout)
    for the overlap check.  ``held`` gets each global array's (object, type, struct)."""
    if not captures:
        return []
    table = g.field("%state", 24, "ptr")
    outer, slot = [], 0
    for j, (kind, t) in enumerate(captures):
        ns = g.field(table, 24 * j, "ptr")
        if kind == "dict":
            key = g.field(table, 24 * j + 8, "ptr")
            obj = g.v(f"call ptr @zy.py.PyDict_GetItem(ptr {ns}, ptr {key})")
        else:
            obj = g.field(ns, 16, "ptr")  # PyCellObject.ob_ref
        if t is None:
            g.check(g.v(f"icmp eq ptr {obj}, {g.field(table, 24 * j + 16, 'ptr')}"))
            continue
        g.check(g.v(f"icmp ne ptr {obj}, null"))
        found: list = []
        held.append((obj, t, _unbox_array(g, obj, g.field(obj, 8, "ptr"), t, found)))
        outer.append(found[0])
        at = g.v(f"getelementptr ptr, ptr %outer, i64 {slot}")
        g.lines.append(f"  store ptr {obj}, ptr {at}")
        slot += 1
    return outer


def _check_apart(g: _Gen, writes, outer) -> None:
    """Global arrays must share no memory with arguments the code writes (the general path
    refuses such a call); only contiguous ones are checked here."""
    if any(layout != "C" for _, _, layout in writes + outer):
        g.lines += ["  br label %mismatch", f"dead{g.n}:"]
        return
    for w in writes:
        for o in outer:
            _apart(g, w, o)


def _apart(g: _Gen, a, b) -> None:
    (pa, na, _), (pb, nb, _) = a, b
    a0, b0 = g.v(f"ptrtoint ptr {pa} to i64"), g.v(f"ptrtoint ptr {pb} to i64")
    a_before = g.v(f"icmp ule i64 {g.v(f'add i64 {a0}, {na}')}, {b0}")
    b_before = g.v(f"icmp ule i64 {g.v(f'add i64 {b0}, {nb}')}, {a0}")
    g.check(g.v(f"or i1 {a_before}, {b_before}"))


def _unbox(g: _Gen, obj: str, t, arrays) -> str:
    ty = g.field(obj, 8, "ptr")
    if isinstance(t, ArrayType):
        return _unbox_array(g, obj, ty, t, arrays)
    if t == F64:
        g.check(g.v(f"icmp eq ptr {ty}, @zy.py.float"))
        return g.field(obj, 16, "double")
    if t == I1:
        is_true = g.v(f"icmp eq ptr {obj}, @zy.py.True")
        is_false = g.v(f"icmp eq ptr {obj}, @zy.py.False")
        g.check(g.v(f"or i1 {is_true}, {is_false}"))
        return is_true
    g.check(g.v(f"icmp eq ptr {ty}, @zy.py.int"))
    val = g.v(f"call i64 @zy.py.PyLong_AsLongLong(ptr {obj})")
    g.n += 1
    n = g.n
    g.lines += [f"  %m1_{n} = icmp eq i64 {val}, -1",
                f"  br i1 %m1_{n}, label %e{n}, label %c{n}",
                f"e{n}:", f"  %occ{n} = call ptr @zy.py.PyErr_Occurred()",
                f"  %bad{n} = icmp ne ptr %occ{n}, null",
                f"  br i1 %bad{n}, label %clr{n}, label %c{n}",
                f"clr{n}:", "  call void @zy.py.PyErr_Clear()", "  br label %mismatch",
                f"c{n}:"]
    return val


def _unbox_array(g: _Gen, obj: str, ty: str, t: ArrayType, arrays) -> str:
    g.check(g.v(f"icmp eq ptr {ty}, @zy.py.ndarray"))
    descr = g.field(obj, PYARRAY_DESCR, "ptr")
    g.check(g.v(f"icmp eq ptr {descr}, @zy.py.dtype.{t.dtype.np_dtype.name}"))
    g.check(g.v(f"icmp eq i32 {g.field(obj, PYARRAY_ND, 'i32')}, {t.ndim}"))
    flags = g.field(obj, PYARRAY_FLAGS, "i32")
    contig = g.v(f"icmp ne i32 {g.v(f'and i32 {flags}, {NPY_C_CONTIGUOUS}')}, 0")
    g.check(contig if t.layout == "C" else g.v(f"xor i1 {contig}, true"))
    data = g.field(obj, PYARRAY_DATA, "ptr")
    dims = g.field(obj, PYARRAY_DIMS, "ptr")
    strd = g.field(obj, PYARRAY_STRIDES, "ptr")
    st = array_struct(t.ndim)
    cur = g.v(f"insertvalue {st} poison, ptr null, 0")
    cur = g.v(f"insertvalue {st} {cur}, ptr {data}, 1")
    size = "1"
    for k in range(t.ndim):
        d = g.v(f"load i64, ptr {g.v(f'getelementptr i64, ptr {dims}, i64 {k}')}")
        cur = g.v(f"insertvalue {st} {cur}, i64 {d}, 2, {k}")
        bs = g.v(f"load i64, ptr {g.v(f'getelementptr i64, ptr {strd}, i64 {k}')}")
        cur = g.v(f"insertvalue {st} {cur}, i64 {g.v(f'sdiv exact i64 {bs}, {t.dtype.nbytes}')}, "
                  f"3, {k}")
        size = g.v(f"mul i64 {size}, {d}")
    arrays.append((data, g.v(f"mul i64 {size}, {t.dtype.nbytes}"), t.layout))
    return cur


def _check_disjoint(g: _Gen, arrays) -> None:
    """Specializations compiled for non-overlapping arrays accept only contiguous, disjoint ones
    here (anything else takes the general path, which checks overlap exactly)."""
    if any(layout != "C" for _, _, layout in arrays):
        g.lines.append("  br label %mismatch")
        g.lines.append(f"dead{g.n}:")
        return
    for i in range(len(arrays)):
        for j in range(i + 1, len(arrays)):
            _apart(g, arrays[i], arrays[j])
