"""Calls the way Python users make them: keyword arguments, defaults, keyword-only parameters
and dicts of parameters (string keys), through jit and every transform.  References: CPython
running the same function, central differences, and JAX where installed."""

import os

import numpy as np
import pytest

import zymase

ZYMASE_DIR = os.path.dirname(os.path.abspath(zymase.__file__))


def loss(x, w=2.0, *, p=3):
    s = 0.0
    for i in range(p):
        s += w * x[i] ** 3
    return s


def central_grad(f, x, h=1e-6):
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = h
        g.flat[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


X = np.array([1.0, -2.0, 0.5, 4.0])


@pytest.mark.parametrize("args, kwargs", [((X,), {}), ((X, 0.5), {}), ((X,), {"p": 2}),
                                          ((X,), {"w": 1.5, "p": 4}), ((), {"x": X, "p": 1})])
def test_jit_binds_keywords_and_defaults_as_python_does(args, kwargs):
    jf = zymase.jit(loss)
    assert jf(*args, **kwargs) == loss(*args, **kwargs)
    assert jf(*args, **kwargs) == loss(*args, **kwargs)  # second call: compiled code reused


@pytest.mark.parametrize("args, kwargs, word", [((), {}, "'x'"), ((X, 1.0, 3), {}, "positional"),
                                                ((X,), {"q": 1}, "'q'"), ((X,), {"x": X}, "'x'")])
def test_bad_calls_raise_type_error_as_python_does(args, kwargs, word):
    with pytest.raises(TypeError):
        loss(*args, **kwargs)
    for transform in (zymase.jit, zymase.grad):
        with pytest.raises(TypeError) as e:
            transform(loss)(*args, **kwargs)
        first = str(e.value).splitlines()[0]  # located at the call, then Python's message
        assert "test_call_forms.py:" in first and ": loss(): " in first and word in first, first


def test_transforms_take_keywords_and_defaults():
    ref = central_grad(lambda x: loss(x, 0.5, p=4), X)
    np.testing.assert_allclose(zymase.grad(loss)(X, 0.5, p=4), ref, rtol=1e-7)
    np.testing.assert_allclose(zymase.grad(loss)(X, w=0.5, p=4), ref, rtol=1e-7)
    value, g = zymase.value_and_grad(loss)(X, p=4, w=0.5)
    assert value == loss(X, 0.5, p=4)
    np.testing.assert_allclose(g, ref, rtol=1e-7)
    gx, gw = zymase.grad(loss, argnums=(0, 1))(X, p=2)
    assert gw == pytest.approx((loss(X, 2.0 + 1e-6, p=2) - loss(X, 2.0 - 1e-6, p=2)) / 2e-6)
    np.testing.assert_allclose(zymase.jacfwd(loss)(X, w=0.5, p=4), ref, rtol=1e-7)
    np.testing.assert_allclose(zymase.jacrev(loss)(X, w=0.5, p=4), ref, rtol=1e-7)
    v = np.array([1.0, 0.0, -1.0, 2.0])
    hv = zymase.hvp(loss)(X, v, p=4)
    np.testing.assert_allclose(hv, 12.0 * X * v, rtol=1e-12)  # w = 2: H = diag(6 w x)
    np.testing.assert_allclose(zymase.hessian(loss)(X, p=4), np.diag(12.0 * X), rtol=1e-12)


def test_jvp_vjp_and_autodiff_fill_in_defaults():
    value, tangent = zymase.jvp(loss, (X,), (np.ones(4),))
    assert value == loss(X)
    assert tangent == pytest.approx(central_grad(loss, X).sum(), rel=1e-7)
    out, pullback = zymase.vjp(loss, X)
    cts = pullback(1.0)
    assert out == loss(X) and len(cts) == 1  # one cotangent per argument passed
    np.testing.assert_allclose(cts[0], central_grad(loss, X), rtol=1e-7)
    dx = np.zeros(4)
    (derivs,) = zymase.autodiff(zymase.Reverse, loss, zymase.Duplicated(X, dx))
    assert derivs == (None,)
    np.testing.assert_allclose(dx, central_grad(loss, X), rtol=1e-7)


def helper(x, k=2.0, *, shift=1.0):
    return k * x + shift


def calls_helper(x):
    return helper(x) + helper(x, 3.0) + helper(x, k=4.0) + helper(x, shift=0.5)


def test_keyword_only_parameters_of_helpers():
    assert zymase.jit(calls_helper)(1.25) == calls_helper(1.25)
    assert zymase.grad(calls_helper)(1.25) == 2.0 + 3.0 + 4.0 + 2.0


# ---------------------------------------------------------------------- dicts


def mlp(params, x):
    h = np.tanh(params["W"] @ x + params["b"])
    return (h ** 2).sum() * params["scale"]


def params():
    return {"W": np.linspace(-1.0, 1.0, 6).reshape(2, 3), "b": np.array([0.1, -0.2]),
            "scale": 1.5}


XS = np.array([0.3, -0.5, 0.8])


def test_dict_argument_value_and_gradient():
    p = params()
    assert zymase.jit(mlp)(p, XS) == pytest.approx(mlp(p, XS), rel=1e-15)
    g = zymase.grad(mlp)(p, XS)
    assert isinstance(g, dict) and list(g) == ["W", "b", "scale"]
    for key in ("W", "b"):
        def along(v, key=key):
            q = dict(p)
            q[key] = v
            return mlp(q, XS)
        np.testing.assert_allclose(g[key], central_grad(along, p[key]), rtol=1e-7)
    h = 1e-6
    assert g["scale"] == pytest.approx((mlp({**p, "scale": 1.5 + h}, XS)
                                        - mlp({**p, "scale": 1.5 - h}, XS)) / (2 * h), rel=1e-7)


def test_dict_gradient_matches_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def jmlp(prm, x):
        h = jnp.tanh(prm["W"] @ x + prm["b"])
        return (h ** 2).sum() * prm["scale"]

    p = params()
    g = zymase.grad(mlp)(p, XS)
    gj = jax.grad(jmlp)({k: jnp.asarray(v) for k, v in p.items()}, jnp.asarray(XS))
    for key in p:
        np.testing.assert_allclose(g[key], np.asarray(gj[key]), rtol=1e-13, atol=1e-15)


def nested(d):
    return d["a"]["x"] * d["b"][0] + (d["b"][1] * d["a"]["x"]).sum()


def test_nested_dicts_and_tuples():
    d = {"a": {"x": 2.0}, "b": (3.0, np.array([1.0, 2.0, 3.0]))}
    assert zymase.jit(nested)(d) == nested(d)
    g = zymase.grad(nested)(d)
    assert g["a"]["x"] == 3.0 + 6.0 and g["b"][0] == 2.0
    np.testing.assert_array_equal(g["b"][1], np.full(3, 2.0))


def writes_through_dict(d):
    d["u"][0] = 2.0 * d["u"][1]
    return d["u"].sum()


def test_arrays_in_dicts_are_written_in_place():
    d, ref = {"u": np.ones(3)}, {"u": np.ones(3)}
    assert zymase.jit(writes_through_dict)(d) == writes_through_dict(ref)
    np.testing.assert_array_equal(d["u"], ref["u"])


def reads_attribute(d):
    return d.W  # ERR attr


def reads_missing_key(d):
    return d["nope"]  # ERR key


def assigns_key(d):
    d["W"] = 2.0  # ERR assign
    return 1.0


def _line(tag):
    lines = open(__file__).read().splitlines()
    return next(k + 1 for k, t in enumerate(lines) if t.rstrip().endswith(f"# ERR {tag}"))


@pytest.mark.parametrize("fn, tag, fragment", [
    (reads_attribute, "attr", "no attribute `W`"),
    (reads_missing_key, "key", "no key 'nope'"),
    (assigns_key, "assign", "cannot assign into a dict"),
])
def test_dict_errors_are_located(fn, tag, fragment):
    with pytest.raises(zymase.ZymaseError) as e:
        zymase.jit(fn)({"W": 1.0})
    msg = str(e.value)
    assert f"test_call_forms.py:{_line(tag)}:" in msg and fragment in msg, msg
    assert ZYMASE_DIR not in msg


def test_dict_with_other_keys_is_refused_at_the_call():
    with pytest.raises(zymase.ZymaseTypeError, match="keys are not all strings"):
        zymase.jit(reads_missing_key)({1: 1.0})
