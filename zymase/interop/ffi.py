"""XLA FFI handlers for compiled zymase entries: XLA calls zymase's machine code directly.

``ffi_handler(entry, plan)`` writes, in LLVM IR, a function of XLA's typed FFI
(``XLA_FFI_Error* handler(XLA_FFI_CallFrame*)``, ``xla/ffi/api/c_api.h``, API 0.3), compiles it
with llvmlite and returns a ``PyCapsule`` for ``jax.ffi.register_ffi_target``.  The handler

* answers XLA's metadata query (the API version; XLA asks when the target is registered);
* checks the buffers it is given (count, dtype, rank) against the ``Plan``;
* passes each IR argument of the entry: an input buffer as an array (row-major strides), a
  0-d input as a number, a constant of the plan, or an output buffer set to zero (a shadow that
  reverse mode adds into); an input the code writes is copied first (XLA's buffers are
  immutable);
* calls the entry's C wrapper (``backends/cpu/entry.py``), checks each returned array's shape
  against its output buffer and copies it there (numbers are stored into 0-d outputs), and
  frees what the call allocated;
* turns a run-time error of the code (an index out of range, ...) into an XLA error whose
  message is zymase's, with the user's file and line.

Buffer and struct offsets are those of x86-64 and AArch64 (LP64).
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field

import numpy as np

from ..backends.cpu.engine import compile_ir
from ..backends.llvm.types import (
    CTX_BYTES,
    CTX_GLOBALS,
    PYARRAY_DATA,
    PYARRAY_DIMS,
    PYARRAY_STRIDES,
)
from ..ir.types import ArrayType

# XLA_FFI_CallFrame / XLA_FFI_Buffer / XLA_FFI_Api offsets (bytes)
FRAME_EXT, FRAME_API, FRAME_STAGE = 8, 16, 32
ARGS_SIZE, ARGS_PTRS, RETS_SIZE, RETS_PTRS = 56, 72, 96, 112
BUF_DTYPE, BUF_DATA, BUF_RANK, BUF_DIMS = 16, 24, 32, 40
EXT_TYPE, EXT_METADATA, METAEXT_METADATA = 8, 1, 24
API_ERROR_CREATE = 48
STAGE_EXECUTE = 3
API_MAJOR, API_MINOR = 0, 3
ERR_INVALID_ARGUMENT, ERR_INTERNAL = 3, 13
XLA_DTYPES = {"bool": 1, "int32": 4, "int64": 5, "float32": 11, "float64": 12}


@dataclass
class Plan:
    """How the FFI buffers meet the entry's IR arguments and results.

    ``inputs`` / ``outputs``: (dtype name, rank) of each FFI operand / result buffer.
    ``args``: per IR argument, ("in", i), ("const", value) or ("zero", j) (output buffer j,
    zeroed, passed as the argument).  ``results``: per IR result, ("out", j) or None (dropped).
    ``written``: IR argument positions the code writes (inputs among them are copied)."""

    inputs: list
    outputs: list
    args: list
    results: list
    written: tuple = ()
    globals_: list = field(default_factory=list)


class Handler:
    """A compiled handler: ``capsule`` for ``jax.ffi.register_ffi_target``; keeps the code and
    what it refers to alive."""

    def __init__(self, entry, plan: Plan, name: str):
        self.entry = entry  # keeps the zymase code alive
        self.globals_ = list(plan.globals_)
        self.table = (ctypes.c_void_p * max(1, len(self.globals_)))(*map(id, self.globals_))
        text = _handler_ir(entry, plan, name, ctypes.addressof(self.table) if self.globals_
                           else 0)
        self.compiled = compile_ir(text)
        address = self.compiled.address(name)
        new = ctypes.pythonapi.PyCapsule_New
        new.restype = ctypes.py_object
        new.argtypes = (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)
        self.capsule = new(address, None, None)


def entry_address(entry) -> int:
    """The address of an entry's C wrapper (``abi.EntryPoint.cfunc``)."""
    return ctypes.cast(entry.cfunc, ctypes.c_void_p).value


def _c_params(t) -> list[str]:
    if isinstance(t, ArrayType):
        return ["ptr"]
    if t.is_complex:
        return ["double", "double"]
    return ["double"] if t.is_float else ["i64"]


