"""``np.append``, ``np.insert``, ``np.delete``, ``np.take``, ``np.take_along_axis``, ``np.rot90``
and ``np.isin`` (``frontend/numpy/editing.py``) against NumPy on 1-D to 3-D arrays of several
dtypes: every form of the index (an int, a list, an array, a boolean mask, a slice), NumPy's two
ways of inserting (one index takes all the values, several take one each), negative indices,
``take``'s modes, rotations as views; derivatives in both modes against central differences;
the refusals and the run-time errors (IndexError naming the index and the size)."""

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
    return np.round(rng.standard_normal(shape) * 4, 1).astype(dtype)


DTYPES = [np.float64, pytest.param(np.float32, marks=pytest.mark.slow), np.int64,
          pytest.param(np.bool_, marks=pytest.mark.slow)]
SLOW_F32 = pytest.param(np.float32, marks=pytest.mark.slow)  # (compiles as float64 does)
EVERY_OTHER = slice(1, None, 2)  # (a slice object: known when compiling)
BACKWARDS = slice(None, None, -3)


def appended(a, v):
    return (np.append(a, v), np.append(a, 1.5), np.append(a, 2), np.append(a, [7, 8]),
            np.append(v, a), np.append(a, a, axis=0))


def appended_2d(a, row):
    return (np.append(a, row), np.append(a, a[:1], axis=0), np.append(a, a[:, :2], axis=1),
            np.append(a, row[None, :], axis=-2))


@pytest.mark.parametrize("dtype", DTYPES)
def test_append(dtype):
    check(appended, sample(5, dtype), sample(2, dtype, 1))
    check(appended, sample(0, dtype), sample(3, dtype, 1))
    check(appended_2d, sample((3, 4), dtype), sample(4, dtype, 1))
    check(appended, sample(4, np.int64), sample(2, np.float32, 1))  # promoted


def inserted(a, v):
    return (np.insert(a, 1, 9), np.insert(a, [0, 2, 2], [5, 6, 7]), np.insert(a, -1, v),
            np.insert(a, [1], v), np.insert(a, 0, 4.7), np.insert(a, np.array([3, 0]), 0),
            np.insert(a, 2, v, axis=None), np.insert(a, [], 3), np.insert(a, 5, v),
            np.insert(a, [5, 0, -5], 1), np.insert(a, EVERY_OTHER, 0),
            np.insert(a, a[:5] > 0, 1), np.insert(a, np.array([2, 2]), v))


def inserted_2d(a, v, col, row):
    return (np.insert(a, 1, 9, axis=0), np.insert(a, 1, col, axis=1),
            np.insert(a, [0, 2], v, axis=1), np.insert(a, 0, row, axis=0),
            np.insert(a, [1], col[:, None], axis=1), np.insert(a, 3, 1.0),
            np.insert(a, [1], row, axis=0), np.insert(a, [2, 0, 4], col[:, None], axis=1),
            np.insert(a, -1, v[:1], axis=-1), np.insert(a.T, 2, col, axis=0))


@pytest.mark.parametrize("dtype", [np.float64, SLOW_F32, np.int64])
def test_insert(dtype):
    check(inserted, sample(5, dtype), sample(2, dtype, 1))
    check(inserted_2d, sample((3, 4), dtype), sample(2, dtype, 1), sample(3, dtype, 2),
          sample(4, dtype, 3))


def inserted_bools(a, v):
    return np.insert(a, 1, True), np.insert(a, [0, 3], v), np.insert(a, 2, 0.5)


def test_insert_bools_and_casts():
    check(inserted_bools, sample(4, np.bool_), sample(2, np.bool_, 1))
    check(inserted, sample(5, np.int64), sample(2, np.float64, 1))  # values cast to int64


def insert_array_index(a, idx, v):
    return np.insert(a, idx, v)


def test_insert_one_index_in_an_array_takes_all_values():
    """NumPy: one index (even in an array) inserts all of ``values`` there; several take one
    value each (the count is known only when the function runs)."""
    a, v = np.arange(5.0), np.array([10.0, 20.0])
    check(insert_array_index, a, np.array([3]), v)
    check(insert_array_index, a, np.array([3, 1]), v)
    check(insert_array_index, a, np.array([3, 1]), 7.0)
    check(insert_array_index, a, np.zeros(0, np.int64), 7.0)


def deleted(a):
    return (np.delete(a, 1), np.delete(a, [0, -1, 0]), np.delete(a, np.array([2])),
            np.delete(a, []), np.delete(a, EVERY_OTHER), np.delete(a, BACKWARDS),
            np.delete(a, -5), np.delete(a, a > a[0]), np.delete(a, np.array([4, 1]), axis=0))


