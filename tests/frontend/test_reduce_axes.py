"""Reductions over a tuple of axes (``np.sum(x, axis=(1, 2))``, ``x.max(axis=(0, 2),
keepdims=True)``; the convolution layers of deep-learning code) against NumPy, with
derivatives in both modes (``frontend/numpy/reductions.py``)."""

import numpy as np
import pytest
from numpy_check import DTYPES, arr, central_differences, check

import zymase
from zymase.errors import ZymaseError


def _reduced(x):
    return (np.sum(x, axis=(1, 2)), np.max(x, axis=(0, 2), keepdims=True),
            x.mean(axis=(0, -1)), np.min(x, axis=(2, 0, 1)), x.prod(axis=(1,), keepdims=True),
            np.any(x > 0, axis=(0, 1)), np.all(x > -2, axis=(2, 1), keepdims=True),
            np.sum(x > 0, axis=(1, 2)), np.mean(x, axis=(0, 1, 2), keepdims=True),
            np.amax(x, axis=(1, 2)), x.sum(axis=(-1, 0)))


@pytest.mark.parametrize("dtype", DTYPES + [np.bool_])
def test_against_numpy(dtype):
    x = arr(3, 4, 5, dtype=dtype)
    if dtype == np.float32:  # whole numbers: sums exact in any order (NumPy sums pairwise)
        x = np.round(x)
    check(_reduced, x)


def _conv(x, w):
    out = np.empty((x.shape[0], x.shape[1] - 1, w.shape[2]))
    for i in range(x.shape[1] - 1):
        out[:, i, :] = np.sum(x[:, i:i + 2, :, np.newaxis] * w[np.newaxis, :, :, :], axis=(1, 2))
    return out


def _loss(x, w):
    return np.sum(np.sin(_conv(x, w))) + np.sum(np.max(x, axis=(0, 2)) ** 2)


def test_convolution_and_derivatives():
    x, w = arr(2, 5, 3), arr(2, 3, 4)
    check(_conv, x, w)
    gx, gw = zymase.grad(_loss, argnums=(0, 1))(x, w)
    np.testing.assert_allclose(gx, central_differences(_loss, (x, w), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gw, central_differences(_loss, (x, w), 1), rtol=1e-6, atol=1e-8)
    v = arr(2, 5, 3)
    _, t = zymase.jvp(_loss, (x, w), (v, None))
    assert t == pytest.approx(float(np.sum(gx * v)), rel=1e-9)


def _argmax_axes(x):
    return np.argmax(x, axis=(0, 1))


def _repeated(x):
    return np.sum(x, axis=(1, 1))


@pytest.mark.parametrize("fn, text", [(_argmax_axes, "takes one axis"),
                                      (_repeated, "repeated axis")])
def test_refusals_name_the_line(fn, text):
    with pytest.raises(ZymaseError, match=text) as e:
        zymase.jit(fn)(arr(2, 3))
    assert "test_reduce_axes.py:" in str(e.value)
