"""The README's conventions at non-differentiable points, in reverse and forward mode alike
(reverse ``grad`` and forward ``jvp`` must agree there too: neither may give NaN where the
other gives a number)."""

import math

import numpy as np
import pytest

import zymase


def hypot_at(x, y):
    return math.hypot(x, y)


def hypot_scaled(x, y):
    return math.hypot(0.0 * x, 0.0 * y) + x  # both operands 0, but active


def abs_of(x):
    return abs(x)


def max_of(x, y):
    return max(x, y)


def np_hypot(a):
    return np.hypot(a, 0.0 * a).sum()


def power_sum(p):
    s = 0.0
    for i in range(3):
        s += (i * 1.0) ** p  # 0 ** p: constant in p
    return s


def pow_at(x, y):
    return x ** y


CASES = [
    (power_sum, (2.0,), (4.0 * 0.6931471805599453,)),
    (pow_at, (0.0, 1.0), (1.0, 0.0)),
    # (function, point, expected gradient)
    (hypot_at, (0.0, 0.0), (0.0, 0.0)),
    (hypot_at, (3.0, 4.0), (0.6, 0.8)),
    (hypot_scaled, (1.5, -2.0), (1.0, 0.0)),
    (abs_of, (0.0,), (0.0,)),
    (max_of, (2.0, 2.0), (1.0, 0.0)),  # ties: the first operand
]


@pytest.mark.parametrize("fn, point, want", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_reverse_and_forward_follow_the_convention(fn, point, want):
    got = zymase.grad(fn, argnums=tuple(range(len(point))))(*point)
    assert tuple(got) == want
    for k in range(len(point)):
        tangents = tuple(1.0 if j == k else None for j in range(len(point)))
        _, t = zymase.jvp(fn, point, tangents)
        assert t == want[k], (k, t)


def test_array_hypot_at_the_origin():
    a = np.array([0.0, 3.0, -2.0])
    g = zymase.grad(np_hypot)(a)
    np.testing.assert_array_equal(g, [0.0, 1.0, -1.0])
    _, t = zymase.jvp(np_hypot, (a,), (np.ones(3),))
    assert t == 0.0