def deleted_2d(a, mask):
    return (np.delete(a, 1, axis=0), np.delete(a, [0, 2], axis=1), np.delete(a, -1),
            np.delete(a, mask, axis=1), np.delete(a, EVERY_OTHER, axis=-1),
            np.delete(a.T, 0, axis=0), np.delete(a, [], axis=0))


@pytest.mark.parametrize("dtype", DTYPES)
def test_delete(dtype):
    check(deleted, sample(5, dtype))
    check(deleted_2d, sample((3, 4), dtype), np.array([True, False, False, True]))


def taken(a, i):
    return (np.take(a, i), np.take(a, [0, -1]), np.take(a, 1), np.take(a, i, mode="wrap"),
            np.take(a, i * 3, mode="clip"), np.take(a, -7, mode="wrap"),
            np.take(a, [[0, 1], [-1, 2]]))


def taken_2d(a, i):
    return (np.take(a, i, axis=1), np.take(a, 2, axis=0), np.take(a, [[0, 1], [1, 0]], axis=0),
            np.take(a, i), np.take(a, 1, axis=-1), np.take(a.T, i, axis=0, mode="wrap"))


def along(a, i):
    return (np.take_along_axis(a, i, axis=1), np.take_along_axis(a, i[:, :1], 1),
            np.take_along_axis(a, np.argsort(a, axis=0), axis=0),
            np.take_along_axis(a, i[:1], axis=1), np.take_along_axis(a[0], i[0], axis=None),
            np.take_along_axis(a, i, -1))


@pytest.mark.parametrize("dtype", DTYPES)
def test_take(dtype):
    check(taken, sample(5, dtype), np.array([4, -5, 2]))
    check(taken_2d, sample((3, 4), dtype), np.array([3, 0, -1]))
    check(along, sample((3, 4), dtype), np.array([[0, 3], [1, 1], [2, -4]]))


def rotations(a):
    return (np.rot90(a), np.rot90(a, 2), np.rot90(a, -1), np.rot90(a, 4), np.rot90(a, 1, (1, 0)),
            np.rot90(a, k=3), np.rot90(a, 1, axes=(-1, 0)))


def rotate_and_write(a):
    r = np.rot90(a)
    r[0, 1] = 100  # a view, as NumPy's: the write reaches a
    return a


@pytest.mark.parametrize("dtype", DTYPES)
def test_rot90(dtype):
    check(rotations, sample((3, 4), dtype))
    check(rotations, sample((2, 3, 4), dtype))
    check(rotate_and_write, sample((3, 4), dtype))


def membership(a, t):
    return (np.isin(a, t), np.isin(a, t, invert=True), np.isin(a, [1, 2]), np.isin(a, 2.0),
            np.isin(a, t, kind="sort"), np.isin(a, t, assume_unique=True))


@pytest.mark.parametrize("dtype", [np.float64, SLOW_F32, np.int64, np.bool_])
def test_isin(dtype):
    a = np.round(sample((3, 4), dtype)) if dtype != np.bool_ else sample((3, 4), dtype)
    check(membership, a, np.array([3, 5, 7, -2, 11]).astype(dtype))
    check(membership, a, np.zeros(0, dtype))
    check(membership, a.T, a.reshape(-1)[:3])


def test_isin_of_nan_and_mixed_types():
    check(membership, np.array([1.0, np.nan, 2.5, -0.0]), np.array([np.nan, 0.0, 2.5]))
    check(membership, np.arange(6), np.array([1.0, 4.5, 5.0]))


def test_library_routines_under_cpython():
    """The routines compiled for insert/delete/isin are plain Python: the same code in CPython
    gives NumPy's positions."""
    pos, old = library.insert_positions(np.array([1, 1, 0, 3, -1]), 4, 5)
    new = np.empty(9)
    new[pos], new[old] = -np.arange(1.0, 6.0), np.arange(4.0)
    np.testing.assert_array_equal(new, np.insert(np.arange(4.0), [1, 1, 0, 3, -1],
                                                 -np.arange(1.0, 6.0)))
    np.testing.assert_array_equal(library.kept_indices(np.array([0, -1, 0, 2]), 6), [1, 3, 4])
    x, t = np.array([1.0, np.nan, 2.0, 5.0, -1.0]), np.array([5.0, np.nan, 1.0, 1.0])
    np.testing.assert_array_equal(library.isin_sorted(x, t, False), np.isin(x, t))
    np.testing.assert_array_equal(library.isin_sorted(x, t, True), np.isin(x, t, invert=True))


def insert_out_of_bounds(a):
    return np.insert(a, 9, 1.0)


