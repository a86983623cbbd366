"""A ``custom_vjp``/``custom_jvp`` function handed straight to a transform uses its rule (as in
JAX), not only when another compiled function calls it."""

import numpy as np
import pytest

import zymase


@zymase.custom_vjp
def clipped_sin(x):
    return np.sin(x)


def _fwd(x):
    return np.sin(x), x


def _bwd(x, ct):
    return (ct * 100.0,)  # a rule that differs from the body's derivative: which one ran shows


clipped_sin.defvjp(_fwd, _bwd)


@zymase.custom_jvp
def power(x, k=2.0):
    return x ** k


@power.defjvp
def _power_jvp(primals, tangents):
    x, k = primals
    return x ** k, 7.0 * tangents[0]


def test_reverse_transforms_of_a_custom_vjp_use_its_rule():
    assert zymase.grad(clipped_sin)(1.0) == 100.0
    assert zymase.jit(clipped_sin)(1.0) == pytest.approx(np.sin(1.0))
    value, g = zymase.value_and_grad(clipped_sin)(0.5)
    assert value == pytest.approx(np.sin(0.5)) and g == 100.0
    np.testing.assert_allclose(zymase.jacrev(clipped_sin)(np.ones(2)), 100.0 * np.eye(2))


def test_forward_transforms_of_a_custom_jvp_use_its_rule_and_defaults():
    assert zymase.jvp(power, (3.0,), (1.0,)) == (9.0, 7.0)
    np.testing.assert_allclose(zymase.jacfwd(power)(np.ones(2)), 7.0 * np.eye(2))
    assert zymase.jvp(power, (2.0, 3.0), (1.0, 0.0)) == (8.0, 7.0)
