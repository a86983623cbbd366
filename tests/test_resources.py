"""Resources: memory stays flat over many calls that allocate, first calls from many threads
compile once, and the disk cache is reused by another process."""

import os
import subprocess
import sys
import threading

import numpy as np
import pytest
import resource_programs as R

import zymase


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs Linux /proc")
def test_memory_stays_flat_over_many_calls():
    f = zymase.jit(R.allocate_and_return)
    g = zymase.jit(R.loop_allocations)
    a = np.arange(50.0)
    for _ in range(2000):
        f(a)
        g(a, 5)
    before = rss_bytes()
    for _ in range(100_000):
        c, v = f(a)
    for _ in range(10_000):
        g(a, 5)
    grown = rss_bytes() - before
    assert c[0] == 1.0 and v[0] == 2.0
    assert grown < 16 * 2**20, f"RSS grew by {grown / 2**20:.1f} MiB"


def test_returned_arrays_outlive_the_call_and_free_their_memory():
    f = zymase.jit(R.allocate_and_return)
    c, v = f(np.arange(4.0))
    del f
    np.testing.assert_array_equal(c, [1.0, 3.0, 5.0, 7.0, 0.0])
    np.testing.assert_array_equal(v, [2.0, 4.0, 6.0])


def run_together(n, work) -> list:
    """Run ``work(k)`` for k < n on n threads released at once; the exceptions they raised."""
    barrier = threading.Barrier(n)
    errors = []

    def worker(k):
        try:
            barrier.wait()
            work(k)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def test_first_calls_from_many_threads_compile_once():
    f = zymase.jit(R.slow_sum)
    results = []
    assert not run_together(8, lambda k: results.append(f(1000 + k)))
    assert sorted(results) == sorted(R.slow_sum(1000 + k) for k in range(8))
    assert [len(v) for v in f._cache.compiled.values()] == [1]


SCRIPT = """
import sys, time
sys.path.insert(0, {tests!r})
import numpy as np
import resource_programs as R
import zymase
from zymase.driver import disk_cache as compile_cache
f = zymase.jit(R.cached, cache=True)
print(f(np.arange(4.0), 2.0), compile_cache.STATS["hits"], compile_cache.STATS["stores"])
"""


def test_disk_cache_is_reused_by_another_process(tmp_path):
    env = dict(os.environ, ZYMASE_CACHE_DIR=str(tmp_path))
    code = SCRIPT.format(tests=os.path.dirname(__file__))
    outs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                           check=True).stdout.split() for _ in range(2)]
    assert outs[0] == ["12.0", "0", "1"]  # compiled and stored
    assert outs[1] == ["12.0", "1", "0"]  # loaded
    for p in tmp_path.iterdir():  # damage every entry: it is ignored and rebuilt
        p.write_bytes(b"not a cache entry")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["12.0", "0", "1"]


CAPTURED = """
import os, sys
sys.path.insert(0, {tests!r})
import numpy as np
import zymase
from zymase.driver import disk_cache as compile_cache
SCALE = float(os.environ["SCALE"])          # a global computed at import
TABLE = np.full(3, SCALE)                  # a global array

def make(k):
    def f(x):
        return x * k + SCALE + TABLE[1]
    return f

g = zymase.jit(make(float(os.environ["K"])), cache=True)
print(g(1.0), compile_cache.STATS["hits"], compile_cache.STATS["stores"])
"""


def test_disk_cache_checks_captured_constants(tmp_path):
    """Code compiled with a closure value or a global constant is reused only while they keep
    their values (a closure made with another k, or a global computed differently at import,
    once got the stale machine code)."""
    script = tmp_path / "captures.py"
    script.write_text(CAPTURED.format(tests=os.path.dirname(__file__)))
    cache = tmp_path / "cache"

    def run(k, scale):
        env = dict(os.environ, ZYMASE_CACHE_DIR=str(cache), K=str(k), SCALE=str(scale))
        return subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                              text=True, check=True).stdout.split()

    assert run(2.0, 1.0) == ["4.0", "0", "1"]   # compiled, stored
    assert run(2.0, 1.0) == ["4.0", "1", "0"]   # same constants: loaded
    assert run(3.0, 1.0) == ["5.0", "0", "1"]   # another closure value: compiled again
    assert run(3.0, 4.0) == ["11.0", "0", "1"]  # another global value: compiled again


