"""np.sort / np.argsort / a.sort() / a.argsort() / np.median: compiled results equal NumPy's
(argsort against kind="stable": equal elements in index order), NaN last, derivatives through
the permutation against finite differences, and the forms not supported refused at the call."""

import numpy as np
import pytest
from autodiff.ad_check import check_grads
from numpy_check import check

import zymase
from zymase.frontend import library


def sort(a):
    return np.sort(a)


def argsort(a):
    return np.argsort(a)


def argsort_method(a):
    return a.argsort(kind="stable")


def sort_in_place(a):
    a.sort()
    return a[0]


def median(a):
    return np.median(a)


def weighted_sorted(a):
    s = np.sort(a)
    return (s * np.arange(s.shape[0])).sum()


def trimmed_mean(a):
    b = a.copy()
    b.sort()
    return b[1:-1].mean()


def sample(n, dtype, seed):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "b":
        return rng.random(n) > 0.5
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-3, 4, n).astype(dtype)  # many ties
    a = np.round(rng.standard_normal(n), 1).astype(dtype)  # ties too
    if n > 4:
        a[[1, n // 2]] = np.nan
        a[3] = -np.inf
    return a


SIZES = [0, 1, 2, 15, 16, 17, 33, 100, 1000]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32, np.bool_])
@pytest.mark.parametrize("n", SIZES)
def test_sort_and_argsort_match_numpy(dtype, n):
    a = sample(n, dtype, n)
    np.testing.assert_array_equal(zymase.jit(sort)(a), np.sort(a))
    want = np.argsort(a, kind="stable")
    np.testing.assert_array_equal(zymase.jit(argsort)(a), want)
    np.testing.assert_array_equal(zymase.jit(argsort_method)(a), want)
    np.testing.assert_array_equal(library.argsort_stable(a), want)  # the same code in CPython
    b, c = a.copy(), a.copy()
    if n:
        zymase.jit(sort_in_place)(b)
        sort_in_place(c)
        np.testing.assert_array_equal(b, c)


@pytest.mark.parametrize("n", [1, 2, 5, 6, 17])
def test_median_matches_numpy(n):
    for a in (sample(n, np.float64, 7), sample(n, np.int64, 7), sample(n, np.float32, 7)):
        a = a[~np.isnan(a)] if a.dtype.kind == "f" else a
        if a.size:
            check(median, a)
    check(median, np.arange(12.0).reshape(3, 4)[::-1])  # all elements of a 2-D array


def test_median_of_nan_is_nan():
    assert np.isnan(zymase.jit(median)(np.array([1.0, np.nan, 2.0])))


@pytest.mark.parametrize("fn", [weighted_sorted, median, trimmed_mean])
def test_derivatives_through_the_permutation(fn):
    rng = np.random.default_rng(3)
    for n in (5, 6, 40):
        check_grads(fn, (rng.standard_normal(n),))


def test_gradient_of_sorted_weights_is_the_rank():
    a = np.array([0.3, -1.2, 2.5, 0.7, -7.0, 1.1])
    rank = np.argsort(np.argsort(a))
    np.testing.assert_array_equal(zymase.grad(weighted_sorted)(a), rank)


def sort_complex(a):
    return np.sort(a + 1j)


def sort_order(a):
    return np.sort(a, order="x")


@pytest.mark.parametrize("fn,words", [(sort_complex, "complex"), (sort_order, "order")])
def test_unsupported_forms_are_refused_at_the_call(fn, words):
    arg = np.ones(3)
    with pytest.raises(zymase.UnsupportedError) as info:
        zymase.jit(fn)(arg)
    msg = str(info.value)
    assert f"test_sort.py:{fn.__code__.co_firstlineno + 1}:" in msg and words in msg, msg


def test_median_of_ints_and_bools_adds_as_floats():
    """The two middle elements of an int or bool array are added as floats (NumPy's mean):
    in int64 they wrapped, in bool `+` was a logical or."""
    for a in (np.array([2**62, 2**62]), np.array([2**63 - 1] * 2), np.array([True, True]),
              np.array([True, True, True, False])):
        check(median, a)
