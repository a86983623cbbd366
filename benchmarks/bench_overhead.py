"""Per-call cost of tiny calls: zymase.grad against jax.jit(jax.grad) (when installed), and
zymase.jit functions returning arrays against the same NumPy expression.

The functions are tiny, so the time is the transform's call path: argument checks, shadow
allocation, the call into machine code and boxing the result (a fresh array, or a view of an
argument).

    python benchmarks/bench_overhead.py [--out NAME]     (results/NAME.md, default overhead)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time

import numpy as np
from common import HERE

import zymase


def scalar_fn(x, y):
    return x * y + math.sin(x)


def array_fn(a):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * a[i]
    return s


def scale(x):
    return x * 2.0


def matvec(a, x):
    return a @ x


def tail(x):
    return x[1:]


def per_call_us(fn, n=20000, repeats=5) -> float:
    fn()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t0) / n * 1e6)
    return best


def jit_rows() -> list[dict]:
    """zymase.jit against NumPy on calls returning an array."""
    x, m = np.linspace(0.0, 1.0, 64), np.linspace(0.0, 1.0, 64 * 64).reshape(64, 64)
    js, jm, jt = zymase.jit(scale), zymase.jit(matvec), zymase.jit(tail)
    cases = [("jit, x * 2.0 (n=64)", lambda: js(x), lambda: x * 2.0),
             ("jit, A @ x (64x64)", lambda: jm(m, x), lambda: m @ x),
             ("jit, view x[1:] (n=64)", lambda: jt(x), lambda: x[1:])]
    rows = []
    for case, zy, ref in cases:
        rows += [dict(case=case, system="zymase", us=per_call_us(zy)),
                 dict(case=case, system="numpy", us=per_call_us(ref))]
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="overhead")
    opts = parser.parse_args()
    a = np.linspace(0.0, 1.0, 10)
    gs, ga = zymase.grad(scalar_fn), zymase.grad(array_fn)
    rows = [dict(case="grad, two float args", system="zymase",
                 us=per_call_us(lambda: gs(1.0, 2.0))),
            dict(case="grad, one array (n=10)", system="zymase", us=per_call_us(lambda: ga(a)))]
    rows += jit_rows()
    try:
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)
        js = jax.jit(jax.grad(lambda x, y: x * y + jnp.sin(x)))
        ja = jax.jit(jax.grad(lambda v: jnp.sum(v * v)))
        rows += [dict(case="grad, two float args", system="jax.jit(jax.grad)",
                      us=per_call_us(lambda: js(1.0, 2.0).block_until_ready())),
                 dict(case="grad, one array (n=10)", system="jax.jit(jax.grad)",
                      us=per_call_us(lambda: ja(a).block_until_ready()))]
    except ImportError:
        print("jax not installed: zymase only")
    lines = ["| case | system | us per call |", "|---|---|---|"]
    lines += [f"| {r['case']} | {r['system']} | {r['us']:.2f} |" for r in rows]
    text = "\n".join(lines) + "\n"
    out = os.path.join(HERE, "results", opts.out)
    with open(out + ".json", "w") as f:
        json.dump(rows, f, indent=1)
    with open(out + ".md", "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
