"""``backend="xla"`` against JAX's own jitted gradient and zymase's CPU backend, side by side in
one run, one thread, float64: the gradient of every corpus problem (``../shared/bench``) that the
XLA backend runs, at one size.

The XLA backend lowers zymase's loops as they are (``fori_loop``/``while_loop`` over scalar
updates of buffers); loops are not yet raised to array operations, so element-wise loops run
one element at a time inside XLA.

    taskset -c 0 python benchmarks/bench_xla.py [small|medium]   (results/xla_SIZE.md)
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


def jax_grad(name, mod, args):
    import jax

    run_peers = peer_module("run_peers")
    impl = getattr(peer_module("jax_peers"), name)
    dyn_idx, act, merge = run_peers.split_args(mod, args)
    dyn = [jax.numpy.asarray(args[i]) for i in dyn_idx]
    g = jax.jit(jax.grad(lambda *d: impl(*merge(d)), argnums=act)).lower(*dyn).compile()
    return lambda: jax.block_until_ready(g(*dyn))


def main():
    size = sys.argv[1] if len(sys.argv) > 1 else "small"
    lines = [f"Gradient time, corpus at size {size!r} (one thread, float64):", "",
             "| problem | zymase xla | zymase cpu | jax.jit(jax.grad) | xla / jax | xla / cpu |",
             "|---|---|---|---|---|---|"]
    for name in PROBLEMS:
        mod = corpus().load(name)
        args = mod.make_inputs(size)
        nums = tuple(mod.ACTIVE)
        xla = zymase.grad(mod.primal, argnums=nums, backend="xla")
        cpu = zymase.grad(mod.primal, argnums=nums)
        got, want = xla(*args), cpu(*args)
        assert all(np.allclose(g, w, rtol=1e-9) for g, w in zip(got, want)), name
        t_xla = best_time(lambda: xla(*args), 1.0)
        t_cpu = best_time(lambda: cpu(*args), 1.0)
        try:
            t_jax = best_time(jax_grad(name, mod, args), 1.0)
        except Exception:  # (a peer JAX cannot differentiate)
            t_jax = float("nan")
        lines.append(f"| {name} | {1e3 * t_xla:.3f} ms | {1e3 * t_cpu:.3f} ms | "
                     f"{1e3 * t_jax:.3f} ms | {t_xla / t_jax:.1f}x | {t_xla / t_cpu:.1f}x |")
        print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    with open(os.path.join(HERE, "results", f"xla_{size}.md"), "w") as fh:
        fh.write(text)


if __name__ == "__main__":
    main()
