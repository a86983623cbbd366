"""Programs for test_globals.py: functions that read globals, which the tests rebind and write
(each test restores them)."""

import numpy as np

SCALE = 2.0
W = np.array([1.0, 2.0, 3.0])


def square(x):
    return x * x


def cube(x):
    return x * x * x


def loss(x):
    return SCALE * np.sum(W * square(x))


def vec(x):
    return SCALE * W * square(x)


def write_then_read(x):
    x[0] = W[1] + 1.0
    return np.sum(x * W)


def make_closure():
    c = np.array([1.0, 2.0])
    k = 3.0

    def f(x):
        return k * np.sum(c * x * x)

    def set_c(v):
        nonlocal c
        c = v

    def set_k(v):
        nonlocal k
        k = v

    return f, set_c, set_k


def only_here(x):  # compiled by one test only (it counts compilations)
    return SCALE * np.sum(np.sin(x) * W)


C0 = np.array(2.0)  # 0-d
MASK = np.array([True, False, True])
IDX = np.array([3, 1, 2])
BIG = np.arange(12.0).reshape(3, 4)
STRIDED = BIG[:, ::2]  # a view, not contiguous


def zero_d(x):
    return np.sum(2 * C0 * x)


def bool_and_int(x):
    return np.sum(np.where(MASK, x, 0.0) * IDX)


def strided_matmul(x):
    return np.sum(STRIDED @ x[:2])


def _row(x, i):
    return STRIDED[i, 0] * x


def helper_in_loop(x):
    s = 0.0
    for i in range(3):
        s += np.sum(_row(x, i) * x)
    return s


def write_globals():
    C0[...] = 5.0
    MASK[1] = True
    IDX[0] = -4
    BIG[1, 2] = -7.0
    BIG[0, 0] = 100.0


def sin_of_w(x):
    return np.sum(np.sin(W * x))
