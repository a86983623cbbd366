"""``backend="xla"`` against JAX's own jitted code and zymase's CPU (LLVM) backend, side by side
in one run, one thread, float64: the primal and the gradient of every corpus problem
(``../shared/bench``) at one size.  JAX runs the idiomatic peers of ``../shared/bench/peers``
(``jax.jit(f)`` and ``jax.jit(jax.grad(f))``); zymase runs the plain-Python problem.

    taskset -c 0 python benchmarks/bench_xla.py [small|medium] [PROBLEM...]
    (writes results/xla_SIZE.md)
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                      "intra_op_parallelism_threads=1")
import numpy as np  # noqa: E402
from bench_grad import corpus, peer_module  # noqa: E402
from common import HERE, best_time  # noqa: E402

import zymase  # noqa: E402

PROBLEMS = ("relu3", "taylor", "norm", "gmm", "ba", "lstm", "heat1d", "nbody", "rk4")


def jax_peer(name, mod, args, grad: bool):
    import jax

    run_peers = peer_module("run_peers")
    impl = getattr(peer_module("jax_peers"), name)
    dyn_idx, act, merge = run_peers.split_args(mod, args)
    with jax.enable_x64(True):
        dyn = [jax.numpy.asarray(args[i]) for i in dyn_idx]
        f = (lambda *d: impl(*merge(d)))
        f = jax.jit(jax.grad(f, argnums=act) if grad else f).lower(*dyn).compile()
    return lambda: jax.block_until_ready(f(*dyn))


def timed(fn, budget):
    try:
        return best_time(fn, budget)
    except Exception:  # (a peer JAX cannot run or differentiate)
        return float("nan")


def main():
    size = sys.argv[1] if len(sys.argv) > 1 else "small"
    names = sys.argv[2:] or PROBLEMS
    budget = 1.0 if size == "small" else 3.0
    lines = [f"Corpus at size {size!r}, one thread, float64; times are the best of repeated "
             "calls.", "",
             "| problem | primal: xla | cpu | jax.jit | xla / jax | gradient: xla | cpu | "
             "jax.jit(grad) | xla / jax |", "|---|---|---|---|---|---|---|---|---|"]
    for name in names:
        mod = corpus().load(name)
        args = mod.make_inputs(size)
        nums = tuple(mod.ACTIVE)
        px, pc = zymase.jit(mod.primal, backend="xla"), zymase.jit(mod.primal)
        gx = zymase.grad(mod.primal, argnums=nums, backend="xla")
        gc = zymase.grad(mod.primal, argnums=nums)
        assert np.allclose(px(*args), pc(*args), rtol=1e-9), name
        assert all(np.allclose(g, w, rtol=1e-9) for g, w in zip(gx(*args), gc(*args))), name
        t = [timed(lambda: px(*args), budget), timed(lambda: pc(*args), budget)]
        try:
            t.append(timed(jax_peer(name, mod, args, False), budget))
        except Exception:
            t.append(float("nan"))
        t += [timed(lambda: gx(*args), budget), timed(lambda: gc(*args), budget)]
        try:
            t.append(timed(jax_peer(name, mod, args, True), budget))
        except Exception:
            t.append(float("nan"))
        ms = [f"{1e3 * x:.3f} ms" for x in t]
        lines.append(f"| {name} | {ms[0]} | {ms[1]} | {ms[2]} | {t[0] / t[2]:.1f}x | "
                     f"{ms[3]} | {ms[4]} | {ms[5]} | {t[3] / t[5]:.1f}x |")
        print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    if not sys.argv[2:]:
        with open(os.path.join(HERE, "results", f"xla_{size}.md"), "w") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
