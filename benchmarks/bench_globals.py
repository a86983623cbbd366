"""Per-call cost of reading globals: the same tiny function taking everything as arguments,
and reading three numbers and an array from globals (which every call checks: a name rebound
since compilation means another specialization).  Run side by side; prints the cost per call
of ``jit`` and ``grad`` in microseconds and the difference.

    python benchmarks/bench_globals.py
"""

from __future__ import annotations

import numpy as np
from bench_overhead import per_call_us

import zymase

A, B, C = 1.5, -0.5, 2.0
W = np.linspace(0.0, 1.0, 8)


def with_args(x, a, b, c, w):
    s = a * x * x + b * x + c
    if w[3] > 0.5:  # (a float result, as Python gives it: the frame-less call path)
        s += x
    return s


def with_globals(x):
    s = A * x * x + B * x + C
    if W[3] > 0.5:
        s += x
    return s


def main():
    rows = []
    for name, make in (("jit", zymase.jit), ("grad", zymase.grad)):
        fa, fg = make(with_args), make(with_globals)
        us_a = per_call_us(lambda: fa(0.3, A, B, C, W))
        us_g = per_call_us(lambda: fg(0.3))
        rows.append((name, us_a, us_g))
    print(f"{'transform':10} {'args (us)':>10} {'globals (us)':>13} {'difference':>11}")
    for name, us_a, us_g in rows:
        print(f"{name:10} {us_a:10.3f} {us_g:13.3f} {us_g - us_a:+11.3f}")


if __name__ == "__main__":
    main()
