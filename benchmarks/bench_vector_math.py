"""Vector math: ``np.sum(np.f(a))`` over 10^6 float64 elements for each math function, zymase
against NumPy and Numba (when installed), side by side in one run; one thread.  Also prints the
measured maximum error in ulps of zymase's and NumPy's results on the same points (reference:
80-bit long double).

    python benchmarks/bench_vector_math.py [--n 1000000]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402

import zymase  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
import vector_math_programs as P  # noqa: E402


def best(fn, repeats=7) -> float:
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times) * 1e3


def points(name, n, rng):
    r = {"log": None, "log2": None, "log10": None, "arcsin": (-1, 1), "arccos": (-1, 1),
         "exp": (-700, 700), "exp2": (-1000, 1000), "sinh": (-700, 700), "cosh": (-700, 700),
         "tan": (-10, 10), "tanh": (-20, 20), "log1p": (-0.99, 100.0),
         "expm1": (-700, 700)}.get(name, (-1e4, 1e4))
    return np.exp(rng.uniform(-690, 690, n)) if r is None else rng.uniform(*r, n)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10**6)
    args = ap.parse_args(argv)
    try:
        import numba
    except ImportError:
        numba = None
    rng = np.random.default_rng(0)
    print(f"{'function':8} {'zymase ms':>10} {'numpy ms':>9} {'numba ms':>9} {'zy/np':>6} "
          f"{'ulp zy':>7} {'ulp np':>7}")
    for name in P.FUNCS:
        a = points(name, args.n, rng)
        zf = zymase.jit(P.SUMS[name])
        t_zy = best(lambda: zf(a))
        t_np = best(lambda: getattr(np, name)(a).sum())
        t_nb = float("nan")
        if numba is not None:
            nf = numba.njit(P.SUMS[name])
            t_nb = best(lambda: nf(a))
        out = np.empty_like(a)
        zymase.jit(P.LOOPS[name])(a, out)
        ref = getattr(np, name)(a.astype(np.longdouble))
        sp = np.spacing(np.abs(ref.astype(np.float64)))
        u_zy = np.nanmax(np.abs(out.astype(np.longdouble) - ref) / sp)
        u_np = np.nanmax(np.abs(getattr(np, name)(a).astype(np.longdouble) - ref) / sp)
        print(f"{name:8} {t_zy:10.3f} {t_np:9.3f} {t_nb:9.3f} {t_zy / t_np:6.2f} "
              f"{float(u_zy):7.2f} {float(u_np):7.2f}")


if __name__ == "__main__":
    main()
