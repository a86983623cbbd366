"""``np.pad`` (``frontend/numpy/padding.py``): every mode against NumPy on 1-D to 3-D arrays of
several dtypes, ``pad_width`` in NumPy's forms (an int, (before, after), one pair per axis,
run-time ints, widths beyond the array), per-axis constants, empty axes; derivatives in both
modes against central differences; the refusals and the run-time errors."""

import numpy as np
import pytest
from numpy_check import central_differences, check

import zymase
from zymase.errors import ZymaseError


def padded(a, k):
    return (np.pad(a, 2), np.pad(a, (1, 3)), np.pad(a, k, mode="edge"),
            np.pad(a, (k, 1), mode="reflect"), np.pad(a, (2 * k + 3, 1), mode="symmetric"),
            np.pad(a, (7, 9), mode="wrap"), np.pad(a, 3, constant_values=5),
            np.pad(a, 1, constant_values=(2, 3)), np.pad(a, (5, 6), mode="reflect"),
            np.pad(a, [k], mode="symmetric"), np.pad(a, 0, mode="wrap"),
            np.pad(a, (0, k), "edge"))


def padded_2d(a, k):
    return (np.pad(a, ((1, 2), (k, 0))), np.pad(a, ((1,), (2,)), mode="edge"),
            np.pad(a, ((k, 1),), mode="reflect"), np.pad(a, ((3, 4), (5, 2)), mode="wrap"),
            np.pad(a, ((1, 2), (2, 1)), constant_values=((10, 20), (30, 40))),
            np.pad(a, 2, constant_values=((7,), (8,))), np.pad(a.T, 2, mode="symmetric"),
            np.pad(a[::-1, 1:], (1, 3), mode="reflect"))


def padded_3d(a, k):
    return (np.pad(a, ((1, 0), (0, k), (2, 1)), mode="symmetric"), np.pad(a, k, mode="wrap"),
            np.pad(a, 1, constant_values=((1, 2), (3, 4), (5, 6))),
            np.pad(a, ((0, 0), (1, 1), (0, 2)), mode="edge"))


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "b":
        return rng.random(shape) > 0.5
    return (rng.standard_normal(shape) * 4).astype(dtype)


DTYPES = [np.float64, np.float32, np.int64, np.bool_]


@pytest.mark.parametrize("dtype", DTYPES)
def test_against_numpy(dtype):
    for n in (1, 2, 3, 5):
        check(padded, sample(n, dtype), 2)
    check(padded, sample(4, dtype), 0)
    check(padded_2d, sample((3, 4), dtype), 2)
    check(padded_2d, sample((1, 2), dtype), 5)
    check(padded_3d, sample((2, 3, 2), dtype), 3)


def complex_pad(a):
    return np.pad(a, 2, constant_values=1j), np.pad(a, (1, 4), mode="reflect")


def test_complex():
    check(complex_pad, np.array([1 + 2j, 3 - 1j, 0.5j]))


def empty_pads(a):
    return np.pad(a, 1), np.pad(a, ((0, 0), (1, 2)), mode="edge")


def test_empty_axes():
    check(empty_pads, np.zeros((0, 3)))


def edge_of_empty(a):
    return np.pad(a, 1, mode="edge")


def pad_by(a, k):
    return np.pad(a, ((k, 1), (0, 0)))


def test_run_time_errors():
    with pytest.raises(ValueError, match="can't extend empty axis 0"):
        zymase.jit(edge_of_empty)(np.zeros((0, 2)))
    with pytest.raises(ValueError, match="negative"):
        zymase.jit(pad_by)(np.ones((2, 2)), -1)
    np.testing.assert_array_equal(zymase.jit(pad_by)(np.ones((2, 2)), 2),
                                  pad_by(np.ones((2, 2)), 2))


def _loss(a, c):
    return (np.sum(np.sin(np.pad(a, ((1, 2), (2, 1)), mode="reflect")))
            + np.sum(np.pad(a, 2, constant_values=c) ** 2)
            + np.sum(np.pad(a, 1, mode="wrap") * np.pad(a, 1, mode="symmetric"))
            + np.sum(np.pad(a, (3, 0), mode="edge") ** 3)
            + np.sum(np.pad(a, 1, constant_values=((c, 1.0), (2.0, c * c))) ** 2))


def test_derivatives():
    rng = np.random.default_rng(1)
    a, c = rng.standard_normal((3, 4)), 0.7
    for k in (0, 1):
        g = zymase.grad(_loss, argnums=k)(a, c)
        np.testing.assert_allclose(g, central_differences(_loss, (a, c), k), rtol=1e-6,
                                   atol=1e-8)
    t = rng.standard_normal(a.shape)
    _, tangent = zymase.jvp(lambda x: _loss(x, c), (a,), (t,))
    fd = np.sum(central_differences(_loss, (a, c), 0) * t)
    np.testing.assert_allclose(tangent, fd, rtol=1e-6)


def mode_mean(a):
    return np.pad(a, 1, mode="mean")


def mode_unknown(a):
    return np.pad(a, 1, mode="mirror")


def odd_reflection(a):
    return np.pad(a, 1, mode="reflect", reflect_type="odd")


def float_width(a):
    return np.pad(a, 1.5)


def too_many_pairs(a):
    return np.pad(a, ((1, 2), (3, 4), (5, 6)))


def mixed_pairs(a):
    return np.pad(a, ((1,), (2, 3)))


def values_for_edge(a):
    return np.pad(a, 1, mode="edge", constant_values=3)


def width_array(a):
    return np.pad(a, np.array([1, 2]))


@pytest.mark.parametrize("fn,kind,words", [
    (mode_mean, zymase.UnsupportedError, "mode='mean') is not supported"),
    (mode_unknown, ZymaseError, "'mirror' is not a padding mode"),
    (odd_reflection, zymase.UnsupportedError, "reflect_type='odd'"),
    (float_width, ZymaseError, "integral type"),
    (too_many_pairs, ZymaseError, "does not fit an array of 2 dimension"),
    (mixed_pairs, ZymaseError, "does not fit an array of 2 dimension"),
    (values_for_edge, ZymaseError, "takes no constant_values"),
    (width_array, zymase.UnsupportedError, "as an array is not supported"),
])  # fmt: skip
def test_refusals_name_the_line(fn, kind, words):
    with pytest.raises(kind) as info:
        zymase.jit(fn)(np.ones((2, 2)))
    msg = str(info.value)
    assert f"test_pad.py:{fn.__code__.co_firstlineno + 1}:" in msg and words in msg, msg
