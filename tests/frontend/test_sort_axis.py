"""``np.sort``/``np.argsort``/``a.sort()``/``a.argsort()`` of N-D arrays along any axis
(``frontend/numpy/sort.py``: each line sorted by the stable merge sort) against NumPy's stable
sort: 2-D and 3-D arrays of several dtypes with ties and NaN, every axis, ``axis=None``,
transposed and strided views, sorting in place through a view; derivatives through the
permutation in both modes; the forms refused."""

import numpy as np
import pytest
from numpy_check import central_differences, check

import zymase
from zymase.errors import ZymaseError
from zymase.frontend import library


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "b":
        return rng.random(shape) > 0.5
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-3, 4, shape).astype(dtype)  # many ties
    a = np.round(rng.standard_normal(shape), 1).astype(dtype)
    flat = a.reshape(-1)
    if flat.size > 4:
        flat[[1, flat.size // 2]] = np.nan
        flat[3] = -np.inf
    return a


def sorted_2d(a):
    return (np.sort(a, axis=-1), np.sort(a, axis=0), np.sort(a, axis=None),
            np.argsort(a, axis=0, kind="stable"), np.argsort(a, axis=1, stable=True),
            a.argsort(axis=None, kind="stable"), np.sort(a.T, axis=1),
            np.sort(a[::-1, ::2], axis=0))


def sorted_3d(a):
    return (np.sort(a, axis=0), np.sort(a, axis=1), np.sort(a),
            np.argsort(a, axis=1, kind="stable"), np.sort(a.transpose(2, 0, 1), axis=1))


@pytest.mark.parametrize("dtype", [np.float64, pytest.param(np.float32, marks=pytest.mark.slow),
                                   pytest.param(np.int64, marks=pytest.mark.slow),
                                   pytest.param(np.bool_, marks=pytest.mark.slow)])
def test_against_numpy(dtype):
    check(sorted_2d, sample((5, 7), dtype))
    check(sorted_2d, sample((1, 3), dtype, 1))
    check(sorted_2d, sample((0, 4), dtype))
    check(sorted_2d, sample((40, 3), dtype, 2))  # lines longer than a merge sort run
    check(sorted_3d, sample((3, 4, 5), dtype, 3))


def sort_rows_in_place(a):
    a.sort()
    return a


def sort_columns_in_place(a):
    a.sort(axis=0)
    return a


def sort_view_in_place(a):
    a[:, ::2].sort(axis=0)  # through a view: a changes
    return a


def sort_3d_in_place(a):
    a.sort(axis=1, kind="stable")
    return a


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_in_place(dtype):
    for fn in (sort_rows_in_place, sort_columns_in_place, sort_view_in_place):
        check(fn, sample((4, 6), dtype))
    check(sort_3d_in_place, sample((2, 5, 3), dtype))


def one_dim(a):
    return np.sort(a), np.argsort(a, kind="stable"), np.sort(a, axis=0), np.sort(a, axis=None)


def test_1d_unchanged():
    check(one_dim, sample(37, np.float64))
    check(one_dim, sample(10, np.int64))


def test_argsort_rows_under_cpython():
    a = sample((6, 40), np.float64, 4)
    np.testing.assert_array_equal(library.argsort_rows(a), np.argsort(a, axis=1, kind="stable"))


def _loss(a):
    w = np.arange(a.shape[0] * 1.0)[:, None]
    return (np.sum(np.sort(a, axis=0) * w) + np.sum(np.sort(a, axis=1) ** 2 * w)
            + np.sum(np.sort(a, axis=None) * np.arange(a.size)))


def test_derivatives():
    rng = np.random.default_rng(9)
    a = rng.standard_normal((5, 4))
    g = zymase.grad(_loss)(a)
    fd = central_differences(_loss, (a,), 0)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7)
    t = rng.standard_normal(a.shape)
    _, tangent = zymase.jvp(_loss, (a,), (t,))
    np.testing.assert_allclose(tangent, np.sum(fd * t), rtol=1e-6)


def test_gradient_of_sorted_columns_is_the_rank():
    a = np.array([[0.3, -1.2], [2.5, 0.7], [-7.0, 1.1]])
    rank = np.argsort(np.argsort(a, axis=0), axis=0)
    np.testing.assert_array_equal(zymase.grad(_weighted_columns)(a), rank)


def _weighted_columns(a):
    return np.sum(np.sort(a, axis=0) * np.arange(3.0)[:, None])


def sort_in_place_flat(a):
    a.sort(axis=None)
    return a


def sort_complex(a):
    return np.sort(a + 1j, axis=0)


def argsort_bad_axis(a):
    return np.argsort(a, axis=2)


def sort_run_time_axis(a):
    return np.sort(a, axis=a.shape[0] - 3 + int(a[0, 0]))


@pytest.mark.parametrize("fn,kind,words", [
    (sort_in_place_flat, zymase.ZymaseTypeError, "ndarray.sort(axis=None) is not allowed"),
    (sort_complex, zymase.UnsupportedError, "complex"),
    (argsort_bad_axis, ZymaseError, "axis 2 is out of bounds"),
    (sort_run_time_axis, zymase.UnsupportedError, "must be a constant integer"),
])  # fmt: skip
def test_refusals_name_the_line(fn, kind, words):
    with pytest.raises(kind) as info:
        zymase.jit(fn)(np.ones((3, 3)))
    msg = str(info.value)
    assert f"test_sort_axis.py:{fn.__code__.co_firstlineno + 1}:" in msg and words in msg, msg
