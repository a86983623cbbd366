"""Plot bench_grad.py's results: gradient time per system per problem, one panel per size.

    python benchmarks/plot_grad.py results.json [more.json ...] out.png

Log-scale grouped bars: zymase's reverse gradient and its jvp, the JAX, PyTorch and autograd
gradients, and Numba's primal as the reference a gradient is compared with.  A peer run only once
because it was too slow is drawn hatched; one not measured is marked with an x at the foot.
"""

from __future__ import annotations

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

# (label, system, key, colour)
SERIES = [
    ("zymase grad", "zymase", "grad_s", "#1b7837"),
    ("zymase jvp", "zymase", "jvp_s", "#a6dba0"),
    ("JAX grad", "jax", "grad_s", "#2166ac"),
    ("PyTorch grad", "torch", "grad_s", "#d6604d"),
    ("autograd grad", "autograd", "grad_s", "#b2abd2"),
    ("numba primal", "numba", "primal_s", "#bababa"),
]
SIZES = ("small", "medium", "large")


def load(paths: list[str]) -> list[dict]:
    rows = {}
    for path in paths:
        with open(path) as f:
            for r in json.load(f)["rows"]:
                rows[r["problem"], r["size"]] = r
    return list(rows.values())


def value(row: dict, system: str, key: str):
    """(seconds or None, measured only once)."""
    r = row["systems"].get(system, {})
    if "error" in r or key not in r:
        return None, False
    return r[key], "skipped" in r


def panel(ax, rows: list[dict], size: str) -> None:
    width = 0.8 / len(SERIES)
    for k, (_, system, key, colour) in enumerate(SERIES):
        for i, row in enumerate(rows):
            x = i + (k - (len(SERIES) - 1) / 2) * width
            t, once = value(row, system, key)
            if t is None:
                ax.plot(x, 0.03, "x", color="black", transform=ax.get_xaxis_transform(), ms=7)
                continue
            ax.bar(
                x,
                t * 1e3,
                width,
                color=colour,
                edgecolor="black" if once else colour,
                hatch="//" if once else None,
            )
    ax.set_yscale("log")
    ax.set_xticks(range(len(rows)), [r["problem"] for r in rows])
    ax.set_ylabel("time (ms), log scale")
    ax.set_title(f"size {size}")
    ax.grid(axis="y", which="major", alpha=0.3)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    *paths, out = sys.argv[1:]
    rows = load(paths)
    sizes = [s for s in SIZES if any(r["size"] == s for r in rows)]
    sizes += sorted({r["size"] for r in rows} - set(sizes))
    height = 0.8 + 4.2 * len(sizes)
    fig, axes = plt.subplots(len(sizes), 1, figsize=(13, height), squeeze=False)
    for ax, size in zip(axes[:, 0], sizes):
        panel(ax, [r for r in rows if r["size"] == size], size)
    handles = [Patch(color=colour, label=label) for label, _, _, colour in SERIES]
    fig.legend(handles=handles, loc="lower center", ncol=len(SERIES), frameon=False)
    fig.suptitle(
        "Gradient time per problem (one thread, float64; hatched: one run only, x: not measured)",
        fontsize=11,
    )
    fig.tight_layout(rect=(0, 0.4 / height, 1, 1))
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
