"""`while` conditions that compute with active arrays (np.sum(y * y) > 1): the condition block
runs once per trip and once more; its adjoint is built twice (after the last test, and in each
trip) and both must pop what its one push per run left.  Pushing twice per run misaligned the
tape: wrong gradients, and a segfault when nested in a for loop."""

import numpy as np
import pytest
from test_second_order import second_differences

import zymase


def shrink_until(x):
    y = x.copy()
    while np.sum(y * y) > 1.0:
        y[0] = y[0] * y[1]
    return y[0] * y[0]


def nested_shrink(x):
    y = x.copy()
    for _ in range(2):
        while np.sum(y * y) > 0.7:
            y[0] = y[0] * 0.9 * y[1]
    return y[0] * y[1]


def max_condition(x):
    y = x.copy()
    while np.max(np.abs(y - 0.1)) > 0.75:
        y[0] = y[0] * y[1]
    return y[0]


def energy(v):
    return np.sum(v * v)


def helper_condition(x):
    y = x.copy()
    while energy(y) > 1.0:
        y[1] = y[1] * 0.8 + 0.01 * y[0]
    return y[0] + y[1] ** 2


def central(f, x, h=1e-6):
    return np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.size)])


@pytest.mark.parametrize("fn", [shrink_until, nested_shrink, max_condition, helper_condition],
                         ids=lambda f: f.__name__)
def test_gradient_through_array_conditions(fn):
    x = np.array([0.9, 0.8])
    want = central(fn, x)
    np.testing.assert_allclose(zymase.grad(fn)(x.copy()), want, rtol=1e-7, atol=1e-10)
    _, t = zymase.jvp(fn, (x.copy(),), (np.array([0.3, -0.7]),))
    assert t == pytest.approx(want @ [0.3, -0.7], rel=1e-7, abs=1e-10)
    np.testing.assert_array_equal(zymase.grad(fn, memory_limit=4096)(x.copy()),
                                  zymase.grad(fn)(x.copy()))


@pytest.mark.parametrize("fn", [shrink_until, nested_shrink], ids=lambda f: f.__name__)
def test_hessian_through_array_conditions(fn):
    x = np.array([0.9, 0.8])
    np.testing.assert_allclose(zymase.hessian(fn)(x.copy()), second_differences(fn, x),
                               rtol=1e-5, atol=1e-6)


def branch_chosen_array(x, c):
    y = x * 2.0 if c > 0 else x.copy()
    y[0] = y[0] * y[1]
    return y.sum()


@pytest.mark.parametrize("c", [1.0, -1.0])
def test_an_array_chosen_by_a_branch_then_written(c):
    x = np.array([1.0, 2.0])
    f = lambda x: branch_chosen_array(x, c)  # noqa: E731
    np.testing.assert_allclose(zymase.grad(branch_chosen_array)(x, c), central(f, x),
                               rtol=1e-7)


def carried_then_reused(x):
    a = x * 2.0
    y = a
    k = 0
    while k < 3:  # REFUSED here
        y[0] = y[0] * y[1]
        y = y * 0.5
        k += 1
    return y.sum() + a.sum()


def test_refusal_names_the_construct_in_user_terms():
    """The loop's first trip writes ``a`` through ``y``, and ``a`` is read after the loop: two
    names for one buffer, refused at the loop with what to change."""
    x = np.array([1.0, 2.0])
    with pytest.raises(zymase.DifferentiationError) as e:
        zymase.grad(carried_then_reused)(x)
    msg = str(e.value)
    line = next(k + 1 for k, t in enumerate(open(__file__).read().splitlines())
                if t.rstrip().endswith("# REFUSED here"))
    assert f"test_while_conditions.py:{line}:" in msg and "a loop carries" in msg, msg
    assert "`.copy()`" in msg and "scf." not in msg and zymase.__path__[0] not in msg
    _, t = zymase.jvp(carried_then_reused, (x,), (np.array([1.0, 0.0]),))
    assert t == pytest.approx(central(carried_then_reused, x)[0], rel=1e-6)
