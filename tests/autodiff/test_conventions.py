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


# Values that never reach the result contribute nothing, even where a partial is infinite
# (sqrt or log at 0, 1/y at y = 0): the "strong zero" of ``autodiff/rules/registry.py``.  JAX and
# PyTorch give NaN for these; finite differences give the numbers below.

def pair_energy(x):
    d = x[:, None] - x[None, :]  # 0 on the diagonal
    r = np.sqrt(d ** 2)
    r[r > 0] = 1.0 / r[r > 0]
    return np.sum(np.triu(r, 1))  # the diagonal is cut away


def safe_ratio(x, y):
    return np.sum(np.where(y != 0.0, x / y, 0.0))


def log_where(x):
    return np.sum(np.log(x)[::2])  # log(0) at the odd places, never used


def _central(fn, args, k, h=1e-6):
    out = np.zeros_like(args[k])
    for i in np.ndindex(args[k].shape):
        up = [a.copy() for a in args]
        dn = [a.copy() for a in args]
        up[k][i] += h
        dn[k][i] -= h
        out[i] = (fn(*up) - fn(*dn)) / (2 * h)
    return out


@pytest.mark.parametrize("fn, args", [
    (pair_energy, (np.array([0.3, -1.2, 2.0, 0.7]),)),
    (safe_ratio, (np.array([1.0, 2.0, 3.0]), np.array([2.0, 0.0, -4.0]))),
    (log_where, (np.array([0.5, 0.0, 2.0, 0.0]),)),
], ids=["sqrt-of-zero", "divide-by-zero", "log-of-zero"])
def test_unused_infinite_partials_give_zero_not_nan(fn, args):
    argnums = tuple(range(len(args)))
    got = zymase.grad(fn, argnums=argnums)(*args)
    for k in argnums:
        want = _central(fn, args, k)
        if fn is safe_ratio and k == 1:
            want[args[1] == 0.0] = 0.0  # a jump in y there: the branch not taken gives nothing
        np.testing.assert_allclose(got[k], want, rtol=1e-6, atol=1e-8)
        rng = np.random.default_rng(k)
        v = rng.standard_normal(args[k].shape)
        tangents = tuple(v if j == k else None for j in argnums)
        _, t = zymase.jvp(fn, args, tangents)
        assert t == pytest.approx(float(np.sum(got[k] * v)), rel=1e-9, abs=1e-12)
