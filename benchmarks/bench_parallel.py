"""Parallel loops: prange versions of nbody, a 2-D stencil, gmm's data term and ba
(``parallel_problems.py``), primal and gradient with 1 and 2 threads, against
``numba.njit(parallel=True)`` of the same source (when Numba is installed), side by side in one
run; per-example gradients ``zymase.vmap(zymase.grad(f))`` against
``jax.jit(jax.vmap(jax.grad(f)))``; and the cost of an empty parallel region.

    python benchmarks/bench_parallel.py [--size small|large] [--threads 2]
"""

from __future__ import annotations

import argparse
import os
import types

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", str(os.cpu_count() or 1))  # (common.py sets 1)
import numpy as np  # noqa: E402
from common import best_time, copies  # noqa: E402
from parallel_problems import PROBLEMS, example_loss, inputs  # noqa: E402

import zymase  # noqa: E402


def numba_version(fn, threads):
    try:
        import numba
    except ImportError:
        return None
    numba.set_num_threads(threads)
    g = dict(fn.__globals__, prange=numba.prange)
    g.update({k: numba.njit(types.FunctionType(v.__code__, g, k))
              for k, v in fn.__globals__.items()
              if isinstance(v, types.FunctionType) and v.__module__ == fn.__module__})
    return numba.njit(types.FunctionType(fn.__code__, g, fn.__name__), parallel=True)


def empty_region_us(threads: int) -> float:
    def empty(x):
        for i in zymase.prange(2):
            x[i] = 0.0

    zymase.set_num_threads(threads)
    f = zymase.jit(empty)
    x = np.zeros(2)
    return best_time(lambda: [f(x) for _ in range(1000)], budget=0.5) * 1e3


def per_example(size, t):
    """``zymase.vmap(zymase.grad(f))`` against ``jax.jit(jax.vmap(jax.grad(f)))``: per-example
    gradients of a small network's loss with respect to its weights."""
    w1, w2, xs, ys = inputs("per_example", size)
    pe = zymase.vmap(zymase.grad(example_loss, argnums=(0, 1)), in_axes=(None, None, 0, 0))
    row = {}
    for n in (1, t):
        zymase.set_num_threads(n)
        pe(w1, w2, xs, ys)
        row[n] = best_time(lambda: pe(w1, w2, xs, ys), budget=1.0) * 1e3
    extra = ""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        jax = None
    if jax is not None:
        jax.config.update("jax_enable_x64", True)

        def jloss(w1, w2, x, y):
            h = jnp.tanh(x @ w1)
            return (jnp.sum(h * w2) - y) ** 2

        jf = jax.jit(jax.vmap(jax.grad(jloss, argnums=(0, 1)), in_axes=(None, None, 0, 0)))
        args = [jnp.asarray(v) for v in (w1, w2, xs, ys)]
        ref = jf(*args)
        got = pe(w1, w2, xs, ys)
        assert all(np.allclose(np.asarray(r), g, rtol=1e-9, atol=1e-12) for r, g in zip(ref, got))
        jt = best_time(lambda: jax.block_until_ready(jf(*args)), budget=1.0) * 1e3
        extra = f"{jt:>10.2f} {row[t] / jt:>9.2f}"
    print(f"{'vmap(grad)':<9} {'per-ex.':<8} {row[1]:>10.2f} {row[t]:>10.2f} "
          f"{row[1] / row[t]:>8.2f} {extra}   (jax.jit(vmap(grad)), zymase/jax)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="small")
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    t = a.threads
    print(f"{'problem':<9} {'what':<8} {'1 thread':>10} {f'{t} threads':>10} {'speedup':>8} "
          f"{'numba ' + str(t):>10} {'zy/numba':>9}   (ms)")
    rows = {}
    for name, (fn, active) in PROBLEMS.items():
        args = inputs(name, a.size)
        jf, gf = zymase.jit(fn), zymase.grad(fn, argnums=active)
        row = rows[name] = {}
        for n in (1, t):
            zymase.set_num_threads(n)
            jf(*copies(args))
            gf(*copies(args))
            row["p", n] = best_time(lambda: jf(*copies(args)), budget=1.0) * 1e3
            row["g", n] = best_time(lambda: gf(*copies(args)), budget=1.0) * 1e3
    # Numba after every zymase timing: its OpenMP/TBB workers keep spinning for a while after
    # a parallel region, which would take a core from the next measurement
    for name, (fn, _) in PROBLEMS.items():
        args, row = inputs(name, a.size), rows[name]
        nb = numba_version(fn, t)
        nbt = None
        if nb is not None:
            nb(*copies(args))
            nbt = best_time(lambda: nb(*copies(args)), budget=1.0) * 1e3
        for what, key in (("primal", "p"), ("gradient", "g")):
            one, many = row[key, 1], row[key, t]
            extra = f"{nbt:>10.2f} {many / nbt:>9.2f}" if key == "p" and nbt else ""
            print(f"{name:<9} {what:<8} {one:>10.2f} {many:>10.2f} {one / many:>8.2f} {extra}")
    per_example(a.size, t)
    print(f"empty region, per call (us): 1 thread {empty_region_us(1):.2f}, "
          f"{t} threads {empty_region_us(t):.2f}")


if __name__ == "__main__":
    main()
