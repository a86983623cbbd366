"""Programs that build Python lists with append (for test_lists.py)."""

import math

import numpy as np


def grown(x, n):
    vals = []
    for i in range(n):
        vals.append(math.sin(x * i))
    a = np.array(vals)
    return np.sum(a * a)


def filtered(x, a):
    """Appends only some values: the length depends on the data."""
    keep = []
    for i in range(a.shape[0]):
        v = a[i] * x
        if v > 0.1:
            keep.append(v * v)
    return np.sum(np.array(keep)) + len(keep)


def reads_back(x, n):
    """Each new element reads the previous one from the list."""
    out = []
    out.append(x)
    for i in range(1, n):
        out.append(math.cos(out[i - 1]) * x + 0.1 * i)
    s = 0.0
    for i in range(len(out)):
        s += out[i] * (i + 1)
    return s


def two_lists_nested(x, a):
    ev = []
    od = []
    for i in range(a.shape[0]):
        for j in range(3):
            v = a[i] * x + j
            if (i + j) % 2 == 0:
                ev.append(v)
            else:
                od.append(v * v)
    return np.sum(np.array(ev)) * 0.5 + np.sum(np.array(od))


def append_after_loop(x, n):
    vals = []
    for i in range(n):
        vals.append(x ** i)
    for i in range(n):
        vals.append(vals[i] * x)
    return np.sum(np.array(vals) ** 2)
