"""Emitters for ``tape.*`` ops.  A tape is ``{ptr buf, i64 pos, i64 cap}`` on the stack of the
function that made it (so recursion gets one per call); slots are 8 bytes.  Pushes do not check
capacity: reverse mode reserves enough before each loop nest, which lets LLVM keep ``pos`` in a
register (the grow call takes the tape ``nocapture``).  With ``ZYMASE_VERIFY=1`` every push
checks, so a reservation that is too small is an error in tests, never a heap overflow.

A freed tape of at least 1 MiB is kept for the next one (``zy.tape_pool``, an external global
``[2 x i64]``: the kept buffer or 0, and the most bytes kept; the backend that loads the code
provides it, see ``backends/cpu/tape_pool.py``).  Buffers are taken and given back with atomic
exchanges, so concurrent calls are safe.  The kept buffer's capacity sits in its first slot."""

from __future__ import annotations

import os

from ...ir.ops import (
    TapeAdopt,
    TapeAt,
    TapeChunk,
    TapeClose,
    TapeDrop,
    TapeExport,
    TapeFree,
    TapeMark,
    TapeNew,
    TapePop,
    TapePopRef,
    TapePush,
    TapePushArray,
    TapePushRef,
    TapeRead,
    TapeReserve,
    TapeSetFree,
    TapeSetNew,
)
from ...ir.types import F64, I64
from .arrays import field, shape
from .table import emitter
from .types import SCALAR, array_struct, literal

CHUNK_TAPES = 64  # a tape set's tapes, one per thread (parallel.py: MAX_THREADS)

TAPE_RUNTIME = """
@zy.tape_pool = external global [2 x i64]

define internal void @zy.tape_reserve(ptr nocapture %t, i64 %n) #0 {
  %posp = getelementptr i8, ptr %t, i64 8
  %capp = getelementptr i8, ptr %t, i64 16
  %pos = load i64, ptr %posp
  %cap = load i64, ptr %capp
  %need = add i64 %pos, %n
  %ok = icmp sle i64 %need, %cap
  br i1 %ok, label %done, label %grow, !prof !0
grow:
  %twice = mul i64 %cap, 2
  %a = call i64 @llvm.smax.i64(i64 %twice, i64 %need)
  %nc = call i64 @llvm.smax.i64(i64 %a, i64 64)
  %buf = load ptr, ptr %t
  %kept = atomicrmw xchg ptr @zy.tape_pool, i64 0 acq_rel
  %have = icmp ne i64 %kept, 0
  br i1 %have, label %check, label %realloc
check:
  %kp = inttoptr i64 %kept to ptr
  %kcap = load i64, ptr %kp
  %big = icmp sge i64 %kcap, %nc
  br i1 %big, label %adopt, label %small
adopt:
  %bytes0 = mul i64 %pos, 8
  call void @llvm.memcpy.p0.p0.i64(ptr %kp, ptr %buf, i64 %bytes0, i1 false)
  call void @free(ptr %buf)
  store ptr %kp, ptr %t
  store i64 %kcap, ptr %capp
  br label %done
small:
  call void @free(ptr %kp)
  br label %realloc
realloc:
  %bytes = mul i64 %nc, 8
  %nb = call ptr @realloc(ptr %buf, i64 %bytes)
  store ptr %nb, ptr %t
  store i64 %nc, ptr %capp
  br label %done
done:
  ret void
}

define internal void @zy.tape_set_free(i64 %h) #0 {
entry:
  %set = inttoptr i64 %h to ptr
  %hdr = getelementptr i8, ptr %set, i64 -16
  br label %loop
loop:
  %k = phi i64 [0, %entry], [%k1, %body]
  %more = icmp slt i64 %k, """ + str(CHUNK_TAPES) + """
  br i1 %more, label %body, label %last
body:
  %t = getelementptr [64 x i8], ptr %set, i64 %k
  call void @zy.tape_release(ptr %t)
  %k1 = add i64 %k, 1
  br label %loop
last:
  call void @free(ptr %hdr)
  ret void
}

define internal void @zy.tape_set_unlink(ptr nocapture %head, i64 %h) #0 {
entry:
  %hdr = sub i64 %h, 16
  br label %walk
walk:
  %at = phi ptr [%head, %entry], [%cur, %next]
  %cur0 = load i64, ptr %at
  %none = icmp eq i64 %cur0, 0
  br i1 %none, label %done, label %test
test:
  %found = icmp eq i64 %cur0, %hdr
  br i1 %found, label %unlink, label %next
next:
  %cur = inttoptr i64 %cur0 to ptr
  br label %walk
unlink:
  %p = inttoptr i64 %cur0 to ptr
  %after = load i64, ptr %p
  store i64 %after, ptr %at
  br label %done
done:
  ret void
}

define internal void @zy.tape_set_unwind(ptr nocapture %head) #0 {
entry:
  br label %walk
walk:
  %cur0 = load i64, ptr %head
  %none = icmp eq i64 %cur0, 0
  br i1 %none, label %done, label %one
one:
  %p = inttoptr i64 %cur0 to ptr
  %after = load i64, ptr %p
  store i64 %after, ptr %head
  %h = add i64 %cur0, 16
  call void @zy.tape_set_free(i64 %h)
  br label %walk
done:
  ret void
}

define internal void @zy.tape_release(ptr nocapture %t) #0 {
  %buf = load ptr, ptr %t
  %capp = getelementptr i8, ptr %t, i64 16
  %cap = load i64, ptr %capp
  %bytes = mul i64 %cap, 8
  %limp = getelementptr i64, ptr @zy.tape_pool, i64 1
  %limit = load atomic i64, ptr %limp monotonic, align 8
  %fits = icmp sle i64 %bytes, %limit
  %worth = icmp sge i64 %bytes, """ + str(1 << 20) + """
  %keep = and i1 %fits, %worth
  br i1 %keep, label %pool, label %drop
pool:
  store i64 %cap, ptr %buf
  %b = ptrtoint ptr %buf to i64
  %old = atomicrmw xchg ptr @zy.tape_pool, i64 %b acq_rel
  %op = inttoptr i64 %old to ptr
  call void @free(ptr %op)
  ret void
drop:
  call void @free(ptr %buf)
  ret void
}
"""

