"""Reverse mode through Python lists grown with ``append`` (one shadow for all of a list's
buffers, ``ReverseTransform.list_shadow``): gradients against forward mode and central
differences of CPython running the same source, across the sizes where the buffer grows."""

import list_programs as L
import numpy as np
import pytest
from autodiff.ad_check import check_grads

import zymase


def _fd(f, args, k, d, h=1e-6):
    plus, minus = list(args), list(args)
    plus[k], minus[k] = args[k] + h * d, args[k] - h * d
    return (f(*plus) - f(*minus)) / (2 * h)


@pytest.mark.parametrize("fn", [L.grown, L.reads_back, L.append_after_loop])
@pytest.mark.parametrize("n", [1, 2, 15, 16, 17, 40])
def test_scalar_lists(fn, n):
    x = 0.7
    g = zymase.grad(fn)(x, n)
    assert g == pytest.approx(_fd(fn, (x, n), 0, 1.0), rel=1e-6, abs=1e-8)
    _, t = zymase.jvp(fn, (x, n), (1.0, None))
    assert g == pytest.approx(t, rel=1e-12, abs=1e-14)


@pytest.mark.parametrize("fn", [L.filtered, L.two_lists_nested])
@pytest.mark.parametrize("size", [3, 9, 30])
def test_lists_of_array_data(fn, size):
    x, a = 0.9, np.linspace(-0.5, 1.5, size)
    gx, ga = zymase.grad(fn, (0, 1))(x, a)
    assert gx == pytest.approx(_fd(fn, (x, a), 0, 1.0), rel=1e-6, abs=1e-8)
    d = np.random.default_rng(size).standard_normal(size)
    assert np.dot(ga, d) == pytest.approx(_fd(fn, (x, a), 1, d), rel=1e-6, abs=1e-8)
    _, t = zymase.jvp(fn, (x, a), (1.0, d))
    assert gx + np.dot(ga, d) == pytest.approx(t, rel=1e-12, abs=1e-13)


def test_empty_list():
    assert zymase.grad(L.grown)(0.7, 0) == 0.0


def test_hessian_and_vjp_through_a_list():
    g = zymase.grad(L.grown)
    h = zymase.hessian(L.grown)(0.7, 17)
    assert h == pytest.approx((g(0.7 + 1e-5, 17) - g(0.7 - 1e-5, 17)) / 2e-5, rel=1e-6)
    a = np.linspace(-0.5, 1.5, 30)
    _, pullback = zymase.vjp(L.filtered, 0.9, a)
    gx, ga = zymase.grad(L.filtered, (0, 1))(0.9, a)
    got = pullback(1.0)
    assert got[0] == gx
    np.testing.assert_array_equal(got[1], ga)


def test_checkpointing_a_loop_that_grows_a_list_is_refused_where_it_is():
    with pytest.raises(zymase.DifferentiationError, match="grows a list") as e:
        zymase.grad(L.grown, memory_limit=256)(0.7, 40)
    assert "list_programs.py:" in str(e.value) and zymase.__path__[0] not in str(e.value)


def appends_in_while(x):
    lst = []
    i = 0
    while i < x.shape[0] and x[i] > -1.0:
        lst.append(x[i] * x[i])
        i += 1
    return lst[0] + 2.0 * lst[len(lst) - 1]


def test_list_grown_in_a_while_loop():
    """The list's shared shadow is placed after the while loop's forward op (it sits in the
    region that counts the trips): was an internal ValueError."""
    x = np.array([0.3, 0.7, 1.1, -2.0, 0.5])
    g = zymase.grad(appends_in_while)(x)
    np.testing.assert_array_equal(g, [0.6, 0.0, 4.4, 0.0, 0.0])
    _, t = zymase.jvp(appends_in_while, (x,), (np.ones(5),))
    assert t == pytest.approx(g.sum(), rel=1e-15)


def comprehension_in_a_loop(a, y, s):
    u = 0.0
    for i in range(len(a)):
        u += max([(y + s * a[i] * k) ** 2 for k in range(5)])
    return u


def test_a_list_made_and_dropped_inside_a_loop():
    """A list built in each iteration (a comprehension): its buffers are the iteration's, and
    the one an append keeps (no growth) passes its shadow on through the branch."""
    check_grads(comprehension_in_a_loop, (np.array([0.3, -0.2, 0.5]), 0.5, 1.5),
                argnums=(0, 1, 2))
