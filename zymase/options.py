"""Compilation options shared by ``jit`` and the derivative transforms."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

TRANSFORM_OPTIONS = ("fastmath", "boundscheck", "disable", "memory_limit", "backend", "cache",
                     "deterministic", "parallel", "in_shardings", "out_shardings")


@dataclass(frozen=True)
class Options:
    """``fastmath``: allow reassociation and contraction of float ops (reductions vectorize).
    ``boundscheck``: out-of-range indices raise IndexError (checks the compiler proves
    unnecessary are removed).  ``cache``: keep compiled code on disk across processes.
    ``disable``: names of optimization passes (and pipeline stages, reverse-mode cache
    optimizations) to skip, for ablations.  ``memory_limit``: bytes the reverse-mode tape and
    checkpoints may use (None: unlimited; see autodiff/reverse/checkpoint.py).  ``backend``: the
    name of the backend that compiles the code (``"cpu"``, ``"interp"``, or one registered with
    ``zymase.backends.register_backend``; default ``$ZYMASE_BACKEND`` or ``"cpu"``).
    ``deterministic``: parallel loops give bit-identical results for any number of threads
    (reductions combine fixed blocks of iterations in order; a loop that would need float atomic
    adds runs serially).  ``parallel``: NumPy array expressions, ufuncs and reductions over
    large arrays run on every core too (their outer loops become parallel loops, run on one
    thread below about 16,000 elements); ``prange`` loops run in parallel either way.
    ``in_shardings``/``out_shardings`` (``backend="xla"`` only, as in ``jax.jit``): a
    ``jax.sharding.Sharding`` for every array argument (result), or a tuple with one (or None)
    per argument (result): arguments are placed so before the call (XLA partitions the
    program), results are placed so after it."""

    fastmath: bool = False
    boundscheck: bool = True
    cache: bool = False
    disable: frozenset = field(default_factory=frozenset)
    memory_limit: int | None = None
    backend: str = field(default_factory=lambda: default_backend())
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


def default_backend() -> str:
    """``$ZYMASE_BACKEND`` when set (run a whole program on another backend), else ``"cpu"``."""
    return os.environ.get("ZYMASE_BACKEND") or "cpu"


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
