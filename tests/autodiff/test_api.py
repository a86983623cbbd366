"""The derivative API: every transform, argument structures and dtypes, Enzyme-style modes,
custom rules.  References are central differences and closed forms."""

import math

import api_programs as P
import numpy as np
import pytest

import zymase
from zymase import (
    Active,
    BatchDuplicated,
    Const,
    Duplicated,
    Forward,
    ForwardWithPrimal,
    Reverse,
    ReverseWithPrimal,
)

X = np.linspace(0.1, 1.0, 5)
H = 1e-5


def fd_grad(f, x):
    return np.array([(f(x + H * e) - f(x - H * e)) / (2 * H) for e in np.eye(x.size)])


def test_grad_and_value_and_grad():
    g = zymase.grad(P.f_vec)(X)
    np.testing.assert_allclose(g, fd_grad(P.f_vec, X), rtol=1e-7)
    v, g2 = zymase.value_and_grad(P.f_vec)(X)
    assert v == pytest.approx(P.f_vec(X), rel=1e-13)
    np.testing.assert_array_equal(g, g2)


def test_argnums_tuple_and_has_aux():
    ga, gb = zymase.grad(P.scal, argnums=(0, 1))(0.7, 1.3)
    assert ga == pytest.approx(2 * 0.7 * 1.3 + math.cos(0.91) * 1.3)
    assert gb == pytest.approx(0.49 + math.cos(0.91) * 0.7)
    g, aux = zymase.grad(P.with_aux, has_aux=True)(3.0)
    assert (g, aux) == (6.0, 4.0)