def delete_out_of_bounds(a):
    return np.delete(a, [1, 7])


def take_out_of_bounds(a):
    return np.take(a, [0, 9])


def along_out_of_bounds(a):
    return np.take_along_axis(a, np.array([0, -8]), axis=0)


def delete_short_mask(a):
    return np.delete(a, a[:3] > 0)


def take_wrap_empty(a):
    return np.take(a[:0], [1], mode="wrap")


def test_run_time_errors():
    a = np.arange(7.0)
    for fn, index in ((insert_out_of_bounds, 9), (delete_out_of_bounds, 7),
                      (take_out_of_bounds, 9), (along_out_of_bounds, -8)):
        with pytest.raises(IndexError, match=f"index {index} is out of bounds for axis 0 with "
                           "size 7"):
            zymase.jit(fn)(a)
    with pytest.raises(ValueError, match="match the axis length of 7"):
        zymase.jit(delete_short_mask)(a)
    with pytest.raises(IndexError, match="non-empty take from an empty axes"):
        zymase.jit(take_wrap_empty)(a)


def _loss(a, v):
    m = np.outer(a, v)
    return (np.sum(np.append(a, v) ** 2) + np.sum(np.insert(a, [1, 1, 3], v) ** 3)
            + np.sum(np.insert(m, 1, v, axis=0) ** 2) + np.sum(np.sin(np.delete(a, [0, 2])))
            + np.sum(np.delete(m, 1, axis=1) ** 3) + np.sum(np.take(a, [3, 1, 3]) ** 2)
            + np.sum(np.take(m, [2, 0], axis=1) * m[:, :2])
            + np.sum(np.take_along_axis(m, np.array([[2], [0], [1], [1]]), axis=1) ** 2)
            + np.sum(np.rot90(m) * np.arange(3.0)[:, None]) + np.sum(np.rot90(m, 2) * m))


def test_derivatives():
    rng = np.random.default_rng(8)
    a, v = rng.standard_normal(4), rng.standard_normal(3)
    for k, g in enumerate(zymase.grad(_loss, argnums=(0, 1))(a, v)):
        np.testing.assert_allclose(g, central_differences(_loss, (a, v), k), rtol=1e-6,
                                   atol=1e-7)
    ta, tv = rng.standard_normal(4), rng.standard_normal(3)
    _, tangent = zymase.jvp(_loss, (a, v), (ta, tv))
    want = np.sum(central_differences(_loss, (a, v), 0) * ta) + \
        np.sum(central_differences(_loss, (a, v), 1) * tv)
    np.testing.assert_allclose(tangent, want, rtol=1e-6)


def append_ranks(a):
    return np.append(a, np.ones(3), axis=0)


def insert_complex(a):
    return np.insert(a, 1, 1j)


def insert_deep_values(a):
    return np.insert(a[0], 1, a)


def delete_float_index(a):
    return np.delete(a, np.array([0.5]))


def take_floats(a):
    return np.take(a, np.array([0.0]))


def take_mode(a):
    return np.take(a, [0], mode="nearest")


def along_ranks(a):
    return np.take_along_axis(a, np.array([0]), axis=0)


def rotate_same_axes(a):
    return np.rot90(a, 1, (1, 1))


def rotate_one_axis(a):
    return np.rot90(a, 1, (0,))


def isin_number(a):
    return np.isin(a[0, 0], a)


def isin_complex(a):
    return np.isin(a + 1j, a)


@pytest.mark.parametrize("fn,kind,words", [
    (append_ranks, ZymaseError, "same number of dimensions (here 2 and 1)"),
    (insert_complex, zymase.ZymaseTypeError, "complex values cannot be inserted"),
    (insert_deep_values, zymase.UnsupportedError, "values of more dimensions"),
    (delete_float_index, ZymaseError, "must be of integer (or boolean) type"),
    (take_floats, zymase.ZymaseTypeError, "indices must be integers"),
    (take_mode, ZymaseError, "mode must be one of"),
    (along_ranks, ZymaseError, "same number of dimensions"),
    (rotate_same_axes, ZymaseError, "Axes must be different"),
    (rotate_one_axis, ZymaseError, "len(axes) must be 2"),
    (isin_number, zymase.UnsupportedError, "0-d array"),
    (isin_complex, zymase.UnsupportedError, "complex"),
])  # fmt: skip
def test_refusals_name_the_line(fn, kind, words):
    with pytest.raises(kind) as info:
        zymase.jit(fn)(np.ones((3, 3)))
    msg = str(info.value)
    assert f"test_editing.py:{fn.__code__.co_firstlineno + 1}:" in msg and words in msg, msg
