"""Loops the XLA backend raises to array operations (``backends/xla/raise_loops.py``) give the
CPU backend's results, and loops that look alike but whose iterations depend on each other (a
load of an element an earlier iteration wrote, through the same array or another view of its
buffer) keep their sequential meaning: each program here is run on both backends, primal and
gradient, and ``raised`` says whether the loop must have been raised."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="JAX is not installed (pip install jax)")

import zymase  # noqa: E402
from zymase.backends.xla import lower  # noqa: E402


def _count_raised(monkeypatch):
    seen = []
    real = lower.run_raised

    def spy(lo, op, *rest):
        seen.append(op.loc.line)
        return real(lo, op, *rest)

    monkeypatch.setattr(lower, "run_raised", spy)
    return seen


def sweep_with_prev(u, c):  # heat1d's in-place sweep: prev keeps the old left neighbour
    prev = u[0]
    for i in range(1, u.shape[0] - 1):
        cur = u[i]
        u[i] = cur + c[i] * (prev - 2.0 * cur + u[i + 1])
        prev = cur
    return np.sum(u * u)


def forward_recurrence(u, c):  # reads what the previous iteration wrote: sequential
    for i in range(1, u.shape[0]):
        u[i] = u[i - 1] * c[i] + u[i]
    return np.sum(u * u)


def backward_recurrence(u, c):  # descending: reads the element the previous trip wrote
    for i in range(u.shape[0] - 2, -1, -1):
        u[i] = u[i + 1] * c[i] + u[i]
    return np.sum(u * u)


def backward_reads_old(u, c):  # descending, reading below: old values
    for i in range(u.shape[0] - 1, 0, -1):
        u[i] = u[i - 1] * c[i] + u[i]
    return np.sum(u * u)


def through_views(u, c):  # another name of the same buffer, shifted: sequential
    a = u[:-1]
    b = u[1:]
    for i in range(a.shape[0]):
        b[i] = a[i] * c[i]
    return np.sum(u * u)


def through_views_ahead(u, c):  # the other view reads ahead: old values
    a = u[1:]
    b = u[:-1]
    for i in range(b.shape[0]):
        b[i] = a[i] * c[i]
    return np.sum(u * u)


def reductions(u, c):  # a sum, a product, a max, and a running sum read in the body
    s = 0.0
    p = 1.0
    m = -1e300
    run = 0.0
    out = np.empty_like(u)
    for i in range(u.shape[0]):
        s += u[i] * c[i]
        p *= 1.0 + 0.01 * u[i]
        m = np.maximum(m, u[i] * c[i])
        run = run + u[i]
        out[i] = run * c[i]
    return s + p + m + np.sum(out)


def shift_chain(u, c):  # carried values shifted by one and two trips
    a = 0.0
    b = 0.0
    t = 0.0
    for i in range(u.shape[0]):
        t += u[i] * a + c[i] * b
        b = a
        a = u[i] * c[i]
    return t + a + b


def masked_branch(u, c):  # a guarded read: the check of the branch not taken must not fail
    out = np.zeros_like(u)
    n = u.shape[0]
    for i in range(n):
        if i > 0:
            v = u[i - 1] * c[i]
        else:
            v = u[0]
        out[i] = v if v > 0.0 else 0.5 * v
    return np.sum(out * out)


def rows(a, c):  # u[t + 1, i] from row t: another row than the one written
    for t in range(a.shape[0] - 1):
        for i in range(1, a.shape[1] - 1):
            a[t + 1, i] = a[t, i] + c[i] * (a[t, i - 1] - 2.0 * a[t, i] + a[t, i + 1])
    return np.sum(a * a)


def scatter_add(u, c, idx):  # duplicates add up
    out = np.zeros_like(u)
    for i in range(idx.shape[0]):
        out[idx[i]] += u[i] * c[i]
    return np.sum(out * out)


def masked_known(u, c):  # a reduction under a condition known when traced
    s = 0.0
    n = u.shape[0]
    for i in range(n):
        if n > 100:
            s = s + u[i] * c[i]
    return s + 1.0


def masked_reads_carry(u, c):  # a carried sum read in the branch before its own term
    s = 0.0
    t = 0.0
    for i in range(u.shape[0]):
        if u[i] > 0.0:
            t = t + s * c[i]
            s = s + u[i]
    return s + t


def running_max(u, c):  # if v > m: m = v (NaN entries skipped, as > skips them)
    m = u[0]
    lo = 1e300
    out = np.empty_like(u)
    for i in range(u.shape[0]):
        v = u[i] * c[i]
        if v > m:
            m = v
        if lo > v:
            lo = v
        out[i] = m
    return m + lo + np.sum(out)


CASES = [
    (sweep_with_prev, True), (forward_recurrence, False), (backward_recurrence, False),
    (backward_reads_old, True), (through_views, False), (through_views_ahead, True),
    (reductions, True), (shift_chain, True), (masked_branch, True), (rows, True),
    (masked_known, True), (masked_reads_carry, True), (running_max, True),
]


def _args(fn, rng):
    n = 9
    if fn is rows:
        return [rng.standard_normal((5, n)), 0.1 + 0.2 * rng.random(n)]
    return [rng.standard_normal(n), 0.5 + 0.5 * rng.random(n)]


@pytest.mark.parametrize("fn,raised", CASES, ids=[f.__name__ for f, _ in CASES])
def test_raised_or_sequential_loops_match_the_cpu_backend(fn, raised, monkeypatch):
    seen = _count_raised(monkeypatch)
    rng = np.random.default_rng(0)
    args = _args(fn, rng)
    want = zymase.jit(fn)(*[a.copy() for a in args])
    got = zymase.jit(fn, backend="xla")(*[a.copy() for a in args])
    np.testing.assert_allclose(got, want, rtol=1e-12)
    lines, first = inspect.getsourcelines(fn)
    loops = {first + k for k, text in enumerate(lines) if text.strip().startswith("for ")}
    assert bool(loops & set(seen)) == raised, (loops, seen)
    gw = zymase.grad(fn, argnums=(0, 1))(*[a.copy() for a in args])
    gx = zymase.grad(fn, argnums=(0, 1), backend="xla")(*[a.copy() for a in args])
    for a, b in zip(gx, gw):
        np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-14)


def test_running_max_with_nans_matches_the_cpu_backend():
    """A NaN term is skipped (the comparison is false), a NaN start stays."""
    c = np.ones(6)
    for u in (np.array([1.0, np.nan, 3.0, -2.0, np.nan, 0.5]),
              np.array([np.nan, 1.0, 2.0, 3.0, 4.0, 5.0])):
        got = zymase.jit(running_max, backend="xla")(u, c)
        want = zymase.jit(running_max)(u, c)
        np.testing.assert_equal(got, want)


def test_scatter_add_with_repeated_indices():
    rng = np.random.default_rng(1)
    u, c = rng.standard_normal(12), rng.standard_normal(12)
    idx = np.array([0, 3, 3, 1, 0, 0, 5, 2, 3, 4, 1, 0])
    want = zymase.grad(scatter_add, argnums=(0, 1))(u, c, idx)
    got = zymase.grad(scatter_add, argnums=(0, 1), backend="xla")(u, c, idx)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_a_raised_loop_reports_the_first_failing_index():
    def f(u, k):
        s = 0.0
        for i in range(u.shape[0]):
            s += u[i + k]
        return s

    with pytest.raises(IndexError, match="index 9 is out of bounds for size 9"):
        zymase.jit(f, backend="xla")(np.ones(9), 1)
