"""zymase's compiled NumPy library against NumPy itself, side by side in one run: the linear
algebra zymase compiles from its own routines (``frontend/library_linalg.py``: Cholesky, LU
determinant, Jacobi eigh and SVD, Householder QR, elimination solve/inv) against NumPy's LAPACK,
and the calls zymase makes back into NumPy (``np.fft``, ``np.random``: ``host.call``) against
calling NumPy from Python.  Each row: best time of the compiled function, of NumPy, their ratio,
and the compiled ``grad`` of a loss using the routine.  One thread, float64.

    taskset -c 0 python benchmarks/bench_numpy_library.py [--sizes 50 200] [--out results/...]
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402
from common import best_time  # noqa: E402

import zymase  # noqa: E402


def cholesky(a):
    return np.linalg.cholesky(a)


def solve(a, b):
    return np.linalg.solve(a, b)


def inv(a):
    return np.linalg.inv(a)


def det(a):
    return np.linalg.det(a)


def eigh(a):
    return np.linalg.eigh(a)


def qr(a):
    return np.linalg.qr(a)


def svd(a):
    return np.linalg.svd(a, full_matrices=False)


def fft(x):
    return np.fft.fft(x)


def rfft2(x):
    return np.fft.rfft2(x)


def normal(seed, n):
    return np.random.default_rng(seed).standard_normal(n)


def cholesky_loss(a):
    return np.sum(np.linalg.cholesky(a) ** 2)


def solve_loss(a, b):
    return np.sum(np.linalg.solve(a, b) ** 2)


def inv_loss(a):
    return np.sum(np.linalg.inv(a) ** 2)


def det_loss(a):
    return np.linalg.slogdet(a)[1]


def eigh_loss(a):
    w, v = np.linalg.eigh(a)
    return np.sum(w ** 2) + np.sum(v[:, 0] ** 4)


def qr_loss(a):
    q, r = np.linalg.qr(a)
    return np.sum(r ** 2) + np.sum(q[:, 0] ** 4)


def svd_loss(a):
    return np.sum(np.linalg.svd(a, compute_uv=False) ** 3)


def fft_loss(x):
    return np.sum(np.abs(np.fft.fft(x)) ** 2)


def rfft2_loss(x):
    return np.sum(np.abs(np.fft.rfft2(x)) ** 2)


LOSSES = {cholesky: cholesky_loss, solve: solve_loss, inv: inv_loss, det: det_loss,
          eigh: eigh_loss, qr: qr_loss, svd: svd_loss, fft: fft_loss, rfft2: rfft2_loss}


def spd(n):
    a = np.random.default_rng(n).standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


def rows(sizes):
    for n in sizes:
        a, s = np.random.default_rng(1).standard_normal((n, n)), spd(n)
        b = np.random.default_rng(2).standard_normal(n)
        yield f"cholesky n={n}", cholesky, (s,), True
        yield f"solve n={n}", solve, (a, b), True
        yield f"inv n={n}", inv, (a,), True
        yield f"det n={n}", det, (a,), True
        yield f"eigh n={n}", eigh, (s,), n <= 100
        yield f"qr n={n}", qr, (a,), n <= 100
        yield f"svd n={n}", svd, (a,), n <= 100
    for n in (1024, 65536):
        x = np.random.default_rng(3).standard_normal(n)
        yield f"fft n={n}", fft, (x,), True
    yield "rfft2 256x256", rfft2, (np.random.default_rng(4).standard_normal((256, 256)),), True
    yield "rng.standard_normal n=1000", normal, (0, 1000), False
    yield "rng.standard_normal n=10", normal, (0, 10), False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="*", default=[50, 200])
    ap.add_argument("--out")
    args = ap.parse_args()
    lines = ["| routine | zymase | NumPy | ratio | zymase grad |", "|---|---|---|---|---|"]
    for name, fn, xs, with_grad in rows(args.sizes):
        jf = zymase.jit(fn)
        jf(*xs)
        tz = best_time(lambda: jf(*xs), 0.5)
        tn = best_time(lambda: fn(*xs), 0.5)
        tg = ""
        if with_grad:
            g = zymase.grad(LOSSES[fn])
            g(*xs)
            tg = f"{best_time(lambda: g(*xs), 0.5) * 1e3:.3f} ms"
        lines.append(f"| {name} | {tz * 1e3:.3f} ms | {tn * 1e3:.3f} ms | {tz / tn:.2f}x | {tg} |")
        print(lines[-1], flush=True)
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
