"""``np.convolve``, ``np.correlate`` and ``np.gradient`` (``frontend/numpy/signal.py``) against
NumPy: every mode with the first operand shorter, longer and as long as the second (NumPy swaps
them, and ``correlate`` reverses its result and conjugates ``v``), several dtypes; gradients with
number and coordinate spacings (even and uneven), ``edge_order`` 1 and 2, along all axes or
some; derivatives in both modes against central differences; refusals and run-time errors."""

import numpy as np
import pytest
from numpy_check import central_differences, check

import zymase
from zymase.errors import ZymaseError


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "b":
        return rng.random(shape) > 0.5
    if np.dtype(dtype).kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return np.round(rng.standard_normal(shape) * 4, 1).astype(dtype)


def slides(a, v):
    return (np.convolve(a, v), np.convolve(a, v, "same"), np.convolve(a, v, mode="valid"),
            np.correlate(a, v), np.correlate(a, v, "same"), np.correlate(a, v, mode="full"),
            np.correlate(a, v, 2), np.convolve(a, v, 0))


LENGTHS = [(5, 3), (3, 5), (4, 4), (1, 6), (6, 1), (2, 7), (7, 2), (1, 1)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.bool_, np.complex128])
def test_convolve_correlate_against_numpy(dtype):
    for k, (na, nv) in enumerate(LENGTHS):
        check(slides, sample(na, dtype, k), sample(nv, dtype, k + 10))


def mixed(a, v):
    return np.convolve(a, v, "same"), np.correlate(a, v, "full"), np.convolve(a, 2.0)


def test_mixed_types_and_views():
    check(mixed, sample(5, np.int64), sample(3, np.float32, 1))
    check(mixed, sample(6, np.float64)[::-2], sample(4, np.complex128, 1)[1:])
    check(mixed, sample(3, np.float32), sample(5, np.bool_, 1))


def convolve_only(a, v):
    return np.convolve(a, v)


def correlate_only(a, v):
    return np.correlate(a, v)


def test_empty_operands_raise():
    with pytest.raises(ValueError, match="a cannot be empty"):
        zymase.jit(convolve_only)(np.ones(0), np.ones(3))
    with pytest.raises(ValueError, match="v cannot be empty"):
        zymase.jit(convolve_only)(np.ones(3), np.ones(0))
    with pytest.raises(ValueError, match="second array argument cannot be empty"):
        zymase.jit(correlate_only)(np.ones(3), np.ones(0))


def gradients_1d(f):
    return (np.gradient(f), np.gradient(f, 0.5), np.gradient(f, 2), np.gradient(f, edge_order=2),
            np.gradient(f, 0.25, edge_order=2), np.gradient(f, np.float64(3.0)),
            np.gradient(f, axis=0), np.gradient(f, 1.5, axis=-1, edge_order=1))


def gradients_2d(f):
    return (np.gradient(f), np.gradient(f, 0.5, edge_order=2), np.gradient(f, 2.0, 3),
            np.gradient(f, axis=1), np.gradient(f, 0.1, axis=(1, 0)), np.gradient(f.T)[0])


def gradients_3d(f):
    return np.gradient(f), np.gradient(f, axis=(0, 2), edge_order=2), np.gradient(f, 2, axis=1)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_gradient_against_numpy(dtype):
    for n in (2, 3, 7):
        check(gradients_1d if n > 2 else gradient_order_1, sample(n, dtype, n))
    check(gradients_2d, sample((4, 5), dtype))
    check(gradients_2d, sample((3, 3), dtype))
    check(gradients_3d, sample((3, 4, 3), dtype))


def gradient_order_1(f):
    return np.gradient(f), np.gradient(f, 3.0)


def test_gradient_of_complex():
    check(gradients_1d, sample(6, np.complex128))


def by_coordinates(f, x):
    return np.gradient(f, x), np.gradient(f, x, edge_order=2)


def by_coordinates_2d(f, x, y):
    return np.gradient(f, x, y), np.gradient(f, 0.5, y, edge_order=2), np.gradient(f, y, axis=1)


