"""Backends by name: ``backend="cpu"`` (the default), ``backend="interp"`` or ``backend="xla"``
(through JAX, when installed) on any transform, or a backend of your own registered with
``register_backend``.

    >>> import zymase
    >>> from zymase.backends import InterpBackend, register_backend
    >>> class Counting(InterpBackend):
    ...     name = "counting"
    >>> _ = register_backend(Counting())
    >>> zymase.jit(lambda x: 2.0 * x, backend="counting")(1.5)   # doctest: +SKIP
    3.0

The built-in backends are imported on first use (``importlib``), so ``import zymase`` loads no
code generator it does not need.
"""

from __future__ import annotations

import importlib
import threading

from ..options import default_backend
from .base import Backend

_BUILTIN = {"cpu": ("zymase.backends.cpu.backend", "CpuBackend"),
            "interp": ("zymase.backends.interp.backend", "InterpBackend"),
            "xla": ("zymase.backends.xla.backend", "XlaBackend")}
_REGISTERED: dict[str, Backend] = {}
_LOCK = threading.Lock()


def register_backend(backend: Backend, name: str | None = None) -> Backend:
    """Make ``backend`` selectable as ``backend=name`` (default: ``backend.name``); returns it.
    A name registered again is replaced (later compilations use the new backend)."""
    if not isinstance(backend, Backend):
        raise TypeError(f"register_backend needs a zymase.backends.Backend instance, not "
                        f"{type(backend).__name__}")
    name = name or backend.name
    if not isinstance(name, str) or not name:
        raise ValueError("a backend needs a name (set the class's `name` or pass name=...)")
    with _LOCK:
        _REGISTERED[name] = backend
    return backend


def get_backend(name: str | Backend | None = None) -> Backend:
    """The backend registered as ``name`` (``None``: the default, ``$ZYMASE_BACKEND`` or
    ``"cpu"``); a ``Backend`` instance is returned as it is."""
    if isinstance(name, Backend):
        return name
    name = default_backend() if name is None else name
    with _LOCK:
        found = _REGISTERED.get(name)
    if found is not None:
        return found
    if name not in _BUILTIN:
        raise ValueError(f"unknown backend {name!r}; available: {', '.join(backend_names())}")
    module, cls = _BUILTIN[name]
    backend = getattr(importlib.import_module(module), cls)()
    with _LOCK:
        return _REGISTERED.setdefault(name, backend)


def backend_names() -> list[str]:
    with _LOCK:
        return sorted(set(_BUILTIN) | set(_REGISTERED))
