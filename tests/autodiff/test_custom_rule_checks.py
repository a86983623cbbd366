"""Custom rules are checked (a wrong rule fails with an error in the user's terms, never a
wrong derivative, an LLVM error or a crash inside zymase) and a ``custom_jvp`` rule drives
reverse mode too, as in JAX (``jacfwd == jacrev``)."""

import dataclasses
import math
import re

import numpy as np
import pytest

import zymase

INTERNAL = re.compile(r"\.checked|\.body|\.value|_stop|_probe|func\.|LLVM|Traceback|zymase/")


def _clean(err) -> str:
    text = str(err.value)
    assert not INTERNAL.search(text), text
    return text


def fd_grad(f, x, eps=1e-6):
    x = np.asarray(x, dtype=float)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (f(xp) - f(xm)) / (2 * eps)
    return g


# ---------------------------------------------------------------------- 1: backward rules


def _doubling(bwd):
    @zymase.custom_vjp
    def doubled(a):
        return a * 2.0

    doubled.defvjp(lambda a: (doubled(a), None), bwd)
    return doubled


def _grad_of_sum(fn, x):
    return zymase.grad(lambda a: np.sum(fn(a)))(x)


@pytest.mark.parametrize("bwd, n, got", [
    (lambda r, ct: (np.array([7.0, 8.0]),), 3, 2),  # a constant of the wrong length
    (lambda r, ct: (ct[:2],), 6, 2),  # too short: read past its end before
    (lambda r, ct: (np.ones(50),), 6, 50),  # too long: truncated before
])
def test_a_cotangent_of_the_wrong_length_is_refused(bwd, n, got):
    with pytest.raises(zymase.ShapeError) as err:
        _grad_of_sum(_doubling(bwd), np.ones(n))
    text = _clean(err)
    assert "the backward rule of doubled()" in text
    assert f"a cotangent of shape ({got},) for `a`, which has shape ({n},)" in text
    assert "test_custom_rule_checks.py" in text  # (at the rule's line)


def test_a_cotangent_of_the_wrong_shape_in_two_dimensions_names_the_axis():
    fn = _doubling(lambda r, ct: (ct[:, :2],))
    with pytest.raises(zymase.ShapeError) as err:
        _grad_of_sum(fn, np.ones((2, 3)))
    text = _clean(err)
    assert "2 elements along axis 1 for `a`, which has 3 there" in text


def test_the_shape_check_runs_inside_loops_too():
    fn = _doubling(lambda r, ct: (ct[:2],))

    def loop(a):
        s = 0.0
        for i in range(3):
            s += np.sum(fn(a * i))
        return s
    with pytest.raises(zymase.ShapeError, match=r"shape \(2,\) for `a`, which has shape \(4,\)"):
        zymase.grad(loop)(np.ones(4))


def test_a_scalar_cotangent_for_an_array_argument_is_refused():
    with pytest.raises(zymase.DifferentiationError) as err:
        _grad_of_sum(_doubling(lambda r, ct: (1.0,)), np.ones(3))
    text = _clean(err)
    assert "returns a Python float as the cotangent of `a`, which is an array" in text
    assert "not broadcast" in text


def test_a_cotangent_of_another_rank_or_dtype_is_refused():
    with pytest.raises(zymase.DifferentiationError, match=r"\(ndim=1\) as the cotangent of `a`, "
                       r"which is an array of float64 \(ndim=2\)"):
        _grad_of_sum(_doubling(lambda r, ct: (ct[0],)), np.ones((2, 3)))
    with pytest.raises(zymase.DifferentiationError, match=r"int64 .* and dtype"):
        _grad_of_sum(_doubling(lambda r, ct: (ct.astype(np.int64),)), np.ones(3))


def test_a_cotangent_of_another_precision_is_converted():
    g = _grad_of_sum(_doubling(lambda r, ct: ((2.0 * ct).astype(np.float32),)), np.ones(3))
    assert g.dtype == np.float64
    np.testing.assert_array_equal(g, [2.0, 2.0, 2.0])


