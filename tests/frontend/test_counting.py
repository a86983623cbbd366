"""``np.bincount`` and ``np.histogram`` against NumPy: counts, sums of weights, densities and
edges (values exactly on edges land where NumPy puts them), empty and constant inputs, the
errors NumPy raises, and derivatives with respect to the weights and the values
(``frontend/numpy/counting.py``)."""

import numpy as np
import pytest
from numpy_check import central_differences, check

import zymase


def _histograms(a, w):
    h, e = np.histogram(a, bins=7)
    h2, e2 = np.histogram(a, bins=5, range=(-1.0, 1.0), weights=w)
    h3, e3 = np.histogram(a, 4, density=True)
    return h, e, h2, e2, h3, e3


def _bincounts(x, w):
    return np.bincount(x), np.bincount(x, weights=w), np.bincount(x, minlength=10)


@pytest.mark.parametrize("a", [
    np.random.default_rng(0).standard_normal(50),
    np.linspace(-1.0, 1.0, 21),          # values on the edges
    np.array([0.5, 0.5, 0.5]),           # a constant: the range widened by 1/2
    np.array([]),
    np.arange(10.0) * 0.1,
], ids=["normal", "edges", "constant", "empty", "tenths"])
def test_histogram_against_numpy(a):
    w = np.random.default_rng(1).standard_normal(a.size)
    with np.errstate(all="ignore"):
        check(_histograms, a, w)


def test_bincount_against_numpy():
    check(_bincounts, np.array([0, 3, 3, 1, 5]), np.linspace(0.5, 1.5, 5))
    # (an empty input with weights: NumPy returns int64 zeros, a dtype that depends on the
    # length; zymase's result keeps the weights' dtype)
    check(_counts, np.array([], dtype=np.int64))


def _counts(x):
    return np.bincount(x), np.bincount(x, minlength=3)


def test_errors_numpy_raises():
    with pytest.raises(ValueError, match="not finite"):
        zymase.jit(_histograms)(np.array([0.0, np.nan]), np.ones(2))
    with pytest.raises(ValueError, match="no negative elements"):
        zymase.jit(_bincounts)(np.array([1, -1]), np.ones(2))
    with pytest.raises(ValueError, match="same length"):
        zymase.jit(_bincounts)(np.array([1, 2]), np.ones(3))


def _loss(w, a):
    h, e = np.histogram(a, bins=4, weights=w)
    return np.sum(h * h) + np.sum(e * e) + np.sum(np.bincount(np.array([0, 2, 2]),
                                                              weights=w[:3]) ** 2)


def test_derivatives():
    rng = np.random.default_rng(2)
    w, a = rng.standard_normal(10), rng.standard_normal(10)
    gw, ga = zymase.grad(_loss, argnums=(0, 1))(w, a)
    for k, g in enumerate((gw, ga)):
        fd = central_differences(_loss, (w, a), k, 1e-7)
        np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-6)


def _histograms_runtime(a, w, n, edges):
    h, e = np.histogram(a, n)  # a number of bins known only when running
    hw = np.histogram(a, n, weights=w)[0]
    he, ee = np.histogram(a, bins=edges)
    hew = np.histogram(a, edges, weights=w)[0]
    hed = np.histogram(a, edges, density=True)[0]
    return h, e, hw / np.maximum(h, 1), he, ee, hew, hed


@pytest.mark.parametrize("n", [1, 3, 8])
def test_histogram_runtime_bins_and_edges(n):
    rng = np.random.default_rng(n)
    a = np.concatenate([rng.standard_normal(40), [-0.5, 0.25, 2.0, 3.5]])
    w = rng.standard_normal(a.size)
    edges = np.array([-2.0, -0.5, 0.0, 0.25, 2.0])  # values on edges, one outside
    with np.errstate(all="ignore"):
        check(_histograms_runtime, a, w, n, edges)
        check(_histograms_runtime, a, np.round(w * 3).astype(np.int64), n, edges.astype(np.int64))


def _azimint(data, radius, npt):  # radial averages, as image-analysis code writes them
    return np.histogram(radius, npt, weights=data)[0] / np.histogram(radius, npt)[0]


def test_histogram_runtime_bins_derivative():
    rng = np.random.default_rng(5)
    data, radius = rng.standard_normal(30), rng.random(30)
    g = zymase.grad(lambda d, r: np.sum(np.sin(_azimint(d, r, 4))))(data, radius)
    fd = central_differences(lambda d, r: np.sum(np.sin(_azimint(d, r, 4))), (data, radius), 0)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def test_histogram_bin_errors():
    with pytest.raises(ValueError, match="must be positive"):
        zymase.jit(_histograms_runtime)(np.ones(3), np.ones(3), 0, np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="increase monotonically"):
        zymase.jit(_histograms_runtime)(np.ones(3), np.ones(3), 2, np.array([0.0, 2.0, 1.0]))
