"""Indexing with an array under zymase.jit matches NumPy: ``x[mask]``, ``x[idx]`` beside slices
and integers, writes through them (a repeated index keeps the last value; ``x[idx] += v`` is
``x[idx] = x[idx] + v``), values that overlap the target, and the same with ``boundscheck=False``.
"""

import numpy as np
from numpy_check import arr, assert_same, check, check_interp

import zymase

# ---------------------------------------------------------------------- fancy indexing


def fancy_reads(x, m, i):
    return (
        x[m],
        x[x > 0],
        x[i],
        x[np.array([-1, 0, -1])],
        x[i[::-1]],
        x[np.array([[0, 1], [2, 2]])],
    )


def fancy_reads_2d(a, m, i, j):
    return (
        a[m],
        a[a > 0],
        a[i],
        a[:, j],
        a[i, 1],
        a[1, j],
        a[m, 1:],
        a[:, m[:4]],
        a[1:, j],
        a[a[:, 0] > 0],
        a[i, :2],
        a[:, -1][i],
    )


def test_fancy_reads():
    x = arr(6)
    check(fancy_reads, x, x < 1, np.array([0, 5, 2, 2]))
    check(fancy_reads, x.astype(np.int64), x < 1, np.array([3, 1], dtype=np.int32))
    check(fancy_reads, np.arange(6.0)[::-1], np.zeros(6, bool), np.zeros(0, np.int64))
    a = arr(5, 4)
    check(fancy_reads_2d, a, a[:, 1] > 0, np.array([4, 0, -2]), np.array([3, -1]))


def fancy_writes(x, m, i, v):
    x[m] = 0.0
    x[i] = v
    x[np.array([0, 0, 0])] = np.array([1.0, 2.0, 3.0])
    return x


def fancy_updates(x, i, v):
    x[i] += v
    x[x > 1] += 1
    x[x < 0] = x[x < 0] * 2
    x[np.array([-1])] -= 10
    return x


def fancy_writes_2d(a, m, i):
    a[m] = 7.0
    a[:, i] = 0.0
    a[i, 1] = np.array([1.0, 2.0])
    a[a > 5] = -a[a > 5]
    a[m, 2] += 1
    return a


def test_fancy_writes():
    x = arr(6)
    check(fancy_writes, x, x < 0, np.array([1, 4]), np.array([10.0, 20.0]))
    check(fancy_writes, x, x < 0, np.array([1, 4]), 5)
    check(fancy_updates, x, np.array([0, 1, 0, 1, 3]), np.arange(5.0))
    check(fancy_updates, x.astype(np.int64), np.array([2, 2]), 3)
    a = arr(4, 3)
    check(fancy_writes_2d, a, a[:, 0] > 0, np.array([0, 2]))


def overlapping_writes(x, perm):
    x[perm] = x
    y = x.copy()
    y[1:][y[1:] > 0] = 0.0
    y[perm[:2]] = y[::-1][:2]
    return x, y


def mixed_edges(a, b, z, n):
    return (
        np.where(True, a, b),
        np.where(a[:3] > 0, z, 0),
        np.clip(a > 0, False, True),
        np.linspace(z[0], z[1], n),
        np.arange(np.float32(0.5), 3),
        np.cumsum(a, dtype=float),
        np.concatenate((a, b), dtype=np.float32),
        np.roll(a, n),
        np.dot(a, b),
        np.sign(np.int32(-3)),
        np.negative(3),
    )


def test_edge_cases():
    x = arr(5)
    check(overlapping_writes, x, np.array([4, 3, 2, 1, 0]))
    check(mixed_edges, arr(4), arr(4, dtype=np.int64), arr(3, dtype=np.complex128), 4)


def test_fancy_without_boundscheck():
    x, i = arr(6), np.array([-1, 0, 5])
    got = zymase.jit(fancy_reads, boundscheck=False)(x, x > 0, i)
    assert_same(got, fancy_reads(x, x > 0, i))
    got = zymase.jit(fancy_updates, boundscheck=False)(x.copy(), i, 1.0)
    assert_same(got, fancy_updates(x.copy(), i, 1.0))


def test_interpreter_agrees():
    x = arr(6)
    check_interp(fancy_reads, x, x > 0, np.array([0, 5, -1]))
    check_interp(fancy_updates, x, np.array([0, 1, 0]), np.arange(3.0))
    a = arr(4, 3)
    check_interp(fancy_writes_2d, a, a[:, 0] > 0, np.array([0, 2]))


# ---------------------------------------------------------------------- lists as indices


def list_index_reads(a, i):
    idx = [2, 0, 2]
    return a[[0, 1]], a[idx], a[[i, 0]], a[0, 1] + a[(1, 2)], a[[0, 2], 1:]


def list_index_writes(a):
    a[[0, 2]] += 1.0
    a[[1, 1]] = a[[2, 0], ::-1][:, :4] * 2.0
    return a


def built_list_index(a):
    rows = []
    for k in range(a.shape[0]):
        if a[k, 0] > 3.0:
            rows.append(k)
    return a[rows]


def test_list_literals_index_like_numpy():
    """a[[0, 1]] is fancy indexing in NumPy; it was read as a[0, 1] (a scalar), silently."""
    a = np.arange(12.0).reshape(3, 4)
    check(list_index_reads, a, 2)
    check(list_index_writes, a)
    check(built_list_index, a)
    g = zymase.grad(lambda x: (x[[0, 0, 2]] ** 2).sum())(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(g, [4.0, 0.0, 6.0])
