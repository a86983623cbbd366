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


def test_first_calls_from_many_threads_compile_once():
    f = zymase.jit(R.slow_sum)
    barrier = threading.Barrier(8)
    results, errors = [], []

    def worker(k):
        try:
            barrier.wait()
            results.append(f(1000 + k))
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert sorted(results) == sorted(R.slow_sum(1000 + k) for k in range(8))
    assert len(f._specs) == 1


SCRIPT = """
import sys, time
sys.path.insert(0, {tests!r})
import numpy as np
import resource_programs as R
import zymase
from zymase.runtime import compile_cache
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
