"""``scf.parallel`` -> a chunk function run on the thread pool (``cpu/threads.py``).

The loop's body is outlined here, and only here (the passes before see an ordinary loop)::

    define internal void @zy.par.N(ptr %env, i64 %lo, i64 %hi, i64 %tid)

runs iterations ``lo <= k < hi`` (the iteration variable is ``lb + k * step``) with its own call
context (error slot and arena: allocations of one iteration never meet another thread's), each
carried reduction starting from its identity, and stores its partial results in ``env``.  The
caller fills ``env`` (its context, an error flag, the partials and every value the body uses from
outside), calls ``zy.parallel_for(@zy.par.N, env, n, T)`` with ``T = min(threads, n)``, then
combines the partials in thread order with the initial values (a private value takes the last
block's).  A chunk that raises copies its error into the caller's context (the first one to raise
wins) and the caller fails as a serial loop would.

A loop runs serially instead (``_for``) when it is nested in another parallel loop, carries a
value that is not a reduction, or contains what a thread cannot do alone (``return``, tape
operations but on the iteration's own tape: ``tape.at``, reverse mode's parallel loops).
"""

from __future__ import annotations

from ...ir.core import LOOP, Op, Value
from ...ir.ops import (
    AtomicAdd,
    Constant,
    For,
    Return,
    TapeAdopt,
    TapeAt,
    TapeChunk,
    TapeClose,
    TapeMark,
    TapeNew,
    TapeRead,
    TapeSetFree,
    TapeSetNew,
    ThreadCount,
    ThreadSlot,
)
from ...ir.ops import tape as tape_ops
from ...ir.parallel import identity, reductions
from ...ir.types import ArrayType
from .table import emitter
from .types import SCALAR, literal, ltype

MAX_THREADS = 64  # cpu/threads.py: the pool's limit
HEAD = 4  # env fields before the partial results: context, error flag, n, blocks
ACCUMULATE_FREE = 1 << 18  # per-thread accumulator numbers always worth having (2 MiB)
# what a thread cannot do on its own: the tape is one stack per call
_SERIAL = (Return, *(getattr(tape_ops, name) for name in tape_ops.__all__))
_READ_TAPE = (TapeRead, TapeMark)  # (read the tape without changing it)
_NAMES_TAPE = (TapeAt, TapeChunk)  # (an iteration's own tape)