def _heat_grad_reference(u0, c, steps):
    """dF/du0 and dF/dc by central differences of the CPython function (a few entries)."""
    h = 1e-6
    out = []
    for arr, k in ((u0, 3), (c, 5)):
        p, m = arr.copy(), arr.copy()
        p[k] += h
        m[k] -= h
        args_p = (p, c, steps) if arr is u0 else (u0, p, steps)
        args_m = (m, c, steps) if arr is u0 else (u0, m, steps)
        out.append((R.heat(*args_p) - R.heat(*args_m)) / (2 * h))
    return out


def test_big_tapes_are_kept_for_the_next_call_and_released_on_request():
    g = zymase.grad(R.heat, (0, 1))
    rng = np.random.default_rng(3)
    u0, c = rng.standard_normal(1000), 0.1 + 0.3 * rng.random(1000)
    zymase.release_memory()
    small = g(u0[:50], c[:50], 20)  # 48 * 20 slots: under 1 MiB, not kept
    assert zymase.release_memory() == 0
    first = g(u0, c, 200)  # 998 * 200 slots = 1.5 MiB (capacity a power-of-two growth above)
    kept = zymase.release_memory()
    assert kept >= 998 * 200 * 8
    assert zymase.release_memory() == 0
    g(u0, c, 200)
    again = g(u0, c, 200)  # runs in the kept buffer
    bigger = g(u0, c, 2000)  # the kept buffer is too small: freed, a new one grows
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    for grads, steps in ((first, 200), (bigger, 2000)):
        du, dc = _heat_grad_reference(u0, c, steps)
        assert abs(grads[0][3] - du) < 1e-6 * max(1.0, abs(du))
        assert abs(grads[1][5] - dc) < 1e-6 * max(1.0, abs(dc))
    assert np.isfinite(small[0]).all()
    assert zymase.release_memory() >= 998 * 2000 * 8


def test_tape_cache_limit_zero_keeps_nothing():
    g = zymase.grad(R.heat, (0, 1))
    u0, c = np.linspace(0.0, 1.0, 1000), np.full(1000, 0.2)
    before = zymase.set_tape_cache(0)
    try:
        g(u0, c, 200)
        assert zymase.release_memory() == 0
    finally:
        zymase.set_tape_cache(before)
    g(u0, c, 200)
    assert zymase.release_memory() > 0


def test_kept_tapes_are_shared_safely_by_threads():
    g = zymase.grad(R.heat, (0, 1))
    rng = np.random.default_rng(4)
    inputs = [(rng.standard_normal(600), 0.1 + 0.3 * rng.random(600), 100 + 50 * (k % 3))
              for k in range(6)]
    expected = [g(*a) for a in inputs]

    def work(k):
        for _ in range(15):
            for a, b in zip(g(*inputs[k]), expected[k]):
                np.testing.assert_array_equal(a, b)

    errors = run_together(6, work)
    assert not errors, errors


def test_kept_buffers_are_reused_zeroed_and_released():
    """Freed arrays of 256 KiB to 16 MiB are kept for the next allocation (page faults on fresh
    memory cost more than the work of many gradients): a kept buffer handed to ``np.zeros`` is
    zeroed, and ``release_memory`` frees what is kept."""
    n = 100_000  # 800 KB
    fill, zeros = zymase.jit(R.fills_a_temporary), zymase.jit(R.zeros_of)
    zymase.release_memory()
    for _ in range(3):
        assert fill(n) == 7.0 * n
        assert zeros(n) == float(n)  # (a buffer of sevens, reused, must read as zeros)
    assert zymase.release_memory() >= 8 * n
    assert zymase.release_memory() == 0
    assert fill(1000) == 7000.0 and zymase.release_memory() == 0  # small ones are not kept
