"""Plain numerical Python, written the way users write it: loops, in-place updates, branches,
helper functions, early returns.  ``zymase demo`` compiles each one and compares it with CPython.
Each example is ``(name, function, make_args)``."""

import math

import numpy as np


def taylor_log(x, n):
    """sum_{i=1..n} x**i / i  (= -log(1 - x) for |x| < 1)"""
    s = 0.0
    for i in range(1, n + 1):
        s += x ** i / i
    return s


def laplacian_step(u, c):
    n = u.shape[0]
    prev = u[0]
    for i in range(1, n - 1):
        cur = u[i]
        u[i] = cur + c[i] * (prev - 2.0 * cur + u[i + 1])
        prev = cur


def heat(u0, c, steps):
    """Explicit heat-equation steps, in place on one array; returns the energy."""
    u = u0.copy()
    for _ in range(steps):
        laplacian_step(u, c)
    return float(np.sum(u * u))


def first_crossing(x, level):
    """Index of the first sample above ``level`` (early return inside a loop), or -1."""
    for i in range(x.shape[0]):
        if x[i] > level:
            return i
    return -1


def softmax_xent(logits, label):
    m = logits[0]
    for v in logits:
        m = max(m, v)
    z = 0.0
    for v in logits:
        z += math.exp(v - m)
    return math.log(z) + m - logits[label]


def pairwise_energy(pos):
    n = pos.shape[0]
    e = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            d = pos[i] - pos[j]
            e += 1.0 / math.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + 0.01)
    return e


def _rng():
    return np.random.default_rng(0)


EXAMPLES = [
    ("taylor_log", taylor_log, lambda: (0.9, 200_000)),
    ("heat", heat, lambda: (np.sin(np.linspace(0, np.pi, 400)), np.full(400, 0.25), 400)),
    ("first_crossing", first_crossing, lambda: (np.linspace(0.0, 1.0, 200_000), 0.75)),
    ("softmax_xent", softmax_xent, lambda: (_rng().standard_normal(100_000), 7)),
    ("pairwise_energy", pairwise_energy, lambda: (_rng().standard_normal((300, 3)),)),
]


# (name, function, make_args, argnums, options): ``zymase demo`` checks each gradient against
# central differences of CPython along a random direction
GRADIENTS = [
    ("taylor_log", taylor_log, lambda: (0.9, 200_000), 0, {}),
    ("heat", heat, EXAMPLES[1][2], (0, 1), {}),
    ("heat, 64 KiB tape", heat, EXAMPLES[1][2], (0, 1), {"memory_limit": 64 << 10}),
    ("softmax_xent", softmax_xent, EXAMPLES[3][2], 0, {}),
    ("pairwise_energy", pairwise_energy, EXAMPLES[4][2], 0, {}),
]
