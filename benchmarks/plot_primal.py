"""Plot bench_primal.py's results: zymase's time over Numba's per problem, one bar per size.

    python benchmarks/plot_primal.py benchmarks/results/primal.json benchmarks/results/primal.png

A ratio below 1 is faster than ``numba.njit`` of the same function (both measured side by side
in one run, one thread, best of repeats); log scale, with the tie line at 1.
"""

from __future__ import annotations

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLOURS = {"medium": "#a6dba0", "large": "#1b7837"}


def main(src: str, out: str) -> None:
    with open(src) as f:
        rows = json.load(f)
    problems = list(dict.fromkeys(r["problem"] for r in rows))
    sizes = [s for s in COLOURS if any(r["size"] == s for r in rows)]
    width = 0.8 / len(sizes)
    fig, ax = plt.subplots(figsize=(9, 3.6))
    for k, size in enumerate(sizes):
        by = {r["problem"]: r["ratio"] for r in rows if r["size"] == size}
        xs = [i + (k - (len(sizes) - 1) / 2) * width for i in range(len(problems))]
        ax.bar(xs, [by.get(p, float("nan")) for p in problems], width, label=f"{size} size",
               color=COLOURS[size], edgecolor="black", linewidth=0.4)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xticks(range(len(problems)), problems)
    ax.set_ylabel("zymase time / Numba time")
    ax.set_title("Compiled primal: zymase against numba.njit (lower is faster)")
    ax.legend(frameon=False)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
