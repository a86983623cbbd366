"""``np.quantile``/``np.percentile`` (``frontend/numpy/quantiles.py``, ``library.quantile_*``):
values, shapes, dtypes and scalar types equal to NumPy's (to the last bit) for every supported
method, ``axis``, ``keepdims`` and kind of ``q`` (Python and NumPy scalars, int q, 1-D arrays,
lists) on float64/float32/int64 (and bool where NumPy allows it), NaN lines, the run-time
errors, the refusals, and derivatives with respect to ``a`` in both modes."""

import numpy as np
import pytest
from numpy_check import central_differences, check

import zymase
from zymase.errors import ZymaseError

QS = np.array([0.0, 0.1, 0.25, 0.5, 0.77, 1.0])


# (a few calls per function: each call compiles a sort of its own, and LLVM's time grows
# faster than the function)


def linear(a, qs):
    return (np.quantile(a, 0.3), np.percentile(a, 50), np.quantile(a, qs),
            np.quantile(a, 0.25, axis=0))


def linear_shapes(a, qs):
    return (np.percentile(a, qs * 100, axis=1, keepdims=True), np.quantile(a, qs, axis=-1),
            np.quantile(a, 0.5, keepdims=True), np.quantile(a, [0.0, 1.0]))


def linear_types(a, qs):
    return (np.percentile(a, np.float32(30.0)), np.quantile(a, np.float32(0.3), axis=1),
            np.quantile(a, qs.astype(np.float32)), np.percentile(a, 99, axis=0, keepdims=True))


def int_q(a, qs):
    return np.quantile(a, 1), np.quantile(a, 0), np.quantile(a, qs, axis=0, keepdims=True)


def other_methods(a, qs):
    return (np.quantile(a, qs, axis=0, method="lower"), np.quantile(a, 0.4, method="higher"),
            np.quantile(a, qs, method="nearest"), np.percentile(a, 12.5, method="nearest"))


def midpoints(a, qs):
    return (np.quantile(a, qs, axis=1, method="midpoint"),
            np.percentile(a, 50, axis=0, method="midpoint", keepdims=True),
            np.quantile(a, np.float32(0.9), method="midpoint"),
            np.quantile(a, qs, axis=1, method="higher", keepdims=True))


def picks(a, qs):
    return (np.quantile(a, qs, method="lower"), np.quantile(a, 0.5, axis=1, method="higher"),
            np.quantile(a, qs, axis=0, method="nearest"), np.quantile(a, 1, axis=0))