def _slots(t) -> int:
    if isinstance(t, ArrayType):
        return 2 + 2 * t.ndim
    return 2 if t.is_complex else 1


_ELEM = {"float64": "double", "float32": "float", "int64": "i64", "int32": "i32", "bool": "i8"}
_SIZE = {"float64": 8, "float32": 4, "int64": 8, "int32": 4, "bool": 1}


class _Writer:
    def __init__(self):
        self.lines: list[str] = []
        self.n = 0

    def tmp(self, rhs: str) -> str:
        self.n += 1
        self.lines.append(f"  %v{self.n} = {rhs}")
        return f"%v{self.n}"

    def emit(self, line: str) -> None:
        self.lines.append("  " + line)

    def label(self, name: str) -> None:
        self.lines.append(f"{name}:")

    def fresh(self, stem: str) -> str:
        self.n += 1
        return f"{stem}{self.n}"

    def field(self, base: str, offset: int, ty: str) -> str:
        p = self.tmp(f"getelementptr i8, ptr {base}, i64 {offset}")
        return self.tmp(f"load {ty}, ptr {p}")


def _cstring(name: str, text: str) -> str:
    data = text.encode()[:900] + b"\0"
    body = "".join(chr(c) if 32 <= c < 127 and c not in (34, 92) else f"\\{c:02X}" for c in data)
    return f'@{name} = private constant [{len(data)} x i8] c"{body}"'


