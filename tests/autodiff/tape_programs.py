"""Programs for test_tape.py: one per cache decision reverse mode makes."""

import math

import numpy as np


def overwritten_later(x, a):
    """a[i] is read, then overwritten by a later loop: the read value must be stored."""
    b = a.copy()
    s = 0.0
    for i in range(b.shape[0]):
        s += math.sin(b[i] * x)
    for i in range(b.shape[0]):
        b[i] = 0.0
    return s + b.sum()


def read_only(x, a):
    """a is never written: loads are reloaded in the adjoint sweep, nothing stored."""
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * a[i] * x
    return s


def loop_invariant(x, a):
    """n = the norm of a, used in every iteration: hoisted, stored once (not per iteration)."""
    s = 0.0
    for i in range(a.shape[0]):
        n = math.sqrt(np.dot(a, a))
        s += a[i] / n * x
    return s


def carried_product(x, n):
    """A loop-carried product: each iteration's value is needed, so it is stored."""
    p = 1.0
    for i in range(n):
        p = p * math.sin(x + i)
    return p


def two_carried_one_needed(a, b):
    """Only s = p + q is needed (for sin's derivative); p and q are carried (never at hand in
    the adjoint sweep).  Recomputing s stores p and q, two values a trip; the min-cut stores s,
    one.  ``0.5 * p`` needs nothing of p (the constant is not active)."""
    y = 0.0
    p = 0.0
    q = 1.0
    for i in range(a.shape[0]):
        p = 0.5 * p + a[i]
        q = 0.7 * q + b[i]
        y += math.sin(p + q)
    return y


def scaled_carry(a):
    """p is only ever scaled by a constant: its adjoint needs no primal value at all."""
    p = 0.0
    for i in range(a.shape[0]):
        p = 0.5 * p + a[i]
    return p


def greedy_is_optimal(a, b):
    """Each needed value is its own source (a carried product): the min-cut changes nothing."""
    p = 1.0
    for i in range(a.shape[0]):
        p = p * a[i] + b[i]
    return p


def stencil_needs_two(u0, c, steps):
    """Each update needs two elements it read (``sin(u[i]) * u[i+1]``'s partials), which no single
    value can stand for: a copy of ``u`` per step (one slot per cell) beats two slots per update."""
    u = u0.copy()
    n = u.shape[0]
    for _t in range(steps):
        for i in range(n - 1):
            u[i] = math.sin(u[i]) * u[i + 1] + c[i]
    return np.sum(u * u)


def triangular_index(a, w):
    """``idx`` advances by the inner loop's trip count each row (gmm's packed triangle): the
    adjoint recovers it from the next row's value instead of storing it per row."""
    n = a.shape[0]
    s = 0.0
    for r in range(3):
        idx = 0
        for i in range(n):
            for j in range(i + 1, n):
                s += w[idx] * a[i] * a[j] * (r + 1)
                idx += 1
    return s