def test_the_number_of_cotangents_must_be_the_number_of_arguments():
    with pytest.raises(zymase.DifferentiationError) as err:
        _grad_of_sum(_doubling(lambda r, ct: (ct, ct)), np.ones(3))
    assert "returns 2 cotangents for the 1 argument of doubled()" in _clean(err)
    with pytest.raises(zymase.DifferentiationError) as err:  # a bare cotangent, no tuple
        _grad_of_sum(_doubling(lambda r, ct: ct), np.ones(3))
    assert "return (ct_x,)" in _clean(err)


@zymase.custom_vjp
def _product(ab, c):
    a, b = ab
    return a * b * c


def _product_fwd(ab, c):
    return _product(ab, c), (ab, c)


def _product_bwd(res, ct):
    (a, b), c = res
    return ((ct * b * c, ct * a * c), np.sum(ct * a * b))


_product.defvjp(_product_fwd, _product_bwd)


def test_cotangents_of_a_tuple_argument_reach_the_right_arguments():
    # (the cotangent of `c` came back as 0.0: cotangents were matched per argument, not per leaf)
    a, b, c = np.array([2.0, 1.0]), np.array([3.0, -1.0]), 5.0
    got = zymase.grad(lambda a, b, c: np.sum(_product((a, b), c)), argnums=(0, 1, 2))(a, b, c)
    np.testing.assert_allclose(got[0], b * c)
    np.testing.assert_allclose(got[1], a * c)
    assert got[2] == pytest.approx(np.sum(a * b))


def test_a_cotangent_that_does_not_match_a_tuple_argument_is_refused():
    @zymase.custom_vjp
    def pair(ab, c):
        return ab[0] * ab[1] * c

    pair.defvjp(lambda ab, c: (pair(ab, c), None), lambda r, ct: (ct, ct))
    with pytest.raises(zymase.DifferentiationError) as err:
        zymase.grad(lambda a, b, c: pair((a, b), c))(2.0, 3.0, 5.0)
    assert "as the cotangent of `ab`, which is a tuple of 2" in _clean(err)


def test_a_right_backward_rule_still_gives_its_cotangents():
    @zymase.custom_vjp
    def mul(a, b):
        return a * b

    mul.defvjp(lambda a, b: (mul(a, b), (a, b)), lambda r, ct: (ct * r[1], ct * r[0]))
    a, b = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 4.0])
    ga, gb = zymase.grad(lambda a, b: np.sum(mul(a, b) ** 2), argnums=(0, 1))(a, b)
    np.testing.assert_allclose(ga, fd_grad(lambda x: np.sum((x * b) ** 2), a), rtol=1e-6)
    np.testing.assert_allclose(gb, fd_grad(lambda y: np.sum((a * y) ** 2), b), rtol=1e-6)
    doubled = _doubling(lambda r, ct: (ct * 2.0,))
    view = zymase.grad(lambda x: np.sum(doubled(x[::2])))  # (a strided argument)
    np.testing.assert_array_equal(view(np.ones(6)), [2.0, 0, 2.0, 0, 2.0, 0])


# ---------------------------------------------------------------------- 2: jvp rules


def _with_rule(rule, body=lambda x: x * x):
    f = zymase.custom_jvp(body)
    f.defjvp(rule)
    return f


def test_a_tangent_of_the_wrong_shape_is_refused_when_compiling():
    b = _with_rule(lambda p, t: (p[0] * p[0], np.ones(3)))
    with pytest.raises(zymase.DifferentiationError) as err:
        zymase.jvp(lambda x: b(x) + 1.0, (3.0,), (1.0,))
    text = _clean(err)
    assert "returns an array of float64 (ndim=1) as the tangent of the output, which is a " \
           "Python float" in text
    s = _with_rule(lambda p, t: (p[0] * p[0], 2.0), body=lambda x: x * 2.0)
    with pytest.raises(zymase.DifferentiationError, match="not broadcast"):
        zymase.jvp(s, (np.ones(3),), (np.ones(3),))
    z = _with_rule(lambda p, t: (p[0] * 2.0, None), body=lambda x: x * 2.0)
    with pytest.raises(zymase.DifferentiationError, match="np.zeros_like"):
        zymase.jvp(z, (np.ones(3),), (np.ones(3),))


