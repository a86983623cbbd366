"""NumPy's ufuncs called by name (``np.add``, ``np.less``, ``np.logical_and``, ...) and their
methods (``outer``, ``reduce``, ``accumulate``, ``at``): values, dtypes and NumPy-scalar results
as NumPy gives them, on several shapes and dtypes with broadcasting, and derivatives against
central differences in both modes (``frontend/numpy/ufunc_names.py``)."""

import numpy as np
import pytest
from numpy_check import check

import zymase
from zymase.errors import ZymaseError

ARITH = [np.add, np.subtract, np.multiply, np.divide, np.floor_divide, np.mod]
COMPARE = [np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal]
LOGICAL = [np.logical_and, np.logical_or, np.logical_xor]
SHAPES = [((5,), (5,)), ((3, 4), (4,)), ((2, 1, 3), (4, 1)), ((4,), ())]


def _operands(shape_a, shape_b, dtype, seed=0):
    rng = np.random.default_rng(seed)

    def make(shape):
        x = rng.uniform(-3.0, 3.0, shape)
        x = np.where(np.abs(x) < 0.2, 0.7, x)  # (no division by ~0)
        if dtype != np.float64:
            x = np.round(x).astype(dtype)
            x = np.where(x == 0, 2, x).astype(dtype)
        return x if shape else x.item() if dtype == np.float64 else dtype(x)
    return make(shape_a), make(shape_b)


def _binary(u):
    def f(a, b):
        return u(a, b)
    return f


@pytest.mark.parametrize("u", ARITH + COMPARE + LOGICAL, ids=lambda u: u.__name__)
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_binary_ufuncs_by_name(u, shapes, dtype):
    a, b = _operands(*shapes, dtype)
    check(_binary(u), a, b)


@pytest.mark.parametrize("u", [np.bitwise_and, np.bitwise_or, np.bitwise_xor],
                         ids=lambda u: u.__name__)
def test_bitwise_ufuncs(u):
    check(_binary(u), np.arange(-3, 5), np.array([1, 2, 3, 4, 5, 6, 7, 8]))
    check(_binary(u), np.array([True, False, True]), np.array([True, True, False]))


def _unary(u):
    def f(a):
        return u(a)
    return f


def test_logical_not_and_invert():
    check(_unary(np.logical_not), np.array([0.0, 1.5, -2.0, 0.0]))
    check(_unary(np.invert), np.arange(-3, 4))
    check(_unary(np.invert), np.array([True, False]))


def test_numbers_give_numpy_scalars():
    def f(x, y):
        return np.add(x, y), np.less(x, y), np.logical_or(x, 0.0)
    check(f, 1.5, 2.0)


def _with_out(a, b):
    out = np.zeros_like(a)
    np.multiply(a, b, out=out)
    np.add(out, 1.0, out)
    return out


def test_out_argument():
    check(_with_out, np.linspace(0.0, 1.0, 6), np.linspace(1.0, 2.0, 6))

    def bad(a, b):
        out = np.zeros(a.shape[0], dtype=np.int64)
        np.add(a, b, out=out)
        return out

    with pytest.raises(ZymaseError, match="same_kind"):
        zymase.jit(bad)(np.ones(3), np.ones(3))


def _outer(a, b):
    return np.add.outer(a, b), np.less.outer(a, b), np.maximum.outer(a, b)


def _reduce(m):
    return (np.add.reduce(m), np.add.reduce(m, axis=1), np.multiply.reduce(m, 0),
            np.maximum.reduce(m), np.minimum.reduce(m, axis=1),
            np.logical_and.reduce(m > 0.0), np.logical_or.reduce(m > 0.0, axis=1))


def _accumulate(m):
    return np.add.accumulate(m), np.multiply.accumulate(m, axis=1)


def _scatter(x, idx, v):
    out = np.zeros_like(x)
    np.add.at(out, idx, v * x[:idx.shape[0]])
    np.multiply.at(out, 0, 2.0)
    return out


def _scatter2(g, i, j, v):
    out = g.copy()
    np.add.at(out, (i, j), v)
    np.maximum.at(out, (i, 0), 0.5)
    return out


def test_ufunc_methods():
    rng = np.random.default_rng(1)
    check(_outer, rng.standard_normal(4), rng.standard_normal(3))
    check(_outer, rng.standard_normal((2, 3)), rng.standard_normal(2))
    check(_reduce, rng.standard_normal((3, 4)))
    check(_accumulate, rng.standard_normal((3, 4)))
    check(_scatter, rng.standard_normal(8), np.array([0, 2, 2, 4, 0, 0]),
          rng.standard_normal(6))
    check(_scatter2, rng.standard_normal((3, 4)), np.array([0, 1, 1, 2]),
          np.array([3, 0, 0, -1]), rng.standard_normal(4))


def _loss(x, y):
    s = np.sum(np.multiply(np.add.outer(x, y), np.minimum.outer(x, y)))
    s += np.sum(np.add.accumulate(x)) * np.maximum.reduce(y)
    out = np.zeros(4)
    np.add.at(out, np.array([0, 3, 3, 1, 0]), np.multiply(x, 2.0))
    return s + np.sum(np.divide(out, np.add(y, 3.0)) ** 2)


