"""Reverse mode of prange loops run as parallel loops (autodiff/reverse/parallel.py): gradients of
programs written as scientists write them against the serial adjoint
(``disable={"parallel_adjoint"}``) with 1, 2 and 4 threads, against central differences, with
``deterministic=True`` (bit-identical for any thread count) and in the interpreter with the
iterations shuffled.  Then the programs that found bugs: a race on wrapped negative indices, tape
sets leaked by a pullback never called or a raising forward sweep, per-thread accumulators of a
large parameter vector under ``deterministic=True``."""

from __future__ import annotations

import io
import math
import os
import random

import numpy as np
import pytest
from autodiff.ad_check import check_grads

import zymase
import zymase.ir.interp as interp
from zymase import prange

SERIAL = {"disable": {"parallel_adjoint"}}


# ---------------------------------------------------------------------- programs

def sumsq(x):
    s = 0.0
    for i in prange(x.shape[0]):
        s += x[i] * x[i]
    return s


def params_every_iteration(x, c, p):
    """A scalar and a vector parameter read by every iteration (p[j]: per-thread accumulators)."""
    s = 0.0
    for i in prange(x.shape[0]):
        for j in range(p.shape[0]):
            s += p[j] * math.sin(c * x[i] * (j + 1))
    return s


def rows_tanh(a, w):
    out = np.zeros(a.shape[0])
    for i in prange(a.shape[0]):
        out[i] = np.sum(np.tanh(a[i, :] * w) ** 2)
    return np.sum(out * out)


def columns(a, w):
    out = np.zeros(a.shape[1])
    for j in prange(a.shape[1]):
        out[j] = np.sum(np.sin(a[:, j] * w))
    return np.sum(out * out)


def nbody(pos, q):
    n = pos.shape[0]
    e = 0.0
    for i in prange(n):
        for j in range(n):
            if i == j:
                continue
            d = pos[i] - pos[j]
            r = math.sqrt(np.sum(d * d) + 0.01)
            e += q[i] * q[j] / r
    return e


def stencil(u):
    n = u.shape[0]
    v = np.zeros(n)
    for i in prange(1, n - 1):
        v[i] = u[i - 1] - 2.0 * u[i] + u[i + 1]
    return np.sum(v * v)


def histogram(idx, w):
    h = np.zeros(16)
    for i in prange(idx.shape[0]):
        h[idx[i]] += w[i] * w[i]
    return np.sum(h * h)


def gather(idx, w):
    s = 0.0
    for i in prange(idx.shape[0]):
        s += w[idx[i]] ** 2
    return s


def branches(x):
    s = 0.0
    for i in prange(x.shape[0]):
        if x[i] > 0.5:
            s += x[i] ** 3
        elif x[i] > 0.2:
            s -= math.exp(x[i])
        else:
            continue
    return s


def time_steps(u, c, steps):
    """prange inside a serial time loop, in place through a second buffer."""
    n = u.shape[0]
    v = np.zeros(n)
    for _ in range(steps):
        for i in prange(1, n - 1):
            v[i] = u[i] + c * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        for i in prange(1, n - 1):
            u[i] = v[i]
    return np.sum(u * u)


def nested(a):
    s = 0.0
    for i in prange(a.shape[0]):
        for j in prange(a.shape[1]):
            s += a[i, j] ** 2 * (i + 1)
    return s


def overwrites_what_it_read(x):
    s = 0.0
    for i in prange(x.shape[0]):
        t = x[i]
        x[i] *= 2.0
        x[i] = math.sin(x[i]) * t
        s += x[i] * t
    return s + np.sum(x)


def renews_in_body(a, w):
    """A temporary renewed by an inner serial loop (its versions go on the iteration's tape)."""
    out = np.zeros(a.shape[0])
    for i in prange(a.shape[0]):
        h = a[i]
        for _ in range(3):
            h = np.sin(h * w + h[0])
        out[i] = np.sum(h)
    return np.sum(out ** 2)


