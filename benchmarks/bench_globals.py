"""Per-call cost of reading globals: the same tiny function with its constants written as
literals, taking them as arguments, and reading three numbers and an array from globals (which
every call checks: a name rebound since compilation means another specialization; the array is
looked up and checked like an argument).  Run side by side; prints the cost per call of ``jit``
and ``grad`` in microseconds and what the globals add to the literals.

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


def with_literals(x):
    s = 1.5 * x * x + -0.5 * x + 2.0
    if 3.0 / 7.0 > 0.5:
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
        fl, fa, fg = make(with_literals), make(with_args), make(with_globals)
        rows.append((name, per_call_us(lambda: fl(0.3)), per_call_us(lambda: fa(0.3, A, B, C, W)),
                     per_call_us(lambda: fg(0.3))))
    print(f"{'transform':10} {'literals':>9} {'arguments':>10} {'globals':>8} {'added':>7}  (us)")
    for name, us_l, us_a, us_g in rows:
        print(f"{name:10} {us_l:9.3f} {us_a:10.3f} {us_g:8.3f} {us_g - us_l:+7.3f}")


if __name__ == "__main__":
    main()