def checking() -> bool:
    return os.environ.get("ZYMASE_VERIFY") == "1"


def _count(em, op, slots: str) -> None:
    site = em.mod.count_site(op)
    if site is not None:
        p = em.assign(f"getelementptr i64, ptr @zy.tape_counts, i64 {site}")
        em.emit(f"atomicrmw add ptr {p}, i64 {slots} monotonic")


TAPE_STRUCT = "{ptr, i64, i64}"


def _tape_slot(em) -> str:
    """A tape the function releases itself, on its ``fail`` path too (empty until made)."""
    t = em.slot(TAPE_STRUCT, "zeroinitializer", "tape")
    em.unwind.append(f"  call void @zy.tape_release(ptr {t})")
    return t


@emitter(TapeNew)
def _new(em, op):
    t = _tape_slot(em)
    em.emit(f"store {TAPE_STRUCT} zeroinitializer, ptr {t}")
    return [t]


@emitter(TapePushRef)
def _push_ref(em, op):
    t, a = em.val(op.operands[0]), em.val(op.operands[1])
    n = op.operands[1].type.ndim
    st = array_struct(n)
    slots = [em.assign(f"ptrtoint ptr {em.assign(f'extractvalue {st} {a}, {k}')} to i64")
             for k in (0, 1)]
    slots += [em.assign(f"extractvalue {st} {a}, {f}, {k}") for f in (2, 3) for k in range(n)]
    _push_slots(em, op, t, slots)
    return []


@emitter(TapePopRef)
def _pop_ref(em, op):
    t = em.val(op.operands[0])
    n = op.results[0].type.ndim
    st = array_struct(n)
    posp = em.assign(f"getelementptr i8, ptr {t}, i64 8")
    pos = em.assign(f"sub i64 {em.assign(f'load i64, ptr {posp}')}, {2 + 2 * n}")
    em.emit(f"store i64 {pos}, ptr {posp}")
    buf = em.assign(f"load ptr, ptr {t}")

    def slot(k):
        p = em.assign(f"getelementptr i64, ptr {buf}, i64 {em.assign(f'add i64 {pos}, {k}')}")
        return em.assign(f"load i64, ptr {p}{em.scopes.of_tape()}")

    cur = "poison"
    for k in (0, 1):
        addr = em.assign(f"inttoptr i64 {slot(k)} to ptr")
        cur = em.assign(f"insertvalue {st} {cur}, ptr {addr}, {k}")
    j = 2
    for f in (2, 3):
        for k in range(n):
            cur = em.assign(f"insertvalue {st} {cur}, i64 {slot(j)}, {f}, {k}")
            j += 1
    return [cur]


