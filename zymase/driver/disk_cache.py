"""The on-disk compile cache (``jit(cache=True)``): machine code kept across processes.

An entry is keyed by the function's qualified name and file, the argument signature, the
options, the zymase version and the backend (its name and ``identity()``: for the CPU backend
the llvmlite version and the host CPU); it stores the backend's saved artifact and what the
entry point needs, plus a hash of every source file the code was compiled from and digests of
the constants it read from globals and closures.  A hit (all sources and constants unchanged)
skips the whole pipeline.  An entry that cannot be read, is
from another version, or whose sources changed is ignored and rebuilt.

Location: ``$ZYMASE_CACHE_DIR`` or ``~/.cache/zymase``.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import pickle
import tempfile

from ..version import __version__

FORMAT = 5  # 2: modules refer to the process's tape pool (zy.tape_pool); 3: fast entries
# take keyword names (METH_FASTCALL | METH_KEYWORDS); 4: payloads list the written arguments
# and digests of the constants the code read from globals and closures (compile.py checks them);
# 5: payloads hold a backend's saved artifact (backends/base.py)
STATS = {"hits": 0, "stores": 0}  # counters for tests and diagnostics


def cache_dir() -> str:
    d = os.environ.get("ZYMASE_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "zymase")
    os.makedirs(d, exist_ok=True)
    return d


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


def entry_path(fn, key, options, backend) -> str:
    ident = repr((fn.__module__, fn.__qualname__, getattr(fn.__code__, "co_filename", ""), key,
                  sorted(vars(options).items()), _versions(backend)))
    return os.path.join(cache_dir(), hashlib.sha256(ident.encode()).hexdigest() + ".zyc")


def load(path: str, backend, accept=None):
    """The stored payload, or None when missing, unreadable, foreign, out of date or not
    ``accept(payload)``."""
    try:
        with open(path, "rb") as f:
            entry = pickle.load(f)
        if entry.get("versions") != _versions(backend):
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


def store(path: str, backend, payload, functions) -> None:
    entry = {"versions": _versions(backend), "payload": payload,
             "sources": [(p, file_hash(p)) for p in source_files(functions)]}
    tmp = None
    try:
        data = pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        STATS["stores"] += 1
    except Exception:  # noqa: BLE001  (a cache that cannot be written is only slower)
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
