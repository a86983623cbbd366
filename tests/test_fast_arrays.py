"""Functions returning arrays take the frame-less fast entry (``backends/cpu/pybox.py``), and
what it returns is what the general path returns: the same values, dtype, shape, strides and
flags; a fresh array owning its memory, a view of an argument or of a global array still a view
of it, a constant a copy.  Memory stays flat over many calls, arrays outlive the call, raising
calls free what they allocated, threads get their own answers, and code from the disk cache
works the same."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import zymase
from zymase.driver.compiled import Specialization

G = np.arange(6.0)  # a global array the code reads by reference
N = 64


def scale(x):
    return x * 2.0


def matvec(a, x):
    return a @ x


def plus(a, b):
    return a + b


def positive(x):
    return x > 0.5


def transposed(a):
    return (a + 1.0).T


def every_other(x):
    return (x * 2.0)[::2]


def empty_rows(a):
    return np.zeros((0, a.shape[0]))


def empty_slice(x):
    return (x * 2.0)[:0]


def same(x):
    return x


def tail(x):
    return x[1:]


def second_tail(a, b):
    return b[1:]


def global_tail(x):
    return G[1:] * 1.0 if x[0] > 100.0 else G[1:]


def constant(x):
    return np.array([1.0, 2.0, 3.0]) if x[0] > 100.0 else np.ones(3)


def with_float(x):
    return x * 2.0, float(x[0])


def two_arrays(x):
    return x * 2.0, x + 1.0


def sharing(x):
    b = x * 2.0
    return b, b[1:]


def fresh_and_view(x):
    return x * 2.0, x[1:]


def allocates_then_raises(x):
    b = x * 2.0
    c = b + 1.0
    if c[0] > 0.0:
        raise ValueError("positive")
    return c


def rng(seed=0):
    return np.random.default_rng(seed)


V = rng().random(N)
M = rng(1).random((8, 8))
CASES = {  # name: (function, arguments)
    "float64 1-D": (scale, (V,)),
    "float64 2-D": (matvec, (M, M)),
    "float32": (plus, (V.astype(np.float32), V.astype(np.float32))),
    "int64": (plus, (np.arange(7), np.arange(7))),
    "int32": (plus, (np.arange(7, dtype=np.int32), np.arange(7, dtype=np.int32))),
    "bool": (positive, (V,)),
    "complex128": (plus, (V + 1j * V, V - 2j)),
    "transposed": (transposed, (M[:3],)),
    "strided": (every_other, (V,)),
    "zero-size": (empty_rows, (V,)),
    "zero-size slice": (empty_slice, (V,)),
    "argument": (same, (V.copy(),)),
    "view of argument": (tail, (V.copy(),)),
    "view of strided argument": (tail, (M[:, ::2],)),
    "view of read-only argument": (tail, (np.frombuffer(V.tobytes()),)),
    "view of second argument": (second_tail, (V[:3].copy(), V.copy())),
    "view of overlapping arguments": (second_tail, (V, V[4:])),
    "view of global": (global_tail, (V,)),
    "constant": (constant, (V,)),
    "array and float": (with_float, (V,)),
    "two arrays": (two_arrays, (V,)),
    "one buffer twice": (sharing, (V,)),
    "fresh and view": (fresh_and_view, (V.copy(),)),
}


@pytest.fixture
def general_calls(monkeypatch):
    """Counts calls of the general path."""
    count = [0]
    original = Specialization.__call__

    def counting(self, args):
        count[0] += 1
        return original(self, args)

    monkeypatch.setattr(Specialization, "__call__", counting)
    return count


def _describe(x):
    if isinstance(x, tuple):
        return tuple(_describe(v) for v in x)
    if isinstance(x, np.ndarray):
        return (x.dtype, x.shape, x.strides, x.flags.c_contiguous, x.flags.f_contiguous,
                x.flags.writeable, x.flags.aligned, x.tolist())
    return (type(x), x)


def _arrays(x):
    return [v for v in (x if isinstance(x, tuple) else (x,)) if isinstance(v, np.ndarray)]


@pytest.mark.parametrize("case", CASES)
def test_fast_entry_returns_what_the_general_path_returns(case, general_calls):
    fn, args = CASES[case]
    f = zymase.jit(fn)
    general = f.run(list(args))  # compiles; the general path
    assert f._dispatcher.current is not None, "no fast entry installed"
    before = general_calls[0]
    fast = f(*args)
    assert general_calls[0] == before, "the call took the general path"
    assert _describe(fast) == _describe(general)
    for g, r in zip(_arrays(general), _arrays(fast)):  # the same memory relations
        for a in [*args, G]:
            if isinstance(a, np.ndarray):
                assert np.shares_memory(g, a) == np.shares_memory(r, a)


def test_returned_view_writes_through():
    f = zymase.jit(tail)
    a = np.arange(5.0)
    f(a)
    v = f(a)
    v[0] = 100.0
    assert a[1] == 100.0
    g = zymase.jit(global_tail)(V)
    assert np.shares_memory(g, G)


def test_tuple_with_one_buffer_shares_it():
    b, c = zymase.jit(sharing)(V)
    assert np.shares_memory(b, c)
    c[0] = -1.0
    assert b[1] == -1.0


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


LEAK_CASES = ["float64 2-D", "strided", "zero-size", "view of argument", "view of global",
              "constant", "array and float", "two arrays", "one buffer twice"]


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs Linux /proc")
@pytest.mark.parametrize("case", LEAK_CASES)
def test_no_leak_over_many_calls(case):
    fn, args = CASES[case]
    f = zymase.jit(fn)
    big = tuple(np.resize(a, 4096 if a.ndim == 1 else (64, 64)) for a in args)  # 32 KiB results
    for _ in range(200):
        f(*big)
    before = rss_bytes()
    for _ in range(20_000):
        f(*big)
    grown = rss_bytes() - before
    assert grown < 16 * 2**20, f"RSS grew by {grown / 2**20:.1f} MiB over 20,000 calls"


def test_results_outlive_the_call_and_gc():
    f = zymase.jit(two_arrays)
    kept = [f(V + k) for k in range(200)]
    del f
    gc.collect()
    junk = [np.full(N, -1.0) for _ in range(200)]  # reuse freed memory, if any was freed
    for k, (b, c) in enumerate(kept):
        assert np.array_equal(b, (V + k) * 2.0) and np.array_equal(c, V + k + 1.0)
    assert junk[0][0] == -1.0


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs Linux /proc")
def test_raising_calls_free_everything(general_calls):
    f = zymase.jit(allocates_then_raises)
    a = np.linspace(0.1, 1.0, 10_000)
    for _ in range(50):
        with pytest.raises(ValueError):
            f(a)
    assert np.array_equal(f(-a - 1.0), (-a - 1.0) * 2.0 + 1.0)
    before, calls = rss_bytes(), general_calls[0]
    for _ in range(2000):
        with pytest.raises(ValueError):
            f(a)
    assert general_calls[0] == calls
    grown = rss_bytes() - before
    assert grown < 20 * 2**20, f"RSS grew by {grown / 2**20:.1f} MiB over 2000 raising calls"


def test_threads_get_their_own_answers():
    f = zymase.jit(with_float)
    inputs = [rng(k).random(1000) for k in range(8)]
    f(inputs[0])
    wrong = []

    def work(x):
        for _ in range(300):
            b, s = f(x)
            if not np.array_equal(b, x * 2.0) or s != x[0]:
                wrong.append(1)

    threads = [threading.Thread(target=work, args=(x,)) for x in inputs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong


CACHED = """
import sys, json
sys.path.insert(0, {tests!r})
import numpy as np
import zymase
from zymase.driver import disk_cache
import test_fast_arrays as T
x = np.arange(5.0)
out = []
for name in ("float64 1-D", "view of argument", "array and float"):
    f = zymase.jit(T.CASES[name][0], cache=True)
    r = f(x)
    r = f(x)
    out.append([repr(r), f._dispatcher.current is not None])
print(json.dumps([out, disk_cache.STATS["hits"]]))
"""


def test_code_from_the_disk_cache_boxes_arrays(tmp_path):
    env = dict(os.environ, ZYMASE_CACHE_DIR=str(tmp_path))
    code = CACHED.format(tests=os.path.dirname(__file__))
    runs = [json.loads(subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                      capture_output=True, text=True).stdout)
            for _ in range(2)]
    (first, hits0), (second, hits1) = runs
    assert (hits0, hits1) == (0, 3)
    assert first == second
    assert all(fast for _, fast in second)


def greeting(x):
    return "hi"


def test_returned_constant_is_not_lost():
    f = zymase.jit(greeting)  # (the fast entry once returned None for it on later calls)
    assert [f(1.0), f(1.0)] == ["hi", "hi"]
