"""Boxing the fast entry's results (``pyentry.py``) into exactly what the general path
(``abi.py: EntryPoint._decode``) makes of them.

* float / int / bool: a Python float, int or bool (several results: a tuple).
* an array in fresh memory (its struct's base is not null, its size not zero): a NumPy array
  made in C (``PyArray_NewFromDescr`` with byte strides) whose base is a capsule that frees
  the memory when the array dies.  The fast entry has taken the memory out of the call's arena
  (``zy.arena_keep``) before the arena is freed.
* anything else (a view of an argument or of a global array, a constant, a zero-size array,
  two results sharing one buffer): the results are stored into 8-byte slots as the C-ABI entry
  stores them (``entry.py``) and ``boxer(slots address, *arguments, *global arrays)`` (the
  state's fifth field) decodes them with the general path's code.

NumPy's C functions are read from its API table (the capsule ``_ARRAY_API``; the indices are
part of NumPy's ABI, the same in NumPy 1 and 2) and bound as symbols like the CPython API, so
cached object code works in another process.  The capsule destructor lives in a module compiled
once per process (``FREE_CAPSULE_IR``, see ``engine.py``): arrays may outlive the code that
made them.
"""

from __future__ import annotations

import ctypes

import numpy as np

from ...ir.core import Func
from ...ir.types import F64, I1, I64, ArrayType
from ..llvm.types import array_struct
from .entry import _store_out, result_slots

NP_API = {"PyArray_NewFromDescr": 94, "PyArray_SetBaseObject": 282}  # __multiarray_api.h
BOX_DTYPES = ("float64", "float32", "int64", "int32", "bool", "complex128", "complex64")
NPY_ARRAY_WRITEABLE = 0x0400
STATE_BOXER = 32  # offset of ``boxer`` in dispatch.State

FREE_CAPSULE_IR = """
declare ptr @zy.py.PyCapsule_GetPointer(ptr, ptr)
declare void @free(ptr)
define void @zy.free_capsule(ptr %cap) {
  %p = call ptr @zy.py.PyCapsule_GetPointer(ptr %cap, ptr null)
  call void @free(ptr %p)
  ret void
}
"""

BOX_FRESH_IR = f"""
define internal ptr @zy.box_fresh(ptr %descr, i32 %nd, ptr %dims, ptr %strides, ptr %data,
                                  ptr %base) {{
entry:
  %cap = call ptr @zy.py.PyCapsule_New(ptr %base, ptr null, ptr @zy.py.free_capsule)
  %nocap = icmp eq ptr %cap, null
  br i1 %nocap, label %nomem, label %make
nomem:
  call void @free(ptr %base)
  ret ptr null
make:
  call void @zy.py.Py_IncRef(ptr %descr)  ; (PyArray_NewFromDescr steals it)
  %arr = call ptr @zy.np.PyArray_NewFromDescr(ptr @zy.py.ndarray, ptr %descr, i32 %nd,
      ptr %dims, ptr %strides, ptr %data, i32 {NPY_ARRAY_WRITEABLE}, ptr null)
  %noarr = icmp eq ptr %arr, null
  br i1 %noarr, label %drop, label %own
drop:
  call void @zy.py.Py_DecRef(ptr %cap)  ; (frees the memory)
  ret ptr null
own:
  %rc = call i32 @zy.np.PyArray_SetBaseObject(ptr %arr, ptr %cap)  ; (steals the capsule)
  %bad = icmp ne i32 %rc, 0
  br i1 %bad, label %unown, label %done
unown:
  call void @zy.py.Py_DecRef(ptr %arr)
  ret ptr null
done:
  ret ptr %arr
}}
"""


def boxable(t) -> bool:
    """Whether the fast entry can return a result of this IR type."""
    if isinstance(t, ArrayType):
        return t.dtype.np_dtype.name in BOX_DTYPES
    return t in (F64, I64, I1)


def numpy_symbols() -> dict[str, int]:
    """Addresses of the NumPy C-API functions the boxing code calls."""
    core = getattr(np, "_core", None) or np.core  # NumPy 2 / 1
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    table = (ctypes.c_void_p * (max(NP_API.values()) + 1)).from_address(
        get(core.multiarray._ARRAY_API, None))
    return {f"zy.np.{name}": table[k] for name, k in NP_API.items()}


def declarations() -> str:
    return "\n".join([
        "declare ptr @zy.np.PyArray_NewFromDescr(ptr, ptr, i32, ptr, ptr, ptr, i32, ptr)",
        "declare i32 @zy.np.PyArray_SetBaseObject(ptr, ptr)",
        "declare ptr @zy.py.PyCapsule_New(ptr, ptr, ptr)",
        "@zy.py.free_capsule = external global i8", BOX_FRESH_IR])


def keep_fresh(g, func: Func, rt: str, r: str, ok: str) -> None:
    """Take every returned array's fresh memory out of the arena (when the body did not raise),
    before ``zy.arena_free_all``."""
    for k, t in enumerate(func.result_types):
        if isinstance(t, ArrayType):
            base = g.v(f"extractvalue {rt} {r}, {k + 1}, 0")
            g.lines.append(f"  call void @zy.arena_keep(ptr %ctx, "
                           f"ptr {g.v(f'select i1 {ok}, ptr {base}, ptr null')})")


