"""Jacobians and Hessians in JAX's shapes: jacrev with tuple argnums and tuple outputs, checked
against jacfwd and central differences of CPython; what is not supported is refused at the
user's call (never a truncated answer)."""

import os

import numpy as np
import pytest

import zymase

ZYMASE_DIR = os.path.dirname(os.path.abspath(zymase.__file__))


def central_jacobian(f, x, h=1e-6):
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = h
        cols.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * h))
    return np.stack(cols, axis=-1).reshape(np.shape(f(x)) + x.shape)


def two_outputs(a, b):
    return a * b[0], np.sin(a) * b


A, B = np.array([0.1, 0.2, -0.4]), np.array([1.0, 2.0, 0.5])


def test_jacrev_tuple_argnums_and_tuple_outputs():
    J = zymase.jacrev(two_outputs, argnums=(0, 1))(A, B)
    assert len(J) == 2 and all(len(row) == 2 for row in J)
    for o in range(2):
        ref_a = central_jacobian(lambda a, o=o: two_outputs(a, B)[o], A)
        ref_b = central_jacobian(lambda b, o=o: two_outputs(A, b)[o], B)
        np.testing.assert_allclose(J[o][0], ref_a, rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(J[o][1], ref_b, rtol=1e-7, atol=1e-9)
    Ja = zymase.jacrev(two_outputs)(A, B)  # int argnums: a tuple over the outputs
    np.testing.assert_array_equal(Ja[1], J[1][0])


def test_jacrev_matches_jacfwd_on_one_output():
    f = lambda a, b: np.sin(a) * b  # noqa: E731
    np.testing.assert_allclose(zymase.jacrev(f)(A, B), zymase.jacfwd(f)(A, B), rtol=1e-15)


def test_jacrev_scalar_cases():
    assert zymase.jacrev(lambda x: x ** 3)(2.0) == 12.0
    ga, gb = zymase.jacrev(lambda a, b: a * b, argnums=(0, 1))(0.5, 2.0)
    assert (ga, gb) == (2.0, 0.5)


def scaled(x, n):
    return x * n


def pair(x):
    return np.sum(x), x * 3.0


def quad(x, y):
    return np.sum(x * x * y)


@pytest.mark.parametrize("call, fragment", [
    (lambda: zymase.jacrev(scaled, argnums=1)(A, 3), "integers and booleans are never active"),
    (lambda: zymase.jacfwd(pair)(A), "jacfwd needs"),
    (lambda: zymase.jacfwd(quad, argnums=(0, 1))(A, B), "jacfwd takes one argnums"),
    (lambda: zymase.hessian(quad, argnums=(0, 1))(A, B), "one argnums"),
    (lambda: zymase.hvp(quad, argnums=(0, 1))(A, B, np.ones(3)), "one argnums"),
])
def test_unsupported_forms_are_refused_at_the_call(call, fragment):
    with pytest.raises(zymase.DifferentiationError) as e:
        call()
    msg = str(e.value)
    assert fragment in msg and "test_jacobians.py:" in msg and ZYMASE_DIR not in msg, msg


def power_steps(x, W):
    h = x.copy()
    for _ in range(3):
        h = W @ h  # a new array each step, which the adjoint reads by reference
    return h


def test_vjp_and_jacrev_through_arrays_renewed_by_matrix_products():
    """The split forward function's per-call arena freed the referenced versions before the
    pullback read them (garbage such as 1e-310); vjp now runs the one-function gradient."""
    x, W = np.array([1.0, 2.0]), np.array([[1.0, 2.0], [3.0, 4.0]])
    loss = lambda x, W: np.sum(power_steps(x, W))  # noqa: E731
    gx, gW = zymase.grad(loss, argnums=(0, 1))(x, W)
    np.testing.assert_allclose(gW, central_jacobian(lambda w: loss(x, w.reshape(2, 2)),
                                                    W.ravel()).reshape(2, 2), rtol=1e-7)
    _, pullback = zymase.vjp(loss, x, W)
    for _ in range(2):
        cx, cW = pullback(1.0)
        np.testing.assert_array_equal(cx, gx)
        np.testing.assert_array_equal(cW, gW)
    J = zymase.jacrev(power_steps, argnums=1)(x, W)
    np.testing.assert_allclose(J, zymase.jacfwd(power_steps, argnums=1)(x, W), rtol=1e-14)


def test_pullback_checks_the_cotangent_against_the_output():
    _, pullback = zymase.vjp(lambda z: z * 2.0, np.array([1.0, 2.0, 3.0]))
    for bad in (np.ones(2), 1.0, (np.ones(3),)):
        with pytest.raises(zymase.DifferentiationError, match="cotangent") as e:
            pullback(bad)
        assert "test_jacobians.py:" in str(e.value) and ZYMASE_DIR not in str(e.value)
    np.testing.assert_array_equal(pullback(np.ones(3))[0], [2.0, 2.0, 2.0])
    _, pull2 = zymase.vjp(two_outputs, A, B)
    with pytest.raises(zymase.DifferentiationError, match="tuple of 2"):
        pull2(np.ones(3))


def test_matrix_transforms_refuse_structured_arguments_clearly():
    def f(t):
        a, b = t
        return (a * b).sum() + a[0] ** 3

    t = (np.array([0.5, 1.0, 1.5]), np.array([2.0, 1.0, 0.5]))
    for name, transform in (("hessian", zymase.hessian), ("jacfwd", zymase.jacfwd),
                            ("jacrev", zymase.jacrev)):
        with pytest.raises(zymase.DifferentiationError,
                           match=f"{name} differentiates with respect to floats and arrays; "
                                 "argument 0 is a tuple"):
            transform(f)(t)
    with pytest.raises(zymase.DifferentiationError, match="argument 0 is a tuple"):
        zymase.hvp(f)(t, (np.ones(3), np.ones(3)))
