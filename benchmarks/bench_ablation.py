"""What each reverse-mode choice buys: gradient time and tape size with one choice switched off.

For corpus problems at one size, side by side in one run: ``zymase.grad`` as shipped, then with
``optimize_before_ad=False`` (differentiate the unoptimized IR: no CSE/LICM before AD, calls still
inlined), then with each ``disable`` name switched off alone, then with all of them off.  Each row
reports the gradient time over the default's and the tape bytes (``zymase.tape_report``); every
variant's gradient is checked against the default's.  ``norm`` is also run at two sizes, where
differentiating before hoisting ``mag(x)`` out of the loop turns an O(n) gradient into O(n^2).

    python benchmarks/bench_ablation.py [--size medium] [--problems norm,heat1d,...]
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np
from common import HERE, best_time, copies, corpus

import zymase

DISABLE = ("recompute", "recompute_expensive", "reload", "snapshot", "carried", "mincut")
VARIANTS = [("default", {}), ("optimize_before_ad=False", {"optimize_before_ad": False})]
VARIANTS += [(f"disable={name}", {"disable": {name}}) for name in DISABLE]
VARIANTS += [("disable=all", {"disable": set(DISABLE)})]
PROBLEMS = ("norm", "taylor", "heat1d", "nbody", "rk4", "gmm", "lstm", "ba")


def run_problem(name: str, size: str, budget: float) -> list[dict]:
    mod = corpus().load(name)
    args = mod.make_inputs(size)
    rows, reference = [], None
    for label, opts in VARIANTS:
        grad = zymase.grad(mod.primal, mod.ACTIVE, **opts)
        g = grad(*copies(args))
        flat = np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in
                               (g if isinstance(g, tuple) else (g,))])
        if reference is None:
            reference = flat
        err = float(np.max(np.abs(flat - reference)) / (np.max(np.abs(reference)) + 1e-300))
        seconds = best_time(lambda: grad(*copies(args)), budget, min_reps=2)
        tape = zymase.tape_report(mod.primal, *copies(args), argnums=mod.ACTIVE, **opts)
        rows.append(dict(problem=name, size=size, variant=label, grad_s=seconds,
                         tape_bytes=int(tape.total_bytes), rel_diff=err))
        print(f"{name:8s} {size:7s} {label:28s} {seconds * 1e3:10.3f} ms "
              f"{tape.total_bytes:>14,d} B  diff {err:.1e}", flush=True)
    return rows


def table(rows: list[dict]) -> str:
    out = ["| problem | size | variant | grad (ms) | time / default | tape bytes | "
           "rel diff vs default |", "|---|---|---|---|---|---|---|"]
    base = {(r["problem"], r["size"]): r for r in rows if r["variant"] == "default"}
    for r in rows:
        b = base[(r["problem"], r["size"])]
        out.append(f"| {r['problem']} | {r['size']} | {r['variant']} | {r['grad_s'] * 1e3:.3f} | "
                   f"{r['grad_s'] / b['grad_s']:.2f} | {r['tape_bytes']:,} | {r['rel_diff']:.1e} |")
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="medium")
    parser.add_argument("--problems", default=",".join(PROBLEMS))
    parser.add_argument("--budget", type=float, default=0.5, help="seconds of timing per row")
    opts = parser.parse_args()
    rows = []
    for name in opts.problems.split(","):
        rows += run_problem(name, opts.size, opts.budget)
    if "norm" in opts.problems.split(",") and opts.size != "large":
        rows += run_problem("norm", "large", opts.budget)
    results = os.path.join(HERE, "results")
    os.makedirs(results, exist_ok=True)
    with open(os.path.join(results, "ablation.json"), "w") as fh:
        json.dump(rows, fh, indent=1)
    with open(os.path.join(results, "ablation.md"), "w") as fh:
        fh.write(table(rows))
    print(table(rows))


if __name__ == "__main__":
    main()
