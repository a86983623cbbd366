"""The thread pool (``backends/cpu/threads.py``), called through ctypes on chunks written in IR:
every index in exactly one block, every tid called once (empty blocks too), contiguous blocks in
tid order, nested regions and regions from several OS threads (both run serially), a forked
child, and the thread-count setting."""

from __future__ import annotations

import ctypes
import functools
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from zymase.backends.cpu import threads
from zymase.backends.cpu.engine import compile_ir

# env: {counts, owner, calls, los, his, inner n, inner nt, outer calls, OS thread of each tid}
CHUNKS_IR = """
declare void @zy.parallel_for(ptr, ptr, i64, i64)
declare i64 @pthread_self()

define void @chunk(ptr %e, i64 %lo, i64 %hi, i64 %tid) {
entry:
  %counts = load ptr, ptr %e
  %ownerp = getelementptr ptr, ptr %e, i64 1
  %owner = load ptr, ptr %ownerp
  %callsp = getelementptr ptr, ptr %e, i64 2
  %calls = load ptr, ptr %callsp
  %losp = getelementptr ptr, ptr %e, i64 3
  %los = load ptr, ptr %losp
  %hisp = getelementptr ptr, ptr %e, i64 4
  %his = load ptr, ptr %hisp
  %call = getelementptr i64, ptr %calls, i64 %tid
  atomicrmw add ptr %call, i64 1 monotonic
  %lot = getelementptr i64, ptr %los, i64 %tid
  store atomic i64 %lo, ptr %lot monotonic, align 8
  %hit = getelementptr i64, ptr %his, i64 %tid
  store atomic i64 %hi, ptr %hit monotonic, align 8
  %osp = getelementptr ptr, ptr %e, i64 8
  %os = load ptr, ptr %osp
  %ost = getelementptr i64, ptr %os, i64 %tid
  %self = call i64 @pthread_self()
  store atomic i64 %self, ptr %ost monotonic, align 8
  %empty = icmp sge i64 %lo, %hi
  br i1 %empty, label %done, label %loop
loop:
  %k = phi i64 [%lo, %entry], [%k1, %loop]
  %c = getelementptr i64, ptr %counts, i64 %k
  atomicrmw add ptr %c, i64 1 monotonic
  %o = getelementptr i64, ptr %owner, i64 %k
  store atomic i64 %tid, ptr %o monotonic, align 8
  %k1 = add i64 %k, 1
  %more = icmp slt i64 %k1, %hi
  br i1 %more, label %loop, label %done
done:
  ret void
}

define void @nested(ptr %e, i64 %lo, i64 %hi, i64 %tid) {
  %outerp = getelementptr ptr, ptr %e, i64 7
  %outer = load ptr, ptr %outerp
  %call = getelementptr i64, ptr %outer, i64 %tid
  atomicrmw add ptr %call, i64 1 monotonic
  %np = getelementptr i64, ptr %e, i64 5
  %n = load i64, ptr %np
  %ntp = getelementptr i64, ptr %e, i64 6
  %nt = load i64, ptr %ntp
  call void @zy.parallel_for(ptr @chunk, ptr %e, i64 %n, i64 %nt)
  ret void
}
"""

NS = (0, 1, 2, 3, 7, 64, 1000, 10**6)
NTS = (1, 2, 3, 4, 8, 64)


@functools.cache
def _chunk(name: str) -> int:
    """(Cached: a thread inside llvmlite when another forks leaves llvmlite's lock held in the
    child.)"""
    return _chunks().address(name)


@functools.cache
def _chunks():
    return compile_ir(CHUNKS_IR)


@functools.cache
def _parallel_for():
    fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
    return fn(threads.pool_symbols()["zy.parallel_for"])


def blocks(n: int, nt: int):
    q, r = divmod(n, nt)
    los = np.array([t * q + min(t, r) for t in range(nt)], np.int64)
    return los, los + q + (np.arange(nt) < r)


def run(n: int, nt: int, nested: tuple[int, int] | None = None, os_threads=None) -> list[str]:
    """Problems seen with ``zy.parallel_for(chunk, env, n, nt)``; ``nested=(n', nt')``: each
    block of the outer region runs the region (n', nt') on the same arrays.  ``os_threads``
    (64 int64) receives the OS thread that ran each tid."""
    inner_n, inner_nt = nested or (max(n, 0), nt)
    counts, owner = np.zeros(inner_n, np.int64), np.full(inner_n, -1, np.int64)
    calls, outer = np.zeros(64, np.int64), np.zeros(64, np.int64)
    los, his = np.full(64, -1, np.int64), np.full(64, -1, np.int64)
    os_threads = np.zeros(64, np.int64) if os_threads is None else os_threads
    env = (ctypes.c_int64 * 9)(counts.ctypes.data, owner.ctypes.data, calls.ctypes.data,
                               los.ctypes.data, his.ctypes.data, inner_n, inner_nt,
                               outer.ctypes.data, os_threads.ctypes.data)
    _parallel_for()(_chunk("nested" if nested else "chunk"), ctypes.addressof(env), n, nt)
    times = 1 if nested is None else min(max(nt, 1), 64)
    eff = min(max(inner_nt, 1), 64)
    want_lo, want_hi = blocks(inner_n, eff)
    found = []
    if not (counts == times).all():
        found.append(f"counts {np.unique(counts)}")
    if not (owner == np.repeat(np.arange(eff), want_hi - want_lo)).all():
        found.append("owners")
    if not ((calls[:eff] == times).all() and (calls[eff:] == 0).all()):
        found.append(f"calls {calls}")
    if not ((los[:eff] == want_lo).all() and (his[:eff] == want_hi).all()):
        found.append(f"blocks {los[:eff]} {his[:eff]}")
    if nested and not ((outer[:times] == 1).all() and (outer[times:] == 0).all()):
        found.append(f"outer calls {outer}")
    return found


