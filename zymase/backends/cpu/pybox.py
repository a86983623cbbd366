"""Boxing the fast entry's results (``pyentry.py``) into exactly what the general path
(``abi.py: EntryPoint._decode``) makes of them.

* float / int / bool: a Python float, int or bool (several results: a tuple).
* an array in fresh memory (its struct's base is not null, its size not zero): a NumPy array
  made in C (``PyArray_NewFromDescr`` with byte strides) whose base is a capsule that frees
  the memory when the array dies.  The fast entry has taken the memory out of the call's arena
  (``zy.arena_keep``) before the arena is freed.
* a view (base null, size not zero) whose bytes lie within an array argument or global array
  (the first in that order, as ``abi._argument_containing`` picks): a writeable NumPy array on
  the same bytes whose base is that array.
* anything else (a constant, a zero-size array, two results sharing one fresh buffer): the
  results are stored into 8-byte slots as the C-ABI entry stores them (``entry.py``) and
  ``boxer(slots address, *arguments, *global arrays)`` (the state's fifth field) decodes them
  with the general path's code.

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
from ...ir.types import DTYPE_NAMES, F64, I1, I64, ArrayType
from ..llvm.types import array_struct
from .entry import _store_out, result_slots

NP_API = {"PyArray_NewFromDescr": 94, "PyArray_SetBaseObject": 282}  # __multiarray_api.h
BOX_DTYPES = DTYPE_NAMES
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
define internal ptr @zy.box_array(ptr %descr, i32 %nd, ptr %dims, ptr %strides, ptr %data,
                                  ptr %base, ptr %owner) {{
entry:
  %view = icmp eq ptr %base, null
  br i1 %view, label %onview, label %fresh
onview:                                   ; a view: the argument or global that holds its bytes
  call void @zy.py.Py_IncRef(ptr %owner)
  br label %make
fresh:                                    ; fresh memory: a capsule that frees it owns it
  %cap = call ptr @zy.py.PyCapsule_New(ptr %base, ptr null, ptr @zy.py.free_capsule)
  %nocap = icmp eq ptr %cap, null
  br i1 %nocap, label %nomem, label %make
nomem:
  call void @free(ptr %base)
  ret ptr null
make:
  %own = phi ptr [%owner, %onview], [%cap, %fresh]  ; (a reference of ours)
  call void @zy.py.Py_IncRef(ptr %descr)  ; (PyArray_NewFromDescr steals it)
  %arr = call ptr @zy.np.PyArray_NewFromDescr(ptr @zy.py.ndarray, ptr %descr, i32 %nd,
      ptr %dims, ptr %strides, ptr %data, i32 {NPY_ARRAY_WRITEABLE}, ptr null)
  %noarr = icmp eq ptr %arr, null
  br i1 %noarr, label %drop, label %setbase
drop:
  call void @zy.py.Py_DecRef(ptr %own)  ; (a capsule frees the memory)
  ret ptr null
setbase:
  %rc = call i32 @zy.np.PyArray_SetBaseObject(ptr %arr, ptr %own)  ; (steals it)
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


def box(g, func: Func, rt: str, r: str, objs: list[str], owners: list, held: list[str]) -> None:
    """Return the boxed results.  ``objs``: the Python objects the general path would search
    for a view's owner (arguments, then global arrays); ``owners``: (object, type, struct) of
    the arrays among them; ``held``: references to drop before returning."""
    vals = [g.v(f"extractvalue {rt} {r}, {k + 1}") for k in range(len(func.result_types))]
    arrays = [(t, v) for t, v in zip(func.result_types, vals) if isinstance(t, ArrayType)]
    found = {}
    if arrays:
        found = {v: _owner(g, t, v, owners) for t, v in arrays}
        g.n += 1
        cbox, pybox = f"cbox{g.n}", f"pybox{g.n}"
        ok = _boxable_here(g, arrays, found)
        g.lines.append(f"  br i1 {ok}, label %{cbox}, label %{pybox}")
        g.lines.append(f"{pybox}:")
        _box_in_python(g, func, vals, objs, held)
        g.lines.append(f"{cbox}:")
    if not vals:
        g.lines.append("  call void @zy.py.Py_IncRef(ptr @zy.py.None)")
        _ret(g, "@zy.py.None", held)
        return
    if len(vals) == 1:
        _ret(g, _box_one(g, func.result_types[0], vals[0], found), held)
        return
    tup = g.v(f"call ptr @zy.py.PyTuple_New(i64 {len(vals)})")
    bad = "false"
    for k, (t, val) in enumerate(zip(func.result_types, vals)):
        item = _box_one(g, t, val, found)
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


def _boxable_here(g, arrays, found) -> str:
    """Whether every returned array has elements and either fresh memory of its own or an
    owner among the arguments and global arrays."""
    ok, bases = "true", []
    for t, val in arrays:
        st = array_struct(t.ndim)
        base = g.v(f"extractvalue {st} {val}, 0")
        fresh = g.v(f"icmp ne ptr {base}, null")
        has_owner = g.v(f"icmp ne ptr {found[val]}, null")
        ok = g.v(f"and i1 {ok}, {g.v(f'or i1 {fresh}, {has_owner}')}")
        ok = g.v(f"and i1 {ok}, {_nonempty(g, t, val)}")
        for other in bases:
            differ = g.v(f"or i1 {g.v(f'icmp ne ptr {base}, {other}')}, "
                         f"{g.v(f'icmp eq ptr {base}, null')}")
            ok = g.v(f"and i1 {ok}, {differ}")
        bases.append(base)
    return ok


def _nonempty(g, t: ArrayType, val: str) -> str:
    ok = "true"
    for k in range(t.ndim):
        d = g.v(f"extractvalue {array_struct(t.ndim)} {val}, 2, {k}")
        ok = g.v(f"and i1 {ok}, {g.v(f'icmp ne i64 {d}, 0')}")
    return ok


def _byte_bounds(g, t: ArrayType, val: str) -> tuple[str, str]:
    """[lo, hi) of the bytes an array struct reaches (``np.byte_bounds``)."""
    st = array_struct(t.ndim)
    lo = hi = g.v(f"ptrtoint ptr {g.v(f'extractvalue {st} {val}, 1')} to i64")
    for k in range(t.ndim):
        d = g.v(f"extractvalue {st} {val}, 2, {k}")
        s = g.v(f"extractvalue {st} {val}, 3, {k}")
        steps = g.v(f"mul i64 {g.v(f'sub i64 {d}, 1')}, {s}")
        ext = g.v(f"mul i64 {steps}, {t.dtype.nbytes}")
        neg = g.v(f"icmp slt i64 {ext}, 0")
        lo = g.v(f"add i64 {lo}, {g.v(f'select i1 {neg}, i64 {ext}, i64 0')}")
        hi = g.v(f"add i64 {hi}, {g.v(f'select i1 {neg}, i64 0, i64 {ext}')}")
    return lo, g.v(f"add i64 {hi}, {t.dtype.nbytes}")


def _owner(g, t: ArrayType, val: str, owners) -> str:
    """The first array among ``owners`` with elements whose bytes hold all of ``val``'s, or
    null (only used for a view: base null, elements)."""
    if not owners:
        return "null"
    lo, hi = _byte_bounds(g, t, val)
    found = "null"
    for obj, ot, oval in reversed(owners):  # (the first match wins)
        alo, ahi = _byte_bounds(g, ot, oval)
        inside = g.v(f"and i1 {g.v(f'icmp ule i64 {alo}, {lo}')}, "
                     f"{g.v(f'icmp ule i64 {hi}, {ahi}')}")
        inside = g.v(f"and i1 {inside}, {_nonempty(g, ot, oval)}")
        found = g.v(f"select i1 {inside}, ptr {obj}, ptr {found}")
    return found


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


def _box_one(g, t, val: str, found) -> str:
    if isinstance(t, ArrayType):
        return _box_array(g, t, val, found[val])
    if t == F64:
        return g.v(f"call ptr @zy.py.PyFloat_FromDouble(double {val})")
    if t == I64:
        return g.v(f"call ptr @zy.py.PyLong_FromLongLong(i64 {val})")
    obj = g.v(f"select i1 {val}, ptr @zy.py.True, ptr @zy.py.False")
    g.lines.append(f"  call void @zy.py.Py_IncRef(ptr {obj})")
    return obj


def _box_array(g, t: ArrayType, val: str, owner: str) -> str:
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
    return g.v(f"call ptr @zy.box_array(ptr @zy.py.dtype.{t.dtype.np_dtype.name}, "
               f"i32 {t.ndim}, ptr {dims}, ptr {strides}, ptr {data}, ptr {base}, "
               f"ptr {owner})")
