"""Checkpointing: gradient time and peak memory under ``memory_limit``.

For ``heat1d`` (and other corpus problems with ``--problems``), side by side in one run: the
primal, the unlimited gradient, and the gradient with each memory limit.  Each row reports the
gradient time over the unlimited gradient's and over the primal's, and how much the process's
resident memory grew during one gradient call (sampled from /proc while the call runs; the call
releases the GIL), next to the limit.  Each variant runs in a fresh subprocess so that one
variant's freed memory cannot hide the next one's growth; every gradient is checked against
the unlimited one.

    python benchmarks/bench_checkpoint.py [--size large] [--limits 100M,10M,1M]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from common import HERE

CHILD = r"""
import json, os, sys, threading, time
import numpy as np
sys.path.insert(0, {bench!r})
from common import best_time, copies, corpus
import zymase

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

mod = corpus().load({name!r})
args = mod.make_inputs({size!r})
limit = {limit}
if limit == "primal":
    f = zymase.jit(mod.primal)
    f(*copies(args))
    print(json.dumps(dict(seconds=best_time(lambda: f(*copies(args)), {budget}, min_reps=2))))
    sys.exit()
grad = zymase.grad(mod.primal, mod.ACTIVE, memory_limit=limit)
small = mod.make_inputs("small")
grad(*copies(small))  # compile before measuring memory
a = copies(args)
peak, done = [0], []

def watch():
    while not done:
        peak[0] = max(peak[0], rss())
        time.sleep(0.0005)

before = rss()
w = threading.Thread(target=watch)
w.start()
g = grad(*a)
done.append(1)
w.join()
grown = max(peak[0], rss()) - before
flat = np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in
                       (g if isinstance(g, tuple) else (g,))])
seconds = best_time(lambda: grad(*copies(args)), {budget}, min_reps=2)
np.save({out!r}, flat)
print(json.dumps(dict(seconds=seconds, grown=grown)))
"""


def child(name, size, limit, budget, out):
    code = CHILD.format(bench=HERE, name=name, size=size, limit=repr(limit), budget=budget,
                        out=out)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if res.returncode:
        raise RuntimeError(res.stderr[-2000:])
    return json.loads(res.stdout.strip().splitlines()[-1])


def parse_bytes(s: str) -> int:
    mult = {"K": 2**10, "M": 2**20, "G": 2**30}
    return int(float(s[:-1]) * mult[s[-1]]) if s[-1] in mult else int(s)


def run(name, size, limits, budget, tmp):
    import numpy as np
    primal = child(name, size, "primal", budget, None)["seconds"]
    rows, ref = [], None
    for label, limit in [("unlimited", None)] + [(f"{lim / 2**20:g} MiB", lim) for lim in limits]:
        out = os.path.join(tmp, f"{name}-{size}-{label.replace(' ', '')}.npy")
        r = child(name, size, limit, budget, out)
        flat = np.load(out)
        if ref is None:
            ref = flat
        diff = float(np.max(np.abs(flat - ref)) / (np.max(np.abs(ref)) + 1e-300))
        rows.append(dict(problem=name, size=size, limit=label, limit_bytes=limit,
                         grad_s=r["seconds"], primal_s=primal, grown_bytes=r["grown"],
                         rel_diff=diff))
        print(f"{name:8s} {size:7s} {label:>10s} grad {r['seconds'] * 1e3:9.2f} ms  "
              f"grad/primal {r['seconds'] / primal:6.2f}  grew {r['grown'] / 2**20:8.1f} MiB  "
              f"diff {diff:.1e}", flush=True)
    return rows


def table(rows) -> str:
    out = ["| problem | size | memory_limit | grad (ms) | / unlimited | / primal | "
           "memory grown (MiB) | rel diff |", "|---|---|---|---|---|---|---|---|"]
    base = {(r["problem"], r["size"]): r for r in rows if r["limit"] == "unlimited"}
    for r in rows:
        b = base[(r["problem"], r["size"])]
        out.append(f"| {r['problem']} | {r['size']} | {r['limit']} | {r['grad_s'] * 1e3:.1f} | "
                   f"{r['grad_s'] / b['grad_s']:.2f} | {r['grad_s'] / r['primal_s']:.1f} | "
                   f"{r['grown_bytes'] / 2**20:.1f} | {r['rel_diff']:.0e} |")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", default="heat1d")
    ap.add_argument("--size", default="large")
    ap.add_argument("--limits", default="100M,10M,1M")
    ap.add_argument("--budget", type=float, default=3.0, help="seconds per timing")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "checkpoint"))
    a = ap.parse_args()
    import tempfile
    limits = [parse_bytes(s) for s in a.limits.split(",") if s]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.problems.split(","):
            for size in a.size.split(","):
                rows += run(name, size, limits, a.budget, tmp)
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out + ".json", "w") as f:
        json.dump(rows, f, indent=1)
    with open(a.out + ".md", "w") as f:
        f.write(table(rows))
    print(table(rows))


if __name__ == "__main__":
    main()
