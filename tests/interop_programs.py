"""Plain Python functions used as PyTorch and JAX operations by the interop tests."""

import numpy as np


def heat(u0, kappa, dt, steps):
    """Explicit heat equation with a diffusivity field; the final state and its energy."""
    u = u0.copy()
    for _ in range(steps):
        lap = np.zeros_like(u)
        lap[1:-1] = u[2:] - 2.0 * u[1:-1] + u[:-2]
        u = u + dt * kappa * lap
    return u, np.sum(u * u)


def energy(x, k):
    e = 0.0
    for i in range(x.shape[0] - 1):
        e += k * (x[i + 1] - x[i]) ** 2
    return e


def loss(x):
    """One float argument, one float result: second derivatives are available."""
    return np.sum(np.sin(x) ** 2) * x[0] + np.dot(x, x) ** 1.5


def outer_and_count(a, b, n):
    """Two array results of new shapes, and an int result."""
    m = np.outer(a, b[:n])
    return m * 2.0, m.T.copy(), a.shape[0] + n


def scale_rows(m, s):
    """A 0-d operand (a number), a matrix."""
    out = np.empty_like(m)
    for i in range(m.shape[0]):
        out[i] = s * m[i] ** 2
    return out


def positives(x):
    """The result's shape depends on the data: it must be declared."""
    return x[x > 0] * 2.0


def first_n(x, n):
    return x[:n] * 3.0


def at(x, i):
    return x[i] * 2.0
