"""Shared helpers for the benchmarks: the corpus from ../shared/bench, single-threaded timing."""

from __future__ import annotations

import os
import sys
import time

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(var, "1")

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "bench"))


def corpus():
    if SHARED not in sys.path:
        sys.path.insert(0, SHARED)
    import problems
    return problems


def copies(args):
    import numpy as np
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def best_time(fn, budget: float = 1.0, min_reps: int = 3, max_reps: int = 10_000) -> float:
    """Minimum wall time of ``fn()`` over repetitions filling about ``budget`` seconds."""
    best, total, reps = float("inf"), 0.0, 0
    while reps < min_reps or (total < budget and reps < max_reps):
        t0 = time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        best, total, reps = min(best, dt), total + dt, reps + 1
    return best


def first_call(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0
