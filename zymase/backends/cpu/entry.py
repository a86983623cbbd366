"""The C-ABI wrapper around an entry function, called from Python through ctypes.

    i32 @zy.entry.<f>(ptr %ctx, ptr %rets, <flat arguments>)

Arguments: float scalars come as ``double``, ints and bools as ``i64``, complex as two ``double``,
arrays as the ``PyArrayObject*`` itself (data, shape and byte strides are read from the struct,
whose layout NumPy keeps stable).  Results go into 8-byte slots of ``rets``: scalars widened to
double/i64, complex as two slots, arrays as ``base, data, shape..., strides...`` (element strides).
"""

from __future__ import annotations

from ...ir.core import Func
from ...ir.types import ArrayType
from ..llvm.emit import result_type, symbol
from ..llvm.types import PYARRAY_DATA, PYARRAY_DIMS, PYARRAY_STRIDES, array_struct, ltype


def c_params(t) -> list[str]:
    """The C parameter types an IR parameter arrives as."""
    if isinstance(t, ArrayType):
        return ["ptr"]
    if t.is_complex:
        return ["double", "double"]
    return ["double"] if t.is_float else ["i64"]


def entry_ir(func: Func) -> str:
    lines, n = [], [0]

    def v(rhs):
        n[0] += 1
        lines.append(f"  %t{n[0]} = {rhs}")
        return f"%t{n[0]}"

    params, args = ["ptr %ctx", "ptr %rets"], []
    for k, a in enumerate(func.args):
        names = [f"%p{k}_{j}" for j in range(len(c_params(a.type)))]
        params += [f"{ct} {nm}" for ct, nm in zip(c_params(a.type), names)]
        args.append(f"{ltype(a.type)} {_convert_in(v, a.type, names)}")
    rt = result_type(func)
    r = v(f"call {rt} {symbol(func)}(ptr %ctx{''.join(', ' + x for x in args)})")
    st = v(f"extractvalue {rt} {r}, 0")
    bad = v(f"icmp ne i32 {st}, 0")
    lines.append(f"  br i1 {bad}, label %fail, label %ok")
    lines.append("ok:")
    slot = 0
    for k, t in enumerate(func.result_types):
        val = v(f"extractvalue {rt} {r}, {k + 1}")
        slot = _store_out(v, lines, t, val, slot)
    lines += ["  ret i32 0", "fail:", "  ret i32 1"]
    head = f"define i32 @zy.entry.{func.sym_name}({', '.join(params)}) #0 {{"
    return "\n".join([head, "entry:", *lines, "}"])


def _convert_in(v, t, names):
    if isinstance(t, ArrayType):
        return _array_in(v, t, names[0])
    if t.is_complex:
        ft = ltype(t.real_type)
        parts = names if t.bits == 128 else [v(f"fptrunc double {x} to float") for x in names]
        x = v(f"insertvalue {ltype(t)} poison, {ft} {parts[0]}, 0")
        return v(f"insertvalue {ltype(t)} {x}, {ft} {parts[1]}, 1")
    (name,) = names
    if t.is_float:
        return name if t.bits == 64 else v(f"fptrunc double {name} to float")
    if t.is_bool:
        return v(f"icmp ne i64 {name}, 0")
    return name if t.bits == 64 else v(f"trunc i64 {name} to {ltype(t)}")


def _array_in(v, t: ArrayType, obj):
    st = array_struct(t.ndim)
    data = v(f"load ptr, ptr {v(f'getelementptr i8, ptr {obj}, i64 {PYARRAY_DATA}')}")
    dims = v(f"load ptr, ptr {v(f'getelementptr i8, ptr {obj}, i64 {PYARRAY_DIMS}')}")
    strd = v(f"load ptr, ptr {v(f'getelementptr i8, ptr {obj}, i64 {PYARRAY_STRIDES}')}")
    cur = v(f"insertvalue {st} poison, ptr null, 0")
    cur = v(f"insertvalue {st} {cur}, ptr {data}, 1")
    for k in range(t.ndim):
        d = v(f"load i64, ptr {v(f'getelementptr i64, ptr {dims}, i64 {k}')}")
        cur = v(f"insertvalue {st} {cur}, i64 {d}, 2, {k}")
        bs = v(f"load i64, ptr {v(f'getelementptr i64, ptr {strd}, i64 {k}')}")
        es = v(f"sdiv exact i64 {bs}, {t.dtype.nbytes}")
        cur = v(f"insertvalue {st} {cur}, i64 {es}, 3, {k}")
    return cur


def _store_out(v, lines, t, val, slot):
    def put(ty, x):
        nonlocal slot
        p = v(f"getelementptr i64, ptr %rets, i64 {slot}")
        lines.append(f"  store {ty} {x}, ptr {p}")
        slot += 1

    if isinstance(t, ArrayType):
        st = array_struct(t.ndim)
        put("ptr", v(f"extractvalue {st} {val}, 0"))
        put("ptr", v(f"extractvalue {st} {val}, 1"))
        for f in (2, 3):
            for k in range(t.ndim):
                put("i64", v(f"extractvalue {st} {val}, {f}, {k}"))
    elif t.is_complex:
        for k in (0, 1):
            x = v(f"extractvalue {ltype(t)} {val}, {k}")
            put("double", x if t.bits == 128 else v(f"fpext float {x} to double"))
    elif t.is_float:
        put("double", val if t.bits == 64 else v(f"fpext float {val} to double"))
    elif t.is_bool:
        put("i64", v(f"zext i1 {val} to i64"))
    else:
        ext = "zext" if t.unsigned else "sext"
        put("i64", val if t.bits == 64 else v(f"{ext} {ltype(t)} {val} to i64"))
    return slot


def result_slots(t) -> int:
    if isinstance(t, ArrayType):
        return 2 + 2 * t.ndim
    return 2 if t.is_complex else 1
