"""One loop per NumPy math function (for test_vector_math.py): the loop the vectorizer widens."""

import numpy as np


def _loop(name):
    f = getattr(np, name)

    def apply(a, out):
        for i in range(a.shape[0]):
            out[i] = f(a[i])
    apply.__name__ = name
    return apply


def _sum(name):
    f = getattr(np, name)

    def total(a):
        return np.sum(f(a))
    total.__name__ = "sum_" + name
    return total


FUNCS = ("exp", "exp2", "log", "log2", "log10", "sin", "cos", "tan", "arcsin", "arccos",
         "arctan", "sinh", "cosh", "tanh", "log1p", "expm1")
LOOPS = {name: _loop(name) for name in FUNCS}
SUMS = {name: _sum(name) for name in FUNCS}


def power(a, b, out):
    for i in range(a.shape[0]):
        out[i] = a[i] ** b[i]


def arctan2(a, b, out):
    for i in range(a.shape[0]):
        out[i] = np.arctan2(a[i], b[i])


def sum_tanh(x):
    return np.sum(np.tanh(x) * 0.5 + np.exp(-x * x))
