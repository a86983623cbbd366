"""NumPy functions the topic tests do not reach by name (aliases, ranges, less common ufuncs),
against NumPy, with derivatives; and every legacy ``np.random`` draw against NumPy's stream."""

import numpy as np
import pytest
from numpy_check import DTYPES, arr, central_differences, check

import zymase


def _misc(x, y):
    return (np.absolute(x), np.amin(x), np.amin(x, axis=0), np.argmin(x), np.argmin(x, axis=1),
            np.full_like(x, 2.5), np.remainder(x, 3), np.rint(x * 0.7),
            np.arcsinh(x), np.arctanh(np.tanh(x * 0.3)), np.arccosh(np.abs(x) + 1.5),
            np.logspace(0.0, 2.0, 5), np.logspace(1, 3, 4, base=2.0, endpoint=False),
            np.geomspace(1.0, 1000.0, 4), np.geomspace(-8.0, -1.0, 4), y)


@pytest.mark.parametrize("dtype", DTYPES)
def test_against_numpy(dtype):
    check(_misc, arr(3, 4, dtype=dtype), arr(2, dtype=dtype))


def _loss(x):
    return (np.sum(np.arcsinh(x) * np.absolute(x)) + np.sum(np.arccosh(x * x + 2.0))
            + np.sum(np.arctanh(np.tanh(x) * 0.5)) + np.amin(x) ** 2
            + np.sum(np.remainder(x, 0.7)))


def test_derivatives():
    x = arr(5) * 0.3
    g = zymase.grad(_loss)(x)
    np.testing.assert_allclose(g, central_differences(_loss, (x,), 0), rtol=1e-6, atol=1e-7)
    v = arr(5)
    _, t = zymase.jvp(_loss, (x,), (v,))
    assert t == pytest.approx(float(np.sum(g * v)), rel=1e-9)


def _draws(seed, n):
    np.random.seed(seed)
    return (np.random.chisquare(3.0, n), np.random.geometric(0.3, n),
            np.random.laplace(0.0, 2.0, n), np.random.logistic(1.0, 0.5, n),
            np.random.lognormal(0.0, 0.5, n), np.random.random_sample(n),
            np.random.standard_exponential(n), np.random.standard_t(4.0, n),
            np.random.beta(2.0, 3.0, n), np.random.binomial(10, 0.4, n),
            np.random.gamma(2.0, 1.5, n), np.random.poisson(3.0, n),
            np.random.exponential(2.0, n), np.random.uniform(-1.0, 1.0, n),
            np.random.normal(1.0, 2.0, n), np.random.chisquare(3.0))


def _generator_draws(seed, n):
    g = np.random.default_rng(seed)
    return (g.chisquare(3.0, n), g.geometric(0.3, n), g.laplace(0.0, 2.0, n),
            g.logistic(1.0, 0.5, n), g.lognormal(0.0, 0.5, n), g.standard_exponential(n),
            g.standard_t(4.0, n), g.beta(2.0, 3.0, n), g.binomial(10, 0.4, n),
            g.gamma(2.0, 1.5, n), g.poisson(3.0, n), g.exponential(2.0, n))


@pytest.mark.parametrize("fn", [_draws, _generator_draws])
def test_every_draw_is_numpys(fn):
    want, got = fn(5, 4), zymase.jit(fn)(5, 4)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype and np.shape(g) == np.shape(w)
        np.testing.assert_array_equal(g, w)


def _einsum_ellipsis(a, b, c):
    return (np.einsum("...i,...i", a, a), np.einsum("...ij,...jk->...ik", b, c),
            np.einsum("i...->...", a), np.einsum("...ij,jk", b, c[0]), np.einsum("...", a),
            np.einsum("ij...,j->i...", b, c[0, :3, 0]), np.einsum("b...,b...->b...", b, b[:, :1]))


def test_einsum_with_ellipsis():
    rng = np.random.default_rng(4)
    a, b, c = rng.standard_normal((3, 4)), rng.standard_normal((2, 3, 4)), rng.standard_normal(
        (2, 4, 5))
    check(_einsum_ellipsis, a, b, c)

    def loss(b, c):
        return np.sum(np.sin(np.einsum("...ij,...jk->...ik", b, c)))

    g = zymase.grad(loss, argnums=(0, 1))(b, c)
    for k in range(2):
        np.testing.assert_allclose(g[k], central_differences(loss, (b, c), k), rtol=1e-6,
                                   atol=1e-8)
