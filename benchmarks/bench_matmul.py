"""Matrix products side by side with NumPy, one thread, float64: ``x.T @ W``, ``x @ W.T``,
``A[:, ::2] @ B``, ``A @ x``, ``A.T @ y`` at n = 64, 256, 1024 (``zymase.jit`` of a function
doing the product against NumPy evaluating the same expression), and the gradient of
``np.sum((x @ W) ** 2)`` at n = 256 and 512 (against ``jax.jit(jax.grad)`` when jax is
installed), also counted in products (its time over NumPy's ``x @ W``).  The "call" row is what
zymase's call path alone costs a function of two arrays that returns an array; the "in loop"
column is the product inside a compiled loop (per product, without the call path).

    python benchmarks/bench_matmul.py [--sizes 64,256]
    python benchmarks/bench_matmul.py --crossover   # loops against BLAS inside one call, n=2..128

``--crossover`` times a product inside a compiled loop (no call overhead), compiled once with
the kernels' thresholds at 0 (always BLAS) and once at infinity (always the loops): the numbers
behind ``GEMM_MIN`` / ``GEMV_MIN`` in ``zymase/backends/llvm/matmul.py``.
"""

from __future__ import annotations

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before NumPy loads OpenBLAS: one thread, both sides

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from common import best_time  # noqa: E402

import zymase  # noqa: E402


def t_at_w(x, w):
    return x.T @ w


def x_at_wt(x, w):
    return x @ w.T


def strided_at(a, b):
    return a[:, ::2] @ b


def matrix_vector(a, x):
    return a @ x


def transposed_vector(a, y):
    return a.T @ y


def call_only(a, b):
    return a[:1] * 1.0


def in_a_loop(fn):
    """``fn`` run ``r`` times inside one compiled call: the product without the call path."""
    def run(a, b, r):
        s = 0.0
        for _ in range(r):
            s += np.sum(fn(a, b)[:1])
        return s
    return run


def loss(x, w):
    return np.sum((x @ w) ** 2)


PRODUCTS = [  # (name, program, operand shapes for n)
    ("x.T @ W", t_at_w, lambda n: [(n, n), (n, n)]),
    ("x @ W.T", x_at_wt, lambda n: [(n, n), (n, n)]),
    ("A[:, ::2] @ B", strided_at, lambda n: [(n, 2 * n), (n, n)]),
    ("A @ x", matrix_vector, lambda n: [(n, n), (n,)]),
    ("A.T @ y", transposed_vector, lambda n: [(n, n), (n,)]),
    ("call", call_only, lambda n: [(n,), (n,)]),
]


def products(sizes):
    rng = np.random.default_rng(0)
    print(f"{'product':16} {'n':>5} {'zymase ms':>10} {'numpy ms':>10} {'ratio':>7} "
          f"{'in loop ms':>11} {'ratio':>7}")
    for n in sizes:
        for name, fn, shapes in PRODUCTS:
            args = [rng.standard_normal(s) for s in shapes(n)]
            jitted = zymase.jit(fn)
            budget = 0.5 if n < 1024 else 2.0
            ours = best_time(lambda: jitted(*args), budget)
            if fn is call_only:
                print(f"{name:16} {n:5d} {ours * 1e3:10.4f}", flush=True)
                continue
            theirs = best_time(lambda: fn(*args), budget)
            looped = zymase.jit(in_a_loop(fn))
            reps = max(1, int(0.002 / ours))  # short samples: the minimum skips shared CPU time
            inner = best_time(lambda: looped(*args, reps), budget) / reps
            print(f"{name:16} {n:5d} {ours * 1e3:10.4f} {theirs * 1e3:10.4f} "
                  f"{ours / theirs:7.2f} {inner * 1e3:11.4f} {inner / theirs:7.2f}", flush=True)


def gradients(sizes):
    try:
        import jax  # optional: the comparison the issue quotes
        jax.config.update("jax_enable_x64", True)
        jax_grad = jax.jit(jax.grad(lambda x, w: jax.numpy.sum((x @ w) ** 2), argnums=(0, 1)))
    except ImportError:
        jax_grad = None
    rng = np.random.default_rng(1)
    print(f"\n{'grad sum((x@W)**2)':22} {'n':>5} {'zymase ms':>10} {'products':>9} "
          f"{'jax ms':>8}")
    for n in sizes:
        x, w = rng.standard_normal((n, n)), rng.standard_normal((n, n))
        g = zymase.grad(loss, argnums=(0, 1))
        ours = best_time(lambda: g(x, w), 1.0)
        one = best_time(lambda: x @ w, 1.0)
        theirs = "       -"
        if jax_grad is not None:
            jax_grad(x, w)[0].block_until_ready()
            theirs = f"{best_time(lambda: jax_grad(x, w)[0].block_until_ready(), 1.0) * 1e3:8.3f}"
        print(f"{'':22} {n:5d} {ours * 1e3:10.3f} {ours / one:9.2f} {theirs}", flush=True)


# ---------------------------------------------------------------------- --crossover


def gemm_loop(a, b, r):
    s = 0.0
    for _ in range(r):
        s += (a @ b)[0, 0]
    return s


def gemv_loop(a, v, r):
    s = 0.0
    for _ in range(r):
        s += (a @ v)[0]
    return s


def per_product_us(fn, a, b) -> float:
    fn(a, b, 1)
    r = 1
    while True:
        t0 = time.perf_counter()
        fn(a, b, r)
        if time.perf_counter() - t0 > 0.05:
            break
        r *= 4
    return best_time(lambda: fn(a, b, r), 0.2) / r * 1e6


def compiled(fn, threshold):
    """``fn`` compiled afresh with both BLAS thresholds at ``threshold``."""
    from zymase.backends.llvm import matmul  # only this mode needs the kernels' module

    matmul.GEMM_MIN = matmul.GEMV_MIN = threshold
    return zymase.jit(type(fn)(fn.__code__, fn.__globals__, fn.__name__))


def crossover():
    rng = np.random.default_rng(0)
    for kind, fn in (("gemm", gemm_loop), ("gemv", gemv_loop)):
        print(f"\n{kind}: us per product, loops / BLAS (their ratio)")
        for n in (2, 3, 4, 5, 6, 8, 10, 12, 16, 24, 32, 64, 128):
            a, wide = rng.standard_normal((n, n)), rng.standard_normal((n, 2 * n))
            other = rng.standard_normal((n, n) if kind == "gemm" else n)
            cells = []
            for name, x in (("row", a), ("trans", a.T), ("strided", wide[:, ::2])):
                loops = per_product_us(compiled(fn, 1 << 62), x, other)
                blas = per_product_us(compiled(fn, 0), x, other)
                cells.append(f"{name} {loops:8.3f} / {blas:7.3f} ({loops / blas:5.2f})")
            work = n ** 3 if kind == "gemm" else n * n
            print(f"n={n:4d} work={work:8d}  " + "  ".join(cells), flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="64,256,1024")
    p.add_argument("--grad-sizes", default="256,512")
    p.add_argument("--crossover", action="store_true")
    args = p.parse_args()
    if args.crossover:
        crossover()
        return
    products([int(s) for s in args.sizes.split(",")])
    gradients([int(s) for s in args.grad_sizes.split(",")])


if __name__ == "__main__":
    main()
