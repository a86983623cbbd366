"""Checkpointing (``memory_limit=`` and ``zymase.checkpoint``): the Revolve schedule against the
optimum found by dynamic programming, and checkpointed gradients against the unlimited ones
(bit-for-bit: the same float operations run), against CPython's finite differences, and
against the bytes the limit error says are needed."""

import os
import re
import subprocess
import sys
import textwrap
from functools import lru_cache

import numpy as np
import pytest
from conftest import SHARED_BENCH, corpus

import zymase
from zymase.autodiff.revolve import ADVANCE, RESTORE, TAKESHOT, YOUTURN, optimal_steps, schedule

# ---------------------------------------------------------------------- the schedule


@lru_cache(None)
def _fewest(steps, slots):
    """The fewest primal steps that reverse ``steps`` steps from a saved state with ``slots``
    slots (that one included): try every first checkpoint position."""
    if steps <= 1:
        return 0
    if slots == 1:
        return steps * (steps - 1) // 2
    return min(m + _fewest(steps - m, slots - 1) + _fewest(m, slots) for m in range(1, steps))


def _run(steps, slots, run=1):
    """Play a schedule on a model state (the step number it is at); check every action is
    legal and return the number of primal steps it took."""
    saved = {0: 0}
    state, advanced, turned = None, 0, []
    for act, a, b in schedule(steps, slots, run):
        assert len(saved) <= slots
        if act == RESTORE:
            state = saved[a]
        elif act == TAKESHOT:
            assert 0 <= a < slots and state is not None
            saved[a] = state
        elif act == ADVANCE:
            assert state == a and b > a
            advanced += b - a
            state = b
        else:
            assert act == YOUTURN and state == a and 1 <= b - a <= run
            turned += list(range(b - 1, a - 1, -1))
            state = None
    assert turned == list(range(steps - 1, -1, -1))
    return advanced


@pytest.mark.parametrize("slots", [1, 2, 3, 4, 5, 7])
def test_schedule_is_legal_and_optimal(slots):
    for steps in range(0, 45):
        assert _run(steps, slots) == _fewest(steps, slots) == optimal_steps(steps, slots)


@pytest.mark.parametrize("run", [2, 5, 64])
def test_schedule_with_runs_is_legal_and_no_worse(run):
    """Recording up to ``run`` steps at once: legal, and never more primal steps than one at a
    time; with enough room for the whole loop, no primal step is repeated."""
    for slots in (1, 2, 3, 6):
        for steps in range(0, 70, 3):
            assert _run(steps, slots, run) <= _run(steps, slots)
    assert _run(run, 1, run) == 0


def test_schedule_large_counts_match_the_binomial_formula():
    for steps, slots in [(1000, 10), (10_000, 100), (777, 3), (5000, 2), (100, 100), (64, 200)]:
        assert _run(steps, slots) == optimal_steps(steps, slots)


# ---------------------------------------------------------------------- gradients


def step(u, c):
    """One explicit step of the heat equation, in place (a helper: inlined before AD)."""
    prev = u[0]
    for i in range(1, u.shape[0] - 1):
        cur = u[i]
        u[i] = cur + c[i] * (prev - 2.0 * cur + u[i + 1])
        prev = cur


def heat(u0, c, T):
    u = u0.copy()
    e = 0.0
    for _t in range(T):
        step(u, c)
        e = 0.5 * e + np.sin(u[3])  # a scalar carried from step to step
    return np.sum(u * u) + e


def heat_in_place(u, c, T):
    """Writes its argument: the caller must see the final state after the gradient too."""
    for _t in range(T):
        step(u, c)
    return np.sum(u * u)


def heat_marked(u0, c, T):
    u = u0.copy()
    for _t in zymase.checkpoint(range(T), snaps=3):
        step(u, c)
    return np.sum(u * u)


def heat_marked_default(u0, c, T):
    u = u0.copy()
    for _t in zymase.checkpoint(range(T)):
        step(u, c)
    return np.sum(u * u)


