"""Reverse mode through loops that replace an array by a new buffer every iteration
(``u = u + f(u)``): the shadow is carried backwards by the reverse loop, each version with its
own.  Gradients against forward mode and central differences of CPython."""

import numpy as np
import pytest
import renew_programs as R

import zymase


def _fd(f, args, k, d, h=1e-6):
    plus, minus = list(args), list(args)
    plus[k], minus[k] = args[k] + h * d, args[k] - h * d
    return (f(*plus) - f(*minus)) / (2 * h)


def _check(f, args, nums):
    g = zymase.grad(f, nums)(*args)
    rng = np.random.default_rng(7)
    tangents = [None] * len(args)
    total = 0.0
    for k, gk in zip(nums, g):
        d = rng.standard_normal(np.shape(args[k])) if np.ndim(args[k]) else 1.0
        tangents[k] = d
        dd = np.sum(gk * d)
        assert dd == pytest.approx(_fd(f, args, k, d), rel=1e-6, abs=1e-8), k
        total += dd
    _, t = zymase.jvp(f, tuple(args), tuple(tangents))
    assert total == pytest.approx(t, rel=1e-11, abs=1e-12)


@pytest.mark.parametrize("T", [0, 1, 5])
def test_euler(T):
    _check(R.euler, (np.linspace(0.1, 1.0, 6), np.linspace(0.2, 0.4, 6), T), (0, 1))


def test_rnn():
    rng = np.random.default_rng(0)
    _check(R.rnn, (rng.standard_normal(4), 0.5 * rng.standard_normal((4, 4)),
                   rng.standard_normal((6, 4))), (0, 1, 2))


def test_stencil_slices():
    _check(R.stencil_slices, (np.linspace(0.1, 1.0, 8), np.linspace(0.1, 0.3, 8), 4), (0, 1))


def test_leapfrog():
    _check(R.leapfrog, (np.linspace(0.1, 1.0, 5), np.linspace(-0.5, 0.5, 5),
                        np.linspace(1.0, 2.0, 5), 7), (0, 1, 2))


def test_nested():
    _check(R.nested, (np.linspace(0.1, 1.0, 5), np.linspace(0.5, 1.5, 5), 3), (0, 1))


def test_grid():
    _check(R.grid, (np.linspace(-0.5, 0.5, 9).reshape(3, 3), 3), (0,))


def test_hvp_through_a_renewed_array():
    u0, c = np.linspace(0.1, 1.0, 6), np.linspace(0.2, 0.4, 6)
    d = np.linspace(-1.0, 1.0, 6)
    for k in (0, 1):
        g = zymase.grad(R.euler, argnums=k)
        plus, minus = [u0, c, 4], [u0, c, 4]
        plus[k], minus[k] = plus[k] + 1e-5 * d, minus[k] - 1e-5 * d
        fd = (g(*plus) - g(*minus)) / 2e-5
        np.testing.assert_allclose(zymase.hvp(R.euler, argnums=k)(u0, c, 4, d), fd,
                                   rtol=1e-6, atol=1e-8)


def test_hvp_of_a_matrix_product_on_a_renewed_array():
    """Reverse mode keeps each h by reference for W @ h's adjoint; forward mode over that keeps
    each reference's tangent the same way."""
    rng = np.random.default_rng(0)
    h0, W = rng.standard_normal(4), 0.5 * rng.standard_normal((4, 4))
    xs = rng.standard_normal((6, 4))
    v = rng.standard_normal((4, 4))
    got = zymase.hvp(R.rnn, argnums=1)(h0, W, xs, v)
    g = zymase.grad(R.rnn, argnums=1)
    eps = 1e-5
    want = (g(h0, W + eps * v, xs) - g(h0, W - eps * v, xs)) / (2 * eps)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_tape_report_counts_references():
    """Each step's h is kept by reference for W @ h's adjoint: 2 + 2 * ndim slots a step."""
    rng = np.random.default_rng(0)
    h0, W = rng.standard_normal(4), 0.5 * rng.standard_normal((4, 4))
    xs = rng.standard_normal((6, 4))
    r = zymase.tape_report(R.rnn, h0, W, xs, argnums=(0, 1, 2))
    refs = [e for e in r.entries if "reference to" in e.what]
    assert len(refs) == 1 and refs[0].count == 6 * 4, r.text
