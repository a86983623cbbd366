"""``np.meshgrid`` (xy and ij, two and three inputs), ``np.tile`` and ``np.repeat`` (with and
without ``axis``) against NumPy on several dtypes, derivatives against central differences,
and the refusals (``frontend/numpy/tiling.py``)."""

import numpy as np
import pytest
from numpy_check import central_differences, check

import zymase
from zymase.errors import ZymaseError


def _built(x, y, m):
    X, Y = np.meshgrid(x, y)
    Ii, Jj = np.meshgrid(x, y, indexing="ij")
    A, B, C = np.meshgrid(x, y, x[:2])
    return (X, Y, Ii, Jj, A, B, C, np.tile(x, 2), np.tile(m, (2, 3)), np.tile(x, (3, 1)),
            np.repeat(x, 3), np.repeat(m, 2, axis=1), np.repeat(m, 2), np.repeat(2.5, 3),
            np.repeat(m, 0, axis=0))


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.float32])
def test_against_numpy(dtype):
    rng = np.random.default_rng(0)
    x = rng.integers(-5, 5, 4).astype(dtype)
    y = rng.integers(-5, 5, 3).astype(dtype)
    m = rng.integers(-5, 5, (2, 3)).astype(dtype)
    check(_built, x, y, m)


def _loss(x, y):
    X, Y = np.meshgrid(x, y)
    return np.sum(np.sin(X) * Y ** 2) + np.sum(np.tile(x, 2) * np.repeat(x, 2))


def test_derivatives():
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(4), rng.standard_normal(3)
    grads = zymase.grad(_loss, argnums=(0, 1))(x, y)
    for k, g in enumerate(grads):
        fd = central_differences(_loss, (x, y), k, 1e-6)
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def _per_element(x):
    return np.repeat(x, np.array([1, 2, 3]))


def test_refusals():
    with pytest.raises(ZymaseError, match="give one integer"):
        zymase.jit(_per_element)(np.ones(3))
