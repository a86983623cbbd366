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


def _default_keep() -> int:
    env = os.environ.get("ZYMASE_TAPE_CACHE")
    if env is not None:
        return max(int(float(env)), 0)
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 8
    except (ValueError, OSError, AttributeError):
        return 1 << 30


POOL = (ctypes.c_int64 * 2)(0, _default_keep())  # [kept buffer or 0, most bytes kept]
# freed arrays of 256 KiB to 16 MiB kept for the next allocation (``runtime.py: zy.alloc``):
# the same page faults on fresh memory, for the shadows, accumulators and temporaries every
# call of a derivative makes and frees
BUFFERS = (ctypes.c_int64 * 8)()


def pool_symbols() -> dict[str, int]:
    return {"zy.tape_pool": ctypes.addressof(POOL), "zy.buffer_cache": ctypes.addressof(BUFFERS)}
