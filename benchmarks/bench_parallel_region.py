"""Cost of an empty parallel region (``zy.parallel_for`` with n = nt and a chunk that returns):
through ctypes (median over batches of calls; the ctypes call of the bare chunk is shown for
scale), from a compiled loop of regions (no ctypes), and after the workers went to sleep (one
region after each pause: the condvar wake-ups).

    python benchmarks/bench_parallel_region.py [--threads 1 2] [--loop 100000]
"""

from __future__ import annotations

import argparse
import ctypes
import statistics
import time

from zymase.backends.cpu.engine import compile_ir
from zymase.backends.cpu.threads import pool_symbols

IR = """
declare void @zy.parallel_for(ptr, ptr, i64, i64)

define void @empty(ptr %env, i64 %lo, i64 %hi, i64 %tid) {
  ret void
}

define void @regions(i64 %reps, i64 %nt) {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %loop]
  call void @zy.parallel_for(ptr @empty, ptr null, i64 %nt, i64 %nt)
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, %reps
  br i1 %more, label %loop, label %done
done:
  ret void
}
"""

I64 = ctypes.c_int64
CHUNK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, I64, I64, I64)
REGION = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, I64, I64)


def batched_us(call, batch: int = 1000, batches: int = 200) -> float:
    """Median over batches of the time per call (microseconds)."""
    call()
    times = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(batch):
            call()
        times.append((time.perf_counter() - t0) / batch * 1e6)
    return statistics.median(times)


def asleep_us(call, pause: float, reps: int = 200) -> float:
    """Median time of one call made ``pause`` seconds after the previous one."""
    times = []
    for _ in range(reps):
        time.sleep(pause)
        t0 = time.perf_counter()
        call()
        times.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--loop", type=int, default=100_000, help="regions in the compiled loop")
    args = parser.parse_args()
    code = compile_ir(IR)
    empty = code.address("empty")
    parallel_for = REGION(pool_symbols()["zy.parallel_for"])
    regions = ctypes.CFUNCTYPE(None, I64, I64)(code.address("regions"))
    chunk = CHUNK(empty)
    rows = [("bare chunk, ctypes", "-", batched_us(lambda: chunk(None, 0, 0, 0)))]
    for nt in args.threads:
        call = lambda nt=nt: parallel_for(empty, None, nt, nt)
        rows.append(("region, ctypes", nt, batched_us(call)))
        regions(args.loop, nt)  # (warm)
        best = min(_timed(lambda nt=nt: regions(args.loop, nt)) for _ in range(5))
        rows.append(("region, compiled loop", nt, best / args.loop * 1e6))
        if nt > 1:
            rows.append(("region after 1 ms idle", nt, asleep_us(call, 1e-3)))
    print(f"{'empty region':<26}{'nt':>4}{'us':>10}")
    for name, nt, us in rows:
        print(f"{name:<26}{nt!s:>4}{us:>10.3f}")


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
