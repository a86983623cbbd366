"""``np.cross``, ``np.kron``, ``np.tensordot`` (``frontend/numpy/products.py``) against NumPy on
several shapes and dtypes (3-vectors, 2-vectors mixed with 3-vectors, broadcasting, the axis
keywords; ranks padded by ``kron``; every form of ``axes``), derivatives in both modes against
central differences, and the refusals and run-time errors."""

import warnings

import numpy as np
import pytest
from numpy_check import central_differences, check

import zymase
from zymase.errors import ZymaseError


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "b":
        return rng.random(shape) > 0.5
    return np.round(rng.standard_normal(shape) * 4, 1).astype(dtype)


DTYPES = [np.float64, pytest.param(np.float32, marks=pytest.mark.slow), np.int64]


def crosses(a, b):
    return np.cross(a, b), np.cross(b, a)


def crosses_axes(a, b):
    return (np.cross(a, b, axisa=0, axisb=0), np.cross(a, b, axis=0),
            np.cross(a, b, axisa=0, axisb=0, axisc=0))


def crosses_of_pairs():
    u = np.array([1.0, 2.0])
    v = np.array([[3.0, -4.0], [0.5, 2.0]])
    return np.cross(u, v), np.cross(v, np.array([[1, 2]]))


def cross_of_one_pair():
    return np.cross(np.array([1, 2]), np.array([5, 7]))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # (NumPy's, for 2-vectors)
@pytest.mark.parametrize("dtype", DTYPES)
def test_cross_against_numpy(dtype):
    check(crosses, sample(3, dtype), sample(3, dtype, 1))
    check(crosses, sample((4, 3), dtype), sample(3, dtype, 1))  # broadcast
    check(crosses, sample((2, 1, 3), dtype), sample((5, 3), dtype, 1))
    check(crosses, sample((4, 2), dtype), sample((4, 3), dtype, 1))  # 2-vectors with 3-vectors
    check(crosses, sample(2, dtype), sample((3, 3), dtype, 1))
    check(crosses, sample((0, 3), dtype), sample(3, dtype, 1))
    check(crosses_axes, sample((3, 4), dtype), sample((3, 4), dtype, 1))
    check(crosses_axes, sample((2, 5), dtype), sample((3, 5), dtype, 1))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_cross_of_2_vectors_known_when_compiling():
    check(crosses_of_pairs)
    got = zymase.jit(cross_of_one_pair)()  # (NumPy: a 0-d array; compiled code: the number)
    assert got == cross_of_one_pair() == -3 and np.asarray(got).dtype == np.int64


def cross_mixed(a, b):
    return np.cross(a, b)


def test_cross_promotes():
    check(cross_mixed, sample(3, np.int64), sample(3, np.float32, 1))  # float64, as NumPy
    check(cross_mixed, sample(3, np.float32), sample(3, np.float32, 1))
    check(cross_mixed, sample((2, 3), np.complex128), sample(3, np.float64, 1) + 0j)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_cross_run_time_errors():
    with pytest.raises(ValueError, match="dimension must be 2 or 3"):
        zymase.jit(cross_mixed)(np.ones(4), np.ones(3))
    with pytest.raises(ValueError, match=r"a\[..., 0\] \* b\[..., 1\]"):
        zymase.jit(cross_mixed)(np.ones((3, 2)), np.ones(2))


def krons(a, b):
    return np.kron(a, b), np.kron(b, a), np.kron(a, 2.0), np.kron(3, b)


@pytest.mark.parametrize("dtype", [*DTYPES, np.bool_])
def test_kron_against_numpy(dtype):
    check(krons, sample(3, dtype), sample(2, dtype, 1))
    check(krons, sample((2, 3), dtype), sample((2, 2), dtype, 1))
    check(krons, sample(3, dtype), sample((2, 2), dtype, 1))  # ranks padded with 1s
    check(krons, sample((2, 1, 2), dtype), sample(3, dtype, 1))
    check(krons, sample((2, 0), dtype), sample((1, 3), dtype, 1))


def test_kron_promotes():
    check(krons, sample((2, 2), np.int64), sample(2, np.float32, 1))
    check(krons, sample((2, 2), np.bool_), sample(2, np.int64, 1))


