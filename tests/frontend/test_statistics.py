"""``np.searchsorted`` (NumPy's NaN order, both sides, numbers and N-D values), ``np.cov`` and
``np.corrcoef`` (rowvar, bias, ddof) against NumPy, the library routines under CPython, and
derivatives against central differences (``frontend/library.py``, ``frontend/numpy/sort.py``,
``frontend/numpy/stats.py``)."""

import numpy as np
import pytest
from numpy_check import central_differences, check

import zymase
from zymase.errors import ZymaseError
from zymase.frontend import library


def _search(a, v):
    return (np.searchsorted(a, v), np.searchsorted(a, v, side="right"),
            np.searchsorted(a, 2.0), np.searchsorted(a, v.reshape(2, -1)))


def test_searchsorted_against_numpy():
    a = np.array([0.0, 1.0, 2.0, 2.0, 3.0, np.nan])
    v = np.array([-1.0, 0.0, 2.0, 2.5, 5.0, np.nan])
    check(_search, a, v)
    check(_search, np.arange(10), np.array([3, -1, 9, 10, 4, 4]))
    rng = np.random.default_rng(0)
    s, x = np.sort(rng.standard_normal(30)), rng.standard_normal(12)
    np.testing.assert_array_equal(library.searchsorted(s, x, False), np.searchsorted(s, x))
    np.testing.assert_array_equal(library.searchsorted(s, x, True),
                                  np.searchsorted(s, x, side="right"))


def _covariances(m):
    return (np.cov(m), np.cov(m, rowvar=False), np.cov(m, bias=True), np.cov(m, ddof=2),
            np.corrcoef(m), np.corrcoef(m, rowvar=False))


def test_cov_and_corrcoef_against_numpy():
    rng = np.random.default_rng(1)
    check(_covariances, rng.standard_normal((3, 6)))
    check(_covariances, rng.integers(-4, 5, (4, 5)))


def _loss(m):
    return np.sum(np.cov(m) ** 2) + np.sum(np.corrcoef(m))


def test_derivatives():
    m = np.random.default_rng(2).standard_normal((3, 6))
    g = zymase.grad(_loss)(m)
    fd = central_differences(_loss, (m,), 0)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def _one_variable(x):
    return np.cov(x)


def test_refusals():
    with pytest.raises(ZymaseError, match="np.var"):
        zymase.jit(_one_variable)(np.ones(4))


def _found(a, y, x):
    return (np.unique(a), np.flatnonzero(a), np.nonzero(a), np.trapezoid(y), np.trapezoid(y, x),
            np.trapezoid(y, dx=0.5), np.unique(np.array([3, 1, 3, 2])),
            np.flatnonzero(a.reshape(2, -1)))


def test_unique_nonzero_trapezoid_against_numpy():
    """np.unique (sorted, every NaN as one), np.nonzero (1-D) and np.flatnonzero (results whose
    size depends on the data), np.trapezoid with dx or x."""
    a = np.array([2.0, 0.0, np.nan, 1.0, 2.0, np.nan, 0.0, -1.0])
    check(_found, a, np.array([1.0, 3.0, 2.0, 5.0]), np.array([0.0, 0.5, 2.0, 2.5]))
    check(_found, np.zeros(4), np.array([1.0, 2.0]), np.array([0.0, 1.0]))
    rng = np.random.default_rng(3)
    v = np.round(rng.standard_normal(30), 1)
    np.testing.assert_array_equal(library.unique(v), np.unique(v))
    np.testing.assert_array_equal(library.flatnonzero(v), np.flatnonzero(v))


def _integral(y, x):
    return np.trapezoid(y * y, x) + np.sum(np.unique(y) ** 2)


def test_trapezoid_and_unique_derivatives():
    y, x = np.array([1.0, 3.0, 2.0, 5.0]), np.array([0.0, 0.5, 2.0, 2.5])
    grads = zymase.grad(_integral, argnums=(0, 1))(y, x)
    for k, g in enumerate(grads):
        fd = central_differences(_integral, (y, x), k, 1e-6)
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7)