def box(g, func: Func, rt: str, r: str, objs: list[str], held: list[str]) -> None:
    """Return the boxed results (``objs``: the Python objects the general path would search
    for a view's owner: arguments, then global arrays; ``held``: references to drop first)."""
    vals = [g.v(f"extractvalue {rt} {r}, {k + 1}") for k in range(len(func.result_types))]
    arrays = [(t, v) for t, v in zip(func.result_types, vals) if isinstance(t, ArrayType)]
    if arrays:
        g.n += 1
        cbox, pybox = f"cbox{g.n}", f"pybox{g.n}"
        g.lines.append(f"  br i1 {_all_fresh(g, arrays)}, label %{cbox}, label %{pybox}")
        g.lines.append(f"{pybox}:")
        _box_in_python(g, func, vals, objs, held)
        g.lines.append(f"{cbox}:")
    if not vals:
        g.lines.append("  call void @zy.py.Py_IncRef(ptr @zy.py.None)")
        _ret(g, "@zy.py.None", held)
        return
    if len(vals) == 1:
        _ret(g, _box_one(g, func.result_types[0], vals[0]), held)
        return
    tup = g.v(f"call ptr @zy.py.PyTuple_New(i64 {len(vals)})")
    bad = "false"
    for k, (t, val) in enumerate(zip(func.result_types, vals)):
        item = _box_one(g, t, val)
        bad = g.v(f"or i1 {bad}, {g.v(f'icmp eq ptr {item}, null')}")
        g.v(f"call i32 @zy.py.PyTuple_SetItem(ptr {tup}, i64 {k}, ptr {item})")  # (steals it)
    g.n += 1
    g.lines += [f"  br i1 {bad}, label %tfail{g.n}, label %tok{g.n}", f"tfail{g.n}:",
                f"  call void @zy.py.Py_DecRef(ptr {tup})"]
    _ret(g, "null", held)
    g.lines.append(f"tok{g.n}:")
    _ret(g, tup, held)


def _ret(g, val: str, held: list[str]) -> None:
    g.lines += [f"  call void @zy.py.Py_DecRef(ptr {obj})" for obj in held]
    g.lines.append(f"  ret ptr {val}")


def _all_fresh(g, arrays) -> str:
    """Whether every returned array has fresh memory of its own and elements."""
    ok, bases = "true", []
    for t, val in arrays:
        st = array_struct(t.ndim)
        base = g.v(f"extractvalue {st} {val}, 0")
        ok = g.v(f"and i1 {ok}, {g.v(f'icmp ne ptr {base}, null')}")
        for k in range(t.ndim):
            d = g.v(f"extractvalue {st} {val}, 2, {k}")
            ok = g.v(f"and i1 {ok}, {g.v(f'icmp ne i64 {d}, 0')}")
        for other in bases:
            ok = g.v(f"and i1 {ok}, {g.v(f'icmp ne ptr {base}, {other}')}")
        bases.append(base)
    return ok


def _box_in_python(g, func: Func, vals, objs, held) -> None:
    nslots = max(1, sum(result_slots(t) for t in func.result_types))
    g.lines.append(f"  %rets = alloca [{nslots} x i64], align 8")
    slot = 0
    for t, val in zip(func.result_types, vals):
        slot = _store_out(g.v, g.lines, t, val, slot)
    items = g.v(f"alloca [{1 + len(objs)} x ptr], align 8")
    addr = g.v(f"call ptr @zy.py.PyLong_FromLongLong(i64 {g.v('ptrtoint ptr %rets to i64')})")
    for k, obj in enumerate([addr, *objs]):
        g.lines.append(f"  store ptr {obj}, ptr {g.v(f'getelementptr ptr, ptr {items}, i64 {k}')}")
    boxer = g.field("%state", STATE_BOXER, "ptr")
    out = g.v(f"call ptr @zy.py.PyObject_Vectorcall(ptr {boxer}, ptr {items}, "
              f"i64 {1 + len(objs)}, ptr null)")
    g.lines.append(f"  call void @zy.py.Py_DecRef(ptr {addr})")
    _ret(g, out, held)


def _box_one(g, t, val: str) -> str:
    if isinstance(t, ArrayType):
        return _box_fresh(g, t, val)
    if t == F64:
        return g.v(f"call ptr @zy.py.PyFloat_FromDouble(double {val})")
    if t == I64:
        return g.v(f"call ptr @zy.py.PyLong_FromLongLong(i64 {val})")
    obj = g.v(f"select i1 {val}, ptr @zy.py.True, ptr @zy.py.False")
    g.lines.append(f"  call void @zy.py.Py_IncRef(ptr {obj})")
    return obj


def _box_fresh(g, t: ArrayType, val: str) -> str:
    st = array_struct(t.ndim)
    n = max(1, t.ndim)
    dims, strides = g.v(f"alloca [{n} x i64], align 8"), g.v(f"alloca [{n} x i64], align 8")
    for k in range(t.ndim):
        d = g.v(f"extractvalue {st} {val}, 2, {k}")
        g.lines.append(f"  store i64 {d}, ptr {g.v(f'getelementptr i64, ptr {dims}, i64 {k}')}")
        s = g.v(f"mul i64 {g.v(f'extractvalue {st} {val}, 3, {k}')}, {t.dtype.nbytes}")
        at = g.v(f"getelementptr i64, ptr {strides}, i64 {k}")
        g.lines.append(f"  store i64 {s}, ptr {at}")
    base = g.v(f"extractvalue {st} {val}, 0")
    data = g.v(f"extractvalue {st} {val}, 1")
    return g.v(f"call ptr @zy.box_fresh(ptr @zy.py.dtype.{t.dtype.np_dtype.name}, "
               f"i32 {t.ndim}, ptr {dims}, ptr {strides}, ptr {data}, ptr {base})")
