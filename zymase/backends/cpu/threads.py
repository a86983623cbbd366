"""The process's thread pool for parallel loops: LLVM IR text on libc's pthreads, compiled once
per process (its own MCJIT engine, never unloaded: its workers run its code forever) and bound
with ``llvm.add_symbol``, so compiled modules ``declare`` and call:

* ``void @zy.parallel_for(ptr fn, ptr env, i64 n, i64 nt)``: ``fn(env, lo, hi, tid)``
  (``void (ptr, i64, i64, i64)``) once for every tid in [0, nt) (nt clamped to 1..64), even for
  an empty block; static contiguous blocks of [0, n): q = n / nt, r = n % nt, block t starts at
  t*q + min(t, r) and has q + (t < r) indices.  The caller runs tid 0 itself and returns when
  every block has returned.  nt == 1 calls fn(env, 0, n, 0).
* ``i64 @zy.pool.threads()`` and ``void @zy.pool.set_threads(i64)``: the thread-count setting
  (``get_num_threads`` / ``set_num_threads`` here), which the pool itself does not read.

Worker t (created with ``pthread_create`` the first time a region needs it, then kept) serves
tid t and waits on its own 64-byte slot for a pointer to the region ({fn, env, n, nt}, in the
caller's frame): it spins on it for about 50 us (``pause``, and a ``sched_yield`` every 128
rounds so that a thread sharing its CPU runs: a woken worker placed on the dispatcher's CPU,
more threads than CPUs), so back-to-back regions cost a few cache-line transfers, then sleeps on
its condvar.  Sleeping is Dekker-style: the worker, holding its mutex, stores ``sleeping`` then
re-reads the slot; the dispatcher stores the slot then reads ``sleeping`` (all seq_cst), so one
of them sees the other and no wake-up is lost.  The worker clears the slot (release) when its
block returns; the dispatcher spins the same way (acquire loads) until every slot it filled is
clear, so the chunks' writes are seen and a worker never reads a later region's fields.  The
tids of workers that ``pthread_create`` could not make run in the caller after tid 0.

A region already in flight (``busy``, taken with cmpxchg and never waited on) makes a nested
call from a chunk, or a call from a second OS thread, run its nt blocks serially in the caller
with the same blocks and tids.  ``@zy.pool.live`` is a word in a page the kernel wipes on fork
(``_fork_word``): when it reads 0 (first use, or a forked child) the pool compares ``getpid()``
(a system call, too dear for every region) with the pid it stored; if they differ, one thread
claims the pool (cmpxchg of the pid to -pid), forgets the parent's workers and zeroes the busy
flag, slots, mutexes and condvars (glibc's initializers are all zero) while the others run
serially; workers are then created again as needed.

The pool is compiled here rather than by ``engine.py`` (which binds these symbols for every
module it loads), with its own LLVM context.  The thread count defaults at the first
``pool_symbols`` or ``get_num_threads``: a bad ``ZYMASE_NUM_THREADS`` raises then.
"""

from __future__ import annotations

import ctypes
import mmap
import operator
import os
import platform
import threading

import llvmlite.binding as llvm

MAX_THREADS = 64
SPINS = 2000  # rounds a worker spins on its slot before sleeping (about 50-100 us)
YIELD_EVERY = 128  # spinning, a `sched_yield` every so many rounds, `pause` on the others: a
# thread that shares the spinner's CPU (a woken worker, more threads than CPUs) gets to run

_ASM = {"x86_64": "pause", "amd64": "pause", "aarch64": "yield", "arm64": "yield"}
PAUSE = _ASM.get(platform.machine().lower(), "")