def _handler_ir(entry, plan: Plan, name: str, globals_table: int) -> str:
    w = _Writer()
    head: list[str] = [
        "declare i32 @snprintf(ptr, i64, ptr, ...)",
        "declare ptr @malloc(i64)",
        "declare void @free(ptr)",
        "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)",
        "declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)",
        _cstring("zy.bad_call", "zymase: the XLA call does not match the compiled operation "
                 "(buffer %lld: dtype %lld, rank %lld; expected dtype %lld, rank %lld)"),
        _cstring("zy.bad_count", "zymase: the XLA call passes %lld operands and %lld results; "
                 "the compiled operation takes %lld and %lld"),
        _cstring("zy.bad_shape", "zymase: result %lld has %lld elements along axis %lld at run "
                 "time, but %lld were declared for it (give out_shapes= its real shape)"),
    ]
    errors = []
    for k, (kind, msg, loc) in enumerate(entry.errors):
        fmt, order = _printf(f"{loc}: {kind}: {msg}" if loc is not None else f"{kind}: {msg}")
        head.append(_cstring(f"zy.err{k}", fmt))
        errors.append(order)
    w.lines.append(f"define ptr @{name}(ptr %frame) {{")
    w.label("entry")
    msg = w.tmp("alloca [1024 x i8], align 8")
    ext = w.field("%frame", FRAME_EXT, "ptr")
    has_ext = w.tmp(f"icmp ne ptr {ext}, null")
    w.emit(f"br i1 {has_ext}, label %chk_ext, label %stage")
    w.label("chk_ext")
    et = w.field(ext, EXT_TYPE, "i32")
    is_meta = w.tmp(f"icmp eq i32 {et}, {EXT_METADATA}")
    w.emit(f"br i1 {is_meta}, label %meta, label %stage")
    w.label("meta")
    md = w.field(ext, METAEXT_METADATA, "ptr")
    for off, ty, val in ((8, "i64", 24), (16, "ptr", "null"), (24, "i32", API_MAJOR),
                         (28, "i32", API_MINOR), (32, "i32", 0)):
        p = w.tmp(f"getelementptr i8, ptr {md}, i64 {off}")
        w.emit(f"store {ty} {val}, ptr {p}")
    w.emit("ret ptr null")
    w.label("stage")
    stage = w.field("%frame", FRAME_STAGE, "i32")
    is_exec = w.tmp(f"icmp eq i32 {stage}, {STAGE_EXECUTE}")
    w.emit(f"br i1 {is_exec}, label %count, label %done_nothing")
    w.label("done_nothing")
    w.emit("ret ptr null")

    # operand and result counts
    w.label("count")
    nin = w.field("%frame", ARGS_SIZE, "i64")
    nout = w.field("%frame", RETS_SIZE, "i64")
    c1 = w.tmp(f"icmp eq i64 {nin}, {len(plan.inputs)}")
    c2 = w.tmp(f"icmp eq i64 {nout}, {len(plan.outputs)}")
    ok = w.tmp(f"and i1 {c1}, {c2}")
    w.emit(f"br i1 {ok}, label %buffers, label %bad_count")
    w.label("bad_count")
    w.emit(f"call i32 (ptr, i64, ptr, ...) @snprintf(ptr {msg}, i64 1024, ptr @zy.bad_count, "
           f"i64 {nin}, i64 {nout}, i64 {len(plan.inputs)}, i64 {len(plan.outputs)})")
    w.emit(f"br label %raise_{ERR_INVALID_ARGUMENT}")
    w.label("buffers")
    argv = w.field("%frame", ARGS_PTRS, "ptr")
    retv = w.field("%frame", RETS_PTRS, "ptr")

    bufs = {}  # ("in"|"out", i) -> (buffer ptr, data ptr, dims ptr, dtype, rank)
    checks = [("in", i, d, r) for i, (d, r) in enumerate(plan.inputs)] + \
        [("out", j, d, r) for j, (d, r) in enumerate(plan.outputs)]
    for side, i, dtype, rank in checks:
        table = argv if side == "in" else retv
        p = w.tmp(f"getelementptr ptr, ptr {table}, i64 {i}")
        b = w.tmp(f"load ptr, ptr {p}")
        dt = w.tmp(f"sext i32 {w.field(b, BUF_DTYPE, 'i32')} to i64")
        rk = w.field(b, BUF_RANK, "i64")
        good = w.tmp(f"and i1 {w.tmp(f'icmp eq i64 {dt}, {XLA_DTYPES[dtype]}')}, "
                     f"{w.tmp(f'icmp eq i64 {rk}, {rank}')}")
        nxt, bad = w.fresh("ok"), w.fresh("bad")
        w.emit(f"br i1 {good}, label %{nxt}, label %{bad}")
        w.label(bad)
        pos = i if side == "in" else len(plan.inputs) + i
        w.emit(f"call i32 (ptr, i64, ptr, ...) @snprintf(ptr {msg}, i64 1024, ptr @zy.bad_call, "
               f"i64 {pos}, i64 {dt}, i64 {rk}, i64 {XLA_DTYPES[dtype]}, i64 {rank})")
        w.emit(f"br label %raise_{ERR_INVALID_ARGUMENT}")
        w.label(nxt)
        bufs[(side, i)] = (b, w.field(b, BUF_DATA, "ptr"), w.field(b, BUF_DIMS, "ptr"), dtype,
                           rank)

    def count(key):
        _, _, dims, _, rank = bufs[key]
        n = "1"
        for k in range(rank):
            d = w.tmp(f"load i64, ptr {w.tmp(f'getelementptr i64, ptr {dims}, i64 {k}')}")
            n = w.tmp(f"mul i64 {n}, {d}")
        return n

    # the call's arguments
    ctx = w.tmp(f"alloca [{CTX_BYTES} x i8], align 8")
    w.emit(f"call void @llvm.memset.p0.i64(ptr {ctx}, i8 0, i64 {CTX_BYTES}, i1 false)")
    if globals_table:
        gp = w.tmp(f"getelementptr i8, ptr {ctx}, i64 {CTX_GLOBALS}")
        w.emit(f"store ptr inttoptr (i64 {globals_table} to ptr), ptr {gp}")
    copies = []
    c_args = []
    for pos, (t, how) in enumerate(zip(entry.arg_types, plan.args)):
        kind = how[0]
        if kind == "const":
            c_args += _const_args(t, how[1])
            continue
        key = ("in", how[1]) if kind == "in" else ("out", how[1])
        b, data, dims, dtype, rank = bufs[key]
        nbytes = w.tmp(f"mul i64 {count(key)}, {_SIZE[dtype]}")
        if kind == "zero":
            w.emit(f"call void @llvm.memset.p0.i64(ptr {data}, i8 0, i64 {nbytes}, i1 false)")
        elif pos in plan.written and isinstance(t, ArrayType):
            copy = w.tmp(f"call ptr @malloc(i64 {w.tmp(f'add i64 {nbytes}, 8')})")
            w.emit(f"call void @llvm.memcpy.p0.p0.i64(ptr {copy}, ptr {data}, i64 {nbytes}, "
                   "i1 false)")
            copies.append(copy)
            data = copy
        if isinstance(t, ArrayType):
            c_args.append(f"ptr {_fake_array(w, data, dims, rank, _SIZE[dtype])}")
        else:
            c_args.append(_load_number(w, t, data, dtype))
    nslots = max(1, sum(_slots(t) for t in entry.result_types))
    rets = w.tmp(f"alloca [{nslots} x i64], align 8")
    params = ", ".join(["ptr", "ptr"] + [p for t in entry.arg_types for p in _c_params(t)])
    fn = f"inttoptr (i64 {entry_address(entry)} to ptr)"
    st = w.tmp(f"call i32 ({params}) {fn}(ptr {ctx}, ptr {rets}"
               + "".join(", " + a for a in c_args) + ")")
    failed = w.tmp(f"icmp ne i32 {st}, 0")
    w.emit(f"br i1 {failed}, label %failed, label %results")

    # results: numbers into 0-d outputs, arrays copied into theirs
    w.label("results")
    slots, frees = [], []
    for t in entry.result_types:
        here = sum(_slots(u) for u in entry.result_types[:len(slots)])
        slots.append(here)
        if isinstance(t, ArrayType):
            frees.append(w.tmp("load ptr, ptr " +
                               w.tmp(f"getelementptr i64, ptr {rets}, i64 {here}")))
    for t, how, here in zip(entry.result_types, plan.results, slots):
        if how is None:
            continue
        if isinstance(t, ArrayType):
            _copy_out(w, t, rets, here, bufs[("out", how[1])], how[1], msg)
        else:
            _store_number(w, t, rets, here, bufs[("out", how[1])])
    _release(w, ctx, frees, copies)
    w.emit("ret ptr null")
    # a result whose shape is not the declared one: free as above, then raise
    w.label("shape_failed")
    _release(w, ctx, frees, copies)
    w.emit(f"br label %raise_{ERR_INVALID_ARGUMENT}")

    # errors
    w.label("failed")
    _free_arena(w, ctx)
    for c in copies:
        w.emit(f"call void @free(ptr {c})")
    err_id = w.field(ctx, 0, "i64")
    ea, eb = w.field(ctx, 8, "i64"), w.field(ctx, 16, "i64")
    cases = " ".join(f"i64 {k + 1}, label %err{k}" for k in range(len(errors)))
    w.emit(f"switch i64 {err_id}, label %raise_{ERR_INTERNAL} [ {cases} ]")
    for k, order in enumerate(errors):
        w.label(f"err{k}")
        vals = "".join(f", i64 {ea if x == 'a' else eb}" for x in order)
        w.emit(f"call i32 (ptr, i64, ptr, ...) @snprintf(ptr {msg}, i64 1024, ptr @zy.err{k}"
               f"{vals})")
        w.emit(f"br label %raise_{ERR_INVALID_ARGUMENT}")
    head.append(_cstring("zy.unknown", "zymase: the compiled code failed"))
    for code in (ERR_INVALID_ARGUMENT, ERR_INTERNAL):
        w.label(f"raise_{code}")
        if code == ERR_INTERNAL:
            w.emit(f"call i32 (ptr, i64, ptr, ...) @snprintf(ptr {msg}, i64 1024, "
                   "ptr @zy.unknown)")
        args = w.tmp("alloca [32 x i8], align 8")
        w.emit(f"store i64 28, ptr {args}")
        for off, ty, val in ((8, "ptr", "null"), (16, "ptr", msg), (24, "i32", code)):
            w.emit(f"store {ty} {val}, ptr {w.tmp(f'getelementptr i8, ptr {args}, i64 {off}')}")
        api = w.field("%frame", FRAME_API, "ptr")
        create = w.field(api, API_ERROR_CREATE, "ptr")
        w.emit(f"ret ptr {w.tmp(f'call ptr {create}(ptr {args})')}")
    w.lines.append("}")
    return "\n".join(head + [""] + w.lines) + "\n"


