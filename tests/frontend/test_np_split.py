"""``np.split``/``array_split``/``hsplit``/``vsplit``/``dsplit``, ``np.broadcast_to``/
``np.broadcast_arrays`` and ``np.atleast_1d/2d/3d`` (``frontend/numpy/splitting.py``): results
against NumPy's on several shapes and dtypes, the parts are views (writes reach the array),
writes into broadcast views refused at their line, run-time errors, derivatives."""

import numpy as np
import pytest
from numpy_check import central_differences, check

import zymase
from zymase.errors import ZymaseError


def parts(a, k):
    x, y, z = np.split(a, 3)
    p = np.array_split(a, 4, axis=1)
    q = np.split(a, (1, k, -1), axis=1)
    h0, h1 = np.hsplit(a, 2)
    v = np.vsplit(a, [1])
    r = np.array_split(a, [k, 100])
    w = np.split(a, [])
    return (x, y, z, p[0], p[1], p[2], p[3], q[0], q[1], q[2], q[3], h0, h1, v[0], v[1],
            r[0], r[1], r[2], w[0], len(p), len(q))


def parts_1d(a):
    s = np.array_split(a, 3)
    h = np.hsplit(a, (2,))
    return s[0], s[1], s[2], h[0], h[1], np.split(a[::-1], 2)[1]


def parts_3d(a):
    d = np.dsplit(a, 2)
    e = np.split(a, 3, axis=-2)
    return d[0], d[1], e[0], e[2], np.array_split(a.T, 5, axis=0)[4]


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "b":
        return rng.random(shape) > 0.5
    return (rng.standard_normal(shape) * 4).astype(dtype)


DTYPES = [np.float64, np.float32, np.int64, np.bool_]


@pytest.mark.parametrize("dtype", DTYPES)
def test_split_against_numpy(dtype):
    check(parts, sample((6, 4), dtype), 2)
    check(parts, sample((3, 2), dtype), -1)
    check(parts_1d, sample(8, dtype))
    check(parts_1d, sample(2, dtype))
    check(parts_3d, sample((2, 3, 4), dtype))


def write_through(a):
    halves = np.split(a, 2)
    halves[1][:] = 7.0
    for p in halves:
        p[0] = -1.0
    left, right = np.hsplit(a, (1,))
    right[-1] += 100.0
    return a


def test_parts_are_views():
    check(write_through, np.arange(6.0))


def unequal(a):
    return np.split(a, 4)[0]


def test_unequal_division_raises():
    with pytest.raises(ValueError, match="equal division"):
        zymase.jit(unequal)(np.ones(6))


def broadcasts(a, b):
    c = np.broadcast_to(a, (4, a.shape[0]))
    x, y = np.broadcast_arrays(a, b)
    u, v, w = np.broadcast_arrays(b, 2.5, a[:1])
    return (c, x, y, c + 1, u, v, w, np.broadcast_to(a, a.shape), np.broadcast_to(b, (2, 2, 3)),
            np.broadcast_to(3, (2,)), np.broadcast_to(a[::-1], (0, a.shape[0])))