def emit_parallel(fe, op: Op) -> list[str]:
    kinds = reductions(op)
    if fe.in_chunk or kinds is None or not _threadable(op, fe.mod.deterministic) or \
            not all(_combinable(r, a.type, res) for r, a, res in
                    zip(kinds, op.body.args[1:], op.results)):
        return fe._for(op)
    me = fe.mod
    me.declare("declare void @zy.parallel_for(ptr, ptr, i64, i64)")
    me.declare("declare i64 @zy.pool.threads()")
    inputs = _inputs(op)
    carried = [ltype(a.type) for a in op.body.args[1:]]
    fields = ["ptr", "i64", "i64", "i64", *(f"[{MAX_THREADS} x {t}]" for t in carried),
              *(ltype(v.type) for v in inputs)]
    env_t = "{" + ", ".join(fields) + "}"
    name = me.fresh_global("zy.par")
    me.funcs.append(_chunk(fe.sibling(), op, name, env_t, kinds, inputs))
    if me.deterministic:  # blocks fixed by n alone, combined in order: any thread count
        me.funcs.append(_blocks(name, env_t))
        name += ".blocks"

    lb, ub, step = (fe.val(v) for v in op.operands[:3])
    n = _trip_count(fe, lb, ub, step)
    threads = fe.assign("call i64 @zy.pool.threads()")
    blocks = n
    if me.deterministic:
        blocks = fe.assign(f"call i64 @llvm.smin.i64(i64 {n}, i64 {MAX_THREADS})")
    # per-thread accumulators (scf.thread_slot) exist for so many threads (blocks)
    for slot in {inner.operands[0] for inner in op.walk() if isinstance(inner, ThreadSlot)}:
        if me.deterministic:
            blocks = fe.assign(f"call i64 @llvm.smin.i64(i64 {blocks}, i64 {fe.val(slot)})")
        threads = fe.assign(f"call i64 @llvm.smin.i64(i64 {threads}, i64 {fe.val(slot)})")
    if me.deterministic:
        blocks = fe.assign(f"call i64 @llvm.smax.i64(i64 {blocks}, i64 1)")
    some = fe.assign(f"call i64 @llvm.smin.i64(i64 {threads}, i64 {blocks})")
    t = fe.assign(f"call i64 @llvm.smax.i64(i64 {some}, i64 1)")
    if op.attrs.get("grain"):  # a NumPy loop (jit(parallel=True)): small ones on one thread
        small = fe.assign(f"icmp slt i64 {_work(fe, op, n)}, {int(op.attrs['grain'])}")
        t = fe.assign(f"select i1 {small}, i64 1, i64 {t}")
    parts = blocks if me.deterministic else t  # how many partial results
    env = fe.fresh("env")
    fe.entry_allocas.append(f"  {env} = alloca {env_t}, align 16")
    fe.emit(f"store ptr %ctx, ptr {_field(fe, env_t, env, 0)}")
    flag = _field(fe, env_t, env, 1)
    fe.emit(f"store i64 0, ptr {flag}")
    fe.emit(f"store i64 {n}, ptr {_field(fe, env_t, env, 2)}")
    fe.emit(f"store i64 {blocks}, ptr {_field(fe, env_t, env, 3)}")
    for k, v in enumerate(inputs):
        slot = _field(fe, env_t, env, HEAD + len(carried) + k)
        fe.emit(f"store {ltype(v.type)} {fe.val(v)}, ptr {slot}")
    fe.emit(f"call void @zy.parallel_for(ptr {name}, ptr {env}, i64 {blocks}, i64 {t})")
    failed = fe.assign(f"load i64, ptr {flag}")
    bad = fe.assign(f"icmp ne i64 {failed}, 0")
    cont = fe.label("pardone")
    fe.emit(f"br i1 {bad}, label %fail, label %{cont}, !prof !1")
    fe.start(cont)
    return [_combine(fe, r, a.type, fe.val(init), _field(fe, env_t, env, HEAD + k), n, parts)
            for k, (r, a, init) in enumerate(zip(kinds, op.body.args[1:], op.operands[3:]))]


@emitter(ThreadCount)
def _thread_count(fe, op):
    """The most partial results the parallel loop run next makes (``scf.thread_count
    %elements, %work``: each thread's accumulators hold ``elements`` numbers; the loop nest runs
    ``work`` innermost iterations): the pool's threads, fewer when zeroing and adding up the
    accumulators would cost more than about 16 updates per innermost iteration (a gather from a
    large buffer in a short loop: one thread, plain updates); with ``deterministic``, the 64
    fixed blocks or fewer by the same rule (then the loop runs in that many blocks: still fixed
    by the sizes alone)."""
    fe.mod.declare("declare i64 @zy.pool.threads()")
    elements, trips = (fe.val(v) for v in op.operands)
    budget = fe.assign(f"add i64 {fe.assign(f'mul i64 {trips}, 16')}, {ACCUMULATE_FREE}")
    cost = fe.assign(f"call i64 @llvm.smax.i64(i64 {fe.assign(f'mul i64 {elements}, 2')}, i64 1)")
    cap = fe.assign(f"sdiv i64 {budget}, {cost}")
    # (deterministic: up to the 64 fixed blocks, fewer by the same cost rule: n alone decides)
    threads = str(MAX_THREADS) if fe.mod.deterministic else \
        fe.assign("call i64 @zy.pool.threads()")
    some = fe.assign(f"call i64 @llvm.smin.i64(i64 {threads}, i64 {cap})")
    return [fe.assign(f"call i64 @llvm.smax.i64(i64 {some}, i64 1)")]


@emitter(ThreadSlot)
def _thread_slot(fe, op):
    """The chunk's partial-result number (a loop run serially is one chunk: 0)."""
    return ["%tid" if fe.in_chunk else "0"]


def _work(fe, op: Op, n: str) -> str:
    """Iterations of ``op`` times those of the loops nested in it, one inside the other with
    bounds known before it (an array expression's loop nest): its elements."""
    work, body = n, op.body
    while True:
        inner = [o for o in body.ops if o.has_trait(LOOP)]
        if len(inner) != 1 or not isinstance(inner[0], For) or \
                any(_inside(op, v) for v in inner[0].operands[:3]):
            return work
        trips = _trip_count(fe, *(fe.val(v) for v in inner[0].operands[:3]))
        work = fe.assign(f"mul i64 {work}, {trips}")
        body = inner[0].body