def test_hessian_hvp_jacobians_vjp():
    H_ = zymase.hessian(P.f_vec)(X)
    fd = np.array([(zymase.grad(P.f_vec)(X + H * e) - zymase.grad(P.f_vec)(X - H * e)) / (2 * H)
                   for e in np.eye(5)]).T
    np.testing.assert_allclose(H_, fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(zymase.hvp(P.f_vec)(X, np.ones(5)), H_ @ np.ones(5), rtol=1e-12)
    J = np.array([(P.vec_out(X + H * e) - P.vec_out(X - H * e)) / (2 * H) for e in np.eye(5)]).T
    np.testing.assert_allclose(zymase.jacfwd(P.vec_out)(X), J, rtol=1e-7)
    np.testing.assert_allclose(zymase.jacrev(P.vec_out)(X), J, rtol=1e-7)
    np.testing.assert_allclose(zymase.jacobian(P.vec_out)(X), J, rtol=1e-7)
    y, pull = zymase.vjp(P.scal, 0.7, 1.3)
    assert y == pytest.approx(P.scal(0.7, 1.3))
    np.testing.assert_allclose(pull(1.0), zymase.grad(P.scal, (0, 1))(0.7, 1.3), rtol=1e-13)
    assert zymase.hessian(P.scal)(0.7, 1.3) == pytest.approx(2 * 1.3 - math.sin(0.91) * 1.69)


def test_structures_keep_their_shape():
    ws = [np.ones(3), np.arange(2.0)]
    g = zymase.grad(P.total)(ws, 2.0)
    assert isinstance(g, list)
    np.testing.assert_array_equal(g[0], 4 * np.ones(3))
    np.testing.assert_array_equal(g[1], [0.0, 4.0])
    gp = zymase.grad(P.loss_dc)(P.Params(np.arange(3.0), 2.0, 4))
    assert isinstance(gp, P.Params) and gp.k == 5.0 and gp.n is None
    np.testing.assert_array_equal(gp.w, [0.0, 4.0, 8.0])
    gn = zymase.grad(P.loss_nt)(P.Pair(2.0, 3.0))
    assert isinstance(gn, P.Pair) and gn == P.Pair(9.0, 12.0)


def test_float32_in_float32_out():
    a = np.arange(4, dtype=np.float32)
    g = zymase.grad(P.f32)(a)
    assert g.dtype == np.float32
    np.testing.assert_array_equal(g, 2 * a)
    _, t = zymase.jvp(P.f32, (a,), (np.ones(4, np.float32),))
    assert t == pytest.approx(12.0)


def test_enzyme_modes():
    out, x = np.zeros(3), np.array([1.0, 2.0, 3.0])
    dout, dx = np.ones(3), np.zeros(3)
    res = zymase.autodiff(Reverse, P.square_into, Duplicated(out, dout), Duplicated(x, dx),
                          Active(2.0))
    assert res == ((None, None, 14.0),)
    np.testing.assert_array_equal(dx, 4 * x)
    np.testing.assert_array_equal(dout, 0.0)  # the seed was consumed
    a, da = np.array([1.0, 2.0, 3.0]), np.zeros(3)
    derivs, primal = zymase.autodiff(ReverseWithPrimal, P.poly, Active(0.5), Duplicated(a, da),
                                     Const(3))
    assert derivs[0] == 5.0 and primal == 2.75
    np.testing.assert_array_equal(da, [1.0, 0.5, 0.25])
    tout = np.zeros(3)
    assert zymase.autodiff(Forward, P.square_into, Duplicated(out, tout), Duplicated(x, np.ones(3)),
                           Const(2.0)) is None
    np.testing.assert_array_equal(tout, 4 * x)
    t, p = zymase.autodiff(ForwardWithPrimal, P.poly, Duplicated(0.5, 1.0), Const(a), Const(3))
    assert (t, p) == (5.0, 2.75)
    t1, t2 = np.zeros(3), np.zeros(3)
    zymase.autodiff(Forward, P.square_into, BatchDuplicated(out, (t1, t2)),
                    BatchDuplicated(x, (np.eye(3)[0], np.eye(3)[1])), Const(2.0))
    np.testing.assert_array_equal(t1, [4.0, 0, 0])
    np.testing.assert_array_equal(t2, [0, 8.0, 0])


def test_custom_rules_are_used_where_they_apply():
    a, x = np.array([0.5, -1.0, 2.0]), 0.7

    def sig(z):
        return 1 / (1 + math.exp(-z))

    # reverse mode: the custom vjp (3x), and softplus's custom jvp rule (2x, transposed, as JAX)
    rev = zymase.grad(P.uses_custom)(x, a)
    assert rev == pytest.approx(sum(2 * sig(ai * x) * ai + 3 * ai * x * ai for ai in a))
    _, fwd = zymase.jvp(P.uses_custom, (x, a), (1.0, None))  # custom jvp (2x); square's body
    assert fwd == pytest.approx(sum(2 * sig(ai * x) * ai + 2 * ai * x * ai for ai in a))
    assert np.isfinite(zymase.hessian(P.uses_custom)(x, a))
    assert P.uses_custom(x, a) == pytest.approx(zymase.jit(P.uses_custom)(x, a))


def test_errors():
    with pytest.raises(zymase.DifferentiationError, match="integer"):
        zymase.grad(P.poly, argnums=2)(0.5, np.ones(3), 3)
    with pytest.raises(zymase.DifferentiationError, match="scalar"):
        zymase.grad(P.vec_out)(X)
    with pytest.raises(zymase.DifferentiationError, match="Active is for reverse mode"):
        zymase.autodiff(Forward, P.scal, Active(1.0), Const(2.0))


def test_repeated_grad_calls_take_the_cached_plan():
    """The first call per signature goes the general way and records a plan; later calls use
    it (and the C entry when every active argument is an array): same results, same errors."""
    a, b = np.linspace(0.1, 1.0, 6), np.linspace(-1.0, 1.0, 6)
    for argnums in (0, 1, (1, 2), (0, 1, 2), -3, (2, 0)):
        g = zymase.grad(P.mixed, argnums)
        first = g(0.3, a, b, 6)
        for _ in range(3):
            again = g(0.3, a, b, 6)
            for u, v in zip(np.atleast_1d(np.asarray(first, dtype=object)),
                            np.atleast_1d(np.asarray(again, dtype=object))):
                np.testing.assert_array_equal(u, v)
        assert type(again) is type(first)
    g = zymase.grad(P.mixed, 1)
    h = 1e-6
    for x in (0.3, 0.7):  # new values, same types: the plan; a new dtype: a new plan
        got = g(x, a, b, 6)
        fd = [(P.mixed(x, a + h * e, b, 6) - P.mixed(x, a - h * e, b, 6)) / (2 * h)
              for e in np.eye(6)]
        np.testing.assert_allclose(got, fd, rtol=1e-6)
    g32 = g(0.3, a.astype(np.float32), b, 6)
    assert g32.dtype == np.float32
    strided = np.linspace(0.1, 1.0, 12)[::2]
    np.testing.assert_allclose(g(0.3, strided, b, 6), g(0.3, np.ascontiguousarray(strided), b, 6))
    vg = zymase.value_and_grad(P.mixed, (0, 1))
    first = vg(0.3, a, b, 6)
    for _ in range(2):
        v, (gx, ga) = vg(0.3, a, b, 6)
        assert v == first[0] == P.mixed(0.3, a, b, 6) and type(v) is float
        assert gx == first[1][0]
        np.testing.assert_array_equal(ga, first[1][1])
    vga = zymase.value_and_grad(P.mixed, 1)
    for _ in range(3):
        v, ga = vga(0.3, a, b, 6)
        np.testing.assert_array_equal(ga, first[1][1])
        assert v == first[0]
    gi = zymase.grad(P.indexes)
    np.testing.assert_allclose(gi(a, 2), 2 * a[2] * np.eye(6)[2])
    for _ in range(2):  # the error raised inside compiled code, through the C entry too
        with pytest.raises(IndexError, match="out of bounds"):
            gi(a, 17)


def test_autodiff_takes_disable_as_a_set_like_grad():
    def f(x):
        return (x * x).sum()

    x, dx = np.array([1.0, 2.0, 3.0]), np.zeros(3)
    zymase.autodiff(zymase.Reverse, f, zymase.Duplicated(x, dx), disable={"reload"})
    np.testing.assert_array_equal(dx, 2 * x)