def while_in_body(x):
    s = 0.0
    for i in prange(x.shape[0]):
        t = x[i]
        k = 0
        while k < 3 + i % 3:
            t = math.sin(t) + 0.1 * t
            k += 1
        s += t
    return s


def view_made_outside(x, p):
    w = p[:, 1]
    s = 0.0
    for i in prange(x.shape[0]):
        for j in range(w.shape[0]):
            s += w[j] * x[i] ** j
    return s


def max_and_sum(x, w):
    """An active max reduction: the adjoint falls back to serial."""
    m = -1e300
    s = 0.0
    for i in prange(x.shape[0]):
        m = max(m, x[i] * w)
        s += x[i] * x[i]
    return m + s


def complex_scatter(idx, z):
    h = np.zeros(8, dtype=np.complex128)
    for i in prange(idx.shape[0]):
        h[idx[i]] += z[i] * z[i]
    return np.sum(np.abs(h) ** 2)


def f32_params(x, p):
    s = np.float32(0.0)
    for i in prange(x.shape[0]):
        for j in range(2):
            s += p[j] * x[i] ** (j + 1)
    return s


# -- the programs that found bugs

def wrapped(x):
    """x[i] for i in [-n, n): iterations i and i - n read the same element."""
    s = 0.0
    for i in prange(-x.shape[0], x.shape[0]):
        s += x[i] * x[i]
    return s


def inactive_matvec(a, w, m):
    """m @ a[i] has an active operand: reversed serially, its forward loop pushes on the shared
    tape (the CPU backend runs that loop in order)."""
    s = 0.0
    for i in prange(a.shape[0]):
        r = m @ a[i]
        s += np.sum(r * r) * w
    return s


def deep(x):
    """Pushes 20 values per iteration."""
    s = 0.0
    for i in prange(x.shape[0]):
        u = x[i]
        for _ in range(20):
            u = math.sin(u) * 1.01
        s += u
    return s


def deep_in_steps(x, k, steps):
    """A prange in a serial loop; the last step reads past the end when k = 1."""
    s = 0.0
    for t in range(steps):
        for i in prange(x.shape[0]):
            u = x[i]
            for _ in range(20):
                u = math.sin(u) * 1.01
            s += u * x[i + k * (t == steps - 1)]
    return s


def few_of_a_big_table(x, table):
    s = 0.0
    for i in prange(x.shape[0]):
        for j in range(3):
            s += x[i] * table[j]
    return s


# ---------------------------------------------------------------------- the table

RNG = np.random.default_rng(11)


def R(*shape):
    return RNG.random(shape)


def C(*shape):
    return 0.5 * RNG.random(shape) + 0.5j * RNG.random(shape)


# name -> (program, large arguments (races), small arguments (finite differences), argnums)
CASES = {
    "sumsq": (sumsq, (R(3000),), (R(7),), 0),
    "params_every_iteration": (params_every_iteration, (R(2000), 0.7, R(4)), (R(7), 0.7, R(4)),
                               (0, 1, 2)),
    "rows_tanh": (rows_tanh, (R(400, 8), R(8)), (R(5, 4), R(4)), (0, 1)),
    "columns": (columns, (R(8, 400), R(8)), (R(4, 5), R(4)), (0, 1)),
    "nbody": (nbody, (R(150, 3), R(150)), (R(6, 3), R(6)), (0, 1)),
    "stencil": (stencil, (R(3000),), (R(9),), 0),
    "histogram": (histogram, (RNG.integers(0, 16, 3000), R(3000)),
                  (RNG.integers(0, 16, 20), R(20)), 1),
    "gather": (gather, (RNG.integers(0, 16, 3000), R(16)), (RNG.integers(0, 16, 20), R(16)), 1),
    "branches": (branches, (R(3000),), (R(15),), 0),
    "time_steps": (time_steps, (R(500), 0.1, 8), (R(9), 0.1, 3), (0, 1)),
    "nested": (nested, (R(60, 50),), (R(4, 3),), 0),
    "overwrites_what_it_read": (overwrites_what_it_read, (R(3000),), (R(7),), 0),
    "renews_in_body": (renews_in_body, (R(400, 6), R(6)), (R(5, 3), R(3)), (0, 1)),
    "while_in_body": (while_in_body, (R(2000),), (R(7),), 0),
    "view_made_outside": (view_made_outside, (R(2000), R(5, 3)), (R(7), R(5, 3)), (0, 1)),
    "max_and_sum": (max_and_sum, (R(2000), 0.6), (R(7), 0.6), (0, 1)),
    "complex_scatter": (complex_scatter, (RNG.integers(0, 8, 2000), C(2000)), None, 1),
    "f32_params": (f32_params, (R(2000).astype(np.float32), R(2).astype(np.float32)),
                   (R(7).astype(np.float32), R(2).astype(np.float32)), (0, 1)),
}