def test_derivatives_match_central_differences():
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal(5), rng.standard_normal(4)
    gx, gy = zymase.grad(_loss, argnums=(0, 1))(x, y)
    for k, (arg, g) in enumerate(((x, gx), (y, gy))):
        fd = np.zeros_like(arg)
        for i in range(arg.size):
            e = np.zeros_like(arg)
            e[i] = 1e-6
            lo = _loss(*[(arg - e) if m == k else a for m, a in enumerate((x, y))])
            hi = _loss(*[(arg + e) if m == k else a for m, a in enumerate((x, y))])
            fd[i] = (hi - lo) / 2e-6
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
    tx = rng.standard_normal(5)
    _, jv = zymase.jvp(_loss, (x, y), (tx, None))
    np.testing.assert_allclose(jv, gx @ tx, rtol=1e-10)


def test_unsupported_methods_say_what_is():
    def f(a):
        return np.maximum.accumulate(a)

    with pytest.raises(ZymaseError, match="np.add.accumulate"):
        zymase.jit(f)(np.ones(3))

    def g(a):
        np.add.at(a, np.array([0.5]), 1.0)
        return a

    with pytest.raises(ZymaseError, match="integer indices"):
        zymase.jit(g)(np.ones(3))


def _extras(a, b):
    return (np.fmod(a, b), np.copysign(a, b), np.heaviside(a, 0.5), np.deg2rad(a),
            np.radians(a), np.rad2deg(a), np.degrees(a), np.sinc(a), np.fmod(3.5, 2.0),
            np.sinc(0.0), np.heaviside(a, b))


def test_float_extras():
    """np.fmod, copysign, heaviside (NaN stays NaN, the second value at 0), deg2rad/radians,
    rad2deg/degrees, sinc (1 at 0)."""
    a = np.array([-2.5, 0.0, 1.5, np.nan, 3.0, -0.0])
    b = np.array([1.5, -2.0, 0.7, 1.0, -1.0, 2.0])
    check(_extras, a, b)
    check(_int_extras, np.arange(-2, 4), np.array([1, 2, 3, -1, -2, 5]))

    def fmod_of_ints(x):
        return np.fmod(x, 2)

    with pytest.raises(ZymaseError, match="use np.mod, or float operands"):
        zymase.jit(fmod_of_ints)(np.arange(3))


def _int_extras(a, b):
    return (np.copysign(a, b), np.heaviside(a, 0.5), np.deg2rad(a), np.rad2deg(a), np.sinc(a),
            np.heaviside(a, b))


def _extras_loss(a, b):
    return np.sum(np.fmod(a, b) ** 2 + np.copysign(a, b) * np.sinc(a) + np.deg2rad(a) * b)


def test_float_extras_derivatives():
    a, b = np.array([-2.3, 0.4, 1.5]), np.array([1.1, -2.0, 0.7])
    grads = zymase.grad(_extras_loss, argnums=(0, 1))(a, b)
    for k, g in enumerate(grads):
        fd = np.zeros(3)
        for i in range(3):
            e = np.zeros(3)
            e[i] = 1e-6
            hi = [x + e if j == k else x for j, x in enumerate((a, b))]
            lo = [x - e if j == k else x for j, x in enumerate((a, b))]
            fd[i] = (_extras_loss(*hi) - _extras_loss(*lo)) / 2e-6
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def _shift_arrays(a):
    return a << 2


def _shift_numbers(i):
    return i >> 1


def test_shifts_of_arrays_and_numbers():
    """(an array shift reached an internal KeyError once; shifts are supported now: more in
    test_small_ints.py)"""
    check(_shift_arrays, np.arange(3))
    check(_shift_numbers, 5)


def _where_masks(a, b):
    out = np.zeros(a.shape)
    np.add(a, b, out=out, where=a > 0)
    flags = np.full(a.shape, 7)
    np.less(a, b, out=(flags,), where=np.arange(a.shape[0]) % 2 == 0)
    return out, flags


def _where_loss(a, b):
    out = a * 1.0
    np.multiply(a, b, out=out, where=a > 0)
    return np.sum(out ** 2)


def _where_without_out(a):
    return np.add(a, a, where=a > 0)


def test_where_masks():
    a, b = np.array([1.0, -1.0, 2.0, -3.0]), np.array([0.5, 1.0, 3.0, 1.0])
    check(_where_masks, a, b)
    ga, gb = zymase.grad(_where_loss, argnums=(0, 1))(a, b)
    np.testing.assert_allclose(ga, 2 * a * np.where(a > 0, b * b, 1.0))
    np.testing.assert_allclose(gb, 2 * a * a * b * (a > 0))
    with pytest.raises(ZymaseError, match="where=.*without out=") as e:
        zymase.jit(_where_without_out)(a)
    assert "test_ufunc_names.py:" in str(e.value)
