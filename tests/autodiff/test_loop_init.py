"""A value that starts a loop-carried variable and is also read inside the loop
(``r = x; for ...: r = r + x``, Newton's iteration started at its argument).

Reverse mode added the adjoint reaching the loop's initial value and then overwrote it with the
adjoint of ``x`` accumulated by the loop body: ``grad`` of ``r = x; for j in range(n): r = r + x``
was n instead of n + 1, and Newton's sqrt started at x gave 0.909 instead of 0.5 -- silently
(found by an adversarial survey; forward mode was right).  For, while and break loops, nested
loops, and the same value reached through LICM + CSE, against forward mode, central
differences and JAX."""

import math

import numpy as np
import pytest
from autodiff.ad_check import check_grads

import zymase


def repeated_sum(x, n):
    r = x
    for _ in range(n):
        r = r + x
    return r


def newton_sqrt(x, n):
    r = x
    for _ in range(n):
        r = 0.5 * (r + x / r)
    return r


def growing_max(x, n):
    r = x
    for _ in range(n):
        r = max(r, x) * 1.1
    return r


def licm_shared(x, n):
    # `x * 1.5` before and inside the loop become one value after LICM and CSE
    r = x * 1.5
    for _ in range(n):
        r = r + x * 1.5
    return r


def while_loop(x, n):
    r = x
    k = 0
    while k < n:
        r = r + x * r
        k += 1
    return r


def break_loop(x, n):
    r = x
    for k in range(100):
        if k >= n:
            break
        r = r + x * r
    return r


def nested(x, n):
    r = x
    for _ in range(n):
        q = r
        for _ in range(2):
            q = q * x + r
        r = q
    return r


def array_start(a, n):
    s = a[0]
    for _ in range(n):
        s = s * a[0] + math.sin(a[1])
    return s


SCALAR = [repeated_sum, newton_sqrt, growing_max, licm_shared, while_loop, break_loop, nested]


@pytest.mark.parametrize("fn", SCALAR, ids=[f.__name__ for f in SCALAR])
@pytest.mark.parametrize("n", [0, 1, 3])
def test_scalar_start(fn, n):
    check_grads(fn, (0.55, n), argnums=0)


def test_exact_values():
    assert zymase.grad(repeated_sum)(0.55, 2) == 3.0
    assert zymase.grad(growing_max)(0.7, 2) == pytest.approx(1.1 ** 2, rel=1e-15)
    assert zymase.grad(licm_shared)(0.7, 3) == pytest.approx(6.0, rel=1e-15)


@pytest.mark.parametrize("n", [0, 2])
def test_array_element_start(n):
    check_grads(array_start, (np.array([0.7, 0.2]), n), argnums=0)


@pytest.mark.parametrize("fn", [newton_sqrt, while_loop, nested])
def test_checkpointed_agrees(fn):
    plain = zymase.grad(fn)(0.55, 3)
    assert zymase.grad(fn, memory_limit=10_000)(0.55, 3) == pytest.approx(plain, rel=1e-14)


def test_against_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    for n in (1, 3):
        want = float(jax.grad(newton_sqrt)(0.55, n))
        assert zymase.grad(newton_sqrt)(0.55, n) == pytest.approx(want, rel=1e-13)