def fresh(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def flat(g):
    return [np.asarray(x) for x in (g if isinstance(g, tuple) else (g,))]


def assert_same(got, want, rtol, what):
    for g, w in zip(flat(got), flat(want)):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * max(1.0, np.abs(w).max()),
                                   err_msg=what)


def rtol_of(args):
    return 1e-4 if any(getattr(a, "dtype", None) == np.float32 for a in args) else 1e-10


@pytest.fixture
def threads():
    before = zymase.get_num_threads()
    yield zymase.set_num_threads
    zymase.set_num_threads(before)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_the_serial_adjoint_for_any_thread_count(name, threads):
    f, big, _, nums = CASES[name]
    want = zymase.grad(f, argnums=nums, **SERIAL)(*fresh(big))
    g = zymase.grad(f, argnums=nums)
    for n in (1, 2, 4):
        threads(n)
        for rep in range(3):
            assert_same(g(*fresh(big)), want, rtol_of(big), f"{n} threads, call {rep}")


@pytest.mark.parametrize("name", sorted(k for k, v in CASES.items() if v[2] is not None))
def test_matches_finite_differences(name, threads):
    threads(2)
    f, _, small, nums = CASES[name]
    check_grads(f, fresh(small), argnums=nums, modes=("rev",))


@pytest.mark.parametrize("name", sorted(CASES))
def test_deterministic_is_bit_identical(name, threads):
    f, big, _, nums = CASES[name]
    g = zymase.grad(f, argnums=nums, deterministic=True)
    want = zymase.grad(f, argnums=nums, **SERIAL)(*fresh(big))
    bits = set()
    for n in (1, 2, 3):
        threads(n)
        got = g(*fresh(big))
        bits.add(b"".join(np.ascontiguousarray(x).tobytes() for x in flat(got)))
        assert_same(got, want, rtol_of(big), f"deterministic, {n} threads")
    assert len(bits) == 1


@pytest.mark.parametrize("name", sorted(k for k, v in CASES.items() if v[2] is not None))
def test_shuffled_interpreter(name):
    f, _, small, nums = CASES[name]
    want = zymase.grad(f, argnums=nums, **SERIAL)(*fresh(small))
    for seed in range(2):
        interp.SHUFFLE = random.Random(seed)
        try:
            got = zymase.grad(f, argnums=nums, backend="interp")(*fresh(small))
        finally:
            interp.SHUFFLE = None
        assert_same(got, want, rtol_of(small), f"shuffle seed {seed}")


