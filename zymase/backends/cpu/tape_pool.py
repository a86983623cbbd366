"""The process's kept tape: the ``zy.tape_pool`` global that compiled reverse-mode code takes a
big tape buffer from and gives it back to (``backends/llvm/tape.py`` emits those exchanges),
and ``zy.buffer_cache``, a few freed arrays kept the same way (``backends/llvm/runtime.py``).

A big tape is otherwise fresh memory from the kernel at every call, and first touching its pages
cost more than the whole gradient (heat1d large: 800 MB, 0.5-1 s of page faults for a 0.2 s
gradient).  ``ZYMASE_TAPE_CACHE`` (bytes, default 1/8 of physical memory; 0 keeps nothing) bounds
what is kept; ``release_memory()`` (``memory.py``) frees it.
"""

from __future__ import annotations

import ctypes
import os
import threading

from llvmlite import binding as llvm

from ..llvm.runtime import CACHED_MAX, CACHED_MIN


def _default_keep() -> int:
    env = os.environ.get("ZYMASE_TAPE_CACHE")
    if env is not None:
        return max(int(float(env)), 0)
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 8
    except (ValueError, OSError, AttributeError):
        return 1 << 30


POOL = (ctypes.c_int64 * 2)(0, _default_keep())  # [kept buffer or 0, most bytes kept]
# freed arrays of 256 KiB to 16 MiB kept for the next allocation (``llvm/runtime.py: zy.alloc``
# and ``zy.release`` call these functions, compiled once here): the same page faults on fresh
# memory, for the shadows, accumulators and temporaries every call of a derivative makes and
# frees
BUFFERS_IR = """
@zy.buffer_cache = internal global [8 x i64] zeroinitializer
declare ptr @malloc(i64)
declare ptr @calloc(i64, i64)
declare void @free(ptr)
declare i64 @malloc_usable_size(ptr)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)

; a big allocation: a kept buffer that fits (zeroed when asked), else fresh memory
define ptr @zy.alloc_big(i64 %n, i32 %zero) {
entry:
  %z = icmp ne i32 %zero, 0
  %k = call ptr @zy.cache_take(i64 %n)
  %got = icmp ne ptr %k, null
  br i1 %got, label %hit, label %fresh
hit:
  br i1 %z, label %clear, label %done
clear:
  call void @llvm.memset.p0.i64(ptr %k, i8 0, i64 %n, i1 false)
  br label %done
done:
  ret ptr %k
fresh:
  br i1 %z, label %c, label %m
c:
  %p = call ptr @calloc(i64 %n, i64 1)
  ret ptr %p
m:
  %q = call ptr @malloc(i64 %n)
  ret ptr %q
}

; a kept buffer of at least %n bytes and at most twice that, or null
define ptr @zy.cache_take(i64 %n) {
entry:
  %most = shl i64 %n, 1
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %next]
  %more = icmp slt i64 %i, 8
  br i1 %more, label %body, label %none
body:
  %slot = getelementptr i64, ptr @zy.buffer_cache, i64 %i
  %b = atomicrmw xchg ptr %slot, i64 0 acq_rel
  %have = icmp ne i64 %b, 0
  br i1 %have, label %check, label %next
check:
  %p = inttoptr i64 %b to ptr
  %size = call i64 @malloc_usable_size(ptr %p)
  %fits = icmp uge i64 %size, %n
  %snug = icmp ule i64 %size, %most
  %ok = and i1 %fits, %snug
  br i1 %ok, label %take, label %back
take:
  ret ptr %p
back:
  call void @zy.cache_put(ptr %p)
  br label %next
next:
  %i1 = add i64 %i, 1
  br label %loop
none:
  ret ptr null
}

define void @zy.cache_put(ptr %p) {
entry:
  %null = icmp eq ptr %p, null
  br i1 %null, label %done, label %sized
sized:
  %size = call i64 @malloc_usable_size(ptr %p)
  %lo = icmp uge i64 %size, @CACHED_MIN@
  %hi = icmp ule i64 %size, @CACHED_MAX@
  %keep = and i1 %lo, %hi
  br i1 %keep, label %loop, label %drop
loop:
  %i = phi i64 [0, %sized], [%i1, %next]
  %more = icmp slt i64 %i, 8
  br i1 %more, label %body, label %drop
body:
  %slot = getelementptr i64, ptr @zy.buffer_cache, i64 %i
  %b = ptrtoint ptr %p to i64
  %r = cmpxchg ptr %slot, i64 0, i64 %b acq_rel monotonic
  %put = extractvalue { i64, i1 } %r, 1
  br i1 %put, label %done, label %next
next:
  %i1 = add i64 %i, 1
  br label %loop
drop:
  call void @free(ptr %p)
  br label %done
done:
  ret void
}

define i64 @zy.buffer_cache_release() {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %next]
  %total = phi i64 [0, %entry], [%total1, %next]
  %more = icmp slt i64 %i, 8
  br i1 %more, label %body, label %done
body:
  %slot = getelementptr i64, ptr @zy.buffer_cache, i64 %i
  %b = atomicrmw xchg ptr %slot, i64 0 acq_rel
  %have = icmp ne i64 %b, 0
  br i1 %have, label %free, label %next
free:
  %p = inttoptr i64 %b to ptr
  %size = call i64 @malloc_usable_size(ptr %p)
  call void @free(ptr %p)
  br label %next
next:
  %got = phi i64 [0, %body], [%size, %free]
  %total1 = add i64 %total, %got
  %i1 = add i64 %i, 1
  br label %loop
done:
  ret i64 %total
}
"""
_BUFFERS: dict[str, int] = {}
_LOCK = threading.Lock()
_FOREVER = []


def buffer_functions() -> dict[str, int]:
    """The kept-buffer functions (compiled at first use, never unloaded) by symbol name."""
    with _LOCK:
        if not _BUFFERS:
            llvm.initialize_native_target()  # (a process loading code from the disk cache
            llvm.initialize_native_asmprinter()  # may get here first)
            tm = llvm.Target.from_default_triple().create_target_machine(opt=2, jit=True)
            text = BUFFERS_IR.replace("@CACHED_MIN@", str(CACHED_MIN)).replace(
                "@CACHED_MAX@", str(CACHED_MAX + (1 << 20)))  # (usable size: a little more)
            mod = llvm.parse_assembly(text, context=llvm.create_context())
            mod.verify()
            engine = llvm.create_mcjit_compiler(mod, tm)
            engine.finalize_object()
            _FOREVER.append(engine)
            for name in ("zy.alloc_big", "zy.cache_put", "zy.buffer_cache_release"):
                _BUFFERS[name] = engine.get_function_address(name)
        return dict(_BUFFERS)


def pool_symbols() -> dict[str, int]:
    functions = buffer_functions()
    return {"zy.tape_pool": ctypes.addressof(POOL), "zy.alloc_big": functions["zy.alloc_big"],
            "zy.cache_put": functions["zy.cache_put"]}

