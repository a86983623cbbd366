"""Programs for test_resources.py."""

import collections

import numpy as np


def allocate_and_return(a):
    b = a * 2.0
    c = np.empty(a.shape[0] + 1)
    for i in range(a.shape[0]):
        c[i] = b[i] + 1.0
    c[-1] = 0.0
    return c, b[1:]


def loop_allocations(a, steps):
    u = a.copy()
    for _ in range(steps):
        u = u * 0.5 + 1.0
    return u.sum()


def slow_sum(n):
    s = 0.0
    for i in range(n):
        s += (i % 7) * 0.5
    return s


def cached(a, s):
    t = 0.0
    for i in range(a.shape[0]):
        t += a[i] * s
    return t


Pair = collections.namedtuple("Pair", ["total", "scale"])


def cached_pair(p):
    return cached(p.total, p.scale), p


def cached_other(a, s):
    t = 0.0
    for i in range(a.shape[0]):
        t += a[i] * s * s
    return t


def heat(u0, c, steps):
    """Explicit heat steps in place: reverse mode tapes (n - 2) * steps values."""
    u = u0.copy()
    n = u.shape[0]
    for _ in range(steps):
        prev = u[0]
        for i in range(1, n - 1):
            cur = u[i]
            u[i] = cur + c[i] * (prev - 2.0 * cur + u[i + 1])
            prev = cur
    return (u * u).sum()


def fills_a_temporary(n):
    t = np.full(n, 7.0)  # freed at the end: its buffer is kept for the next allocation
    return np.sum(t)


def zeros_of(n):
    z = np.zeros(n)
    e = np.empty(n)
    e[:] = 1.0
    return np.sum(z) + np.sum(e)