def test_jacrev_vjp_and_hessian(threads):
    threads(2)
    x, c, p = R(40), 0.7, R(4)
    h = zymase.hessian(params_every_iteration)(x[:8], c, p)
    g = zymase.grad(params_every_iteration)
    e = 1e-6
    fd = np.stack([(g(x[:8] + e * d, c, p) - g(x[:8] - e * d, c, p)) / (2 * e) for d in np.eye(8)])
    np.testing.assert_allclose(h, fd, rtol=1e-6, atol=1e-7)
    v = R(8)
    np.testing.assert_allclose(zymase.hvp(params_every_iteration)(x[:8], c, p, v), h @ v,
                               rtol=1e-12, atol=1e-12)

    def rows_out(a, w):
        out = np.zeros(a.shape[0])
        for i in prange(a.shape[0]):
            out[i] = np.sum(np.tanh(a[i, :] * w))
        return out

    a, w = R(12, 3), R(3)
    jac = zymase.jacrev(rows_out, argnums=(0, 1))(a, w)
    want = zymase.jacrev(rows_out, argnums=(0, 1), **SERIAL)(a, w)
    assert_same(jac, want, 1e-12, "jacrev")
    y, pull = zymase.vjp(rows_out, a, w)
    ct = R(12)
    first, second = pull(ct), pull(ct)  # a second pullback runs the forward part again
    assert_same(first, second, 0.0, "second pullback")
    assert_same(first, zymase.vjp(rows_out, a, w, **SERIAL)[1](ct), 1e-12, "vjp")