@emitter(TapeExport)
def _export(em, op):
    t = em.val(op.operands[0])
    buf = em.assign(f"ptrtoint ptr {em.assign(f'load ptr, ptr {t}')} to i64")
    pos = em.assign(f"load i64, ptr {em.assign(f'getelementptr i8, ptr {t}, i64 8')}")
    return [buf, pos]


@emitter(TapeAdopt)
def _adopt(em, op):
    buf, pos = (em.val(v) for v in op.operands)
    t = _tape_slot(em)
    em.emit(f"store ptr {em.assign(f'inttoptr i64 {buf} to ptr')}, ptr {t}")
    em.emit(f"store i64 {pos}, ptr {em.assign(f'getelementptr i8, ptr {t}, i64 8')}")
    em.emit(f"store i64 {pos}, ptr {em.assign(f'getelementptr i8, ptr {t}, i64 16')}")
    return [t]


@emitter(TapeFree)
def _free(em, op):
    t = em.val(op.operands[0])
    em.emit(f"call void @zy.tape_release(ptr {t})")
    em.emit(f"store {TAPE_STRUCT} zeroinitializer, ptr {t}")  # emptied: fail may release it again
    return []


@emitter(TapeReserve)
def _reserve(em, op):
    t, n = (em.val(v) for v in op.operands)
    em.emit(f"call void @zy.tape_reserve(ptr {t}, i64 {n})")
    return []


@emitter(TapeSetNew)
def _set_new(em, op):
    """A header ``{next, n}``, a zeroed tape per thread (64 bytes apart: threads push on them
    at once), a record ``{ptr, i64, i64}`` per iteration.  The sets this function made and has
    not freed form a list (its head in a slot), which the ``fail`` path frees."""
    n = em.val(op.operands[0])
    head = _set_list(em)
    count = em.assign(f"call i64 @llvm.smax.i64(i64 {n}, i64 1)")
    size = em.assign(f"add i64 {em.assign(f'mul i64 {count}, 24')}, {16 + 64 * CHUNK_TAPES}")
    hdr = em.assign(f"call ptr @calloc(i64 {size}, i64 1)")
    em.emit(f"store i64 {em.assign(f'load i64, ptr {head}')}, ptr {hdr}")
    em.emit(f"store i64 {n}, ptr {em.assign(f'getelementptr i8, ptr {hdr}, i64 8')}")
    addr = em.assign(f"ptrtoint ptr {hdr} to i64")
    em.emit(f"store i64 {addr}, ptr {head}")
    return [em.assign(f"add i64 {addr}, 16")]


def _record(em, h: str, k: str) -> str:
    """The address of iteration ``k``'s record in set ``h``."""
    recs = em.assign(f"getelementptr i8, ptr {em.assign(f'inttoptr i64 {h} to ptr')}, "
                     f"i64 {64 * CHUNK_TAPES}")
    return em.assign(f"getelementptr {TAPE_STRUCT}, ptr {recs}, i64 {k}")


@emitter(TapeChunk)
def _chunk(em, op):
    """The running thread's tape (the chunk's number: 0 when the loop runs serially), which
    iteration ``k``'s record remembers."""
    h, k = (em.val(v) for v in op.operands)
    tid = "%tid" if em.in_chunk else "0"
    em.emit(f"store i64 {tid}, ptr {_record(em, h, k)}")
    return [_thread_tape(em, h, tid)]


def _thread_tape(em, h: str, tid: str) -> str:
    return em.assign(f"getelementptr [64 x i8], ptr {em.assign(f'inttoptr i64 {h} to ptr')}, "
                     f"i64 {tid}")


@emitter(TapeClose)
def _close(em, op):
    """Iteration ``k``'s values end at its tape's position."""
    h, k, t = (em.val(v) for v in op.operands)
    pos = em.assign(f"load i64, ptr {em.assign(f'getelementptr i8, ptr {t}, i64 8')}")
    end = em.assign(f"getelementptr i8, ptr {_record(em, h, k)}, i64 8")
    em.emit(f"store i64 {pos}, ptr {end}")
    return []


def _set_list(em) -> str:
    """The slot holding the head of the function's list of tape sets (made on first use)."""
    if em.tape_sets is None:
        em.tape_sets = em.slot("i64", "0", "tsets")
        em.unwind.append(f"  call void @zy.tape_set_unwind(ptr {em.tape_sets})")
    return em.tape_sets


