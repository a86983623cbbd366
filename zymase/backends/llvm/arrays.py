"""Emitters for ``array.*`` and ``linalg.*`` ops: the array struct (base, data, shape, strides),
element addresses, views, allocation through the runtime, constant arrays as LLVM globals."""

from __future__ import annotations

import numpy as np

from ...ir.ops import (
    Alloc,
    ArrayConst,
    ArrayFree,
    ArrayGlobal,
    AtomicAdd,
    Broadcast,
    DataPtr,
    Dim,
    Load,
    Matmul,
    Offset,
    Relayout,
    Reshape,
    Store,
    Stride,
    Subview,
    Transpose,
)
from ...ir.types import ArrayType, scalar_from_dtype
from .table import emitter
from .types import (
    BASE,
    CTX_GLOBALS,
    DATA,
    PYARRAY_DATA,
    PYARRAY_DIMS,
    PYARRAY_STRIDES,
    SCALAR,
    SHAPE,
    STRIDES,
    array_struct,
    elem_type,
    literal,
)


def field(em, a: str, t: ArrayType, f: int, k: int | None = None) -> str:
    idx = f"{f}" if k is None else f"{f}, {k}"
    ty = "ptr" if f in (BASE, DATA) else "i64"
    return em.assign(f"extractvalue {array_struct(t.ndim)} {a}, {idx}", "f" if ty == "i64" else "p")


def shape(em, a, t):
    return [field(em, a, t, SHAPE, k) for k in range(t.ndim)]


def strides(em, a, t):
    """Element strides; for C arrays computed from the shape (so the inner one is literally 1)."""
    if t.layout == "C":
        return c_strides(em, shape(em, a, t))
    return [field(em, a, t, STRIDES, k) for k in range(t.ndim)]


def c_strides(em, dims):
    if not dims:  # a 0-d array has no strides
        return []
    out = ["1"]
    for d in reversed(dims[1:]):
        out.insert(0, em.assign(f"mul nsw i64 {out[0]}, {d}") if out[0] != "1" else d)
    return out


def build(em, t: ArrayType, base: str, data: str, dims, strd) -> str:
    st = array_struct(t.ndim)
    cur = em.assign(f"insertvalue {st} poison, ptr {base}, {BASE}")
    cur = em.assign(f"insertvalue {st} {cur}, ptr {data}, {DATA}")
    for k, d in enumerate(dims):
        cur = em.assign(f"insertvalue {st} {cur}, i64 {d}, {SHAPE}, {k}")
    for k, s in enumerate(strd):
        cur = em.assign(f"insertvalue {st} {cur}, i64 {s}, {STRIDES}, {k}")
    return cur


def address(em, a: str, t: ArrayType, idx) -> str:
    data = field(em, a, t, DATA)
    if t.layout == "C":
        dims = shape(em, a, t)
        off = idx[0] if idx else "0"
        for d, i in zip(dims[1:], idx[1:]):
            off = em.assign(f"add nsw i64 {em.assign(f'mul nsw i64 {off}, {d}')}, {i}")
    else:
        terms = [em.assign(f"mul nsw i64 {i}, {s}") for i, s in zip(idx, strides(em, a, t))]
        off = terms[0] if terms else "0"
        for x in terms[1:]:
            off = em.assign(f"add nsw i64 {off}, {x}")
    return em.assign(f"getelementptr inbounds {elem_type(t)}, ptr {data}, i64 {off}", "addr")


def _ops(em, op):
    return [em.val(v) for v in op.operands]


@emitter(Dim)
def _dim(em, op):
    t = op.operands[0].type
    return [field(em, em.val(op.operands[0]), t, SHAPE, op.attrs["axis"])]


@emitter(Stride)
def _stride(em, op):
    t = op.operands[0].type
    return [strides(em, em.val(op.operands[0]), t)[op.attrs["axis"]]]


@emitter(Load)
def _load(em, op):
    a, *idx = _ops(em, op)
    t = op.operands[0].type
    p = address(em, a, t, idx)
    return [em.assign(f"load {elem_type(t)}, ptr {p}{em.alias_md(op, op.operands[0])}")]


@emitter(Store)
def _store(em, op):
    v, a, *idx = _ops(em, op)
    t = op.operands[1].type
    p = address(em, a, t, idx)
    em.emit(f"store {elem_type(t)} {v}, ptr {p}{em.alias_md(op, op.operands[1])}")
    return []