def _printf(text: str):
    """A printf format for a zymase error message (``{a}``, ``{b}``: its two payloads), and
    the order the payloads are passed in."""
    out, order, i = [], [], 0
    text = text.replace("%", "%%")
    while i < len(text):
        for key in ("a", "b"):
            if text.startswith("{" + key + "}", i):
                out.append("%lld")
                order.append(key)
                i += 3
                break
        else:
            out.append(text[i])
            i += 1
    return "".join(out), order


def _const_args(t, value) -> list[str]:
    if t.is_complex:
        c = complex(value)
        return [f"double {_double(c.real)}", f"double {_double(c.imag)}"]
    if t.is_float:
        return [f"double {_double(float(value))}"]
    return [f"i64 {int(value)}"]


def _double(x: float) -> str:
    return "0x" + np.float64(x).view(np.uint64).tobytes()[::-1].hex().upper()


def _fake_array(w: _Writer, data: str, dims: str, rank: int, item: int) -> str:
    """The three fields of a NumPy array object the entry wrapper reads (data, dims, byte
    strides), for a row-major buffer."""
    obj = w.tmp("alloca [64 x i8], align 8")
    strides = w.tmp(f"alloca [{max(1, rank)} x i64], align 8")
    acc = str(item)
    for k in reversed(range(rank)):
        w.emit(f"store i64 {acc}, ptr {w.tmp(f'getelementptr i64, ptr {strides}, i64 {k}')}")
        d = w.tmp(f"load i64, ptr {w.tmp(f'getelementptr i64, ptr {dims}, i64 {k}')}")
        acc = w.tmp(f"mul i64 {acc}, {d}")
    for off, val in ((PYARRAY_DATA, data), (PYARRAY_DIMS, dims), (PYARRAY_STRIDES, strides)):
        w.emit(f"store ptr {val}, ptr {w.tmp(f'getelementptr i8, ptr {obj}, i64 {off}')}")
    return obj