@pytest.mark.parametrize("mode", ["jvp", "grad"])
def test_a_tangent_of_the_wrong_length_is_refused_at_run_time(mode):
    def rule(p, t):
        return p[0] * 2.0, t[0][:2]
    f = _with_rule(rule, body=lambda x: x * 2.0)
    with pytest.raises(zymase.ShapeError) as err:
        if mode == "jvp":
            zymase.jvp(f, (np.ones(3),), (np.ones(3),))
        else:
            zymase.grad(lambda x: np.sum(f(x)))(np.ones(3))
    text = _clean(err)
    assert "the jvp rule `rule` of <lambda>() returns a tangent of shape (2,)" in text
    assert "which has shape (3,)" in text


def test_a_rule_that_returns_only_the_tangent_is_refused():
    b = _with_rule(lambda p, t: 2 * p[0] * t[0])
    with pytest.raises(zymase.DifferentiationError) as err:
        zymase.jvp(lambda x: b(x) + 1.0, (3.0,), (1.0,))
    assert "it must return a pair (output, output tangent)" in _clean(err)

    @zymase.custom_jvp
    def two(x):
        return x * 2.0, x

    @two.defjvp
    def _two_jvp(p, t):
        return t[0] * 2.0, t[0]  # (out, tangent) read as the two outputs

    with pytest.raises(zymase.DifferentiationError) as err:
        zymase.jvp(two, (1.0,), (1.0,))
    assert "returns a Python float as the output, but two() returns a tuple of 2" in _clean(err)


def test_a_rule_with_the_arguments_of_the_function_says_how_rules_are_called():
    @zymase.custom_jvp
    def b(x, y):
        return x * y

    @b.defjvp
    def b_jvp(x, y):  # should be (primals, tangents)
        return x * y, x * y

    with pytest.raises(zymase.ZymaseError) as err:
        zymase.jvp(lambda x: b(x, 2.0) + 1.0, (3.0,), (1.0,))
    assert "the jvp rule `b_jvp` of b(), which zymase calls as rule(primals, tangents)" in \
        _clean(err)

    @zymase.custom_jvp
    def c(x):
        return x * 2.0

    @c.defjvp
    def c_jvp(p, t, extra):
        return c(p[0]), t[0]

    with pytest.raises(zymase.DifferentiationError) as err:
        zymase.jvp(c, (1.0,), (1.0,))
    assert "takes (p, t, extra), but zymase calls it as rule(primals, tangents)" in _clean(err)


def test_the_primal_output_of_a_rule_must_be_what_the_function_returns():
    f = _with_rule(lambda p, t: (np.ones(2), t[0]))
    with pytest.raises(zymase.DifferentiationError) as err:
        zymase.jvp(f, (1.0,), (1.0,))
    assert "returns an array of float64 (ndim=1) as the output, but <lambda>() returns a " \
           "Python float" in _clean(err)


def test_a_jvp_rule_with_a_closure_array_argument():
    y0 = np.array([2.0, -1.0])

    @zymase.custom_jvp
    def scale(x, y):
        return x * y

    @scale.defjvp
    def _scale_jvp(p, t):
        return p[0] * p[1], t[0] * p[1] + p[0] * t[1]

    x0 = np.array([0.5, 1.5])
    fwd = zymase.jacfwd(lambda x: scale(x, y0))(x0)  # (forward mode refused the closure array)
    rev = zymase.jacrev(lambda x: scale(x, y0))(x0)
    np.testing.assert_allclose(fwd, np.diag(y0))
    np.testing.assert_allclose(rev, np.diag(y0))


# ---------------------------------------------------------------------- 3: jvp rules in reverse


@zymase.custom_jvp
def ste_round(x):
    return np.round(x)


@ste_round.defjvp
def _ste_jvp(p, t):
    return np.round(p[0]), t[0]


@zymase.custom_jvp
def safe_sqrt(x):
    return np.sqrt(x)


@safe_sqrt.defjvp
def _safe_sqrt_jvp(primals, tangents):
    x, = primals
    t, = tangents
    y = np.sqrt(x)
    return y, (t / (2 * y) if x > 0 else 0.0)


