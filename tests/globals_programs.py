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