def two_phases(x, w, T):
    """Two checkpointed loops in a row, the second reading a buffer written after it."""
    a = x.copy()
    for t in range(T):
        for i in range(a.shape[0]):
            a[i] = np.tanh(w[i] * a[i] + 0.1 * t)
    b = np.zeros_like(x)
    s = 0.0
    for t in range(T):
        for i in range(b.shape[0]):
            b[i] = b[i] * 0.9 + np.cos(a[i] * s)
        s = s + b[t % b.shape[0]]
    a[0] = 3.0 * s
    return np.sum(a * b) + s


def _data(n=12, seed=0):
    rng = np.random.default_rng(seed)
    return rng.random(n), 0.1 + 0.3 * rng.random(n)


def _fd(f, args, k, d, h=1e-6):
    plus, minus = list(args), list(args)
    plus[k] = args[k] + h * d
    minus[k] = args[k] - h * d
    return (f(*[np.array(a) if isinstance(a, np.ndarray) else a for a in plus]) -
            f(*[np.array(a) if isinstance(a, np.ndarray) else a for a in minus])) / (2 * h)


@pytest.mark.parametrize("limit", [10**9, 20_000, 3_000])
@pytest.mark.parametrize("T", [0, 1, 2, 7, 40])
def test_limited_gradient_equals_unlimited(limit, T):
    u0, c = _data()
    g0 = zymase.grad(heat, argnums=(0, 1))(u0, c, T)
    g1 = zymase.grad(heat, argnums=(0, 1), memory_limit=limit)(u0, c, T)
    for a, b in zip(g0, g1):
        np.testing.assert_array_equal(a, b)
    if T:
        d = np.random.default_rng(1).standard_normal(u0.shape)
        np.testing.assert_allclose(np.dot(g1[1], d), _fd(heat, (u0, c, T), 1, d), rtol=1e-6)


def test_too_small_a_limit_says_what_it_needs():
    u0, c = _data()
    with pytest.raises(zymase.ZymaseMemoryError) as e:
        zymase.grad(heat, argnums=(0, 1), memory_limit=100)(u0, c, 30)
    assert isinstance(e.value, MemoryError)
    msg = str(e.value)
    assert "test_checkpoint.py" in msg and "for _t in range(T)" in msg
    need = int(re.search(r"needs at least (\d+) bytes", msg).group(1))
    with pytest.raises(MemoryError):
        zymase.grad(heat, argnums=(0, 1), memory_limit=need - 1)(u0, c, 30)
    g = zymase.grad(heat, argnums=(0, 1), memory_limit=need)(u0, c, 30)
    np.testing.assert_array_equal(g[0], zymase.grad(heat, argnums=(0, 1))(u0, c, 30)[0])


def test_bad_limits_are_refused():
    u0, c = _data()
    for bad in (0, -5, 1.5, "1MB", True):
        with pytest.raises((ValueError, TypeError)):
            zymase.grad(heat, memory_limit=bad)(u0, c, 3)


def test_caller_sees_the_final_state_of_a_written_argument():
    u0, c = _data()
    expect = u0.copy()
    heat_in_place(expect, c, 9)
    for argnums in ((0, 1), 1):  # u active, and u only reached by c's values
        u = u0.copy()
        g = zymase.grad(heat_in_place, argnums=argnums, memory_limit=2_500)(u, c, 9)
        np.testing.assert_array_equal(u, expect)
        u = u0.copy()
        g0 = zymase.grad(heat_in_place, argnums=argnums)(u, c, 9)
        for a, b in zip(np.atleast_1d(g), np.atleast_1d(g0)):
            np.testing.assert_array_equal(a, b)


