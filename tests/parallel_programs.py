"""prange programs, written as users write them (for test_parallel.py)."""

import math

import numpy as np

from zymase import prange


def total(x):
    s = 0.0
    for i in prange(x.shape[0]):
        s += x[i] * x[i]
    return s


def stats(x):
    """Several reductions at once: a sum, a product, a max, a min and a count."""
    s = 0.0
    p = 1.0
    hi = -math.inf
    lo = math.inf
    n = 0
    for i in prange(x.shape[0]):
        s += x[i]
        p *= 1.0 + 0.01 * x[i]
        hi = max(hi, x[i])
        lo = min(x[i], lo)
        if x[i] > 0.5:
            n += 1
    return s + p + hi - lo + n


def squares_into(x, out):
    """Each iteration writes its own element, through a private temporary."""
    for i in prange(x.shape[0]):
        t = math.sin(x[i]) * 2.0
        out[i] = t * t
    return np.sum(out)


def last_value(x):
    """A name assigned in the body keeps the last iteration's value, as in Python."""
    t = 0.0
    for i in prange(x.shape[0]):
        t = x[i] * 3.0
    return t


def strided(x):
    s = 0.0
    for i in prange(x.shape[0] - 1, 0, -2):
        s += x[i] * (i + 1)
    return s


def empty_range(x):
    s = 1.5
    for i in prange(3, 3):
        s += x[i]
    return s


def histogram(idx, w, bins):
    """Repeated indices: an atomic add per update."""
    h = np.zeros(bins)
    for i in prange(idx.shape[0]):
        h[idx[i]] += w[i] * w[i]
    return np.sum(h * np.arange(bins))


def scatter(idx, x, out):
    for i in prange(idx.shape[0]):
        out[idx[i]] -= x[i] * 0.5
        out[idx[i] + 1] += x[i]
    return np.sum(out * out)


def stencil2d(u, c):
    n, m = u.shape
    v = np.zeros_like(u)
    for i in prange(1, n - 1):
        for j in range(1, m - 1):
            v[i, j] = u[i, j] + c * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1]
                                     - 4.0 * u[i, j])
    return np.sum(v * v)


def pairwise(pos, q):
    """N-body style: each i sums its interactions with every j (a row per iteration)."""
    n = pos.shape[0]
    f = np.zeros((n, 3))
    e = 0.0
    for i in prange(n):
        for j in range(n):
            if i != j:
                d = pos[i] - pos[j]
                r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + 0.01
                inv = q[i] * q[j] / (r2 * math.sqrt(r2))
                f[i] += inv * d
                e += 0.5 * q[i] * q[j] / math.sqrt(r2)
    return e + np.sum(f * f)


def rows(a, w):
    """Array expressions in the body: a temporary per iteration."""
    out = np.zeros(a.shape[0])
    for i in prange(a.shape[0]):
        r = np.tanh(a[i] * w)
        out[i] = np.sum(r * r)
    return np.sum(out)


def _helper(x, k):
    return math.exp(-x * x) * k


def calls(x):
    s = 0.0
    for i in prange(x.shape[0]):
        s += _helper(x[i], i % 3)
    return s


def skips(x):
    s = 0.0
    for i in prange(x.shape[0]):
        if x[i] < 0.3:
            continue
        s += x[i] ** 2
    return s


def nested_prange(a):
    """An inner prange inside a prange runs serially in each outer iteration."""
    s = 0.0
    for i in prange(a.shape[0]):
        for j in prange(a.shape[1]):
            s += a[i, j] * (i - j)
    return s


def complex_sum(z):
    s = 0j
    for i in prange(z.shape[0]):
        s += z[i] * z[i]
    return s


def raises(x, k):
    s = 0.0
    for i in prange(x.shape[0]):
        s += x[i + k]
    return s


def int_sum(a):
    s = 0
    m = 0
    for i in prange(a.shape[0]):
        s += a[i] * a[i]
        m = max(m, a[i])
    return s * 1000 + m


# NumPy code with no prange: jit(parallel=True) runs its array loops in parallel


def array_expressions(a, b):
    c = np.exp(-a * a) * b + np.tanh(a - b)
    d = np.ones_like(a) * 0.5 + np.sum(c, axis=0)
    return np.sum(c) + np.max(d) + np.mean(np.abs(c), axis=1)[0] + np.sum(d * d)


def normalize_rows(x):
    """A softmax over each row, as users write it."""
    m = np.max(x, axis=1)
    e = np.exp(x - m[:, None])
    return e / np.sum(e, axis=1)[:, None]


def softmax_loss(x, w):
    p = normalize_rows(x * w)
    return -np.sum(np.log(p[:, 0] + 1e-3))
