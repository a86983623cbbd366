"""Primal speed: zymase.jit versus numba.njit on every corpus problem, side by side in one run.

    python benchmarks/bench_primal.py [--sizes medium,large] [--problems a,b] [--out FILE]

For each (problem, size): run time of zymase and of Numba on the same inputs (best of repeated
calls), their ratio, and first-call compile times.  Also zymase with boundscheck=False.
Prints a Markdown table; ``--out`` also writes JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics

import common  # noqa: F401  (single-threaded libraries)
from common import best_time, corpus, first_call

import zymase


def run(name, size):
    problems = corpus()
    mod = problems.load(name)
    args = mod.make_inputs(size)
    nb = problems.load_numba(name)
    zy = zymase.jit(mod.primal)
    zy_nobc = zymase.jit(mod.primal, boundscheck=False)
    row = {"problem": name, "size": size}
    row["numba_compile"] = first_call(lambda: nb.primal(*args))
    row["zymase_compile"] = first_call(lambda: zy(*args))
    first_call(lambda: zy_nobc(*args))
    v_nb, v_zy = nb.primal(*args), zy(*args)
    row["rel_diff"] = abs(v_nb - v_zy) / max(abs(v_nb), 1e-300)
    budget = 1.0
    row["numba"] = best_time(lambda: nb.primal(*args), budget)
    row["zymase"] = best_time(lambda: zy(*args), budget)
    row["zymase_nobc"] = best_time(lambda: zy_nobc(*args), budget)
    row["ratio"] = row["zymase"] / row["numba"]
    row["ratio_nobc"] = row["zymase_nobc"] / row["numba"]
    return row


def table(rows):
    out = ["| problem | size | numba | zymase | zymase/numba | no boundscheck / numba | "
           "compile zymase | compile numba |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['problem']} | {r['size']} | {_t(r['numba'])} | {_t(r['zymase'])} | "
                   f"{r['ratio']:.2f} | {r['ratio_nobc']:.2f} | {r['zymase_compile']:.2f} s | "
                   f"{r['numba_compile']:.2f} s |")
    ratios = [r["ratio"] for r in rows]
    out.append(f"\nmedian zymase/numba = {statistics.median(ratios):.2f}, max = {max(ratios):.2f}; "
               f"median compile ratio = "
               f"{statistics.median(r['zymase_compile'] / r['numba_compile'] for r in rows):.2f}")
    return "\n".join(out)


def _t(s):
    return f"{s * 1e3:.3f} ms" if s < 1 else f"{s:.2f} s"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", default="medium,large")
    p.add_argument("--problems", default=",".join(corpus().PROBLEMS))
    p.add_argument("--out")
    a = p.parse_args()
    rows = []
    for size in a.sizes.split(","):
        for name in a.problems.split(","):
            rows.append(run(name, size))
            print(f"{name:8s} {size:6s} zymase/numba {rows[-1]['ratio']:.2f}", flush=True)
    print(table(rows))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