def dots(a, b):
    return (np.tensordot(a, b, axes=1), np.tensordot(a, b, 0), np.tensordot(a, b, axes=(0, 1)),
            np.tensordot(a, b, axes=((1,), (0,))), np.tensordot(a, b, axes=[[-1], [-2]]))


def dots_3d(a, b):
    return (np.tensordot(a, b, axes=([2, 0], [0, 2])), np.tensordot(a, b, axes=1),
            np.tensordot(a, b, axes=(1, 1)), np.tensordot(a[:, ::-1], b.T[0]))


def full_contraction(a, b):
    return np.tensordot(a, b, axes=2), np.tensordot(a, b.T, axes=([1, 0], [0, 1]))


@pytest.mark.parametrize("dtype", [*DTYPES, np.bool_])
def test_tensordot_against_numpy(dtype):
    check(dots, sample((3, 3), dtype), sample((3, 3), dtype, 1))
    check(dots_3d, sample((2, 3, 4), dtype), sample((4, 3, 2), dtype, 1))
    a, b = sample((3, 4), dtype), sample((3, 4), dtype, 1)
    for got, want in zip(zymase.jit(full_contraction)(a, b), full_contraction(a, b)):
        # (NumPy: a 0-d array; compiled code gives the NumPy scalar)
        assert np.asarray(got).dtype == want.dtype and np.allclose(got, want, rtol=1e-6)


def test_tensordot_promotes():
    check(dots, sample((3, 3), np.int64), sample((3, 3), np.float32, 1))
    check(dots, sample((3, 3), np.bool_), sample((3, 3), np.int64, 1))


def test_tensordot_sizes_checked():
    with pytest.raises(ValueError, match="shape-mismatch for sum"):
        zymase.jit(full_contraction)(np.ones((2, 3)), np.ones((2, 2)))


def _loss(a, b):
    return (np.sum(np.cross(a, b) ** 2) + np.sum(np.cross(a[:, :2], b) * a)
            + np.sum(np.sin(np.kron(a, b[:2]))) + np.sum(np.tensordot(a, b.T, axes=1) ** 2)
            + np.tensordot(a, b, axes=2) + np.sum(np.tensordot(a, b, axes=(0, 0)) ** 3))


def test_derivatives():
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for k, g in enumerate(zymase.grad(_loss, argnums=(0, 1))(a, b)):
            fd = central_differences(_loss, (a, b), k)
            np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7)
        ta, tb = rng.standard_normal(a.shape), rng.standard_normal(b.shape)
        _, tangent = zymase.jvp(_loss, (a, b), (ta, tb))
        want = np.sum(central_differences(_loss, (a, b), 0) * ta) + \
            np.sum(central_differences(_loss, (a, b), 1) * tb)
    np.testing.assert_allclose(tangent, want, rtol=1e-6)


def cross_bools(a):
    return np.cross(a > 0, a > 1)


def cross_sizes(a):
    return np.cross(np.array([1.0, 2.0, 3.0, 4.0]), a)


def cross_number(a):
    return np.cross(a, 2.0)


def kron_numbers(a):
    return np.kron(2.0, a[0, 0])


def tensordot_mismatch(a):
    return np.tensordot(a, a, axes=([0, 1], [0]))


def tensordot_too_many(a):
    return np.tensordot(a, a, axes=3)


@pytest.mark.parametrize("fn,kind,words", [
    (cross_bools, zymase.ZymaseTypeError, "np.cross() of booleans"),
    (cross_sizes, ZymaseError, "dimension must be 2 or 3"),
    (cross_number, ZymaseError, "zero dimension"),
    (kron_numbers, zymase.UnsupportedError, "0-d array"),
    (tensordot_mismatch, ZymaseError, "shape-mismatch for sum"),
    (tensordot_too_many, ZymaseError, "axes=3"),
])  # fmt: skip
def test_refusals_name_the_line(fn, kind, words):
    with pytest.raises(kind) as info:
        zymase.jit(fn)(np.ones((3, 3)))
    msg = str(info.value)
    assert f"test_products.py:{fn.__code__.co_firstlineno + 1}:" in msg and words in msg, msg
