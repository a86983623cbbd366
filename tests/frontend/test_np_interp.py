"""``np.interp`` against NumPy (inside, outside, on the nodes, at repeated nodes, NaN, numbers
and N-D ``x``, ``left=``/``right=``), its errors, and derivatives with respect to ``x`` and
``fp`` against central differences (``library.interp``, ``frontend/numpy/stats.py``)."""

import numpy as np
import pytest
from numpy_check import central_differences, check

import zymase
from zymase.frontend import library


def _interps(x, xp, fp):
    return (np.interp(x, xp, fp), np.interp(x, xp, fp, left=-1.0, right=9.0),
            np.interp(0.25, xp, fp), np.interp(x.reshape(2, -1), xp, fp))


def test_against_numpy():
    xp = np.array([0.0, 0.5, 1.0, 1.0, 2.0])  # (a repeated node)
    fp = np.array([1.0, 2.0, 0.0, 5.0, 3.0])
    x = np.array([-1.0, 0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, np.nan])
    check(_interps, x, xp, fp)
    check(_interps, np.linspace(-0.5, 2.5, 10), np.arange(4.0), np.array([3, 1, 4, 1]))


def test_the_library_routine_is_numpy_under_cpython():
    rng = np.random.default_rng(0)
    xp = np.sort(rng.uniform(0.0, 10.0, 12))
    fp = rng.standard_normal(12)
    x = rng.uniform(-1.0, 11.0, 40)
    np.testing.assert_array_equal(library.interp(x, xp, fp, fp[0], fp[-1]),
                                  np.interp(x, xp, fp))


def test_errors():
    with pytest.raises(ValueError, match="same length"):
        zymase.jit(_interps)(np.ones(4), np.arange(3.0), np.ones(2))


def _loss(x, fp):
    return np.sum(np.interp(x, np.array([0.0, 1.0, 2.0, 3.0]), fp) ** 2)


def test_derivatives():
    x, fp = np.array([0.3, 1.7, 2.2]), np.array([1.0, -2.0, 0.5, 4.0])
    grads = zymase.grad(_loss, argnums=(0, 1))(x, fp)
    for k, g in enumerate(grads):
        fd = central_differences(_loss, (x, fp), k, 1e-6)
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