@emitter(AtomicAdd)
def _atomic_add(em, op):
    """Atomic inside a parallel loop's chunk; elsewhere (one thread) a plain update."""
    v, a, *idx = _ops(em, op)
    t = op.operands[1].type
    p = address(em, a, t, idx)
    dt = t.dtype
    parts = [(p, v, elem_type(t))]
    if dt.is_complex:
        ft = SCALAR[str(dt.real_type)]
        q = em.assign(f"getelementptr inbounds {ft}, ptr {p}, i64 1")
        parts = [(at, em.assign(f"extractvalue {elem_type(t)} {v}, {k}"), ft)
                 for k, at in enumerate((p, q))]
    add = "fadd" if dt.is_inexact else "add"
    for at, x, lt in parts:
        if em.in_chunk:
            em.emit(f"atomicrmw {add} ptr {at}, {lt} {x} monotonic")
        else:
            old = em.assign(f"load {lt}, ptr {at}")
            em.emit(f"store {lt} {em.assign(f'{add} {lt} {old}, {x}')}, ptr {at}")
    return []


@emitter(Alloc)
def _alloc(em, op):
    t = op.results[0].type
    dims = _ops(em, op)
    nbytes, fits = str(t.dtype.nbytes), "true"
    for d in dims:  # dims are >= 0 (checked where they are made): an unsigned product
        r = em.assign(f"call {{i64, i1}} @llvm.umul.with.overflow.i64(i64 {nbytes}, i64 {d})")
        nbytes = em.assign(f"extractvalue {{i64, i1}} {r}, 0")
        no = em.assign(f"xor i1 {em.assign(f'extractvalue {{i64, i1}} {r}, 1')}, true")
        fits = em.assign(f"and i1 {fits}, {no}")
    small = em.assign(f"icmp ult i64 {nbytes}, {1 << 62}")  # also no i64 overflow later
    em.raise_if_not(em.assign(f"and i1 {fits}, {small}"), "MemoryError",
                    "cannot allocate an array this large (its size in bytes overflows)", op.loc)
    zero = "1" if op.attrs.get("init") == "zero" else "0"
    p = em.assign(f"call ptr @zy.alloc(i64 {nbytes}, i32 {zero})", "buf")
    ok = em.assign(f"icmp ne ptr {p}, null")
    em.raise_if_not(ok, "MemoryError", "cannot allocate {a} bytes", op.loc, nbytes)
    if op.attrs.get("escapes"):
        em.emit(f"call void @zy.arena_push(ptr %ctx, ptr {p})")
    elif op.attrs.get("escapes") is False:  # freed here by array.free, or by fail if it raises
        slot = em.owned[op.result] = em.slot("ptr", "null", "own")
        em.emit(f"store ptr {p}, ptr {slot}")
        held = em.fresh("held")
        em.unwind += [f"  {held} = load ptr, ptr {slot}", f"  call void @free(ptr {held})"]
    return [build(em, t, p, p, dims, c_strides(em, dims))]


@emitter(ArrayFree)
def _free(em, op):
    (a,) = _ops(em, op)
    t = op.operands[0].type
    n = str(t.dtype.nbytes)
    for d in shape(em, a, t):
        n = em.assign(f"mul i64 {n}, {d}")
    em.emit(f"call void @zy.release(ptr {field(em, a, t, BASE)}, i64 {n})")
    em.emit(f"store ptr null, ptr {em.owned[op.operands[0]]}")
    return []


@emitter(ArrayConst)
def _const(em, op):
    t = op.results[0].type
    data = np.ascontiguousarray(op.attrs["data"], dtype=t.dtype.np_dtype)
    g = em.mod.fresh_global("const")
    et = elem_type(t)
    flat = data.ravel()
    dt = scalar_from_dtype(data.dtype)
    vals = ", ".join(f"{et} {literal(x.item(), dt)}" for x in flat)
    em.mod.globals.append(f"{g} = private unnamed_addr constant [{flat.size} x {et}] [{vals}], "
                          f"align 64")
    dims = [str(d) for d in data.shape]
    return [build(em, t, "null", g, dims, c_strides(em, dims))]