def atleast(a, b):
    one = np.atleast_1d(a, 2.0, b)
    two = np.atleast_2d(a, 2.0, b, b.T)
    three = np.atleast_3d(a, 2.0, b, b[None])
    return (np.atleast_1d(a), np.atleast_2d(a), np.atleast_3d(a), one[0], one[1], one[2],
            two[0], two[1], two[2], two[3], three[0], three[1], three[2], three[3],
            np.atleast_2d([1, 2]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_broadcast_and_atleast_against_numpy(dtype):
    check(broadcasts, sample(3, dtype), sample((2, 1), dtype))
    check(atleast, sample(3, dtype), sample((2, 3), dtype, 1))


def atleast_views(a, m):
    row = np.atleast_2d(a)
    row[0, 0] = 9.0
    cube = np.atleast_3d(m[:, ::2])
    cube[1, 0, 0] = -9.0
    return a, m


def test_atleast_results_are_views():
    check(atleast_views, np.arange(3.0), np.arange(6.0).reshape(2, 3))


def write_broadcast(a):
    c = np.broadcast_to(a, (3, a.shape[0]))
    c[0, 0] = 1.0
    return c


def write_broadcast_arrays(a, b):
    x, y = np.broadcast_arrays(a, b)
    y += 1.0
    return x


def test_writes_into_broadcast_views_are_refused_at_their_line():
    for fn, args, line in ((write_broadcast, (np.ones(2),), 3),
                           (write_broadcast_arrays, (np.ones(2), np.ones((2, 1))), 3)):
        with pytest.raises(zymase.UnsupportedError) as info:
            zymase.jit(fn)(*args)
        msg = str(info.value)
        assert f"test_np_split.py:{fn.__code__.co_firstlineno + line - 1}:" in msg, msg
        assert "read-only view" in msg and ".copy()" in msg, msg


def broadcast_badly(a, n):
    return np.broadcast_to(a, (2, n))


def test_broadcast_shape_errors():
    with pytest.raises(ValueError, match="could not be broadcast"):
        zymase.jit(broadcast_badly)(np.ones(3), 4)
    with pytest.raises(ValueError, match="non-negative"):
        zymase.jit(broadcast_badly)(np.ones(1), -1)
    check(broadcast_badly, np.ones(1), 5)


def _loss(a, b):
    x, y = np.split(a, 2, axis=1)
    c = np.broadcast_to(b, (a.shape[0], b.shape[0]))
    u, v = np.broadcast_arrays(a, b)
    p = np.array_split(a.T, 4)
    return (np.sum(x * np.cos(y)) + np.sum(c * c * a) + np.sum(u * v ** 2)
            + np.sum(np.atleast_3d(a) ** 3) + np.sum(p[3] * p[0][0]))


def test_derivatives():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((3, 6)), rng.standard_normal(6)
    grads = zymase.grad(_loss, argnums=(0, 1))(a, b)
    for k, g in enumerate(grads):
        np.testing.assert_allclose(g, central_differences(_loss, (a, b), k), rtol=1e-6,
                                   atol=1e-8)
    ta, tb = rng.standard_normal(a.shape), rng.standard_normal(b.shape)
    _, tangent = zymase.jvp(_loss, (a, b), (ta, tb))
    fd = (np.sum(central_differences(_loss, (a, b), 0) * ta)
          + np.sum(central_differences(_loss, (a, b), 1) * tb))
    np.testing.assert_allclose(tangent, fd, rtol=1e-6)


def sections_at_run_time(a, k):
    return np.split(a, k)[0]


def sections_in_array(a):
    return np.split(a, np.array([1, 2]))[0]


def vsplit_1d(a):
    return np.vsplit(a, 2)[0]


def zero_sections(a):
    return np.array_split(a, 0)[0]


def broadcast_to_lower_rank(a):
    return np.broadcast_to(a, (4,))


def broadcast_only_numbers(a):
    return np.broadcast_arrays(1.0, 2.0)[0] + a


@pytest.mark.parametrize("fn,kind,words", [
    (sections_at_run_time, zymase.UnsupportedError, "must be a constant int"),
    (sections_in_array, zymase.UnsupportedError, "give them as a tuple or list"),
    (vsplit_1d, ZymaseError, "2 or more dimensions"),
    (zero_sections, ZymaseError, "larger than 0"),
    (broadcast_to_lower_rank, ZymaseError, "more dimensions (2) than the shape (1)"),
    (broadcast_only_numbers, zymase.UnsupportedError, "needs at least one array"),
])  # fmt: skip
def test_refusals_name_the_line(fn, kind, words):
    args = (np.ones(4), 2) if fn is sections_at_run_time else \
        (np.ones((2, 2)),) if fn is broadcast_to_lower_rank else (np.ones(4),)
    with pytest.raises(kind) as info:
        zymase.jit(fn)(*args)
    msg = str(info.value)
    assert f"test_np_split.py:{fn.__code__.co_firstlineno + 1}:" in msg and words in msg, msg
