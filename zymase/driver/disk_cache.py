"""The on-disk compile cache (``jit(cache=True)``): machine code kept across processes.

An entry is keyed by the function's qualified name and file, the argument signature, the
options, the zymase version and the backend (its name and ``identity()``: for the CPU backend
the llvmlite version and the host CPU); it stores the backend's saved artifact and what the
entry point needs, plus a hash of every source file the code was compiled from and digests of
what it read from globals and closures (``frontend/captures.py``: found again and checked in
the loading process).  A hit (all sources and constants unchanged) skips the whole pipeline.

An entry is ``MAGIC``, the SHA-256 of its body, and the body, which records its full key.  The
checksum is verified before anything in the body is read or handed to the backend's loader, and
the key must equal the one asked for, so a damaged entry (a flipped bit anywhere, a truncated
file) or an entry of another function or signature under the same file name is a miss: the code
is compiled again and the entry rewritten.  The directory is made private to the user (0700,
entries 0600); when it cannot be made, read or written (a file in its place, a full disk, no
permission), calls compile in memory as without the cache.  The body is plain data
(``entry_format.py``: JSON and the machine code's bytes), so reading an entry runs no code; what
the format cannot hold (a returned constant of another type) is not kept.

Location: ``$ZYMASE_CACHE_DIR`` or ``~/.cache/zymase``.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import tempfile

from ..frontend.captures import code_digest
from ..version import __version__
from . import entry_format

FORMAT = 10  # 2: modules refer to the process's tape pool (zy.tape_pool); 3: fast entries
# take keyword names (METH_FASTCALL | METH_KEYWORDS); 4: payloads list the written arguments
# and digests of the constants the code read from globals and closures (compile.py checks them);
# 5: payloads hold a backend's saved artifact (backends/base.py); 6: MAGIC, checksum, full key;
# 7: plain data (entry_format.py), no pickle; 8: code that raises frees its buffers and tape;
# 9: captures (frontend/captures.py): global arrays read at call time, guards per name;
# 10: fast entries box arrays (pybox.py: NumPy's API table, a boxer in the dispatch state)
MAGIC = f"zymase-cache-{FORMAT}\n".encode()
STATS = {"hits": 0, "stores": 0}  # counters for tests and diagnostics


def cache_dir() -> str | None:
    """The cache directory, made (private to the user) if missing; None when it cannot be."""
    d = os.environ.get("ZYMASE_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "zymase")
    try:
        os.makedirs(d, mode=0o700, exist_ok=True)
    except OSError:
        return None
    return d if os.path.isdir(d) else None


def _versions(backend) -> tuple:
    return (FORMAT, __version__, backend.name, *backend.identity())


def file_hash(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def source_files(functions) -> list[str]:
    """The files the compiled code came from (any change to one of them invalidates it)."""
    return sorted({inspect.getsourcefile(fn) or fn.__code__.co_filename for fn in functions})


def entry_key(fn, key, options, backend) -> str:
    """The full key of an entry (its file name is a hash of it)."""
    opts = sorted((k, sorted(v) if isinstance(v, frozenset) else v)  # (a set's order varies)
                  for k, v in vars(options).items())
    code = code_digest(fn.__code__)  # (a def that runs twice with other bodies)
    return repr((fn.__module__, fn.__qualname__, getattr(fn.__code__, "co_filename", ""), code,
                 key, opts, _versions(backend)))


def entry_path(ident: str) -> str | None:
    d = cache_dir()
    if d is None:
        return None
    return os.path.join(d, hashlib.sha256(ident.encode()).hexdigest() + ".zyc")


def load(ident: str, backend, accept=None):
    """The stored payload, or None when missing, unreadable, damaged, foreign, out of date or
    not ``accept(payload)``."""
    path = entry_path(ident)
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            data = f.read()
        head = len(MAGIC) + 65
        if not data.startswith(MAGIC) or \
                hashlib.sha256(data[head:]).hexdigest().encode() + b"\n" != data[len(MAGIC):head]:
            return None  # damaged (or not an entry): nothing of it is read
        entry = entry_format.loads(data[head:])
        if entry.get("key") != ident or entry.get("versions") != _versions(backend):
            return None
        for path, digest in entry["sources"]:
            if file_hash(path) != digest:
                return None
        if accept is not None and not accept(entry["payload"]):
            return None
        STATS["hits"] += 1
        return entry["payload"]
    except Exception:  # noqa: BLE001  (any damage means: rebuild)
        return None


def store(ident: str, backend, payload, functions) -> None:
    path = entry_path(ident)
    if path is None:
        return
    tmp = None
    try:
        entry = {"key": ident, "versions": _versions(backend), "payload": payload,
                 "sources": [(p, file_hash(p)) for p in source_files(functions)]}
        body = entry_format.dumps(entry)
        data = MAGIC + hashlib.sha256(body).hexdigest().encode() + b"\n" + body
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")  # (mode 0600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        STATS["stores"] += 1
    except Exception:  # noqa: BLE001  (a cache that cannot be written is only slower)
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