def _inside(op: Op, v: Value) -> bool:
    owner = v.op if v.op is not None else v.block.parent_op
    return owner is not None and op.is_ancestor_of(owner)


def _threadable(op: Op, deterministic: bool) -> bool:
    """No tape operations but on an iteration's own tape (``tape.chunk``/``tape.at`` in the
    body) and reads of a tape nothing in the loop changes (a snapshot's elements); with
    ``deterministic``, no float atomics (their order shows)."""
    own = {inner.result for inner in op.walk() if isinstance(inner, _NAMES_TAPE)}
    changed = {_tape_of(inner) for inner in op.walk()
               if isinstance(inner, _SERIAL) and not isinstance(inner, _READ_TAPE + (Return,))}
    for inner in op.walk():
        if inner is op or isinstance(inner, _NAMES_TAPE):
            continue
        if isinstance(inner, _SERIAL):
            t = _tape_of(inner)
            if t is None or t not in own and (not isinstance(inner, _READ_TAPE) or t in changed):
                return False
        if deterministic and isinstance(inner, AtomicAdd) and inner.operands[0].type.is_inexact:
            return False
    return True


def _tape_of(op: Op):
    """The tape a tape operation works on (None: ``return``, making or freeing tapes)."""
    if isinstance(op, TapeClose):
        return op.operands[2]
    if isinstance(op, (Return, TapeNew, TapeSetNew, TapeSetFree, TapeAdopt)):
        return None
    return op.operands[0] if op.operands else None


def _combinable(r, t, result) -> bool:
    if r.kind == "same":
        return True
    if isinstance(t, ArrayType):  # a private array may live in a thread's arena
        return r.kind == "private" and not result.uses
    if r.kind == "private":
        return True
    if t.is_complex:
        return r.kind == "add"
    return r.kind not in ("maximumf", "minimumf") or t.is_float


def _inputs(op: Op) -> list[Value]:
    """The values the body (and the iteration variable) uses that are defined outside the loop;
    constants are re-emitted as literals instead."""
    inside: set[Value] = set()
    for inner in op.walk():
        if inner is not op:
            inside.update(inner.results)
        for r in inner.regions:
            for b in r.blocks:
                inside.update(b.args)
    seen: dict[Value, None] = {}
    for inner in op.walk():
        for v in (op.operands[0], op.operands[2]) if inner is op else inner.operands:
            if v not in inside and v not in seen and not isinstance(v.op, Constant):
                seen[v] = None
    return list(seen)


def _constants(op: Op) -> dict[Value, str]:
    return {v: literal(v.op.attrs["value"], v.type) for inner in op.walk()
            for v in inner.operands if isinstance(v.op, Constant)}


def _field(fe, env_t: str, env: str, k: int) -> str:
    return fe.assign(f"getelementptr inbounds {env_t}, ptr {env}, i32 0, i32 {k}", "envf")


def _trip_count(fe, lb: str, ub: str, step: str) -> str:
    pos = fe.assign(f"icmp sgt i64 {step}, 0")
    up = fe.assign(f"sub i64 {ub}, {lb}")
    down = fe.assign(f"sub i64 {lb}, {ub}")
    span = fe.assign(f"select i1 {pos}, i64 {up}, i64 {down}")
    neg = fe.assign(f"sub i64 0, {step}")
    mag = fe.assign(f"select i1 {pos}, i64 {step}, i64 {neg}")
    top = fe.assign(f"add i64 {span}, {fe.assign(f'sub i64 {mag}, 1')}")
    n = fe.assign(f"sdiv i64 {top}, {mag}")
    return fe.assign(f"call i64 @llvm.smax.i64(i64 {n}, i64 0)")


