"""Memory zymase keeps between calls, for users to bound or give back (``zymase.release_memory``,
``zymase.set_tape_cache``)."""

from __future__ import annotations

import ctypes
import threading

from .engine import compile_ir
from .tape_pool import POOL, buffer_functions

_RELEASE = None
_LOCK = threading.Lock()
_RELEASE_IR = """
@zy.tape_pool = external global [2 x i64]
declare void @free(ptr)
define i64 @zy.tape_pool_release() {
  %kept = atomicrmw xchg ptr @zy.tape_pool, i64 0 acq_rel
  %have = icmp ne i64 %kept, 0
  br i1 %have, label %free, label %none
free:
  %p = inttoptr i64 %kept to ptr
  %cap = load i64, ptr %p
  call void @free(ptr %p)
  %bytes = mul i64 %cap, 8
  ret i64 %bytes
none:
  ret i64 0
}
"""


def release_memory() -> int:
    """Free the memory zymase keeps between calls; returns its size in bytes.

    Reverse-mode derivatives keep their tape (the values the adjoint sweep reads back) for the
    next call when it is 1 MiB or more, up to ``ZYMASE_TAPE_CACHE`` bytes (default: an eighth of
    physical memory; see ``set_tape_cache``), and compiled code keeps up to 8 freed arrays of
    256 KiB to 16 MiB for its next allocations, because fresh memory costs a page fault per
    4 KiB on first touch.  This hands all of it back to the allocator; later calls simply
    allocate again.  Compiled code itself is not freed.

    Returns:
        The number of bytes freed (0 when nothing was kept).

    Examples:
        >>> import zymase
        >>> zymase.release_memory() >= 0
        True
        >>> zymase.release_memory()               # nothing left to free
        0
    """
    global _RELEASE
    with _LOCK:
        if _RELEASE is None:
            _RELEASE = compile_ir(_RELEASE_IR)
    kept = int(ctypes.CFUNCTYPE(ctypes.c_int64)(_RELEASE.address("zy.tape_pool_release"))())
    buffers = buffer_functions()["zy.buffer_cache_release"]
    return kept + int(ctypes.CFUNCTYPE(ctypes.c_int64)(buffers)())


def set_tape_cache(nbytes: int) -> int:
    """Set the most bytes of reverse-mode tape kept between calls; returns the previous limit.

    A reverse-mode derivative whose tape is 1 MiB or more hands its buffer back to the
    process when it returns, and the next call reuses it (fresh memory would cost a page
    fault per 4 KiB).  This bounds the buffer kept; the initial limit is
    ``$ZYMASE_TAPE_CACHE`` bytes, else an eighth of physical memory.

    Args:
        nbytes: The new limit in bytes; 0 (or less) keeps nothing and frees what is kept
            now (``release_memory``).

    Returns:
        The previous limit, in bytes.

    Examples:
        >>> import zymase
        >>> before = zymase.set_tape_cache(64 << 20)   # keep at most 64 MiB of tape
        >>> zymase.set_tape_cache(before)              # restore; returns the limit just set
        67108864
    """
    before = int(POOL[1])
    POOL[1] = max(int(nbytes), 0)
    if nbytes <= 0:
        release_memory()
    return before
