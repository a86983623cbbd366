"""Gradients of factorizations written the NumPy way, with row and column slices updated in
place: a Cholesky (``L[j+1:, j] = (A[j+1:, j] - L[j+1:, :j] @ L[j, :j]) / L[j, j]``) and an LU
without pivoting (``U[k+1:, k:] -= np.outer(L[k+1:, k], U[k, k:])``), n = 200 by default.  Prints
zymase's primal and ``grad`` times, their ratio, and ``jax.jit(jax.grad)`` of the same
factorizations written with ``.at[].set()`` (when JAX is installed); one thread, float64.

    taskset -c 0 python benchmarks/bench_factorizations.py [--n 200]
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")
import numpy as np  # noqa: E402
from common import best_time  # noqa: E402

import zymase  # noqa: E402


def cholesky_loss(A):
    n = A.shape[0]
    L = np.zeros_like(A)
    for j in range(n):
        s = A[j, j] - L[j, :j] @ L[j, :j]
        L[j, j] = np.sqrt(s)
        L[j + 1:, j] = (A[j + 1:, j] - L[j + 1:, :j] @ L[j, :j]) / L[j, j]
    return np.sum(L * L) + np.sum(np.log(np.diag(L)))


def lu_loss(A):
    n = A.shape[0]
    U = A.copy()
    L = np.eye(n)
    for k in range(n - 1):
        L[k + 1:, k] = U[k + 1:, k] / U[k, k]
        U[k + 1:, k:] -= np.outer(L[k + 1:, k], U[k, k:])
    return np.sum(U * U) + np.sum(L * L)


def jax_versions():
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)

    def chol(A):
        n = A.shape[0]
        L = jnp.zeros_like(A)
        idx = jnp.arange(n)

        def col(j, L):
            row = jnp.where(idx < j, L[j], 0.0)
            s = A[j, j] - row @ row
            d = jnp.sqrt(s)
            below = idx > j
            c = jnp.where(below, (A[:, j] - jnp.where(idx[None, :] < j, L, 0.0) @ row) / d, 0.0)
            return L.at[:, j].set(c).at[j, j].set(d)
        L = jax.lax.fori_loop(0, n, col, L)
        return jnp.sum(L * L) + jnp.sum(jnp.log(jnp.diag(L)))

    def lu(A):
        n = A.shape[0]
        idx = jnp.arange(n)

        def step(k, c):
            L, U = c
            below = idx > k
            lk = jnp.where(below, U[:, k] / U[k, k], 0.0)
            L = L.at[:, k].set(jnp.where(below, lk, L[:, k]))
            U = U - jnp.outer(lk, jnp.where(idx >= k, U[k], 0.0))
            return L, U
        L, U = jax.lax.fori_loop(0, n - 1, step, (jnp.eye(n), A))
        return jnp.sum(U * U) + jnp.sum(L * L)

    return {"cholesky_loss": jax.jit(jax.grad(chol)), "lu_loss": jax.jit(jax.grad(lu))}


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=200)
    n = ap.parse_args(argv).n
    rng = np.random.default_rng(0)
    M = rng.standard_normal((n, n))
    A = M @ M.T + n * np.eye(n)
    try:
        jx = jax_versions()
    except ImportError:
        jx = {}
    print(f"{'factorization':14} {'primal ms':>10} {'grad ms':>9} {'grad/primal':>12} "
          f"{'jax grad ms':>12} {'rel. diff':>10}")
    for fn in (cholesky_loss, lu_loss):
        f, g = zymase.jit(fn), zymase.grad(fn)
        p, gm = 1e3 * best_time(lambda: f(A)), 1e3 * best_time(lambda: g(A))
        j, d = float("nan"), float("nan")
        if fn.__name__ in jx:
            import jax
            jg = jx[fn.__name__]
            j = 1e3 * best_time(lambda: jax.block_until_ready(jg(A)))
            want = np.asarray(jg(A))
            d = float(np.abs(g(A) - want).max() / np.abs(want).max())
        print(f"{fn.__name__:14} {p:10.3f} {gm:9.3f} {gm / p:12.2f} {j:12.3f} {d:10.1e}")


if __name__ == "__main__":
    main()