def _load_number(w: _Writer, t, data: str, dtype: str) -> str:
    v = w.tmp(f"load {_ELEM[dtype]}, ptr {data}")
    if dtype == "float64":
        return f"double {v}"
    if dtype == "float32":
        return f"double {w.tmp(f'fpext float {v} to double')}"
    if dtype == "bool":
        return f"i64 {w.tmp(f'zext i8 {v} to i64')}"
    if dtype == "int32":
        return f"i64 {w.tmp(f'sext i32 {v} to i64')}"
    return f"i64 {v}"


def _store_number(w: _Writer, t, rets: str, slot: int, buf) -> None:
    _, data, _, dtype, _ = buf
    p = w.tmp(f"getelementptr i64, ptr {rets}, i64 {slot}")
    if dtype in ("float64", "float32"):
        v = w.tmp(f"load double, ptr {p}")
        if dtype == "float32":
            v = w.tmp(f"fptrunc double {v} to float")
    else:
        v = w.tmp(f"load i64, ptr {p}")
        if dtype != "int64":
            v = w.tmp(f"trunc i64 {v} to {_ELEM[dtype]}")
    w.emit(f"store {_ELEM[dtype]} {v}, ptr {data}")


def _copy_out(w: _Writer, t: ArrayType, rets: str, slot: int, buf, j: int, msg: str) -> None:
    """Check the returned array's shape against output buffer ``buf``, then copy it there
    (element strides from the result slots; the output is row-major)."""
    _, out, dims, dtype, rank = buf
    item = _SIZE[dtype]
    src = w.tmp(f"load ptr, ptr {w.tmp(f'getelementptr i64, ptr {rets}, i64 {slot + 1}')}")
    shape, strides = [], []
    for k in range(rank):
        n = w.tmp(f"load i64, ptr {w.tmp(f'getelementptr i64, ptr {rets}, i64 {slot + 2 + k}')}")
        s = w.tmp("load i64, ptr " +
                  w.tmp(f"getelementptr i64, ptr {rets}, i64 {slot + 2 + rank + k}"))
        want = w.tmp(f"load i64, ptr {w.tmp(f'getelementptr i64, ptr {dims}, i64 {k}')}")
        same = w.tmp(f"icmp eq i64 {n}, {want}")
        nxt, bad = w.fresh("shape_ok"), w.fresh("shape_bad")
        w.emit(f"br i1 {same}, label %{nxt}, label %{bad}")
        w.label(bad)
        w.emit(f"call i32 (ptr, i64, ptr, ...) @snprintf(ptr {msg}, i64 1024, "
               f"ptr @zy.bad_shape, i64 {j}, i64 {n}, i64 {k}, i64 {want})")
        w.emit("br label %shape_failed")
        w.label(nxt)
        shape.append(n)
        strides.append(s)
    # nested loops: out[flat] = src[sum i_k * stride_k]
    ivs, offs = [], ["0"]
    ends = []
    for k in range(rank):
        loop, body, end = w.fresh("cp_loop"), w.fresh("cp_body"), w.fresh("cp_end")
        pre = w.fresh("cp_pre")
        w.emit(f"br label %{pre}")
        w.label(pre)
        w.emit(f"br label %{loop}")
        w.label(loop)
        iv = w.fresh("%i")
        nxt = w.fresh("%inext")
        w.lines.append(f"  {iv} = phi i64 [0, %{pre}], [{nxt}, %LATCH{k}_{iv[1:]}]")
        more = w.tmp(f"icmp slt i64 {iv}, {shape[k]}")
        w.emit(f"br i1 {more}, label %{body}, label %{end}")
        w.label(body)
        ivs.append((iv, nxt, loop, end))
        offs.append(w.tmp(f"add i64 {offs[-1]}, {w.tmp(f'mul i64 {iv}, {strides[k]}')}"))
        ends.append(end)
    flat = "0"
    for k, (iv, _, _, _) in enumerate(ivs):
        flat = w.tmp(f"add i64 {w.tmp(f'mul i64 {flat}, {shape[k]}')}, {iv}")
    s_ptr = w.tmp(f"getelementptr i8, ptr {src}, i64 {w.tmp(f'mul i64 {offs[-1]}, {item}')}")
    d_ptr = w.tmp(f"getelementptr i8, ptr {out}, i64 {w.tmp(f'mul i64 {flat}, {item}')}")
    w.emit(f"call void @llvm.memcpy.p0.p0.i64(ptr {d_ptr}, ptr {s_ptr}, i64 {item}, i1 false)")
    for k in reversed(range(rank)):
        iv, nxt, loop, end = ivs[k]
        latch = f"LATCH{k}_{iv[1:]}"
        w.emit(f"br label %{latch}")
        w.label(latch)
        w.lines.append(f"  {nxt} = add i64 {iv}, 1")
        w.emit(f"br label %{loop}")
        w.label(end)