def sample(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "b":
        return rng.random(shape) > 0.5
    if np.dtype(dtype).kind == "i":
        return rng.integers(-5, 6, shape).astype(dtype)  # ties
    return (rng.standard_normal(shape) * 5).astype(dtype)


ALL = (linear, linear_shapes, linear_types, int_q, other_methods, midpoints)


@pytest.mark.parametrize("dtype,fns", [
    (np.float64, ALL),
    pytest.param(np.float32, (linear, linear_types, midpoints), marks=pytest.mark.slow),
    pytest.param(np.int64, (linear, linear_types, int_q, other_methods),
                 marks=pytest.mark.slow),
])  # fmt: skip
def test_against_numpy(dtype, fns):
    for fn in fns:
        for seed, shape in enumerate([(5, 4), (1, 7), (6, 1), (2, 9)]):
            check(fn, sample(shape, dtype, seed), QS)
    check(linear, sample((4, 3), dtype, 9)[:, ::-1], QS)  # (non-contiguous views)
    check(linear, sample((3, 4), dtype, 8).T, QS)


def test_booleans_with_the_picking_methods():
    check(picks, sample((4, 5), np.bool_, 3), QS)


def three_d(a):
    return (np.quantile(a, 0.3, axis=1), np.percentile(a, [10.0, 90.0], axis=2),
            np.quantile(a, 0.6, axis=0, keepdims=True), np.quantile(a, 0.5))


def test_three_dimensions():
    check(three_d, sample((3, 4, 5), np.float64, 4))


def quantile_1d(a):
    return np.quantile(a, 0.5), np.percentile(a, [0.0, 35.0, 100.0], method="lower")


@pytest.mark.filterwarnings("ignore:invalid value encountered")
def test_nan_lines_give_nan():
    check(quantile_1d, np.array([1.0, np.nan, 3.0]))
    check(linear, np.array([[1.0, 2.0, np.nan], [4.0, -1.0, 0.5]]), QS)
    check(other_methods, np.array([[1.0, 2.0, np.nan], [4.0, -1.0, 0.5]]), QS)
    check(quantile_1d, np.array([1.0, np.inf]))  # (NumPy's lerp: inf - inf at q = 1 is NaN)


def test_run_time_errors():
    with pytest.raises(ValueError, match=r"Quantiles must be in the range \[0, 1\]"):
        zymase.jit(linear)(np.ones((2, 2)), np.array([0.5, 1.5]))
    with pytest.raises(ValueError, match=r"Percentiles must be in the range \[0, 100\]"):
        zymase.jit(linear_shapes)(np.ones((2, 2)), np.array([0.5, np.nan]))  # (qs * 100)
    with pytest.raises(IndexError, match="out of bounds"):
        zymase.jit(quantile_1d)(np.zeros(0))


def _loss(a):
    return (np.sum(np.quantile(a, np.array([0.1, 0.5, 0.9]), axis=1) ** 2)
            + np.percentile(a, 37.0) * np.quantile(a, 0.5, method="midpoint")
            + np.sum(np.quantile(a, 1.0, axis=0) ** 3))


def test_derivatives():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 6))
    g = zymase.grad(_loss)(a)
    fd = central_differences(_loss, (a,), 0)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
    t = rng.standard_normal(a.shape)
    _, tangent = zymase.jvp(_loss, (a,), (t,))
    np.testing.assert_allclose(tangent, np.sum(fd * t), rtol=1e-6)


def test_derivative_is_the_interpolation_weights():
    a = np.array([4.0, 1.0, 3.0, 2.0])  # sorted: 1 2 3 4; q = 0.25 sits 3/4 past 1
    g = zymase.grad(lambda x: np.quantile(x, 0.25))(a)
    np.testing.assert_allclose(g, [0.0, 0.25, 0.0, 0.75], rtol=1e-12)
    g = zymase.grad(lambda x: np.quantile(x, 0.6, method="nearest"))(a)  # (picks 3.0)
    np.testing.assert_array_equal(g, [0.0, 0.0, 1.0, 0.0])


def method_hazen(a):
    return np.quantile(a, 0.5, method="hazen")


def method_unknown(a):
    return np.quantile(a, 0.5, method="average")


def with_weights(a):
    return np.quantile(a, 0.5, weights=a)


def with_out(a):
    return np.percentile(a, 50, out=a)


def several_axes(a):
    return np.quantile(a, 0.5, axis=(0, 1))


def q_2d(a):
    return np.quantile(a, a)


def bool_linear(a):
    return np.quantile(a > 0, 0.5)


def complex_data(a):
    return np.quantile(a * 1j, 0.5)


@pytest.mark.parametrize("fn,kind,words", [
    (method_hazen, zymase.UnsupportedError, "method='hazen') is not supported"),
    (method_unknown, ZymaseError, "method must be one of"),
    (with_weights, zymase.UnsupportedError, "weights=...) is not supported"),
    (with_out, zymase.UnsupportedError, "out=...) is not supported"),
    (several_axes, zymase.UnsupportedError, "several axes"),
    (q_2d, ZymaseError, "q must be a scalar or 1d"),
    (bool_linear, ZymaseError, "of booleans"),
    (complex_data, ZymaseError, "real numbers"),
])  # fmt: skip
def test_refusals_name_the_line(fn, kind, words):
    with pytest.raises(kind) as info:
        zymase.jit(fn)(np.ones((2, 2)))
    msg = str(info.value)
    assert f"test_quantiles.py:{fn.__code__.co_firstlineno + 1}:" in msg and words in msg, msg
