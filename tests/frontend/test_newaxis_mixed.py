"""``None``/``np.newaxis`` mixed with slices, integers and ``...`` (``x[:, i:i + 2, None]``,
``x[i, None]``, ``t[None, ..., 1]``) against NumPy: shapes, values, writes through the view,
and the derivative against central differences (``frontend/lower/indexing.py``)."""

import numpy as np
import pytest
from numpy_check import central_differences, check

import zymase
from zymase.errors import ZymaseError


def _views(x, t, i):
    return (x[:, i:i + 2, None], x[i, None], x[None, 1:, 0], x[..., None], x[i, 2, None],
            t[None, ..., 1], t[1, ..., None], t[:, None, 1:3], t[..., None, 0],
            x[::2, None, ::-1])


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_against_numpy(dtype):
    x = np.arange(24).reshape(4, 6).astype(dtype)
    t = np.arange(24).reshape(2, 3, 4).astype(dtype)
    check(_views, x, t, 1)


def _write(x):
    y = x[:, 1:4, None]
    y[0, 0, 0] = 100.0
    x[2, None][0, 5] = -1.0
    return x


def test_writes_through_the_view():
    check(_write, np.arange(24.0).reshape(4, 6))


def _loss(x):
    return np.sum(x[:, 1:3, None] * x[None, 0, 2:4] ** 2) + np.sum(x[1, None] ** 3)


def test_derivative():
    x = np.random.default_rng(0).standard_normal((4, 6))
    g = zymase.grad(_loss)(x)
    fd = central_differences(_loss, (x,), 0)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7)


def _with_index_array(x):
    return x[np.array([0, 1]), None]


def test_index_arrays_with_none_are_refused():
    with pytest.raises(ZymaseError, match="index first, then add the axis"):
        zymase.jit(_with_index_array)(np.ones((3, 2)))