def test_enzyme_style_call_and_vjp_with_a_limit():
    u0, c = _data()
    du, dc, u = np.zeros_like(u0), np.zeros_like(c), u0.copy()
    zymase.autodiff(zymase.Reverse, heat_in_place, zymase.Duplicated(u, du),
                    zymase.Duplicated(c, dc), 9, memory_limit=2_500)
    du0, dc0, u1 = np.zeros_like(u0), np.zeros_like(c), u0.copy()
    zymase.autodiff(zymase.Reverse, heat_in_place, zymase.Duplicated(u1, du0),
                    zymase.Duplicated(c, dc0), 9)
    np.testing.assert_array_equal(du, du0)
    np.testing.assert_array_equal(dc, dc0)
    np.testing.assert_array_equal(u, u1)
    _, pullback = zymase.vjp(heat_in_place, u0.copy(), c, 9, memory_limit=2_500)
    np.testing.assert_array_equal(pullback(1.0)[1], dc0)


def test_hessian_vector_product_through_a_checkpointed_loop():
    u0, c = _data()
    v = np.random.default_rng(3).standard_normal(c.shape)
    h0 = zymase.hvp(heat, argnums=1)(u0, c, 6, v)
    h1 = zymase.hvp(heat, argnums=1, memory_limit=3_000)(u0, c, 6, v)
    np.testing.assert_allclose(h1, h0, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("fn", [heat_marked, heat_marked_default])
def test_marked_loop(fn):
    u0, c = _data()
    for T in (0, 1, 5, 23):
        g = zymase.grad(fn, argnums=(0, 1))(u0, c, T)
        ref = zymase.grad(heat_in_place, argnums=(0, 1))(u0.copy(), c, T)
        np.testing.assert_array_equal(g[0], ref[0])
        np.testing.assert_array_equal(g[1], ref[1])
    assert fn(u0, c, 4) == zymase.jit(fn)(u0, c, 4)  # plain Python and jit ignore the mark


def test_two_loops_and_a_buffer_written_after_the_loop():
    x, w = _data(7, seed=4)
    g0 = zymase.grad(two_phases, argnums=(0, 1))(x, w, 11)
    for limit in (10**8, 3_000):
        g1 = zymase.grad(two_phases, argnums=(0, 1), memory_limit=limit)(x, w, 11)
        np.testing.assert_array_equal(g1[0], g0[0])
        np.testing.assert_array_equal(g1[1], g0[1])
    d = np.random.default_rng(2).standard_normal(x.shape)
    np.testing.assert_allclose(np.dot(g0[1], d), _fd(two_phases, (x, w, 11), 1, d), rtol=1e-6)


def test_checkpoint_errors(tmp_path):
    src = tmp_path / "ck_errors.py"
    src.write_text(textwrap.dedent("""
        import zymase

        def nested(x, T):
            s = 0.0
            for k in range(3):
                for t in zymase.checkpoint(range(T)):
                    s = s * x + 1.0
            return s

        def breaks(x, T):
            s = 0.0
            for t in zymase.checkpoint(range(T)):
                s = s * x + 1.0
                if s > 10.0:
                    break
            return s

        def bad_snaps(x, T):
            s = 0.0
            for t in zymase.checkpoint(range(T), snaps=T):
                s = s * x + 1.0
            return s

        def whiles(x, T):
            s = 0.0
            while s < T:
                s = s * x + 1.0
            return s
    """))
    sys.path.insert(0, str(tmp_path))
    try:
        import ck_errors as m
    finally:
        sys.path.remove(str(tmp_path))
    for fn, exc, words, line in [(m.nested, zymase.DifferentiationError, "inside another loop", 7),
                                 (m.breaks, zymase.UnsupportedError, "without `break`", 13),
                                 (m.bad_snaps, zymase.ZymaseTypeError, "known at compile time",
                                  21)]:
        with pytest.raises(exc, match=words) as e:
            zymase.grad(fn)(0.5, 4)
        assert f"ck_errors.py:{line}:" in str(e.value) and zymase.__path__[0] not in str(e.value)
    with pytest.raises(zymase.ZymaseMemoryError) as e:
        zymase.grad(m.whiles, memory_limit=8)(0.5, 1.6)
    assert "ck_errors.py:27:" in str(e.value)  # the while loop's line
    assert zymase.__path__[0] not in str(e.value)
    assert zymase.grad(m.whiles, memory_limit=10**6)(0.5, 1.6) == zymase.grad(m.whiles)(0.5, 1.6)


def heat_until(u, c, tol):
    """A while loop (trip count known only when it ends) writing its argument."""
    e = 0.0
    while e < tol:
        step(u, c)
        e = e + 0.1 + 0.01 * np.sin(u[3])
    return np.sum(u * u) + e


def heat_break(u0, c, T):
    u = u0.copy()
    s = 0.0
    for _t in range(T):
        step(u, c)
        s += u[2] * u[5]
        if s > 3.0:
            break
    return np.sum(u * u) + s


@pytest.mark.parametrize("fn,arg", [(heat_until, 2.05), (heat_until, 0.0), (heat_break, 50),
                                    (heat_break, 3)])
def test_while_loops_and_breaks_under_a_limit(fn, arg):
    """Trip counts known only at run time: the loop is first run to count its trips."""
    u0, c = _data(20)
    expect = u0.copy()
    fn(expect, c, arg)
    u = u0.copy()
    g0 = zymase.grad(fn, argnums=(0, 1))(u, c, arg)
    for limit in (10**7, 2_000):
        u1 = u0.copy()
        g1 = zymase.grad(fn, argnums=(0, 1), memory_limit=limit)(u1, c, arg)
        np.testing.assert_array_equal(g1[0], g0[0])
        np.testing.assert_array_equal(g1[1], g0[1])
        np.testing.assert_array_equal(u1, expect if fn is heat_until else u0)
    d = np.random.default_rng(4).standard_normal(c.shape)
    np.testing.assert_allclose(np.dot(g0[1], d), _fd(fn, (u0, c, arg), 1, d), rtol=1e-6,
                               atol=1e-9)


def relax(u, c):
    for i in range(u.shape[0]):
        u[i] = np.sin(u[i]) * c[i] + np.exp(-u[i] * u[i])


def relax_twice_marked(u0, c):
    u = u0.copy()
    zymase.checkpoint(relax)(u, c)
    zymase.checkpoint(relax)(u, c)
    return np.sum(u * u)


def relax_twice(u0, c):
    u = u0.copy()
    relax(u, c)
    relax(u, c)
    return np.sum(u * u)


def relax_in_loop(u0, c, T):
    u = u0.copy()
    for _t in range(T):
        zymase.checkpoint(relax)(u, c)
    return np.sum(u * u)


def test_marked_helper_is_recomputed_not_inlined():
    u0, c = _data(9, seed=6)
    g = zymase.grad(relax_twice_marked, (0, 1))(u0, c)
    ref = zymase.grad(relax_twice, (0, 1))(u0, c)
    np.testing.assert_allclose(g[0], ref[0], rtol=1e-14)
    np.testing.assert_allclose(g[1], ref[1], rtol=1e-14)
    d = np.random.default_rng(8).standard_normal(c.shape)
    np.testing.assert_allclose(np.dot(g[1], d), _fd(relax_twice_marked, (u0, c), 1, d),
                               rtol=1e-6)
    # (vectorized sin and exp: within 4 ulp of libm's)
    assert zymase.jit(relax_twice_marked)(u0, c) == pytest.approx(relax_twice_marked(u0, c),
                                                                  rel=1e-14)
    _, t = zymase.jvp(relax_twice_marked, (u0, c), (np.ones_like(u0), np.zeros_like(c)))
    assert t == pytest.approx(float(np.sum(ref[0])), rel=1e-12)
    # the call is kept until reverse mode (inlined, the loop below would be differentiable)
    with pytest.raises(zymase.DifferentiationError, match="inside a loop") as e:
        zymase.grad(relax_in_loop)(u0, c, 3)
    assert "test_checkpoint.py:" in str(e.value) and zymase.__path__[0] not in str(e.value)
    with pytest.raises(TypeError):
        zymase.checkpoint(relax, snaps=3)


# ---------------------------------------------------------------------- the corpus

PROBLEMS = ("relu3", "taylor", "norm", "gmm", "ba", "lstm", "heat1d", "nbody", "rk4", "fft")


@pytest.mark.parametrize("start", [1_000, pytest.param(30_000, marks=pytest.mark.slow),
                                   pytest.param(10**9, marks=pytest.mark.slow)])
@pytest.mark.parametrize("name", [p if p not in ("lstm", "nbody") else  # (the slowest two)
                                  pytest.param(p, marks=pytest.mark.slow) for p in PROBLEMS])
def test_corpus_gradients_with_limits(name, start):
    """Each corpus problem: the same gradient under a tight limit (and, with ``-m slow``, a
    looser and a generous one); a limit that
    is too tight names the bytes the failing loop needs, and that many get past it (the next
    loop reversed may then ask for more)."""
    mod = corpus().load(name)
    args = mod.make_inputs("adbench_test" if name == "ba" else "small")
    active = tuple(mod.ACTIVE)
    ref = zymase.grad(mod.primal, active)(*args)
    limit = start
    for _ in range(5):
        try:
            got = zymase.grad(mod.primal, active, memory_limit=limit)(*args)
            break
        except zymase.ZymaseMemoryError as e:
            need = int(re.search(r"needs at least (\d+) bytes", str(e)).group(1))
            assert need > limit
            limit = need
    else:
        raise AssertionError("the needs reported do not converge")
    for a, b in zip(ref, got):
        np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------------- peak memory

_RSS = """
import os, sys, threading, time
import numpy as np
sys.path.insert(0, {problems!r})
import heat1d, zymase

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

n, T, limit = {n}, {T}, {limit}
g = zymase.grad(heat1d.primal, argnums=(0, 1), memory_limit=limit)
u0, c, _ = heat1d.make_inputs("small")
g(u0, c, 3)  # compile first: the compiler's memory is not the tape's
xs = np.linspace(0.0, 1.0, n)
u0, c = np.sin(np.pi * xs), 0.1 + 0.3 * np.random.default_rng(0).random(n)
peak, done = [0], []

def watch():  # the derivative releases the GIL: sample the resident size while it runs
    while not done:
        peak[0] = max(peak[0], rss())
        time.sleep(0.0005)

before = rss()
w = threading.Thread(target=watch)
w.start()
r = g(u0, c, T)
done.append(1)
w.join()
print(max(peak[0], rss()) - before, float(r[0].sum()))
"""


def _growth(n, T, limit):
    code = _RSS.format(problems=os.path.join(SHARED_BENCH, "problems"), n=n, T=T, limit=limit)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    return int(out[0]), float(out[1])


def test_peak_memory_stays_under_the_limit():
    """n = 2000, T = 4000: the full tape is 64 MB; with an 8 MB limit the process grows by
    less than 20 MB (the state arrays, shadows and the allocator's slack included)."""
    full, g_full = _growth(2000, 4000, None)
    limited, g_lim = _growth(2000, 4000, 8 * 2**20)
    assert g_full == g_lim
    assert full > 40 * 2**20  # the measurement can see a tape (64 MB = 61 MiB)
    assert limited < 20 * 2**20, limited


@pytest.mark.slow
def test_heat1d_large_under_100_mb():
    """The issue's bar: n = T = 10^4 (an 800 MB tape) with memory_limit = 100 MB grows the
    process by well under 600 MB."""
    limited, _ = _growth(10_000, 10_000, 100 * 2**20)
    assert limited < 150 * 2**20, limited


def test_tape_report_describes_the_unlimited_tape():
    u0, c = _data()
    r = zymase.tape_report(heat, u0, c, 5, argnums=(0, 1))
    assert r.total_bytes > 0
    with pytest.raises(TypeError, match="unlimited tape"):
        zymase.tape_report(heat, u0, c, 5, argnums=(0, 1), memory_limit=10**6)