@emitter(TapeAt)
def _at(em, op):
    """Iteration ``k``'s record made a tape: its thread's buffer, at the position where its
    values end (its pops go down from there; the buffer is the thread tape's, freed with the
    set, so the record needs no ``tape.free``)."""
    h, k = (em.val(v) for v in op.operands)
    rec = _record(em, h, k)
    ct = _thread_tape(em, h, em.assign(f"load i64, ptr {rec}"))
    em.emit(f"store ptr {em.assign(f'load ptr, ptr {ct}')}, ptr {rec}")
    cap = em.assign(f"load i64, ptr {em.assign(f'getelementptr i8, ptr {ct}, i64 16')}")
    em.emit(f"store i64 {cap}, ptr {em.assign(f'getelementptr i8, ptr {rec}, i64 16')}")
    return [rec]


@emitter(TapeSetFree)
def _set_free(em, op):
    """Frees the set (its size is in its header), first taking it off this function's list
    when it made one (the set is then the list's head)."""
    h = em.val(op.operands[0])
    if em.tape_sets is not None:
        em.emit(f"call void @zy.tape_set_unlink(ptr {em.tape_sets}, i64 {h})")
    em.emit(f"call void @zy.tape_set_free(i64 {h})")
    return []


def _slot_values(em, v: str, t) -> list[str]:
    """The i64 slot contents of a scalar."""
    if t.is_complex:
        parts = [em.assign(f"extractvalue {SCALAR[str(t)]} {v}, {k}") for k in (0, 1)]
        return [_to_slot(em, p, t.real_type) for p in parts]
    return [_to_slot(em, v, t)]


def _to_slot(em, v, t):
    if t.is_float:
        if t.bits == 32:
            v = em.assign(f"fpext float {v} to double")
        return em.assign(f"bitcast double {v} to i64")
    if t.is_bool:
        return em.assign(f"zext i1 {v} to i64")
    ext = "zext" if t.unsigned else "sext"
    return v if t.bits == 64 else em.assign(f"{ext} {SCALAR[str(t)]} {v} to i64")


def _from_slot(em, s, t):
    if t.is_float:
        d = em.assign(f"bitcast i64 {s} to double")
        return d if t.bits == 64 else em.assign(f"fptrunc double {d} to float")
    if t.is_bool:
        return em.assign(f"trunc i64 {s} to i1")
    return s if t.bits == 64 else em.assign(f"trunc i64 {s} to {SCALAR[str(t)]}")


@emitter(TapePush)
def _push(em, op):
    t = em.val(op.operands[0])
    v, ty = em.val(op.operands[1]), op.operands[1].type
    _push_slots(em, op, t, _slot_values(em, v, ty))
    return []


def _push_slots(em, op, t, slots) -> None:
    """Store i64 ``slots`` at the tape's position and advance it (checked under
    ZYMASE_VERIFY=1, counted for tape_report)."""
    posp = em.assign(f"getelementptr i8, ptr {t}, i64 8")
    pos = em.assign(f"load i64, ptr {posp}")
    if checking():
        cap = em.assign(f"load i64, ptr {em.assign(f'getelementptr i8, ptr {t}, i64 16')}")
        end = em.assign(f"add i64 {pos}, {len(slots)}")
        ok = em.assign(f"icmp sle i64 {end}, {cap}")
        em.raise_if_not(ok, "InternalError", "reverse-mode tape reservation too small "
                        "(a zymase bug: please report it)", op.loc)
    _count(em, op, str(len(slots)))
    buf = em.assign(f"load ptr, ptr {t}")
    for k, s in enumerate(slots):
        p = em.assign(f"getelementptr i64, ptr {buf}, i64 {em.assign(f'add i64 {pos}, {k}')}")
        em.emit(f"store i64 {s}, ptr {p}{em.scopes.of_tape()}")
    em.emit(f"store i64 {em.assign(f'add i64 {pos}, {len(slots)}')}, ptr {posp}")


@emitter(TapePop)
def _pop(em, op):
    t = em.val(op.operands[0])
    ty = op.results[0].type
    n = 2 if ty.is_complex else 1
    posp = em.assign(f"getelementptr i8, ptr {t}, i64 8")
    pos = em.assign(f"sub i64 {em.assign(f'load i64, ptr {posp}')}, {n}")
    em.emit(f"store i64 {pos}, ptr {posp}")
    return [_load_slots(em, t, pos, ty)]