POOL_IR = f"""
%region = type {{ ptr, ptr, i64, i64 }}  ; fn, env, n, nt

@zy.pool.setting = external global i64
@zy.pool.live = external global i64
@slots = internal global [64 x [8 x i64]] zeroinitializer, align 64  ; task pointer, sleeping
@sync = internal global [64 x [128 x i8]] zeroinitializer, align 64  ; mutex at 0, condvar at 64
@busy = internal global i32 0, align 64
@pid = internal global i32 0
@nworkers = internal global i64 0

declare i32 @pthread_create(ptr, ptr, ptr, ptr)
declare i32 @pthread_mutex_lock(ptr)
declare i32 @pthread_mutex_unlock(ptr)
declare i32 @pthread_cond_wait(ptr, ptr)
declare i32 @pthread_cond_signal(ptr)
declare i32 @sched_yield()
declare i32 @getpid()
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
declare i64 @llvm.umin.i64(i64, i64)

define i64 @zy.pool.threads() {{
  %v = load atomic i64, ptr @zy.pool.setting monotonic, align 8
  ret i64 %v
}}

define void @zy.pool.set_threads(i64 %n) {{
  %lo = call i64 @llvm.smax.i64(i64 %n, i64 1)
  %v = call i64 @llvm.smin.i64(i64 %lo, i64 {MAX_THREADS})
  store atomic i64 %v, ptr @zy.pool.setting monotonic, align 8
  ret void
}}
declare i64 @llvm.smax.i64(i64, i64)
declare i64 @llvm.smin.i64(i64, i64)

define internal void @block(ptr %fn, ptr %env, i64 %n, i64 %nt, i64 %t) alwaysinline {{
  %q = udiv i64 %n, %nt
  %r = urem i64 %n, %nt
  %early = icmp ult i64 %t, %r
  %m = select i1 %early, i64 %t, i64 %r
  %tq = mul i64 %t, %q
  %lo = add i64 %tq, %m
  %extra = zext i1 %early to i64
  %len = add i64 %q, %extra
  %hi = add i64 %lo, %len
  call void %fn(ptr %env, i64 %lo, i64 %hi, i64 %t)
  ret void
}}

define internal void @blocks(ptr %fn, ptr %env, i64 %n, i64 %nt, i64 %from) {{  ; tids from..nt-1
entry:
  %any = icmp ult i64 %from, %nt
  br i1 %any, label %loop, label %done
loop:
  %t = phi i64 [%from, %entry], [%t1, %loop]
  call void @block(ptr %fn, ptr %env, i64 %n, i64 %nt, i64 %t)
  %t1 = add i64 %t, 1
  %more = icmp ult i64 %t1, %nt
  br i1 %more, label %loop, label %done
done:
  ret void
}}

define internal void @relax(i64 %round) alwaysinline {{
  %k = and i64 %round, {YIELD_EVERY - 1}
  %yield = icmp eq i64 %k, {YIELD_EVERY - 1}
  br i1 %yield, label %yielding, label %pausing
yielding:
  call i32 @sched_yield()
  ret void
pausing:
  call void asm sideeffect "{PAUSE}", ""()
  ret void
}}

define internal ptr @worker(ptr %arg) {{
entry:
  %w = ptrtoint ptr %arg to i64
  %slot = getelementptr [64 x [8 x i64]], ptr @slots, i64 0, i64 %w
  %sleeping = getelementptr i64, ptr %slot, i64 1
  %mutex = getelementptr [64 x [128 x i8]], ptr @sync, i64 0, i64 %w
  %cond = getelementptr i8, ptr %mutex, i64 64
  br label %spin
spin:
  %i = phi i64 [0, %entry], [%i1, %pause], [0, %run]
  %task = load atomic ptr, ptr %slot acquire, align 8
  %has = icmp ne ptr %task, null
  br i1 %has, label %run, label %pause
pause:
  call void @relax(i64 %i)
  %i1 = add i64 %i, 1
  %long = icmp ugt i64 %i1, {SPINS}
  br i1 %long, label %sleep, label %spin
sleep:
  call i32 @pthread_mutex_lock(ptr %mutex)
  store atomic i64 1, ptr %sleeping seq_cst, align 8
  br label %check
check:
  %task2 = load atomic ptr, ptr %slot seq_cst, align 8
  %has2 = icmp ne ptr %task2, null
  br i1 %has2, label %woken, label %wait
wait:
  call i32 @pthread_cond_wait(ptr %cond, ptr %mutex)
  br label %check
woken:
  store atomic i64 0, ptr %sleeping seq_cst, align 8
  call i32 @pthread_mutex_unlock(ptr %mutex)
  br label %run
run:
  %r = phi ptr [%task, %spin], [%task2, %woken]
  %fn = load ptr, ptr %r, align 8
  %envp = getelementptr %region, ptr %r, i32 0, i32 1
  %env = load ptr, ptr %envp, align 8
  %np = getelementptr %region, ptr %r, i32 0, i32 2
  %n = load i64, ptr %np, align 8
  %ntp = getelementptr %region, ptr %r, i32 0, i32 3
  %nt = load i64, ptr %ntp, align 8
  call void @block(ptr %fn, ptr %env, i64 %n, i64 %nt, i64 %w)
  store atomic ptr null, ptr %slot release, align 8
  br label %spin
}}

define void @zy.parallel_for(ptr %fn, ptr %env, i64 %n0, i64 %nt0) {{
entry:
  %region = alloca %region, align 8
  %thread = alloca i64, align 8
  %n = call i64 @llvm.smax.i64(i64 %n0, i64 0)
  %nt1 = call i64 @llvm.smax.i64(i64 %nt0, i64 1)
  %nt = call i64 @llvm.smin.i64(i64 %nt1, i64 {MAX_THREADS})
  %one = icmp eq i64 %nt, 1
  br i1 %one, label %direct, label %known
direct:
  call void %fn(ptr %env, i64 0, i64 %n, i64 0)
  ret void
known:  ; the word in a page wiped on fork is set: the state is this process's
  %live = load atomic i64, ptr @zy.pool.live acquire, align 8
  %isset = icmp ne i64 %live, 0
  br i1 %isset, label %acquire, label %checkpid
checkpid:  ; first use in this process (a forked child too): one thread resets, others go serial
  %me = call i32 @getpid()
  %was = load atomic i32, ptr @pid acquire, align 4
  %same = icmp eq i32 %was, %me
  br i1 %same, label %acquire, label %claim
claim:
  %mine = sub i32 0, %me
  %claimed = icmp eq i32 %was, %mine
  br i1 %claimed, label %serial, label %tryclaim
tryclaim:
  %x = cmpxchg ptr @pid, i32 %was, i32 %mine seq_cst seq_cst
  %won = extractvalue {{ i32, i1 }} %x, 1
  br i1 %won, label %reset, label %serial
reset:
  store i64 0, ptr @nworkers, align 8
  call void @llvm.memset.p0.i64(ptr align 64 @slots, i8 0, i64 4096, i1 false)
  call void @llvm.memset.p0.i64(ptr align 64 @sync, i8 0, i64 8192, i1 false)
  store atomic i32 0, ptr @busy seq_cst, align 4
  store atomic i32 %me, ptr @pid release, align 4
  store atomic i64 1, ptr @zy.pool.live release, align 8
  br label %acquire
acquire:
  %b = cmpxchg ptr @busy, i32 0, i32 1 acquire monotonic
  %got = extractvalue {{ i32, i1 }} %b, 1
  br i1 %got, label %spawn, label %serial
serial:
  call void @blocks(ptr %fn, ptr %env, i64 %n, i64 %nt, i64 0)
  ret void
spawn:
  %need = sub i64 %nt, 1
  %have = load i64, ptr @nworkers, align 8
  %enough = icmp uge i64 %have, %need
  br i1 %enough, label %post, label %create
create:
  %k = phi i64 [%have, %spawn], [%id, %created]
  %id = add i64 %k, 1
  %arg = inttoptr i64 %id to ptr
  %rc = call i32 @pthread_create(ptr %thread, ptr null, ptr @worker, ptr %arg)
  %ok = icmp eq i32 %rc, 0
  br i1 %ok, label %created, label %post
created:
  store i64 %id, ptr @nworkers, align 8
  %more = icmp ult i64 %id, %need
  br i1 %more, label %create, label %post
post:
  %made = load i64, ptr @nworkers, align 8
  %nw = call i64 @llvm.umin.i64(i64 %made, i64 %need)
  store ptr %fn, ptr %region, align 8
  %envp = getelementptr %region, ptr %region, i32 0, i32 1
  store ptr %env, ptr %envp, align 8
  %np = getelementptr %region, ptr %region, i32 0, i32 2
  store i64 %n, ptr %np, align 8
  %ntp = getelementptr %region, ptr %region, i32 0, i32 3
  store i64 %nt, ptr %ntp, align 8
  %none = icmp eq i64 %nw, 0
  br i1 %none, label %own, label %give
give:
  %w = phi i64 [1, %post], [%w1, %given]
  %slot = getelementptr [64 x [8 x i64]], ptr @slots, i64 0, i64 %w
  store atomic ptr %region, ptr %slot seq_cst, align 8
  %sleepp = getelementptr i64, ptr %slot, i64 1
  %asleep = load atomic i64, ptr %sleepp seq_cst, align 8
  %wake = icmp ne i64 %asleep, 0
  br i1 %wake, label %signal, label %given
signal:
  %mutex = getelementptr [64 x [128 x i8]], ptr @sync, i64 0, i64 %w
  %cond = getelementptr i8, ptr %mutex, i64 64
  call i32 @pthread_mutex_lock(ptr %mutex)
  call i32 @pthread_cond_signal(ptr %cond)
  call i32 @pthread_mutex_unlock(ptr %mutex)
  br label %given
given:
  %w1 = add i64 %w, 1
  %moregive = icmp ule i64 %w1, %nw
  br i1 %moregive, label %give, label %own
own:  ; tid 0, and the tids of workers that could not be created
  call void @block(ptr %fn, ptr %env, i64 %n, i64 %nt, i64 0)
  %rest = add i64 %nw, 1
  call void @blocks(ptr %fn, ptr %env, i64 %n, i64 %nt, i64 %rest)
  br i1 %none, label %done, label %join
join:
  %j = phi i64 [1, %own], [%j1, %clear]
  %jslot = getelementptr [64 x [8 x i64]], ptr @slots, i64 0, i64 %j
  br label %poll
poll:
  %s = phi i64 [0, %join], [%s1, %backoff]
  %left = load atomic ptr, ptr %jslot acquire, align 8
  %isclear = icmp eq ptr %left, null
  br i1 %isclear, label %clear, label %backoff
backoff:
  call void @relax(i64 %s)
  %s1 = add i64 %s, 1
  br label %poll
clear:
  %j1 = add i64 %j, 1
  %morejoin = icmp ule i64 %j1, %nw
  br i1 %morejoin, label %join, label %done
done:
  store atomic i32 0, ptr @busy release, align 4
  ret void
}}
"""