@emitter(ArrayGlobal)
def _global(em, op):
    """The array object at ``slot`` of the call's table: its data, shape and strides now."""
    t = op.results[0].type

    def load(ty, ptr, offset, scale="i8"):
        at = em.assign(f"getelementptr {scale}, ptr {ptr}, i64 {offset}")
        return em.assign(f"load {ty}, ptr {at}")

    obj = load("ptr", load("ptr", "%ctx", CTX_GLOBALS), op.attrs["slot"], "ptr")
    data, dims_p, strides_p = (load("ptr", obj, off) for off in
                               (PYARRAY_DATA, PYARRAY_DIMS, PYARRAY_STRIDES))
    dims = [load("i64", dims_p, k, "i64") for k in range(t.ndim)]
    strd = [em.assign(f"sdiv exact i64 {load('i64', strides_p, k, 'i64')}, {t.dtype.nbytes}")
            for k in range(t.ndim)]
    return [build(em, t, "null", data, dims, strd)]


@emitter(Subview)
def _subview(em, op):
    src_t, res_t = op.operands[0].type, op.results[0].type
    a = em.val(op.operands[0])
    offs, kept = op.parts()
    strd = strides(em, a, src_t)
    off = "0"
    for o, s in zip(offs, strd):
        term = em.assign(f"mul nsw i64 {em.val(o)}, {s}")
        off = term if off == "0" else em.assign(f"add nsw i64 {off}, {term}")
    data = em.assign(f"getelementptr {elem_type(src_t)}, ptr {field(em, a, src_t, DATA)}, "
                     f"i64 {off}")
    keep = op.attrs["keep"]
    kept_strides = [s for s, k in zip(strd, keep) if k]
    dims = [em.val(size) for size, _ in kept]
    new_strides = [em.assign(f"mul nsw i64 {s}, {em.val(step)}")
                   for s, (_, step) in zip(kept_strides, kept)]
    return [build(em, res_t, field(em, a, src_t, BASE), data, dims, new_strides)]


@emitter(Broadcast)
def _broadcast(em, op):
    src_t, res_t = op.operands[0].type, op.results[0].type
    a, *dims = _ops(em, op)
    src_dims, src_strides = shape(em, a, src_t), strides(em, a, src_t)
    lead = res_t.ndim - src_t.ndim
    new = ["0"] * lead
    for d, s in zip(src_dims, src_strides):
        one = em.assign(f"icmp eq i64 {d}, 1")
        new.append(em.assign(f"select i1 {one}, i64 0, i64 {s}"))
    return [build(em, res_t, field(em, a, src_t, BASE), field(em, a, src_t, DATA), dims, new)]


@emitter(Transpose)
def _transpose(em, op):
    src_t, res_t = op.operands[0].type, op.results[0].type
    a = em.val(op.operands[0])
    perm = op.attrs["perm"]
    d, s = shape(em, a, src_t), strides(em, a, src_t)
    return [build(em, res_t, field(em, a, src_t, BASE), field(em, a, src_t, DATA),
                  [d[p] for p in perm], [s[p] for p in perm])]


@emitter(Reshape)
def _reshape(em, op):
    src_t, res_t = op.operands[0].type, op.results[0].type
    a, *dims = _ops(em, op)
    return [build(em, res_t, field(em, a, src_t, BASE), field(em, a, src_t, DATA), dims,
                  c_strides(em, dims))]


@emitter(Relayout)
def _relayout(em, op):
    src_t = op.operands[0].type
    a = em.val(op.operands[0])
    if src_t.layout == "C":  # make the strides field explicit (it already is) and keep the struct
        return [a]
    return [a]


@emitter(Matmul)
def _matmul(em, op):
    a, b, out = _ops(em, op)
    ta, tb, to = (v.type for v in op.operands)
    fn = em.mod.request_matmul((ta.ndim, tb.ndim), str(ta.dtype), bool(op.attrs.get("acc")))
    st = [array_struct(t.ndim) for t in (ta, tb, to)]
    em.emit(f"call void @{fn}({st[0]} {a}, {st[1]} {b}, {st[2]} {out})")
    return []


@emitter(Offset)
def _offset(em, op):
    v, r = _ops(em, op)
    vt, rt = (x.type for x in op.operands)
    dv = em.assign(f"ptrtoint ptr {field(em, v, vt, DATA)} to i64")
    dr = em.assign(f"ptrtoint ptr {field(em, r, rt, DATA)} to i64")
    return [em.assign(f"sdiv exact i64 {em.assign(f'sub i64 {dv}, {dr}')}, {vt.dtype.nbytes}")]


@emitter(DataPtr)
def _data_ptr(em, op):
    (a,) = _ops(em, op)
    return [em.assign(f"ptrtoint ptr {field(em, a, op.operands[0].type, DATA)} to i64")]
