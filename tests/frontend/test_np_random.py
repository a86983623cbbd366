"""``np.random`` in compiled code: generators (``np.random.default_rng(seed)`` and its methods)
and the legacy functions give NumPy's streams exactly (each draw is NumPy's own, through
``host.call``); samples are constants for derivatives (reparameterization works, a draw with
parameters that carry derivatives is refused, and so is a draw in a checkpointed loop); errors
NumPy raises come back at the user's line; both native backends."""

import numpy as np
import pytest

import zymase
from zymase.errors import DifferentiationError, ZymaseError


def _generator(seed, n, mu):
    rng = np.random.default_rng(seed)
    a = rng.random(n)
    b = rng.standard_normal((2, n))
    c = rng.normal(mu, 2.0, size=n)
    x = np.arange(6.0)
    rng.shuffle(x)
    return (a, b, c, rng.uniform(), rng.integers(0, 10, size=5),
            rng.integers(3, 9, 4, endpoint=True),
            rng.choice(n, 3, replace=False), rng.permutation(n), x, rng.normal(np.arange(3.0), 1.0),
            rng.choice(np.array([1.5, 2.5, 3.5]), size=4, p=np.array([0.2, 0.3, 0.5])),
            rng.poisson(3.0, 4), rng.exponential(), rng.binomial(10, 0.3, 3), rng.gamma(2.0),
            rng.beta(2.0, 3.0, 2), rng.choice(np.arange(5)), rng.permutation(np.arange(4.0)))


def _legacy(n):
    np.random.seed(3)
    return (np.random.rand(2, 3), np.random.randn(n), np.random.normal(0.0, 1.0, n),
            np.random.randint(0, 5, 3), np.random.random(2), np.random.choice(5, 2),
            np.random.permutation(4), np.random.uniform(), np.random.randint(7),
            np.random.standard_normal(), np.random.exponential(2.0, (2, 2)))


def _same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype and np.shape(g) == np.shape(w)
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("backend", ["cpu", "interp"])
def test_generator_streams_are_numpys(backend):
    _same(zymase.jit(_generator, backend=backend)(42, 5, 0.5), _generator(42, 5, 0.5))


@pytest.mark.parametrize("backend", ["cpu", "interp"])
def test_legacy_functions_share_numpys_state(backend):
    _same(zymase.jit(_legacy, backend=backend)(4), _legacy(4))


def _draw_after_python(n):
    return np.random.rand(n)


def test_the_global_stream_continues_from_python():
    np.random.seed(11)
    want = np.random.rand(3), np.random.rand(4)
    np.random.seed(11)
    first = np.random.rand(3)
    got = zymase.jit(_draw_after_python)(4)
    np.testing.assert_array_equal(first, want[0])
    np.testing.assert_array_equal(got, want[1])


def _noisy_loss(mu, seed):
    rng = np.random.default_rng(seed)
    s = 0.0
    buf = np.empty(mu.shape[0])
    for _ in range(4):
        buf[:] = rng.standard_normal(mu.shape[0])  # the same buffer, new samples each step
        s += np.sum(np.sin(mu + 0.5 * buf))
    return s


def test_reparameterized_gradient_matches_finite_differences():
    mu = np.arange(3.0) * 0.3
    g = zymase.grad(_noisy_loss)(mu, 7)
    h = 1e-6
    fd = [(_noisy_loss(mu + h * e, 7) - _noisy_loss(mu - h * e, 7)) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(g, fd, rtol=1e-7)
    _, t = zymase.jvp(_noisy_loss, (mu, 7), (np.ones(3), None))
    assert t == pytest.approx(float(np.sum(g)), rel=1e-10)


def _draw_with_active_mean(mu, seed):
    return np.sum(np.random.default_rng(seed).normal(mu, 1.0))


def _shuffle_active(x, seed):
    y = x * 2.0
    np.random.default_rng(seed).shuffle(y)
    return np.sum(y * np.arange(3.0))


def _checkpointed_draws(mu, seed):
    rng = np.random.default_rng(seed)
    s = 0.0
    for _ in zymase.checkpoint(range(5)):
        s += np.sum(mu * rng.standard_normal(3))
    return s


@pytest.mark.parametrize("fn, text", [(_draw_with_active_mean, "reparameterization"),
                                      (_shuffle_active, "permutation"),
                                      (_checkpointed_draws, "checkpointed")])
def test_refusals_in_derivatives(fn, text):
    with pytest.raises(DifferentiationError, match=text) as e:
        zymase.grad(fn)(np.ones(3), 1)
    assert "test_np_random.py:" in str(e.value)
    if fn is _draw_with_active_mean:
        with pytest.raises(DifferentiationError, match="reparameterization"):
            zymase.jvp(fn, (np.ones(3), 1), (np.ones(3), None))


def _too_many(n):
    return np.random.default_rng(1).choice(3, n, replace=False)


def _unknown_method(seed):
    return np.random.default_rng(seed).vonmises(0.0, 1.0)


def test_errors_at_the_users_line():
    with pytest.raises(ValueError, match="larger sample than population") as e:
        zymase.jit(_too_many)(5)
    assert "test_np_random.py:" in str(e.value)
    with pytest.raises(ZymaseError, match="vonmises") as e:
        zymase.jit(_unknown_method)(1)
    assert "test_np_random.py:" in str(e.value)
