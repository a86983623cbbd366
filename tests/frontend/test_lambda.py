"""Lambdas compile like the `def` they stand for: jit, grad and jvp of `lambda x: ...`, lambdas
called as helpers, closures, several lambdas on one line, and errors located inside a lambda."""

import math
import os
import sys

import numpy as np
import pytest

import zymase

ZYMASE_DIR = os.path.dirname(os.path.abspath(zymase.__file__))


def central(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


def test_jit_lambda_matches_cpython():
    f = lambda x, y: x * y + math.sin(x) / (1.0 + y * y)  # noqa: E731
    assert zymase.jit(f)(2.0, 3.0) == f(2.0, 3.0)


def test_grad_of_lambda_on_arrays():
    x = np.linspace(0.1, 1.0, 5)
    g = zymase.grad(lambda a: (np.sin(a) * a).sum())(x)
    np.testing.assert_allclose(g, np.cos(x) * x + np.sin(x), rtol=1e-14)


def test_lambda_closure_and_argnums():
    k = 1.5
    g = zymase.grad(lambda x, y: k * x ** 3 * y, argnums=(0, 1))(2.0, 0.5)
    f = lambda x, y: k * x ** 3 * y  # noqa: E731
    assert g[0] == pytest.approx(central(lambda x: f(x, 0.5), 2.0), rel=1e-8)
    assert g[1] == pytest.approx(central(lambda y: f(2.0, y), 0.5), rel=1e-8)


def test_two_lambdas_on_one_line():
    if sys.version_info < (3, 11):
        pytest.skip("same-argument lambdas are told apart by column (co_positions, 3.11+)")
    a, b = zymase.grad(lambda x: x ** 2)(3.0), zymase.grad(lambda x: x ** 3)(3.0)
    assert (a, b) == (6.0, 27.0)


def test_lambda_spanning_lines():
    g = zymase.grad(lambda x,
                    y: x * math.exp(y),
                    argnums=1)
    assert g(2.0, 0.5) == pytest.approx(2.0 * math.exp(0.5), rel=1e-15)


square = lambda z: z * z  # noqa: E731


def calls_lambda(x):
    return square(x) + 1.0


def test_lambda_called_as_helper():
    assert zymase.jit(calls_lambda)(3.0) == 10.0
    assert zymase.grad(calls_lambda)(3.0) == 6.0
    value, tangent = zymase.jvp(calls_lambda, (3.0,), (1.0,))
    assert (value, tangent) == (10.0, 6.0)


def test_error_inside_lambda_is_located():
    with pytest.raises(zymase.UnsupportedError) as e:
        zymase.jit(lambda x: x.no_such_method())(np.ones(3))  # ERR here
    msg = str(e.value)
    line = next(k + 1 for k, text in enumerate(open(__file__).read().splitlines())
                if text.rstrip().endswith("# ERR here"))
    assert f"test_lambda.py:{line}:30:" in msg, msg
    assert "no_such_method" in msg and "^" in msg and ZYMASE_DIR not in msg
