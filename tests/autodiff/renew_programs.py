"""Loops that replace an array by a new one each iteration, NumPy style (for test_renew.py)."""

import numpy as np


def euler(u0, c, T):
    u = u0.copy()
    for _t in range(T):
        u = u + 0.1 * c * np.sin(u)
    return np.sum(u * u)


def rnn(h0, W, xs):
    """h = tanh(W @ h + x_t): a matrix product per step."""
    h = h0.copy()
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + xs[t])
    return np.sum(h * h)


def stencil_slices(u0, c, T):
    """The new state is a copy written through slices of the old one."""
    u = u0.copy()
    for _t in range(T):
        v = u.copy()
        v[1:-1] = u[1:-1] + c[1:-1] * (u[:-2] - 2.0 * u[1:-1] + u[2:])
        u = v
    return np.sum(u ** 3)


def leapfrog(q0, p0, k, T):
    """Two arrays replaced every step."""
    q = q0.copy()
    p = p0.copy()
    for _t in range(T):
        p = p - 0.05 * k * np.sin(q)
        q = q + 0.05 * p
    return np.sum(q * p)


def nested(u0, c, T):
    u = u0.copy()
    s = 0.0
    for _t in range(T):
        for _k in range(2):
            u = np.cos(u) * c + u
        s += u[0]
    return s + np.sum(u)


def grid(u0, T):
    """A 2-D state."""
    u = u0.copy()
    for _t in range(T):
        u = 0.5 * u + 0.1 * np.sin(u @ u.T)
    return np.sum(u)
