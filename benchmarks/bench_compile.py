"""Compile latency: the first call of ``zymase.jit`` and of ``zymase.grad`` on every corpus problem,
each in a fresh process (nothing cached in memory or on disk), side by side for several trees.

    python benchmarks/bench_compile.py [--problems a,b] [--repeats 3] [--tree DIR ...] [--out F]
                                       [--cached] [--jax]

``--tree`` (repeatable) names checkouts of zymase to compare (default: this one); runs alternate
between trees so that both see the same machine load.  Prints the median first-call time of each
(problem, transform, tree) in ms, and the ratio to the first tree.  ``--cached``: the first call
in a new process with ``cache=True`` after another process compiled and stored the code (a
fresh cache directory per tree).  ``--jax``: also the first call of ``jax.jit`` (``jit`` rows)
and ``jax.jit(jax.grad)`` (``grad`` rows) of the problem's JAX peer (``../shared/bench/peers``),
each in a fresh process, one thread.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from common import HERE, SHARED

PROBLEMS = ("relu3", "taylor", "norm", "gmm", "ba", "lstm", "heat1d", "nbody", "rk4", "fft")
SIZE = {"ba": "adbench_test"}
CODE = """
import sys, time
sys.path.insert(0, {shared!r})
import numpy as np
import problems
import zymase
mod = problems.load({name!r})
args = mod.make_inputs({size!r})
kw = dict(cache=True) if {cached!r} else dict()
f = zymase.jit(mod.primal, **kw) if {what!r} == "jit" else \
    zymase.grad(mod.primal, tuple(mod.ACTIVE), **kw)
t0 = time.perf_counter()
f(*args)
print(time.perf_counter() - t0)
"""

CODE_JAX = """
import os, sys, time
os.environ["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
sys.path.insert(0, {shared!r}); sys.path.insert(0, {peers!r})
import numpy as np
import jax
import common, jax_peers, problems
from run_peers import split_args
mod = problems.load({name!r})
args = mod.make_inputs({size!r})
impl = getattr(jax_peers, {name!r})
dyn_idx, act, merge = split_args(mod, args)
dyn = [jax.numpy.asarray(args[i]) for i in dyn_idx]
loss = lambda *d: impl(*merge(d))
f = jax.jit(loss) if {what!r} == "jit" else jax.jit(jax.grad(loss, argnums=act))
t0 = time.perf_counter()
jax.block_until_ready(f(*dyn))
print(time.perf_counter() - t0)
"""


def jax_first_call(name: str, what: str) -> float:
    code = CODE_JAX.format(shared=SHARED, peers=os.path.join(SHARED, "peers"), name=name,
                           size=SIZE.get(name, "small"), what=what)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=os.path.join(SHARED, "peers"))
    return float(out.stdout.split()[-1])


def first_call(tree: str, name: str, what: str, cache_dir: str | None = None) -> float:
    env = dict(os.environ, PYTHONPATH=tree)
    env.pop("ZYMASE_VERIFY", None)
    if cache_dir:
        env["ZYMASE_CACHE_DIR"] = cache_dir
    code = CODE.format(shared=SHARED, name=name, size=SIZE.get(name, "small"), what=what,
                       cached=bool(cache_dir))
    # run in the tree: ``python -c`` puts the working directory first on sys.path
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=tree, capture_output=True,
                         text=True, check=True)
    return float(out.stdout.split()[-1])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--problems", default=",".join(PROBLEMS))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tree", action="append", dest="trees")
    ap.add_argument("--out")
    ap.add_argument("--cached", action="store_true")
    ap.add_argument("--jax", action="store_true")
    a = ap.parse_args(argv)
    trees = [os.path.abspath(t) for t in (a.trees or [os.path.dirname(HERE)])]
    caches = {t: tempfile.mkdtemp(prefix="zymase-bench-") if a.cached else None for t in trees}
    rows = []
    for name in a.problems.split(","):
        for what in ("jit", "grad"):
            times = {t: [] for t in trees}
            for t in trees:
                if a.cached:  # another process compiles and stores it
                    first_call(t, name, what, caches[t])
            for _ in range(a.repeats):
                for t in trees:
                    times[t].append(first_call(t, name, what, caches[t]))
            med = {t: statistics.median(v) for t, v in times.items()}
            rows.append({"problem": name, "transform": what,
                         **{f"tree{k}_ms": med[t] * 1e3 for k, t in enumerate(trees)}})
            if a.jax:
                rows[-1]["jax_ms"] = 1e3 * statistics.median(
                    jax_first_call(name, what) for _ in range(a.repeats))
    head = " | ".join(f"tree {k} (ms)" for k in range(len(trees)))
    ratios = " | ".join(f"{k}/0" for k in range(1, len(trees)))
    print("\n".join(f"tree {k}: {t}" for k, t in enumerate(trees)))
    jax_head = " jax (ms) | tree 0 / jax |" if a.jax else ""
    print(f"\n| problem | transform | {head} |" + (f" {ratios} |" if ratios else "") + jax_head)
    print("|---|---|" + "---|" * (2 * len(trees) - 1 + 2 * a.jax))
    for r in rows:
        cells = [f"{r[f'tree{k}_ms']:.0f}" for k in range(len(trees))]
        cells += [f"{r[f'tree{k}_ms'] / r['tree0_ms']:.2f}" for k in range(1, len(trees))]
        if a.jax:
            cells += [f"{r['jax_ms']:.0f}", f"{r['tree0_ms'] / r['jax_ms']:.2f}"]
        print(f"| {r['problem']} | {r['transform']} | " + " | ".join(cells) + " |")
    if a.out:
        with open(a.out, "w") as fh:
            json.dump({"trees": trees, "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
