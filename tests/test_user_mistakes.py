"""What users got wrong or wrote in ways that once slipped through: each is now right or
refused at the user's line with what to do (found by writing realistic programs against the
argument, constant and error-message features)."""

import collections
import linecache

import numpy as np
import pytest

import zymase
from zymase.driver.signature import same_everywhere, signature_key

Cfg = collections.namedtuple("Cfg", "mode scale")


def _configured(x, cfg):
    return x * x * cfg.scale if cfg.mode == "sq" else x + cfg.scale


def test_constants_inside_namedtuples_are_keyed_by_value():
    """(Keyed by the string's address they compiled again for every equal string, and the disk
    cache could hand one process's code for another string to another process.)"""
    a = Cfg("".join(["s", "q"]), 2.0)
    b = Cfg("".join(["s", "q"]), 3.0)
    assert signature_key(_configured, (1.0, a)) == signature_key(_configured, (1.0, b))
    assert same_everywhere(signature_key(_configured, (1.0, a)))
    f = zymase.jit(_configured)
    assert f(3.0, a) == 18.0 and f(3.0, Cfg("ad", 2.0)) == 5.0 and f(3.0, b) == 27.0


class _Shifted(np.ndarray):
    def __radd__(self, other):
        return np.asarray(other) - np.asarray(self)


def _one_plus(x):
    return (1.0 + x).sum()


def test_a_subclass_that_redefines_any_operator_is_refused():
    with pytest.raises(zymase.ZymaseTypeError, match="redefines ndarray operators"):
        zymase.jit(_one_plus)(np.arange(3.0).view(_Shifted))


class Settings:
    lr = 0.1


def _step(w, g, cfg):
    return w - cfg.lr * g


def _step_global(w, g):
    return w - Settings.lr * g


def test_a_class_attribute_changed_after_compiling_is_seen():
    f, h = zymase.jit(_step), zymase.jit(_step_global)
    try:
        assert f(1.0, 1.0, Settings) == 0.9 and h(1.0, 1.0) == 0.9
        Settings.lr = 0.5
        assert f(1.0, 1.0, Settings) == 0.5 and h(1.0, 1.0) == 0.5
    finally:
        Settings.lr = 0.1


def test_two_texts_exec_d_under_one_name_are_told_apart():
    name = "<zymase-test-same-name>"
    made = {}
    for text in ("def f(x):\n    return 2.0 * x\n", "def f(x):\n    return x ** 3\n"):
        linecache.cache[name] = (len(text), None, text.splitlines(True), name)
        ns = {}
        exec(compile(text, name, "exec"), ns)
        made[len(made)] = ns["f"]
    try:
        assert zymase.jit(made[1])(3.0) == 27.0
        with pytest.raises(zymase.UnsupportedError, match="register each text under a name"):
            zymase.jit(made[0])(3.0)  # (its text is gone: never compiled from the other one)
    finally:
        linecache.cache.pop(name, None)


def _loss(w):
    return (w * w).sum()


def test_jvp_takes_tuples():
    with pytest.raises(zymase.ZymaseTypeError, match=r"jvp\(f, \(x,\), \(v,\)\)"):
        zymase.jvp(_loss, np.ones(3), np.ones(3))
    assert zymase.jvp(_loss, [np.ones(3)], [np.ones(3)]) == (3.0, 6.0)


def _fill_then_fail(a):
    for i in range(a.shape[0]):
        a[i] = a[i] * 1.25
        if i == 1:
            raise ValueError("midway")
    return a.sum()


def test_float16_writes_before_an_error_reach_the_caller():
    a = np.array([1.0, 2.0, 3.0], np.float16)
    with pytest.raises(ValueError, match="midway"):
        zymase.jit(_fill_then_fail)(a)
    assert a.tolist() == [1.25, 2.5, 3.0]  # what NumPy leaves


def _by_mode(w, mode):
    return (w * w).sum() if mode == "sq" else w.sum()


def test_active_on_a_string_is_refused():
    with pytest.raises(zymase.DifferentiationError, match="argument `mode` of _by_mode"):
        zymase.autodiff(zymase.Reverse, _by_mode, zymase.Duplicated(np.ones(2), np.zeros(2)),
                        zymase.Active("sq"))


def _eq_none(x):
    return (x == None).sum() + (x != "s").sum()  # noqa: E711


def _lt_str(x):
    return (x < "s").sum()


def test_an_array_compared_with_a_constant():
    assert zymase.jit(_eq_none)(np.ones(3)) == _eq_none(np.ones(3)) == 3
    with pytest.raises(zymase.ZymaseTypeError, match="cannot compare an array"):
        zymase.jit(_lt_str)(np.ones(3))


def _forgot_return(w):
    s = (w * w).sum()  # noqa: F841


def test_grad_of_a_function_that_returns_nothing():
    for transform in (zymase.grad, zymase.value_and_grad, zymase.hessian):
        with pytest.raises(zymase.DifferentiationError, match=r"_forgot_return\(\) returns None"):
            transform(_forgot_return)(np.ones(2))


@zymase.custom_vjp
def _scaled(x, scale=2.0):
    return scale * x


def _scaled_fwd(x, scale=2.0):
    return _scaled(x, scale), (x, scale)


def _scaled_bwd(res, ct):
    x, scale = res
    return (scale * ct, x * ct)  # the second should be summed to a scalar


_scaled.defvjp(_scaled_fwd, _scaled_bwd)


def test_a_backward_rule_returning_an_array_for_a_scalar_is_refused():
    with pytest.raises(zymase.DifferentiationError, match="cotangent of `scale`"):
        zymase.vjp(_scaled, np.ones(2), 2.0)[1](np.ones(2))


def _with_default(x, scale=2.0):
    return scale * x


def test_vmap_fills_in_defaults_and_converts_float16():
    np.testing.assert_array_equal(zymase.vmap(_with_default)(np.ones((2, 2))),
                                  np.full((2, 2), 2.0))
    got = zymase.vmap(_with_default, in_axes=(0, None))(np.ones((3, 2), np.float16), 3.0)
    np.testing.assert_array_equal(got, np.full((3, 2), 3.0))


def test_hvp_without_its_vector_and_bad_argnums_say_what_to_pass():
    with pytest.raises(zymase.ZymaseTypeError, match="the last argument is the vector v"):
        zymase.hvp(_by_mode)(np.ones(2), "sq")
    with pytest.raises(zymase.ZymaseTypeError, match="argnums is an int or a tuple of ints"):
        zymase.grad(_loss, argnums="w")(np.ones(2))


def _iadd(a, b):
    a += b
    return a.sum()


def _mm(a, b):
    return (a @ b).sum()


def test_shape_errors_give_the_sizes():
    with pytest.raises(zymase.ShapeError, match="size 4 against 3 in the last axis"):
        zymase.jit(_iadd)(np.ones(3), np.ones(4))
    with pytest.raises(zymase.ShapeError, match="3 columns against 2 rows"):
        zymase.jit(_mm)(np.ones((2, 3)), np.ones((2, 2)))
