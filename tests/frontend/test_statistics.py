"""``np.searchsorted`` (NumPy's NaN order, both sides, numbers and N-D values), ``np.cov`` and
``np.corrcoef`` (rowvar, bias, ddof) against NumPy, the library routines under CPython, and
derivatives against central differences (``frontend/library.py``, ``frontend/numpy/sort.py``,
``frontend/numpy/stats.py``)."""

import numpy as np
import pytest
from numpy_check import check

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
    fd = np.zeros_like(m)
    for k in np.ndindex(m.shape):
        e = np.zeros_like(m)
        e[k] = 1e-6
        fd[k] = (_loss(m + e) - _loss(m - e)) / 2e-6
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def _one_variable(x):
    return np.cov(x)


def test_refusals():
    with pytest.raises(ZymaseError, match="np.var"):
        zymase.jit(_one_variable)(np.ones(4))