def test_reverse_mode_uses_the_jvp_rule_so_jacfwd_and_jacrev_agree():
    def h(a):
        return ste_round(a) * 2.0
    x = np.array([0.3, 1.7])
    fwd, rev = zymase.jacfwd(h)(x), zymase.jacrev(h)(x)
    np.testing.assert_array_equal(fwd, 2.0 * np.eye(2))
    np.testing.assert_array_equal(rev, fwd)  # (zeros before: the body was differentiated)
    _, pullback = zymase.vjp(h, x)
    np.testing.assert_array_equal(pullback(np.array([1.0, 3.0]))[0], [2.0, 6.0])
    value, g = zymase.value_and_grad(lambda a: np.sum(ste_round(a) * a))(x)
    assert value == pytest.approx(np.sum(np.round(x) * x))  # the body's value
    np.testing.assert_allclose(g, np.round(x) + x)


def test_the_safe_sqrt_gradient_is_the_rules():
    assert zymase.grad(safe_sqrt)(0.0) == 0.0  # (inf before: the body's derivative)
    assert zymase.grad(safe_sqrt)(4.0) == 0.25
    assert zymase.jvp(safe_sqrt, (4.0,), (1.0,)) == (2.0, 0.25)


def test_second_order_through_a_jvp_rule():
    x = np.array([0.3, 1.7])
    np.testing.assert_array_equal(zymase.hessian(lambda a: np.sum(ste_round(a) ** 2))(x),
                                  2.0 * np.eye(2))  # (as jax.hessian: the rule, twice)
    assert zymase.hessian(safe_sqrt)(4.0) == pytest.approx(-0.25 / 8.0)

    @zymase.custom_jvp
    def softplus(x):
        return math.log1p(math.exp(x))

    @softplus.defjvp
    def _softplus_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return softplus(x), t / (1.0 + math.exp(-x))

    sig = 1.0 / (1.0 + math.exp(-0.3))
    assert zymase.grad(softplus)(0.3) == pytest.approx(sig)
    assert zymase.hessian(softplus)(0.3) == pytest.approx(sig * (1.0 - sig))


@zymase.custom_jvp
def _sin_times(x, k):
    return np.sin(x) * k


@_sin_times.defjvp
def _sin_times_jvp(p, t):
    x, k = p
    return _sin_times(x, k), np.cos(x) * k * t[0]