def test_many_python_threads_at_once(threads):
    import threading
    threads(2)
    pos, q = R(80, 3), R(80)
    g = zymase.grad(nbody, argnums=(0, 1))
    want = zymase.grad(nbody, argnums=(0, 1), **SERIAL)(pos, q)
    bad = []

    def work():
        for _ in range(20):
            got = g(pos, q)
            if not all(np.allclose(a, b, rtol=1e-10) for a, b in zip(got, want)):
                bad.append(1)

    ts = [threading.Thread(target=work) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not bad


def test_memory_limit_with_prange():
    u = R(300)
    want = zymase.grad(time_steps, argnums=(0, 1), **SERIAL)(u.copy(), 0.1, 20)
    for limit in (20_000, 10_000_000):
        got = zymase.grad(time_steps, argnums=(0, 1), memory_limit=limit)(u.copy(), 0.1, 20)
        assert_same(got, want, 1e-12, f"memory_limit={limit}")


# ---------------------------------------------------------------------- bugs found

def test_wrapped_negative_indices_are_not_owned(threads):
    """x[i] over prange(-n, n): iterations i and i - n update the same element (a wrapped
    index is not the iteration's own): per-thread accumulators, atomics or a serial adjoint,
    never plain updates from two threads (lost updates: a gradient of 2x instead of 4x)."""
    def reverse_ir(fn):
        return zymase.explain(fn, R(10), stages=["reverse"], transform="grad",
                              file=io.StringIO())

    text = reverse_ir(wrapped)
    serial = reverse_ir(zymase.jit(wrapped, **SERIAL))
    assert "atomic_add" in text or "scf.thread_slot" in text or \
        text.count("scf.parallel") == serial.count("scf.parallel"), \
        "x[i] updated plainly by iterations i and i - n"
    x = R(200_000)  # (the race itself shows only now and then)
    g = zymase.grad(wrapped)
    for n in (2, 4):
        threads(n)
        for _ in range(10):
            np.testing.assert_allclose(g(x), 4.0 * x, rtol=1e-12)
    check_grads(wrapped, (R(7),), modes=("rev",))


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


needs_proc = pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc")


@needs_proc
def test_a_pullback_never_called_frees_the_iteration_tapes():
    """Each vjp pushes 20 values per iteration on iteration tapes (3.2 MB here) whose set is
    only freed by the adjoint: a pullback dropped uncalled (``_Forward.__del__`` frees the main
    tape buffer only) leaked all of them."""
    x = R(20_000)
    zymase.vjp(deep, x)
    before = _rss()
    for _ in range(30):
        y, pull = zymase.vjp(deep, x)
        del pull
    grown = _rss() - before
    assert grown < 20 * 2**20, f"RSS grew by {grown / 2**20:.0f} MiB over 30 vjps"


@needs_proc
def test_a_raising_forward_sweep_frees_every_tape_set():
    """A prange in a serial loop makes a tape set per step; when a later step raises, only the
    last set is freed (its unwind slot), the earlier ones (handles on the main tape) leak."""
    x = R(20_000)
    g = zymase.grad(deep_in_steps)
    np.testing.assert_allclose(g(x, 0, 3), zymase.grad(deep_in_steps, **SERIAL)(x, 0, 3),
                               rtol=1e-12)
    before = _rss()
    for _ in range(20):
        with pytest.raises(IndexError):
            g(x, 1, 4)
    grown = _rss() - before
    assert grown < 20 * 2**20, f"RSS grew by {grown / 2**20:.0f} MiB over 20 raising calls"


def test_shuffled_interpreter_keeps_shared_tape_loops_in_order():
    """(At 0df6b96 the adjoint of this loop was serial, its forward loop pushed on the shared
    tape, which the CPU backend runs in order but the interpreter's SHUFFLE shuffled: the
    gradient's rows came out permuted.)"""
    a, m = R(5, 3), R(2, 3)
    want = zymase.grad(inactive_matvec, argnums=(0, 1), **SERIAL)(a, 0.5, m)
    assert_same(zymase.grad(inactive_matvec, argnums=(0, 1))(a, 0.5, m), want, 1e-12, "cpu")
    interp.SHUFFLE = random.Random(0)
    try:
        got = zymase.grad(inactive_matvec, argnums=(0, 1), backend="interp")(a, 0.5, m)
    finally:
        interp.SHUFFLE = None
    assert_same(got, want, 1e-12, "shuffled interpreter")


def test_accumulators_of_a_large_parameter(threads):
    """table[j] (j < 3) gives `table` a per-thread accumulator of its whole size: few threads
    (down to one) when the accumulators would cost more than the loop, in both modes (the slow
    test below allocates 64 copies of 400 MB when deterministic=True ignores that)."""
    threads(2)
    x, table = R(100), R(5_000_000)
    want = zymase.grad(few_of_a_big_table, argnums=(0, 1), **SERIAL)(x, table)
    for kw in ({}, {"deterministic": True}):
        got = zymase.grad(few_of_a_big_table, argnums=(0, 1), **kw)(x, table)
        assert_same(got, want, 1e-12, str(kw))


@pytest.mark.slow
def test_deterministic_accumulators_of_a_400_mb_parameter(threads):
    """64 copies of a 400 MB shadow: ZymaseMemoryError 'cannot allocate 25600000000 bytes'."""
    threads(2)
    x, table = R(100), np.ones(50_000_000)
    got = zymase.grad(few_of_a_big_table, argnums=(0, 1), deterministic=True)(x, table)
    assert got[1][0] == pytest.approx(np.sum(x))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_many_repetitions(name, threads):
    f, big, _, nums = CASES[name]
    want = zymase.grad(f, argnums=nums, **SERIAL)(*fresh(big))
    g = zymase.grad(f, argnums=nums)
    for n in (2, 4):
        threads(n)
        for rep in range(30):
            assert_same(g(*fresh(big)), want, rtol_of(big), f"{n} threads, call {rep}")


def products_of_arrays_made_in_the_body(X, w):
    out = np.zeros(X.shape[0])
    for i in prange(X.shape[0]):
        H = np.outer(X[i], X[i]) * w
        G = np.tanh(H)
        out[i] = np.sum(G @ H)
    return np.sum(out ** 2)


def test_products_of_arrays_an_iteration_makes(threads):
    """The adjoint of G @ H reads G and H, kept by reference; an iteration's buffers live in its
    thread's arena, freed when the thread's share of the loop ends, so such a loop is reversed
    serially (the parallel adjoint read freed memory: gradients off by 10^6, silently)."""
    X = np.random.default_rng(3).standard_normal((64, 20))
    want = zymase.grad(products_of_arrays_made_in_the_body, argnums=(0, 1), **SERIAL)(X, 0.3)
    for n in (1, 2):
        threads(n)
        got = zymase.grad(products_of_arrays_made_in_the_body, argnums=(0, 1))(X, 0.3)
        assert_same(got, want, 1e-12, f"{n} threads")
    check_grads(products_of_arrays_made_in_the_body, (X[:4, :3].copy(), 0.3), argnums=(0, 1))