_SETTING = ctypes.c_int64(0)  # the thread count `@zy.pool.threads()` reads (0: not chosen yet)
_LOCK = threading.Lock()
_SYMBOLS: dict[str, int] = {}
_FOREVER = []  # the pool's engine (its workers run its code) and its fork-wiped page


def _fork_word():
    """``@zy.pool.live``: a word that reads 0 in a forked child, so regions need no ``getpid``
    (a system call, 0.14 us): in a private anonymous page wiped on fork (Linux 4.14+), else
    cleared by ``os.register_at_fork`` (forks made by Python only)."""
    page = mmap.mmap(-1, mmap.PAGESIZE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    word = ctypes.c_int64.from_buffer(page)
    try:
        page.madvise(mmap.MADV_WIPEONFORK)
    except (AttributeError, OSError):
        os.register_at_fork(after_in_child=lambda: setattr(word, "value", 0))
    _FOREVER.append(page)
    return word


def _checked(n, what: str) -> int:
    if isinstance(n, bool):
        raise TypeError(f"{what}: expected an int from 1 to {MAX_THREADS}, got {n!r}")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"{what}: expected an int from 1 to {MAX_THREADS}, got "
                        f"{type(n).__name__}") from None
    if not 1 <= n <= MAX_THREADS:
        raise ValueError(f"{what}: expected an int from 1 to {MAX_THREADS}, got {n}")
    return n


