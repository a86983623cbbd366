"""np.linalg.solve and np.linalg.inv (library.py's partial-pivoting elimination, compiled like a
helper): values against NumPy's LAPACK, dtypes, errors raised at the user's line, derivatives
against finite differences -- also for triangular and banded matrices, whose zeros must not
drop derivative terms."""

import numpy as np
import pytest
from autodiff.ad_check import check_grads
from numpy_check import check

import zymase


def solve(a, b):
    return np.linalg.solve(a, b)


def inv(a):
    return np.linalg.inv(a)


def loss(a, b):
    return (np.linalg.solve(a, b) ** 2).sum() + np.linalg.inv(a)[0, 1]


def implicit_heat(u0, k, steps):
    """Backward Euler for u_t = k u_xx: one tridiagonal solve per step."""
    n = u0.shape[0]
    a = np.zeros((n, n))
    for i in range(n):
        a[i, i] = 1.0 + 2.0 * k
        if i > 0:
            a[i, i - 1] = -k
        if i < n - 1:
            a[i, i + 1] = -k
    u = u0.copy()
    for _ in range(steps):
        u = np.linalg.solve(a, u)
    return (u * u).sum()


def rng_matrix(n, seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, n)) + n * np.eye(n) * 0.5


@pytest.mark.parametrize("n", [1, 2, 5, 17])
def test_values_match_numpy(n):
    a = rng_matrix(n, n)
    b = np.random.default_rng(1).standard_normal((n, 3))
    check(solve, a, b)
    check(solve, a, b[:, 0].copy())
    check(solve, a.T, b[:, 1])  # strided operands
    check(inv, a)
    check(solve, a.astype(np.float32), b.astype(np.float32))
    check(inv, np.round(a * 4).astype(np.int64) + 20 * np.eye(n, dtype=np.int64))


def test_errors_at_the_users_line():
    line = solve.__code__.co_firstlineno + 1
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix") as info:
        zymase.jit(solve)(np.ones((3, 3)), np.ones(3))
    assert f"test_linalg_solve.py:{line}:" in str(info.value)
    with pytest.raises(np.linalg.LinAlgError, match="must be square"):
        zymase.jit(inv)(np.ones((2, 3)))
    with pytest.raises(ValueError):
        zymase.jit(solve)(np.eye(3), np.ones(4))
    with pytest.raises(zymase.UnsupportedError, match="stacks of matrices"):
        zymase.jit(inv)(np.ones((2, 3, 3)))


@pytest.mark.parametrize("kind", ["dense", "upper", "lower", "tridiagonal"])
def test_derivatives(kind):
    a = rng_matrix(5, 3)
    if kind == "upper":
        a = np.triu(a)
    elif kind == "lower":
        a = np.tril(a)
    elif kind == "tridiagonal":
        a = np.triu(np.tril(a, 1), -1)
    b = np.random.default_rng(2).standard_normal(5)
    check_grads(loss, (a, b))


def test_adjoint_formula():
    a, b = rng_matrix(6, 4), np.random.default_rng(5).standard_normal((6, 2))
    ga, gb = zymase.grad(lambda a, b: (np.linalg.solve(a, b) ** 2).sum(), argnums=(0, 1))(a, b)
    x = np.linalg.solve(a, b)
    g = np.linalg.solve(a.T, 2 * x)  # the adjoint rule: b's cotangent, and -g x^T for a
    np.testing.assert_allclose(gb, g, rtol=1e-10)
    np.testing.assert_allclose(ga, -g @ x.T, rtol=1e-10)


def test_reverse_mode_uses_the_adjoint_rule_not_the_elimination():
    """The tape of a solve in a time loop holds no elimination (which would be about n**3 / 3
    numbers a step): the backward rule solves with the transpose."""
    u0 = np.sin(np.linspace(0.0, np.pi, 40))
    report = zymase.tape_report(implicit_heat, u0, 0.3, 4, argnums=(0, 1))
    assert report.total_bytes < 4 * 8 * 40 * 40, str(report)
    v = np.cos(np.linspace(0.0, 3.0, 40))
    g = zymase.grad(implicit_heat)
    fd = (g(u0 + 1e-5 * v, 0.3, 4) - g(u0 - 1e-5 * v, 0.3, 4)) / 2e-5
    np.testing.assert_allclose(zymase.hvp(implicit_heat)(u0, 0.3, 4, v), fd, rtol=1e-6,
                               atol=1e-9)


def test_implicit_time_stepping_gradient():
    u0 = np.sin(np.linspace(0.0, np.pi, 8))
    check_grads(implicit_heat, (u0, 0.3, 4), argnums=(0, 1))


def dims_dispatch(x):
    if x.ndim == 1 and len(x) > 0:
        return x.sum()
    elif not x.ndim == 2:
        return 0.0
    return x[0, 0]  # compiled only for 2-D x: `ndim` comparisons are known when compiling


def test_branches_on_ndim_compile_only_the_taken_one():
    assert zymase.jit(dims_dispatch)(np.ones(3)) == 3.0
    assert zymase.jit(dims_dispatch)(np.full((2, 2), 5.0)) == 5.0
    assert zymase.jit(dims_dispatch)(np.ones((2, 2, 2))) == 0.0


def arithmetic_on_ndim(x):
    if x.ndim - 1 == 0:  # Python ints known when compiling fold, so does the test
        return x[0]
    return x[0, 0] * (2 ** 3 - 7)


def test_arithmetic_on_compile_time_ints_folds():
    assert zymase.jit(arithmetic_on_ndim)(np.array([4.0, 5.0])) == 4.0
    assert zymase.jit(arithmetic_on_ndim)(np.full((2, 2), 6.0)) == 6.0