def test_reverse_through_the_rule_in_loops_and_branches_matches_finite_differences():
    def f(a):
        s = 0.0
        for i in range(3):
            if i % 2 == 0:
                s += np.sum(_sin_times(a * (i + 1.0), i + 1) * a)
            else:
                s += np.sum(a * a)
        return s
    x = np.array([0.3, -1.2, 0.8])
    np.testing.assert_allclose(zymase.grad(f)(x), fd_grad(f, x), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(zymase.jacrev(lambda a: _sin_times(a, 3))(x),
                               zymase.jacfwd(lambda a: _sin_times(a, 3))(x))


def test_a_rule_with_integer_arguments_and_tuple_outputs():
    @zymase.custom_jvp
    def two(x, k, y):
        return x * y * k, np.sin(y)

    @two.defjvp
    def _two_jvp(p, t):
        x, k, y = p
        tx, tk, ty = t
        return two(x, k, y), (k * (tx * y + x * ty), np.cos(y) * ty)

    def loss(x, y):
        a, b = two(x, 3, y)
        return np.sum(a) + np.sum(b * b)
    x0, y0 = np.array([0.5, 1.5]), np.array([2.0, -1.0])
    gx, gy = zymase.grad(loss, argnums=(0, 1))(x0, y0)
    np.testing.assert_allclose(gx, fd_grad(lambda x: loss(x, y0), x0), rtol=1e-6)
    np.testing.assert_allclose(gy, fd_grad(lambda y: loss(x0, y), y0), rtol=1e-6)
    h = zymase.hessian(loss, argnums=1)(x0, y0)
    np.testing.assert_allclose(h, np.diag(2 * np.cos(2 * y0)), rtol=1e-6)


def test_a_rule_calling_the_function_through_a_helper_the_caller_also_calls():
    @zymase.custom_jvp
    def triple(x):
        return 3.0 * x

    def helper(x):
        return triple(x) + 0.0

    @triple.defjvp
    def _triple_jvp(p, t):
        return helper(p[0]), 5.0 * t[0]  # 5: shows the rule is used

    def f(x):
        return triple(x) + helper(x)
    assert zymase.grad(f)(2.0) == 10.0
    assert zymase.jvp(f, (2.0,), (1.0,)) == (12.0, 10.0)
    assert zymase.jit(f)(2.0) == 12.0


def test_a_custom_vjp_with_a_jvp_rule_keeps_one_rule_per_mode():
    @zymase.custom_vjp
    def both(x):
        return x * x

    both.defvjp(lambda x: (both(x), x), lambda x, ct: (ct * 100.0,))

    @both.defjvp
    def _both_jvp(p, t):
        return both(p[0]), 7.0 * t[0]

    assert zymase.grad(both)(3.0) == 100.0
    assert zymase.jvp(both, (3.0,), (1.0,)) == (9.0, 7.0)


def test_the_value_and_primal_mode_are_the_bodys():
    @zymase.custom_jvp
    def f(x):
        return x * 2.0

    @f.defjvp
    def _f_jvp(p, t):
        return p[0] * 2.0, 3.0 * t[0]

    x = np.array([1.0, 2.0])
    np.testing.assert_array_equal(zymase.jit(lambda a: f(a) + 1.0)(x), [3.0, 5.0])
    np.testing.assert_array_equal(zymase.grad(lambda a: np.sum(f(a)))(x), [3.0, 3.0])
    np.testing.assert_array_equal(zymase.jacrev(f)(x), zymase.jacfwd(f)(x))


def test_a_rule_of_a_function_taking_a_list():
    @zymase.custom_jvp
    def total(x, values):
        s = x
        for v in values:
            s = s + v
        return s

    @total.defjvp
    def _total_jvp(p, t):
        x, values = p
        return total(x, values), 3.0 * t[0]  # (a list gets no tangent: None)

    def f(x):
        values = []
        for i in range(3):
            values.append(x * i)
        return total(x, values)
    assert zymase.jvp(f, (1.0,), (1.0,)) == (4.0, 3.0)  # (a ValueError inside zymase before)
    assert zymase.grad(f)(1.0) == 3.0


def test_a_rule_calling_a_function_that_calls_the_function_is_refused():
    @zymase.custom_jvp
    def f(x):
        return x * 3.0

    def g(x):
        return f(x) * 2.0

    @f.defjvp
    def _f_jvp(p, t):
        return g(p[0]) / 2.0, t[0]

    assert zymase.grad(g)(1.0) == 2.0  # (the rule calls its own copy of the entry g)
    with pytest.raises(zymase.UnsupportedError) as err:  # (g calls f, whose rule calls g)
        zymase.grad(lambda x: g(x))(1.0)
    assert "the jvp rule `_f_jvp` of f() calls `g`, which is still being compiled" in \
        _clean(err)


@dataclasses.dataclass
class _Params:
    w: float
    v: np.ndarray


@zymase.custom_vjp
def _weighted(p, x):
    return p.w * (p.v * x).sum()


def _weighted_fwd(p, x):
    return _weighted(p, x), (p, x)


def _weighted_bwd(res, ct):
    p, x = res
    return ((ct * (p.v * x).sum(), ct * p.w * x), ct * p.w * p.v)  # a dataclass's: a tuple


_weighted.defvjp(_weighted_fwd, _weighted_bwd)


def test_a_dataclass_argument_takes_a_tuple_of_field_cotangents():
    p, x = _Params(2.0, np.array([1.0, 2.0, 3.0])), np.array([0.5, 1.0, -1.0])
    gp, gx = zymase.grad(_weighted, argnums=(0, 1))(p, x)
    assert isinstance(gp, _Params) and gp.w == pytest.approx((p.v * x).sum())
    np.testing.assert_allclose(gp.v, p.w * x)
    np.testing.assert_allclose(gx, p.w * p.v)
