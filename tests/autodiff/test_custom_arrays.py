"""custom_vjp functions returning arrays, in reverse mode: the backward rule receives the
arrays' cotangents (their shadows) and its cotangents reach the arguments, at the top level and
inside loops and branches (the residuals, copied at the call, are then kept by reference)."""

import numpy as np
from autodiff.ad_check import check_grads

import zymase


@zymase.custom_vjp
def scaled_exp(x):
    return np.exp(x) * 2.0


def _se_fwd(x):
    y = np.exp(x) * 2.0
    return y, (y,)


def _se_bwd(res, ct):
    (y,) = res
    return (ct * y,)


scaled_exp.defvjp(_se_fwd, _se_bwd)


@zymase.custom_vjp
def clipped(x, w):
    return x * w, x + w


def _clipped_fwd(x, w):
    return (x * w, x + w), (x, w)


def _clipped_bwd(res, cts):
    x, w = res
    cp, cs = cts
    # a rule that differs from the body: the gradient of x is clipped at 1
    return np.minimum(cp * w + cs, 1.0), cp * x + cs


clipped.defvjp(_clipped_fwd, _clipped_bwd)


def uses_scaled_exp(x):
    y = scaled_exp(x)
    return (y * y).sum() + y[0]


def uses_clipped(x, w):
    p, s = clipped(x, w)
    return p.sum() + (s * s).sum()


def in_a_loop(x):
    t = 0.0
    for _ in range(2):
        t += scaled_exp(x).sum()
    return t


def test_rule_matches_finite_differences():
    check_grads(uses_scaled_exp, (np.array([0.1, -0.3, 0.5]),), modes=("rev",))


def test_the_backward_rule_is_used():
    x, w = np.array([0.5, 2.0, -1.0]), np.array([1.5, -0.5, 0.25])
    gx, gw = zymase.grad(uses_clipped, argnums=(0, 1))(x, w)
    s = x + w
    np.testing.assert_allclose(gx, np.minimum(w + 2 * s, 1.0), rtol=1e-15)
    np.testing.assert_allclose(gw, x + 2 * s, rtol=1e-15)


def test_inside_a_loop():
    x = np.array([0.1, 0.2])
    np.testing.assert_allclose(zymase.grad(in_a_loop)(x), 4.0 * np.exp(x), rtol=1e-14)


def in_a_branch(x, c):
    t = 0.0
    if c > 0:
        t = scaled_exp(x).sum()
    return t


def test_inside_a_branch():
    x = np.array([0.1, 0.2])
    np.testing.assert_allclose(zymase.grad(in_a_branch)(x, 1.0), 2.0 * np.exp(x), rtol=1e-14)
    np.testing.assert_array_equal(zymase.grad(in_a_branch)(x, -1.0), 0.0)


def written_after(x):
    t = 0.0
    for k in range(2):
        y = scaled_exp(x * (k + 1.0))
        t += (y * y).sum()
        y[0] = 0.0  # the residual is y itself: the backward rule must see it as the call left it
        t += y.sum()
    return t


def test_a_residual_written_after_the_call_in_a_loop():
    x = np.array([0.1, 0.2])
    check_grads(written_after, (x,), modes=("rev",))


@zymase.custom_vjp
def mul(x, w):
    return x * w


def _mul_fwd(x, w):
    return x * w, (x, w)  # the residuals are the arguments themselves


def _mul_bwd(res, ct):
    x, w = res
    return ct * w, ct * x


mul.defvjp(_mul_fwd, _mul_bwd)


def writes_a_residual_after_the_call(x):
    w = x * 3.0
    p = mul(x, w)
    w[1] = 0.0  # the backward rule must see w as it was at the call
    x[0] = 5.0
    return (p * p).sum()


def test_residuals_are_kept_as_they_were_at_the_call():
    x = np.array([0.1, -0.3, 0.5])
    np.testing.assert_allclose(zymase.grad(writes_a_residual_after_the_call)(x.copy()),
                               36 * x ** 3, rtol=1e-14)