def _load_slots(em, t, pos, ty):
    """The value of type ``ty`` stored in the tape's slots from ``pos`` on (two for complex)."""
    buf = em.assign(f"load ptr, ptr {t}")
    vals = []
    for k in range(2 if ty.is_complex else 1):
        slot = em.assign(f"add i64 {pos}, {k}")
        slot_ptr = em.assign(f"getelementptr i64, ptr {buf}, i64 {slot}")
        vals.append(em.assign(f"load i64, ptr {slot_ptr}{em.scopes.of_tape()}"))
    if not ty.is_complex:
        return _from_slot(em, vals[0], ty)
    parts = [_from_slot(em, s, ty.real_type) for s in vals]
    lt, ft = SCALAR[str(ty)], SCALAR[str(ty.real_type)]
    x = em.assign(f"insertvalue {lt} poison, {ft} {parts[0]}, 0")
    return em.assign(f"insertvalue {lt} {x}, {ft} {parts[1]}, 1")


_ = literal


@emitter(TapeMark)
def _mark(em, op):
    t = em.val(op.operands[0])
    return [em.assign(f"load i64, ptr {em.assign(f'getelementptr i8, ptr {t}, i64 8')}")]


@emitter(TapePushArray)
def _push_array(em, op):
    """Append every element of a C-contiguous array, one slot each (two for complex)."""
    t = em.val(op.operands[0])
    a, at = em.val(op.operands[1]), op.operands[1].type
    per = 2 if at.dtype.is_complex else 1
    n = "1"
    for d in shape(em, a, at):
        n = em.assign(f"mul i64 {n}, {d}") if n != "1" else d
    slots_n = em.assign(f"mul i64 {n}, {per}")
    _count(em, op, slots_n)
    em.emit(f"call void @zy.tape_reserve(ptr {t}, i64 {slots_n})")
    data = field(em, a, at, 1)
    posp = em.assign(f"getelementptr i8, ptr {t}, i64 8")
    pos = em.assign(f"load i64, ptr {posp}")
    buf = em.assign(f"load ptr, ptr {t}")
    dst = em.assign(f"getelementptr i64, ptr {buf}, i64 {pos}")
    et = SCALAR[str(at.dtype)]
    if at.dtype in _COPYABLE:
        nbytes = em.assign(f"mul i64 {slots_n}, 8")
        em.emit(f"call void @llvm.memcpy.p0.p0.i64(ptr {dst}, ptr {data}, i64 {nbytes}, i1 false)")
    else:  # widen each element into its slot
        loop, body, done = em.label("snap"), em.label("snapb"), em.label("snapd")
        pre = em.cur
        em.emit(f"br label %{loop}")
        em.start(loop)
        i = em.fresh("si")
        pos_line = len(em.lines)
        more = em.assign(f"icmp slt i64 {i}, {n}")
        em.emit(f"br i1 {more}, label %{body}, label %{done}")
        em.start(body)
        src = em.assign(f"getelementptr {et}, ptr {data}, i64 {i}")
        v = em.assign(f"load {et}, ptr {src}")
        for k, sv in enumerate(_slot_values(em, v, at.dtype)):
            off = em.assign(f"add i64 {em.assign(f'mul i64 {i}, {per}')}, {k}")
            dp = em.assign(f"getelementptr i64, ptr {dst}, i64 {off}")
            em.emit(f"store i64 {sv}, ptr {dp}{em.scopes.of_tape()}")
        nxt = em.assign(f"add i64 {i}, 1")
        em.emit(f"br label %{loop}")
        em.lines.insert(pos_line, f"  {i} = phi i64 [0, %{pre}], [{nxt}, %{body}]")
        em.start(done)
    em.emit(f"store i64 {em.assign(f'add i64 {pos}, {slots_n}')}, ptr {posp}")
    return []


_COPYABLE = {F64, I64}  # their elements are already 8-byte slots


@emitter(TapeRead)
def _read(em, op):
    t, p = (em.val(v) for v in op.operands)
    return [_load_slots(em, t, p, op.results[0].type)]


@emitter(TapeDrop)
def _drop(em, op):
    t, n = (em.val(v) for v in op.operands)
    posp = em.assign(f"getelementptr i8, ptr {t}, i64 8")
    cur = em.assign(f"load i64, ptr {posp}")
    em.emit(f"store i64 {em.assign(f'sub i64 {cur}, {n}')}, ptr {posp}")
    return []
