"""The NaN-skipping reductions, ``np.average`` and ``np.ptp`` (``frontend/numpy/nanfunctions.py``)
against NumPy: arrays with NaN in some places, rows and columns all NaN, over all elements or
one axis, ``keepdims``; integer and boolean arrays (no NaN: the plain reductions); weights of
the array's shape and 1-D along an axis; derivatives in both modes (a NaN gets none) against
central differences; the refusals and run-time errors."""

import warnings

import numpy as np
import pytest
from numpy_check import central_differences, check

import zymase
from zymase.errors import ZymaseError

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (NumPy's, for all-NaN)


def sample(shape, dtype, seed=0, nan=True):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "b":
        return rng.random(shape) > 0.5
    a = np.round(rng.standard_normal(shape) * 4, 1).astype(dtype)
    if nan and a.dtype.kind == "f" and a.size > 2:
        flat = a.reshape(-1)
        flat[[0, a.size // 2]] = np.nan
    return a


def over_all(a):
    return (np.nansum(a), np.nanprod(a), np.nanmean(a), np.nanmax(a), np.nanmin(a),
            np.nanargmax(a), np.nanargmin(a), np.nanvar(a), np.nanstd(a), np.nanvar(a, ddof=1),
            np.nanstd(a, ddof=1), np.nansum(a, keepdims=True), np.nanmean(a, keepdims=True))


def over_axes(a):
    return (np.nansum(a, axis=0), np.nanprod(a, 1), np.nanmean(a, axis=1), np.nanmax(a, axis=0),
            np.nanmin(a, axis=-1), np.nanargmax(a, axis=1), np.nanargmin(a, axis=0),
            np.nanvar(a, axis=1), np.nanstd(a, axis=0, ddof=1), np.nanmax(a, 1, keepdims=True),
            np.nanargmin(a, axis=1, keepdims=True), np.nanvar(a, 0, keepdims=True),
            np.nanmean(a, axis=0, keepdims=True), np.nansum(a, axis=(0, 1)))


def over_3d(a):
    return (np.nanmean(a, axis=1), np.nanmax(a, axis=2), np.nanargmax(a, axis=0),
            np.nanstd(a, axis=2), np.nansum(a, axis=1, keepdims=True))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_nan_reductions_against_numpy(dtype):
    for n in (1, 4, 9):
        check(over_all, sample(n, dtype, n))
    check(over_all, sample((3, 4), dtype))
    a = sample((4, 5), dtype, 1)
    if a.dtype.kind == "f":
        a[2, :] = np.nan  # an all-NaN row: no index there, so keep the arg* on columns
        a[:, 1] = 1.0
    check(over_axes, a if a.dtype.kind != "f" else _no_nan_lines(a))
    check(over_3d, _no_nan_lines(sample((3, 4, 2), dtype, 2)))


def _no_nan_lines(a):
    """``a`` with no line along any axis all NaN (the arg* functions raise there)."""
    a = a.copy()
    if a.dtype.kind == "f":
        a[(0,) * (a.ndim - 1)] = 1.0
        a[..., 0] = 2.0
        a[:, 0] = 3.0
    return a


def booleans(a):
    return (np.nansum(a), np.nanprod(a, axis=0), np.nanmean(a), np.nanmax(a, axis=1),
            np.nanmin(a), np.nanargmax(a, axis=0), np.nanargmin(a), np.nanvar(a, axis=1),
            np.nanstd(a), np.average(a), np.average(a, axis=1, weights=np.arange(1, 4)))


def test_booleans():
    check(booleans, sample((4, 3), np.bool_))


def all_nan_lines(a):
    return (np.nansum(a, axis=1), np.nanprod(a, axis=1), np.nanmean(a, axis=1),
            np.nanmax(a, axis=1), np.nanmin(a, axis=1), np.nanvar(a, axis=1),
            np.nanstd(a, axis=1, ddof=3), np.nanmax(a))


def test_all_nan_slices():
    a = np.array([[np.nan, np.nan, np.nan], [1.0, np.nan, 2.0], [np.inf, -np.inf, np.nan]])
    check(all_nan_lines, a)
    check(all_nan_lines, a.astype(np.float32))
    check(all_nan_lines, np.full((2, 3), np.nan))


def nanargmax_rows(a):
    return np.nanargmax(a, axis=1)


def nanargmin_all(a):
    return np.nanargmin(a)


def nanmax_all(a):
    return np.nanmax(a)


def nanargs(a):
    return np.nanargmax(a), np.nanargmin(a)


def test_arg_of_nan_reads_inf():
    """NumPy reads NaN as -inf (nanargmax) / +inf (nanargmin): a NaN before an infinity wins."""
    check(nanargs, np.array([np.nan, -np.inf, 1.0, np.inf, np.nan]))
    check(nanargs, np.array([np.nan, -np.inf, -np.inf]))
    check(nanargs, np.array([np.nan, np.inf]))


def test_run_time_errors():
    with pytest.raises(ValueError, match="All-NaN slice encountered"):
        zymase.jit(nanargmax_rows)(np.array([[1.0, 2.0], [np.nan, np.nan]]))
    with pytest.raises(ValueError, match="All-NaN slice encountered"):
        zymase.jit(nanargmin_all)(np.full(3, np.nan))
    with pytest.raises(ValueError, match="zero-size array to reduction operation fmax"):
        zymase.jit(nanmax_all)(np.ones((2, 0)))


def averages(a, w, w1):
    return (np.average(a), np.average(a, axis=0), np.average(a, weights=w),
            np.average(a, axis=1, weights=w1), np.average(a, axis=1, weights=w, returned=True),
            np.average(a, returned=True), np.average(a, axis=0, returned=True, keepdims=True),
            np.average(a, weights=w, keepdims=True), np.average(a.T, axis=0, weights=w1))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_average_against_numpy(dtype):
    a = sample((3, 4), dtype, nan=False)
    for wt in (np.float64, np.float32, np.int64):
        w = (np.abs(sample((3, 4), wt, 1, nan=False)) + 1).astype(wt)
        check(averages, a, w, np.arange(1, 5).astype(wt))


def averaged(a, w):
    return np.average(a, weights=w)


def averaged_axis(a, w):
    return np.average(a, axis=1, weights=w)


def test_average_errors():
    with pytest.raises(ZeroDivisionError, match="Weights sum to zero"):
        zymase.jit(averaged)(np.ones(3), np.array([1.0, -1.0, 0.0]))
    with pytest.raises(TypeError, match="Axis must be specified"):
        zymase.jit(averaged)(np.ones((2, 3)), np.ones((3, 2)))
    with pytest.raises(ValueError, match="Shape of weights must be consistent"):
        zymase.jit(averaged_axis)(np.ones((2, 3)), np.ones(2))


def ranges(a):
    return np.ptp(a), np.ptp(a, axis=0), np.ptp(a, 1), np.ptp(a, axis=1, keepdims=True)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_ptp_against_numpy(dtype):
    check(ranges, sample((3, 5), dtype, nan=False))
    check(ranges, sample((3, 5), dtype))  # NaN propagates


def _loss(a):
    b = a.copy()
    b[0, 1] = np.nan
    b[2, :] = np.nan
    return (np.nansum(b ** 2) + np.sum(np.nanprod(b[:, 1:], axis=0)) + np.nanmean(b)
            + np.sum(np.nanmean(b, axis=0) ** 2) + np.nanmax(b) + np.sum(np.nanmin(b, axis=0))
            + np.nanvar(b) + np.sum(np.nanstd(b, axis=0, ddof=1)) + np.ptp(a)
            + np.sum(np.average(a, axis=0, weights=np.arange(1.0, 5.0)))
            + np.average(a ** 2, weights=a * a + 1.0) + np.sum(np.ptp(a, axis=1)))


def test_derivatives():
    rng = np.random.default_rng(6)
    a = rng.standard_normal((4, 5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        g = zymase.grad(_loss)(a)
        fd = central_differences(_loss, (a,), 0)
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-6)
        assert g[0, 1] == 0.0 or np.isfinite(g).all()
        t = rng.standard_normal(a.shape)
        _, tangent = zymase.jvp(_loss, (a,), (t,))
        np.testing.assert_allclose(tangent, np.sum(fd * t), rtol=1e-6)


def nan_complex(a):
    return np.nansum(a + 1j)


def nan_dtype(a):
    return np.nanmean(a, dtype=np.float32)


def nan_axes(a):
    return np.nanmean(a, axis=(0, 1))


def ptp_bools(a):
    return np.ptp(a > 0)


def average_no_axis(a):
    return np.average(a, weights=np.ones(3))


def average_returned(a, r):
    return np.average(a, returned=r > 0)


@pytest.mark.parametrize("fn,kind,words", [
    (nan_complex, zymase.UnsupportedError, "complex numbers is not supported"),
    (nan_dtype, zymase.UnsupportedError, "np.nanmean(dtype=...) is not supported"),
    (nan_axes, zymase.UnsupportedError, "several axes"),
    (ptp_bools, zymase.ZymaseTypeError, "np.ptp() of booleans"),
    (average_no_axis, zymase.ZymaseTypeError, "Axis must be specified"),
    (average_returned, zymase.UnsupportedError, "returned=...) must be True or False"),
])  # fmt: skip
def test_refusals_name_the_line(fn, kind, words):
    args = (np.ones((3, 3)),) if fn is not average_returned else (np.ones((3, 3)), 1.0)
    with pytest.raises(kind) as info:
        zymase.jit(fn)(*args)
    msg = str(info.value)
    assert isinstance(info.value, ZymaseError)
    assert f"test_nanfunctions.py:{fn.__code__.co_firstlineno + 1}:" in msg and words in msg, \
        msg
