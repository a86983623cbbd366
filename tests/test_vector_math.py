"""Vectorized math (backends/cpu/veclib.py): loops over NumPy's math functions call glibc's
libmvec 4, 8 or 16 lanes at a time (log1p and expm1 through exp and log with Kahan's
corrections, ``backends/llvm/ops.py``).  Each function's error is measured in ulps against an 80-bit
long double reference on a dense sweep of its range (libmvec documents at most 4 ulp), special
values (infinities, NaN, signed zeros, subnormals, the edges of each domain) match NumPy, and
``disable={"vector-math"}`` goes back to libm."""

from __future__ import annotations

import numpy as np
import pytest
import vector_math_programs as P

import zymase
from zymase.backends.cpu import veclib

pytestmark = pytest.mark.skipif(veclib.library() is None, reason="no libmvec on this system")

N = 400_000
RANGES = {"exp": (-700, 700), "exp2": (-1000, 1000), "log": None, "log2": None, "log10": None,
          "sin": (-1e4, 1e4), "cos": (-1e4, 1e4), "tan": (-10, 10), "arcsin": (-1, 1),
          "arccos": (-1, 1), "arctan": (-1e10, 1e10), "sinh": (-700, 700),
          "cosh": (-700, 700), "tanh": (-20, 20), "log1p": "log1p", "expm1": (-745, 709)}
MAX_ULP = 4.0  # libmvec's documented bound
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 2.2e-308, 1.0, -1.0,
                    0.5, 1e-300, 1e300, -1e300, 709.78, 710.0, -745.2, -746.0, 1e-8, 3.14159,
                    1.5707963267948966, 88.7, 1024.0, -1075.0])


def sweep(name, rng):
    r = RANGES[name]
    if r is None:  # logarithms: positive numbers over the whole exponent range
        return np.exp(rng.uniform(np.log(1e-300), np.log(1e300), N))
    if r == "log1p":  # (-1, 1) densely, tiny ones, and the whole positive exponent range
        return np.concatenate([rng.uniform(-1, 1, N // 2), rng.uniform(-1e-7, 1e-7, N // 4),
                               np.exp(rng.uniform(np.log(1e-300), np.log(1e300), N // 4))])
    return rng.uniform(*r, N)


def ulps(got, ref) -> np.ndarray:
    ref64 = ref.astype(np.float64)
    return np.abs(got.astype(np.longdouble) - ref) / np.spacing(np.abs(ref64))


@pytest.mark.parametrize("name", P.FUNCS)
def test_each_function_within_4_ulp_and_vectorized(name):
    a = sweep(name, np.random.default_rng(1))
    f = zymase.jit(P.LOOPS[name])
    out = np.empty_like(a)
    f(a, out)
    err = ulps(out, getattr(np, name)(a.astype(np.longdouble)))
    assert np.nanmax(err) <= MAX_ULP, (name, np.nanmax(err))
    assert "_ZGV" in f.specialization(a, out).llvm_ir  # the libmvec call, not one per lane


@pytest.mark.parametrize("name", P.FUNCS)
def test_special_values_match_numpy(name):
    a = np.tile(SPECIAL, 4)  # long enough for the vector loop
    out = np.empty_like(a)
    with np.errstate(all="ignore"):
        zymase.jit(P.LOOPS[name])(a, out)
        want = getattr(np, name)(a)
    special = ~np.isfinite(want) | (want == 0) | (np.abs(want) < 2.3e-308)
    assert np.array_equal(np.isnan(out), np.isnan(want)), name
    assert np.array_equal(out[special & ~np.isnan(want)], want[special & ~np.isnan(want)]), name
    assert np.array_equal(np.signbit(out[want == 0]), np.signbit(want[want == 0])), name
    finite = ~special
    assert np.all(ulps(out[finite], getattr(np, name)(a[finite].astype(np.longdouble)))
                  <= MAX_ULP), name


def test_two_argument_functions():
    rng = np.random.default_rng(2)
    a, b = rng.uniform(1e-3, 100, N), rng.uniform(-20, 20, N)
    for fn, ref in ((P.power, np.power), (P.arctan2, np.arctan2)):
        out = np.empty_like(a)
        zymase.jit(fn)(a, b, out)
        err = ulps(out, ref(a.astype(np.longdouble), b.astype(np.longdouble)))
        assert np.nanmax(err) <= MAX_ULP, fn.__name__


def test_float32_lanes():
    a = np.random.default_rng(3).uniform(-80, 80, N).astype(np.float32)
    out = np.empty_like(a)
    f = zymase.jit(P.LOOPS["exp"])
    f(a, out)
    ref = np.exp(a.astype(np.float64))
    err = np.abs(out - ref) / np.spacing(np.abs(ref).astype(np.float32))
    assert err.max() <= MAX_ULP and "_ZGV" in f.specialization(a, out).llvm_ir


def test_disabled_vector_math_calls_libm():
    a = sweep("sin", np.random.default_rng(4))
    out = np.empty_like(a)
    f = zymase.jit(P.LOOPS["sin"], disable={"vector-math"})
    f(a, out)
    assert "_ZGV" not in f.specialization(a, out).llvm_ir
    assert np.nanmax(ulps(out, np.sin(a.astype(np.longdouble)))) <= 1.0


def test_derivatives_use_the_same_kernels():
    x = np.linspace(-2.0, 2.0, 1001)
    g = zymase.grad(P.sum_tanh)(x)
    want = 0.5 * (1 - np.tanh(x) ** 2) - 2 * x * np.exp(-x * x)
    assert np.allclose(g, want, rtol=1e-14, atol=1e-14)
    h = 1e-6
    e = np.zeros_like(x)
    e[500] = h
    fd = (P.sum_tanh(x + e) - P.sum_tanh(x - e)) / (2 * h)
    assert abs(g[500] - fd) < 1e-8