def test_gradient_with_coordinates():
    rng = np.random.default_rng(4)
    f = rng.standard_normal(7)
    for x in (np.cumsum(rng.random(7) + 0.1), np.arange(7.0) * 0.5, np.arange(7),
              np.cumsum(rng.random(7) + 0.1).astype(np.float32), np.array([0, 1, 3, 4, 6, 9, 10])):
        check(by_coordinates, f, x)
        check(by_coordinates, f.astype(np.float32), x)
    g = rng.standard_normal((5, 4))
    check(by_coordinates_2d, g, np.cumsum(rng.random(5)), np.cumsum(rng.random(4)))
    check(by_coordinates_2d, g, np.arange(5.0), np.arange(4.0) * 2)


def gradient_only(f):
    return np.gradient(f, edge_order=2)


def test_gradient_run_time_errors():
    with pytest.raises(ValueError, match="at least \\(edge_order \\+ 1\\) elements"):
        zymase.jit(gradient_only)(np.ones(2))
    with pytest.raises(ValueError, match="distances must match the length"):
        zymase.jit(by_coordinates)(np.ones(4), np.arange(5.0))


def _loss(a, v):
    return (np.sum(np.convolve(a, v) ** 2) + np.sum(np.correlate(a, v, "same") ** 3)
            + np.sum(np.convolve(v, a, "valid") * a[:4]) + np.sum(np.correlate(v, a, "full") ** 2)
            + np.sum(np.gradient(a, 0.3, edge_order=2) ** 2))


def _coordinates_loss(f, x):
    return np.sum(np.gradient(f, x) ** 2) + np.sum(np.gradient(f, x, edge_order=2) ** 3)


def _grid_loss(f):
    gx, gy = np.gradient(f, 0.5, 2.0)
    return np.sum(gx * gy) + np.sum(np.gradient(f, axis=1, edge_order=2) ** 2)


def test_derivatives():
    rng = np.random.default_rng(5)
    cases = [(_loss, (rng.standard_normal(6), rng.standard_normal(3))),
             (_coordinates_loss, (rng.standard_normal(6), np.cumsum(rng.random(6) + 0.2))),
             (_grid_loss, (rng.standard_normal((4, 5)),))]
    for fn, args in cases:
        grads = zymase.grad(fn, argnums=tuple(range(len(args))))(*args)
        for k, g in enumerate(grads):
            np.testing.assert_allclose(g, central_differences(fn, args, k), rtol=1e-6,
                                       atol=1e-6)
        ts = tuple(rng.standard_normal(np.shape(x)) for x in args)
        _, tangent = zymase.jvp(fn, args, ts)
        want = sum(np.sum(central_differences(fn, args, k) * t) for k, t in enumerate(ts))
        np.testing.assert_allclose(tangent, want, rtol=1e-6)


def bad_mode(a):
    return np.convolve(a, a, mode="middle")


def correlate_2d(a):
    return np.correlate(np.ones((2, 2)), a)


def correlate_number(a):
    return np.correlate(a, 2.0)


def gradient_of_bools(a):
    return np.gradient(a > 0)


def gradient_order_3(a):
    return np.gradient(a, edge_order=3)


def gradient_spacings(a):
    return np.gradient(np.ones((2, 3)), 1.0, 2.0, 3.0)


def gradient_2d_coordinates(a):
    return np.gradient(a, np.ones((3, 3)))


@pytest.mark.parametrize("fn,kind,words", [
    (bad_mode, ZymaseError, "mode must be one of 'valid', 'same', or 'full'"),
    (correlate_2d, ZymaseError, "must be a 1-D array, not an array of 2"),
    (correlate_number, ZymaseError, "must be a 1-D array, not a number"),
    (gradient_of_bools, zymase.ZymaseTypeError, "np.gradient() of booleans"),
    (gradient_order_3, ZymaseError, "edge_order must be 1 or 2"),
    (gradient_spacings, zymase.ZymaseTypeError, "invalid number of arguments"),
    (gradient_2d_coordinates, ZymaseError, "distances must be either scalars or 1d"),
])  # fmt: skip
def test_refusals_name_the_line(fn, kind, words):
    with pytest.raises(kind) as info:
        zymase.jit(fn)(np.ones(3))
    msg = str(info.value)
    assert f"test_signal.py:{fn.__code__.co_firstlineno + 1}:" in msg and words in msg, msg
