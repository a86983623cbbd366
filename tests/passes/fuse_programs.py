"""Programs for test_fuse.py."""

import numpy as np


def weighted_sum(x, w):
    return np.sum(x * w + 1.0)


def tanh_times(x, w):
    return np.tanh(x) * w


def grid_sum(a, b):
    return np.sum(a * b - a)


def written_between(a):
    t = a * 2.0
    a[0] = 5.0
    return np.sum(t)


def reversed_in_place(a):
    t = a + 1.0
    n = a.shape[0]
    for i in range(n):
        a[i] = t[n - 1 - i]
    return a


def used_twice(x):
    t = x * 3.0
    return np.sum(t) + np.sum(t * t)


def loss(x, w):
    return np.sum((np.tanh(x) * w - 0.5) ** 2)