@pytest.mark.parametrize("nt", NTS)
def test_blocks(nt):
    for n in NS:
        assert run(n, nt) == [], (n, nt)


def test_workers_run_blocks():
    """Tid 0 runs in the caller, the others in distinct workers, also once they sleep."""
    for pause in (0, 0.01):
        ids = np.zeros(64, np.int64)
        time.sleep(pause)
        assert run(100, 8, os_threads=ids) == []
        assert ids[0] == threading.get_ident() and len(set(ids[:8])) == 8


def test_clamped():
    """nt above 64 is 64, below 1 is 1; n below 0 is 0 (each tid still called once)."""
    assert run(100, 65) == run(100, 1000) == run(5, 0) == run(5, -3) == run(-4, 3) == []


def test_nested_runs_serially():
    for outer_nt, inner in [(2, (1000, 2)), (4, (7, 3)), (3, (10**5, 64)), (8, (0, 4))]:
        assert run(outer_nt * 5, outer_nt, nested=inner) == [], (outer_nt, inner)


def test_concurrent_os_threads():
    found = []

    def work(seed):
        for i in range(200):
            nt = 2 + (seed + i) % 3
            if problems := run(1000 + seed, nt):
                found.append((seed, i, nt, problems))

    ts = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert found == []


def _python(code: str, **env) -> subprocess.CompletedProcess:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {**os.environ, "PYTHONPATH": root, **env}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=60, cwd=os.path.dirname(os.path.abspath(__file__)))


FORK = """
import os, sys, threading, warnings
warnings.simplefilter("ignore")
import test_threads as T
assert T.run(1000, 4) == [] and T.run(10, 2, nested=(10, 2)) == []
stop = threading.Event()
def busy():  # a region in flight while forking: the child's busy flag and slots are stale
    while not stop.is_set():
        assert T.run(1000, 2) == []
side = threading.Thread(target=busy)
side.start()
pid = os.fork()
if pid == 0:  # the child: right results, from new workers (not only serial regions)
    bad = [(n, nt) for n in (0, 5, 1000) for nt in (1, 2, 4, 8) for _ in range(20)
           if T.run(n, nt) != []]
    ids = T.np.zeros(64, T.np.int64)
    workers = T.run(100, 4, os_threads=ids) == [] and len(set(ids[:4])) == 4
    os._exit(1 if bad or not workers else 0)
bad = [(n, nt) for n in (5, 1000) for nt in (2, 4) if T.run(n, nt) != []]
stop.set()
side.join()
_, status = os.waitpid(pid, 0)
sys.exit(1 if bad or os.waitstatus_to_exitcode(status) else 0)
"""


def test_fork():
    done = _python(FORK)
    assert done.returncode == 0, done.stderr


def test_num_threads():
    before = threads.get_num_threads()
    get = ctypes.CFUNCTYPE(ctypes.c_int64)(threads.pool_symbols()["zy.pool.threads"])
    put = ctypes.CFUNCTYPE(None, ctypes.c_int64)(threads.pool_symbols()["zy.pool.set_threads"])
    try:
        assert 1 <= before <= 64 and get() == before
        threads.set_num_threads(3)
        assert threads.get_num_threads() == get() == 3
        threads.set_num_threads(np.int64(64))
        assert get() == 64
        put(7)
        assert threads.get_num_threads() == 7
        for bad, error in [(0, ValueError), (65, ValueError), (-1, ValueError),
                           (2.0, TypeError), ("2", TypeError), (True, TypeError)]:
            with pytest.raises(error, match="set_num_threads"):
                threads.set_num_threads(bad)
        assert get() == 7
    finally:
        threads.set_num_threads(before)


def test_num_threads_environment(monkeypatch):
    for bad in ("0", "65", "four", ""):
        monkeypatch.setenv("ZYMASE_NUM_THREADS", bad)
        with pytest.raises(ValueError, match="ZYMASE_NUM_THREADS"):
            threads._default()
    monkeypatch.delenv("ZYMASE_NUM_THREADS")
    assert threads._default() == min(len(os.sched_getaffinity(0)), 64)
    code = ("import ctypes\nfrom zymase.backends.cpu import threads\n"
            "get = ctypes.CFUNCTYPE(ctypes.c_int64)(threads.pool_symbols()['zy.pool.threads'])\n"
            "print(threads.get_num_threads(), get())")
    done = _python(code, ZYMASE_NUM_THREADS="5")
    assert done.stdout.split() == ["5", "5"], done.stderr
    done = _python(code, ZYMASE_NUM_THREADS="100")
    assert done.returncode != 0 and "ZYMASE_NUM_THREADS='100'" in done.stderr
