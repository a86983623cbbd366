"""``np.argwhere``, ``np.nonzero``/``a.nonzero()`` of arrays of any rank (``sort.py``): indices
equal to NumPy's (C order, int64, one array per axis) on several shapes, layouts and dtypes,
empty and all-zero inputs, and use inside a differentiated function (the indices carry no
derivative; the values read through them do)."""

import numpy as np
import pytest
from numpy_check import central_differences, check

import zymase


def found(a):
    rows, cols = np.nonzero(a)
    return (np.argwhere(a), rows, cols, a.nonzero(), np.argwhere(a[0]), np.nonzero(a[:, 0]),
            np.argwhere(a.T), np.nonzero(a[::-1, 1:]), np.argwhere(a > a.mean()))


def found_3d(a):
    return np.argwhere(a), np.nonzero(a), np.nonzero(a[:, ::2, 1])


def found_1d(a):
    return np.nonzero(a), np.argwhere(a), np.flatnonzero(a)


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(-1, 2, shape)  # a third zeros
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, pytest.param(np.float32, marks=pytest.mark.slow),
                                   np.int64, pytest.param(np.bool_, marks=pytest.mark.slow)])
def test_against_numpy(dtype):
    for seed, shape in enumerate([(3, 4), (1, 5), (4, 1), (6, 6)]):
        check(found, sample(shape, dtype, seed))
    check(found, np.zeros((2, 3), dtype))
    check(found_3d, sample((2, 3, 4), dtype, 7))
    check(found_3d, np.zeros((2, 0, 3), dtype))
    check(found_1d, sample(9, dtype, 8))
    check(found_1d, np.zeros(0, dtype))


def test_nan_and_complex_count_as_non_zero():
    check(found, np.array([[0.0, np.nan, -0.0], [np.inf, 0.0, 2.0]]))
    check(found_1d, np.array([0j, 1j, 2.0, 0.0]))


def _positive_squares(a):
    rows, cols = np.nonzero(a > 0)
    at = np.argwhere(a < 0)
    s = 0.0
    for k in range(rows.shape[0]):
        s += a[rows[k], cols[k]] ** 2
    for k in range(at.shape[0]):
        s += np.sin(a[at[k, 0], at[k, 1]])
    return s


def test_inside_a_differentiated_function():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 4))
    g = zymase.grad(_positive_squares)(a)
    np.testing.assert_allclose(g, np.where(a > 0, 2 * a, np.cos(a)), rtol=1e-12)
    np.testing.assert_allclose(g, central_differences(_positive_squares, (a,), 0), rtol=1e-6)
    t = rng.standard_normal(a.shape)
    _, tangent = zymase.jvp(_positive_squares, (a,), (t,))
    np.testing.assert_allclose(tangent, np.sum(g * t), rtol=1e-12)


def argwhere_of_number(a):
    return np.argwhere(3.0)


def test_zero_dimensional_input_is_refused_at_the_line():
    with pytest.raises(zymase.ZymaseError) as info:
        zymase.jit(argwhere_of_number)(np.ones(2))
    msg = str(info.value)
    assert f"test_argwhere.py:{argwhere_of_number.__code__.co_firstlineno + 1}:" in msg, msg
    assert "0-d arrays are not supported" in msg, msg
