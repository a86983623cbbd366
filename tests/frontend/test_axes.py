"""Views that reverse, swap, move, add or drop axes, ``np.tril``/``np.triu`` and
``np.ndarray(shape)`` against NumPy (values, shapes, dtypes; writes through the views reach the
array as in NumPy), derivatives against central differences, and the refusals
(``frontend/numpy/axes.py``)."""

import numpy as np
import pytest
from numpy_check import central_differences, check

import zymase
from zymase.errors import ZymaseError


def _views(a, m, t):
    return (np.flip(a), np.flip(m), np.flip(m, 1), np.flip(t, (0, 2)), np.fliplr(m),
            np.flipud(m), np.swapaxes(m, 0, 1), np.swapaxes(t, -1, 0), np.moveaxis(t, 0, -1),
            np.moveaxis(t, [0, 1], [2, 0]), np.expand_dims(a, 0), np.expand_dims(m, (0, 3)),
            np.squeeze(np.expand_dims(a, 1), 1), np.squeeze(t[:, :1, :], axis=1))


def _triangles(m, t):
    return np.tril(m), np.triu(m), np.tril(m, 1), np.triu(m, -1), np.tril(t), np.triu(t, 2)


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.float32])
def test_against_numpy(dtype):
    rng = np.random.default_rng(0)
    a = rng.integers(-5, 5, 4).astype(dtype)
    m = rng.integers(-5, 5, (3, 4)).astype(dtype)
    t = rng.integers(-5, 5, (2, 3, 4)).astype(dtype)
    check(_views, a, m, t)
    check(_triangles, m, t)


def _write_through(m):
    np.fliplr(m)[0, 0] = 100.0
    np.swapaxes(m, 0, 1)[1, 2] = -1.0
    return m


def test_writes_through_the_views_reach_the_array():
    check(_write_through, np.arange(12.0).reshape(3, 4))


def _ndarray(n):
    x = np.ndarray((n, 2))
    x[:] = 1.5
    y = np.ndarray(3, dtype=np.int64)
    y[:] = 2
    return x, y


def test_ndarray_is_empty():
    check(_ndarray, 4)


def _loss(m):
    f = np.flip(m, 0) * np.tril(m) + np.swapaxes(np.triu(m, 1), 0, 1)
    return np.sum(f * np.expand_dims(m[0], 0)) + np.sum(np.moveaxis(m, 1, 0)[0] ** 2)


def test_derivatives_match_central_differences():
    m = np.random.default_rng(3).standard_normal((3, 3))
    g = zymase.grad(_loss)(m)
    fd = central_differences(_loss, (m,), 0)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
    tangent = np.linspace(-1.0, 1.0, 9).reshape(3, 3)
    _, jv = zymase.jvp(_loss, (m,), (tangent,))
    np.testing.assert_allclose(jv, np.sum(g * tangent), rtol=1e-10)


def test_refusals_say_what_to_do():
    def all_axes(x):
        return np.squeeze(x)

    with pytest.raises(ZymaseError, match=r"name them \(np.squeeze\(a, axis=1\)\)"):
        zymase.jit(all_axes)(np.ones((3, 1)))

    def wrong_axis(x):
        return np.squeeze(x, 0)

    with pytest.raises(ValueError, match="size not equal to one"):
        zymase.jit(wrong_axis)(np.ones((3, 1)))
    with pytest.raises(ZymaseError, match="2 or more dimensions"):
        zymase.jit(tril_of)(np.ones(3))


def tril_of(x):
    return np.tril(x)