def _chunk(ch, op: Op, name: str, env_t: str, kinds, inputs) -> str:
    """The text of the chunk function (``ch``: a fresh emitter for it)."""
    body = op.body
    ncar = len(kinds)
    ch.start("entry")
    ch.entry_allocas.append("  %ctx = alloca [7 x i64], align 8")
    ch.entry_allocas.append("  store [7 x i64] zeroinitializer, ptr %ctx")
    main = ch.assign(f"load ptr, ptr {_field(ch, env_t, '%env', 0)}", "main")
    gp = ch.assign(f"getelementptr i8, ptr {main}, i64 48")
    ch.emit(f"store ptr {ch.assign(f'load ptr, ptr {gp}')}, ptr "
            f"{ch.assign('getelementptr i8, ptr %ctx, i64 48')}")
    ch.vals.update(_constants(op))
    for k, v in enumerate(inputs):
        p = _field(ch, env_t, "%env", HEAD + ncar + k)
        ch.vals[v] = ch.assign(f"load {ltype(v.type)}, ptr {p}", "in")
    lb, step = ch.val(op.operands[0]), ch.val(op.operands[2])
    pre, hdr, bod, ext = ch.cur, ch.label("chunk"), ch.label("cbody"), ch.label("cdone")
    ch.emit(f"br label %{hdr}")
    ch.start(hdr)
    pos = len(ch.lines)
    k = ch.fresh("k")
    accs = [ch.fresh("acc") for _ in range(ncar)]
    ch.emit(f"br i1 {ch.assign(f'icmp slt i64 {k}, %hi')}, label %{bod}, label %{ext}")
    ch.start(bod)
    ch.vals[body.args[0]] = ch.assign(f"add nsw i64 {lb}, {ch.assign(f'mul nsw i64 {k}, {step}')}")
    for a, c in zip(body.args[1:], accs):
        ch.vals[a] = c
    yields = ch.emit_block(body)
    nxt = ch.assign(f"add nsw i64 {k}, 1")
    latch = ch.cur
    ch.emit(f"br label %{hdr}")
    phis = [f"  {k} = phi i64 [%lo, %{pre}], [{nxt}, %{latch}]"]
    for c, a, r, y in zip(accs, body.args[1:], kinds, yields):
        start = literal(identity(r, a.type), a.type) if r.combines else "poison"
        phis.append(f"  {c} = phi {ltype(a.type)} [{start}, %{pre}], [{y}, %{latch}]")
    ch.lines[pos:pos] = phis
    ch.start(ext)
    for j, (c, a) in enumerate(zip(accs, body.args[1:])):
        slot = ch.assign(f"getelementptr inbounds {env_t}, ptr %env, i32 0, i32 {HEAD + j}, "
                         f"i64 %tid")
        ch.emit(f"store {ltype(a.type)} {c}, ptr {slot}")
    ch.emit("call void @zy.arena_free_all(ptr %ctx)")
    ch.emit("ret void")
    ch.lines[1:1] = ch.entry_allocas
    flag = "%failflag"
    fail = ["fail:", *ch.unwind,
            f"  {flag} = getelementptr inbounds {env_t}, ptr %env, i32 0, i32 1",
            f"  %won.pair = cmpxchg ptr {flag}, i64 0, i64 1 seq_cst seq_cst",
            "  %won = extractvalue { i64, i1 } %won.pair, 1",
            "  br i1 %won, label %report, label %quit",
            "report:",
            *(line for off in (0, 8, 16) for line in (
                f"  %src{off} = getelementptr i8, ptr %ctx, i64 {off}",
                f"  %dst{off} = getelementptr i8, ptr {main}, i64 {off}",
                f"  %e{off} = load i64, ptr %src{off}",
                f"  store i64 %e{off}, ptr %dst{off}")),
            "  br label %quit",
            "quit:",
            "  call void @zy.arena_free_all(ptr %ctx)",
            "  ret void"]
    head = f"define internal void {name}(ptr %env, i64 %lo, i64 %hi, i64 %tid) #0 {{"
    return "\n".join([head, *ch.lines, *ch.cold, *fail, "}"])


