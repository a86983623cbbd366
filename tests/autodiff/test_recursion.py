"""Recursion in reverse mode: calls kept through optimization are split (``split.py``): the
forward sweep runs the callee's forward function, which hands back its tape, and the adjoint
sweep runs the callee's adjoint function on it, so no level's forward pass is run twice and the
call may sit in a loop.  Checked against the recomputing path (``memory_limit`` keeps it; the
same float operations, so bit for bit), central differences and forward mode."""

import math

import numpy as np
import pytest
from conftest import corpus

import zymase


def _fd(f, args, k, d, h=1e-6):
    plus, minus = list(args), list(args)
    plus[k], minus[k] = args[k] + h * d, args[k] - h * d
    return (f(*plus) - f(*minus)) / (2 * h)


def test_fft_split_equals_recomputing_and_differences():
    mod = corpus().load("fft")
    x, w = mod.make_inputs("small")
    g = zymase.grad(mod.primal, (0, 1))(x, w)
    ref = zymase.grad(mod.primal, (0, 1), memory_limit=10**12)(x, w)  # the recomputing path
    for a, b in zip(g, ref):
        np.testing.assert_array_equal(a, b)
    d = np.random.default_rng(3).standard_normal(x.shape)
    assert np.dot(g[0], d) == pytest.approx(_fd(mod.primal, (x, w), 0, d), rel=1e-6)
    value, pullback = zymase.vjp(mod.primal, x, w)
    np.testing.assert_array_equal(pullback(1.0)[0], g[0])


def _power(x, n):
    if n == 0:
        return 1.0
    return x * _power(x, n - 1)


def power_in_loop(x, a):
    """A recursive call inside a loop (refused before calls were split)."""
    s = 0.0
    for i in range(a.shape[0]):
        s += _power(a[i] * x, 3) + math.sin(_power(x, i % 4))
    return s


def _tree_sum(a, lo, hi):
    """Sum of a[lo:hi] by halving: recursion on array arguments."""
    if hi - lo == 1:
        return a[lo] * a[lo]
    mid = (lo + hi) // 2
    return _tree_sum(a, lo, mid) + math.cos(_tree_sum(a, mid, hi))


def tree_in_loop(a, w):
    s = 0.0
    for k in range(w.shape[0]):
        s += w[k] * _tree_sum(a, 0, a.shape[0] - k)
    return s


def _scale_rec(a, lo, hi, c):
    """Writes its argument, recursively."""
    if hi - lo == 1:
        a[lo] = a[lo] * c + math.sin(a[lo])
        return
    mid = (lo + hi) // 2
    _scale_rec(a, lo, mid, c)
    _scale_rec(a, mid, hi, c)


def rewritten_in_loop(a, c):
    b = a.copy()
    s = 0.0
    for _ in range(3):
        _scale_rec(b, 0, b.shape[0], c)
        s += b[0] * b[1]
    return s


def written_once(a, c):
    b = a.copy()
    _scale_rec(b, 0, b.shape[0], c)
    _scale_rec(b, 0, b.shape[0], 0.5 * c)
    return np.sum(b * b)


def test_recursion_inside_a_loop():
    x, a = 0.7, np.linspace(-0.5, 0.9, 6)
    gx, ga = zymase.grad(power_in_loop, (0, 1))(x, a)
    assert gx == pytest.approx(_fd(power_in_loop, (x, a), 0, 1.0), rel=1e-7)
    d = np.random.default_rng(1).standard_normal(6)
    assert np.dot(ga, d) == pytest.approx(_fd(power_in_loop, (x, a), 1, d), rel=1e-7)
    _, t = zymase.jvp(power_in_loop, (x, a), (1.0, d))
    assert t == pytest.approx(gx + np.dot(ga, d), rel=1e-12)


def test_recursion_on_arrays_inside_a_loop():
    a, w = np.linspace(0.1, 1.2, 9), np.linspace(1.0, 2.0, 4)
    ga, gw = zymase.grad(tree_in_loop, (0, 1))(a, w)
    d = np.random.default_rng(2).standard_normal(9)
    assert np.dot(ga, d) == pytest.approx(_fd(tree_in_loop, (a, w), 0, d), rel=1e-7)
    e = np.random.default_rng(4).standard_normal(4)
    assert np.dot(gw, e) == pytest.approx(_fd(tree_in_loop, (a, w), 1, e), rel=1e-7)


def test_recursive_writer_called_twice():
    """The adjoint of the first call needs the array as that call left it, which the second
    call overwrites: a copy is taken after the first call."""
    a, c = np.linspace(0.2, 1.0, 8), 0.9
    ga, gc = zymase.grad(written_once, (0, 1))(a, c)
    ref = zymase.grad(written_once, (0, 1), memory_limit=10**12)(a, c)
    np.testing.assert_array_equal(ga, ref[0])
    assert gc == ref[1]
    d = np.random.default_rng(5).standard_normal(8)
    assert np.dot(ga, d) == pytest.approx(_fd(written_once, (a, c), 0, d), rel=1e-7)
    assert gc == pytest.approx(_fd(written_once, (a, c), 1, 1.0), rel=1e-7)


def test_recursive_writer_in_a_loop_is_refused_where_it_is():
    a = np.linspace(0.2, 1.0, 8)
    with pytest.raises(zymase.DifferentiationError, match="written again after it") as e:
        zymase.grad(rewritten_in_loop)(a, 0.9)
    assert "test_recursion.py:" in str(e.value) and zymase.__path__[0] not in str(e.value)


def even_steps(x, n):
    if n == 0:
        return x
    return odd_steps(x, n - 1) * 1.5


def odd_steps(x, n):
    if n == 0:
        return x * x
    return even_steps(x, n - 1) + 0.25


def test_mutual_recursion_returning_floats():
    """ev -> od -> ev: od was first typed with ev's guessed int result and kept after ev's
    result turned out a float (LLVM rejected the module); callees typed with a wrong guess are
    lowered again."""
    for n in range(5):
        assert zymase.jit(even_steps)(0.7, n) == even_steps(0.7, n)
        h = 1e-6
        fd = (even_steps(0.7 + h, n) - even_steps(0.7 - h, n)) / (2 * h)
        assert zymase.grad(even_steps)(0.7, n) == pytest.approx(fd, rel=1e-7)