def _default() -> int:
    env = os.environ.get("ZYMASE_NUM_THREADS")
    if env is not None:
        try:
            return _checked(int(env), "ZYMASE_NUM_THREADS")
        except ValueError:
            raise ValueError(f"ZYMASE_NUM_THREADS={env!r}: expected an int from 1 to "
                             f"{MAX_THREADS}") from None
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return min(max(n, 1), MAX_THREADS)


def get_num_threads() -> int:
    """The number of threads parallel loops use.

    ``prange`` loops (and, with ``parallel=True``, large array expressions) run on this many
    threads: the value of ``set_num_threads`` when it was called, else ``$ZYMASE_NUM_THREADS``,
    else the number of CPUs this process may run on (at most 64).

    Returns:
        The thread count, from 1 to 64.

    Raises:
        ValueError: ``$ZYMASE_NUM_THREADS`` is not an int from 1 to 64 (at the first call).

    Examples:
        >>> import zymase
        >>> 1 <= zymase.get_num_threads() <= 64
        True
    """
    if _SETTING.value == 0:
        with _LOCK:
            if _SETTING.value == 0:
                _SETTING.value = _default()
    return _SETTING.value


def set_num_threads(n: int) -> None:
    """Set the number of threads parallel loops use, for the whole process.

    Takes effect at the next parallel loop, in code already compiled too (the pool reads the
    setting at each loop); ``n = 1`` runs the same code serially.  Results of float reductions
    may differ in the last bits between thread counts unless the code was compiled with
    ``deterministic=True``.

    Args:
        n: The thread count, an int from 1 to 64.

    Raises:
        TypeError: ``n`` is not an int (a bool is refused too).
        ValueError: ``n`` is not from 1 to 64.

    Examples:
        >>> import zymase
        >>> before = zymase.get_num_threads()
        >>> zymase.set_num_threads(1)
        >>> zymase.get_num_threads()
        1
        >>> zymase.set_num_threads(before)
    """
    _SETTING.value = _checked(n, "set_num_threads")


def pool_symbols() -> dict[str, int]:
    """The pool's functions (compiled at the first call, never unloaded) by symbol name."""
    with _LOCK:
        if not _SYMBOLS:
            if _SETTING.value == 0:
                _SETTING.value = _default()
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            llvm.initialize_native_asmparser()  # (the inline `pause`)
            llvm.add_symbol("zy.pool.setting", ctypes.addressof(_SETTING))
            llvm.add_symbol("zy.pool.live", ctypes.addressof(_fork_word()))
            tm = llvm.Target.from_default_triple().create_target_machine(opt=3, jit=True)
            mod = llvm.parse_assembly(POOL_IR, context=llvm.create_context())
            mod.verify()
            engine = llvm.create_mcjit_compiler(mod, tm)
            engine.finalize_object()
            _FOREVER.append(engine)
            for name in ("zy.parallel_for", "zy.pool.threads", "zy.pool.set_threads"):
                _SYMBOLS[name] = engine.get_function_address(name)
        return dict(_SYMBOLS)