def _blocks(chunk: str, env_t: str) -> str:
    """``chunk.blocks(env, lo, hi, tid)``: runs blocks ``lo <= b < hi`` of the fixed partition
    of the ``n`` iterations into ``B`` blocks (``B = min(n, 64)``, partial result ``b`` each)."""
    return f"""define internal void {chunk}.blocks(ptr %env, i64 %lo, i64 %hi, i64 %tid) #0 {{
entry:
  %np = getelementptr inbounds {env_t}, ptr %env, i32 0, i32 2
  %n = load i64, ptr %np
  %nbp = getelementptr inbounds {env_t}, ptr %env, i32 0, i32 3
  %nb = load i64, ptr %nbp
  %q = sdiv i64 %n, %nb
  %r = srem i64 %n, %nb
  br label %head
head:
  %b = phi i64 [%lo, %entry], [%b1, %body]
  %more = icmp slt i64 %b, %hi
  br i1 %more, label %body, label %done
body:
  %extra = call i64 @llvm.smin.i64(i64 %b, i64 %r)
  %base = mul i64 %b, %q
  %start = add i64 %base, %extra
  %big = icmp slt i64 %b, %r
  %one = zext i1 %big to i64
  %size = add i64 %q, %one
  %end = add i64 %start, %size
  call void {chunk}(ptr %env, i64 %start, i64 %end, i64 %b)
  %b1 = add i64 %b, 1
  br label %head
done:
  ret void
}}"""


def _combine(fe, r, t, init: str, partials: str, n: str, threads: str) -> str:
    """Combine the partial results ``partials[0..threads)`` with ``init``."""
    lt = ltype(t)
    if r.kind == "same":
        return init
    if r.kind == "private":  # the last block's value (blocks are never empty when n > 0)
        last = fe.assign(f"sub i64 {threads}, 1")
        p = _load_at(fe, lt, partials, last)
        ran = fe.assign(f"icmp sgt i64 {n}, 0")
        return fe.assign(f"select i1 {ran}, {lt} {p}, {lt} {init}")
    pre, hdr, bod, ext = fe.cur, fe.label("comb"), fe.label("cbody"), fe.label("cdone")
    fe.emit(f"br label %{hdr}")
    fe.start(hdr)
    pos = len(fe.lines)
    i, acc = fe.fresh("ti"), fe.fresh("tacc")
    fe.emit(f"br i1 {fe.assign(f'icmp slt i64 {i}, {threads}')}, label %{bod}, label %{ext}")
    fe.start(bod)
    p = _load_at(fe, lt, partials, i)
    nxt_acc = _combine_step(fe, r, t, acc, p)
    nxt = fe.assign(f"add nsw i64 {i}, 1")
    latch = fe.cur
    fe.emit(f"br label %{hdr}")
    fe.lines[pos:pos] = [f"  {i} = phi i64 [0, %{pre}], [{nxt}, %{latch}]",
                         f"  {acc} = phi {lt} [{init}, %{pre}], [{nxt_acc}, %{latch}]"]
    fe.start(ext)
    return acc


def _load_at(fe, lt: str, base: str, i: str) -> str:
    p = fe.assign(f"getelementptr inbounds {lt}, ptr {base}, i64 {i}")
    return fe.assign(f"load {lt}, ptr {p}")


def _combine_step(fe, r, t, acc: str, p: str) -> str:
    lt = ltype(t)
    if t.is_complex:  # add
        ft = SCALAR[str(t.real_type)]
        out = "poison"
        for j in (0, 1):
            a = fe.assign(f"extractvalue {lt} {acc}, {j}")
            b = fe.assign(f"extractvalue {lt} {p}, {j}")
            out = fe.assign(f"insertvalue {lt} {out}, {ft} {fe.assign(f'fadd {ft} {a}, {b}')}, {j}")
        return out
    if r.kind in ("max", "min"):
        cmp = f"fcmp o{r.pred or ('gt' if r.kind == 'max' else 'lt')}" if t.is_float else \
            f"icmp s{r.pred or ('gt' if r.kind == 'max' else 'lt')}"
        take = fe.assign(f"{cmp} {lt} {p}, {acc}")
        return fe.assign(f"select i1 {take}, {lt} {p}, {lt} {acc}")
    if r.kind in ("maximumf", "minimumf"):
        fn = f"@llvm.{r.kind[:7]}.f{t.bits}"
        return fe.assign(f"call {lt} {fn}({lt} {acc}, {lt} {p})")
    if t.is_float:
        return fe.assign(f"{'fadd' if r.kind == 'add' else 'fmul'} {fe.fm}{lt} {acc}, {p}")
    opname = {"add": "add", "mul": "mul", "and": "and", "or": "or", "xor": "xor"}[r.kind]
    return fe.assign(f"{opname} {lt} {acc}, {p}")