def _release(w: _Writer, ctx: str, frees: list, copies: list) -> None:
    """Free the returned arrays' memory (once each: results may share a buffer), the rest of
    what the call allocated (``abi.py`` frees the same way), and the copies of written
    inputs (last: a result may be a view of one)."""
    for k, base in enumerate(frees):
        dup = "false"
        for other in frees[:k]:
            dup = w.tmp(f"or i1 {dup}, {w.tmp(f'icmp eq ptr {base}, {other}')}")
        w.emit(f"call void @free(ptr {w.tmp(f'select i1 {dup}, ptr null, ptr {base}')})")
    _free_arena(w, ctx, frees)
    for c in copies:
        w.emit(f"call void @free(ptr {c})")


def _free_arena(w: _Writer, ctx: str, kept=()) -> None:
    """Free what the call allocated (``llvm/runtime.py``: the arena) but ``kept`` (the
    returned arrays' buffers, freed by the caller)."""
    buf = w.field(ctx, 24, "ptr")
    n = w.field(ctx, 32, "i64")
    loop, body, end, pre = (w.fresh("ar_loop"), w.fresh("ar_body"), w.fresh("ar_end"),
                            w.fresh("ar_pre"))
    w.emit(f"br label %{pre}")
    w.label(pre)
    w.emit(f"br label %{loop}")
    w.label(loop)
    i, i1 = w.fresh("%ai"), w.fresh("%ainext")
    w.lines.append(f"  {i} = phi i64 [0, %{pre}], [{i1}, %{body}]")
    more = w.tmp(f"icmp slt i64 {i}, {n}")
    w.emit(f"br i1 {more}, label %{body}, label %{end}")
    w.label(body)
    p = w.tmp(f"load ptr, ptr {w.tmp(f'getelementptr ptr, ptr {buf}, i64 {i}')}")
    for base in kept:
        p = w.tmp(f"select i1 {w.tmp(f'icmp eq ptr {p}, {base}')}, ptr null, ptr {p}")
    w.emit(f"call void @free(ptr {p})")
    w.lines.append(f"  {i1} = add i64 {i}, 1")
    w.emit(f"br label %{loop}")
    w.label(end)
    w.emit(f"call void @free(ptr {buf})")
