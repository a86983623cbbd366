"""Compilation options shared by ``jit`` and the derivative transforms."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

TRANSFORM_OPTIONS = ("fastmath", "boundscheck", "disable", "memory_limit", "backend", "cache",
                     "deterministic", "parallel", "in_shardings", "out_shardings")


def default_backend() -> str:
    """``$ZYMASE_BACKEND`` when set (run a whole program on another backend), else ``"cpu"``."""
    return os.environ.get("ZYMASE_BACKEND") or "cpu"


@dataclass(frozen=True)
class Options:
    """The compilation options of ``jit`` and every transform, which take them as keyword
    arguments (``zymase.jit(f, fastmath=True)``, ``zymase.grad(f, memory_limit=2**20)``);
    an ``Options`` is what those calls build and check.

    Attributes:
        fastmath: Float operations may be reassociated and contracted, so reductions
            vectorize (results may differ in the last bits).  Default False.
        boundscheck: Out-of-range indices raise ``IndexError``; checks the compiler proves
            unnecessary are removed.  Default True.
        cache: Keep the machine code on disk across processes (``$ZYMASE_CACHE_DIR``,
            default ``~/.cache/zymase``).  Default False.
        disable: Names of compiler parts to switch off, for comparisons: optimization passes
            (``"inline"``, ``"cse"``, ``"licm"``, ...), the ``"optimize"`` stage, reverse
            mode's ways of not storing values (``"recompute"``, ``"reload"``, ``"mincut"``,
            ...), ``"parallel_adjoint"``, ``"vector-math"`` (CPU).  An unknown name raises
            ``ValueError``.  Default empty.
        memory_limit: The most bytes the reverse-mode tape and saved loop states may use
            (None: unlimited); outer loops are then checkpointed.  Default None.
        backend: ``"cpu"``, ``"interp"``, ``"xla"`` or a name registered with
            ``zymase.backends.register_backend``.  Default ``$ZYMASE_BACKEND``, else
            ``"cpu"``.
        deterministic: ``prange`` loops give bit-identical results for any number of
            threads.  Default False.
        parallel: NumPy array expressions, ufuncs and reductions over large arrays run on
            every core too.  Default False.
        in_shardings: ``backend="xla"`` only, as in ``jax.jit``: a
            ``jax.sharding.Sharding`` for every array argument, or a tuple with one (or
            None) per argument.  Default None.
        out_shardings: The same for the results.  Default None.

    Examples:
        >>> from zymase.options import Options
        >>> Options(fastmath=True).boundscheck
        True
    """

    fastmath: bool = False
    boundscheck: bool = True
    cache: bool = False
    disable: frozenset = field(default_factory=frozenset)
    memory_limit: int | None = None
    backend: str = field(default_factory=default_backend)
    deterministic: bool = False
    parallel: bool = False
    in_shardings: object = None
    out_shardings: object = None

    def __post_init__(self):
        for name in ("in_shardings", "out_shardings"):
            value = getattr(self, name)
            if value is None:
                continue
            if self.backend != "xla":
                raise ValueError(f"{name}= places arrays on JAX devices: it needs "
                                 "backend='xla'")
            if isinstance(value, list):
                object.__setattr__(self, name, tuple(value))


def transform_options(**kw) -> Options:
    """The ``Options`` of a derivative transform's keyword arguments, checked (``disable``
    names optimization passes and reverse-mode cache optimizations to switch off: see
    passes/pipeline.py and autodiff/plan/policy.OPTIMIZATIONS)."""
    unknown = set(kw) - set(TRANSFORM_OPTIONS)
    if unknown:
        raise TypeError(f"unknown options {sorted(unknown)}")
    disable = kw.get("disable", ())
    if isinstance(disable, str):
        raise TypeError(f"disable= takes a set of names, e.g. disable={{{disable!r}}}")
    limit = kw.get("memory_limit")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, (int, np.integer))
                              or limit <= 0):
        raise ValueError(f"memory_limit must be a positive number of bytes, not {limit!r}")
    return Options(fastmath=kw.get("fastmath", False), boundscheck=kw.get("boundscheck", True),
                   cache=bool(kw.get("cache", False)), disable=frozenset(kw.get("disable", ())),
                   memory_limit=None if limit is None else int(limit),
                   backend=backend_name(kw.get("backend")),
                   deterministic=bool(kw.get("deterministic", False)),
                   parallel=bool(kw.get("parallel", False)),
                   in_shardings=kw.get("in_shardings"), out_shardings=kw.get("out_shardings"))


def backend_name(backend) -> str:
    """The name ``backend=`` selects (a registered name, or a Backend instance's name)."""
    if backend is None:
        return default_backend()
    name = backend if isinstance(backend, str) else getattr(backend, "name", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"backend= takes a backend's name, not {backend!r}")
    return name
