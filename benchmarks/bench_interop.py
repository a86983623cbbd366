"""zymase inside PyTorch and JAX (``zymase.to_torch`` / ``zymase.to_jax``), side by side in one
run, one thread, float64:

* per-call overhead: an operation doing almost nothing (``2 * x`` on 10 numbers) through
  zymase against the framework's own ``2 * x``, forward alone and forward + backward;
* a training step (loss and gradient) of the heat-equation fit in ``examples/``: the simulator
  as Python loops compiled by zymase, inside the framework, against the same simulator written
  as the framework's tensor operations (``torch`` eager autograd; ``jax.jit`` of
  ``jax.value_and_grad`` with ``lax.fori_loop``), and against zymase alone
  (``zymase.value_and_grad``, NumPy in and out).

    taskset -c 0 python benchmarks/bench_interop.py [--out NAME]   (results/NAME.md)
"""

from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                      "intra_op_parallelism_threads=1")
import numpy as np  # noqa: E402
from common import HERE, best_time  # noqa: E402

import zymase  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "..", "examples"))
from heat_simulator import DT, STEPS, problem, simulate  # noqa: E402


def twice(x):
    return 2.0 * x


def loss_np(kappa, u0, observed, dt, steps):
    u = simulate(kappa, u0, dt, steps)
    return np.mean((u - observed) ** 2)


def torch_rows(kappa, u0, observed):
    import torch

    torch.set_num_threads(1)
    rows = []
    op = zymase.to_torch(twice)
    x = torch.rand(10, dtype=torch.float64)
    op(x)
    rows.append(("call, forward (10 numbers)", 1e6 * best_time(lambda: op(x)),
                 1e6 * best_time(lambda: 2.0 * x), "us"))
    xg = x.clone().requires_grad_()

    def ours():
        op(xg).sum().backward()

    def theirs():
        (2.0 * xg).sum().backward()

    ours()
    rows.append(("call, forward + backward", 1e6 * best_time(ours), 1e6 * best_time(theirs),
                 "us"))

    sim = zymase.to_torch(simulate)
    k = torch.from_numpy(kappa).requires_grad_()
    u0t, obs = torch.from_numpy(u0), torch.from_numpy(observed)

    def step_zymase():
        k.grad = None
        loss = ((sim(k, u0t, DT, STEPS) - obs) ** 2).mean()
        loss.backward()
        return loss

    def native(kappa, u):
        face = 0.5 * (kappa[1:] + kappa[:-1])
        for _ in range(STEPS):
            flux = face * (u[:, 1:] - u[:, :-1])
            u = torch.cat([u[:, :1], u[:, 1:-1] + DT * (flux[:, 1:] - flux[:, :-1]),
                           u[:, -1:]], dim=1)
        return u

    def step_native():
        k.grad = None
        loss = ((native(k, u0t) - obs) ** 2).mean()
        loss.backward()
        return loss

    step_zymase()
    g_ours = k.grad.clone()
    step_native()
    agree = float((g_ours - k.grad).abs().max() / k.grad.abs().max())
    rows.append((f"training step (tensor ops; gradients agree to {agree:.0e})",
                 1e3 * best_time(step_zymase, 2.0), 1e3 * best_time(step_native, 2.0), "ms"))
    return rows


def jax_rows(kappa, u0, observed):
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    rows = []
    op = zymase.to_jax(twice)
    x = jnp.asarray(np.random.default_rng(0).random(10))
    ours, theirs = jax.jit(op), jax.jit(lambda x: 2.0 * x)
    for f in (ours, theirs):
        f(x).block_until_ready()
    rows.append(("jit call, forward (10 numbers)",
                 1e6 * best_time(lambda: ours(x).block_until_ready()),
                 1e6 * best_time(lambda: theirs(x).block_until_ready()), "us"))
    g_ours = jax.jit(jax.grad(lambda x: jnp.sum(op(x))))
    g_theirs = jax.jit(jax.grad(lambda x: jnp.sum(2.0 * x)))
    for f in (g_ours, g_theirs):
        f(x).block_until_ready()
    rows.append(("jit call, gradient", 1e6 * best_time(lambda: g_ours(x).block_until_ready()),
                 1e6 * best_time(lambda: g_theirs(x).block_until_ready()), "us"))

    sim = zymase.to_jax(simulate)
    u0j, obs, kj = jnp.asarray(u0), jnp.asarray(observed), jnp.asarray(kappa)
    step_zymase = jax.jit(jax.value_and_grad(
        lambda k: jnp.mean((sim(k, u0j, DT, STEPS) - obs) ** 2)))

    def native(kappa, u):
        face = 0.5 * (kappa[1:] + kappa[:-1])

        def body(_, u):
            flux = face * (u[:, 1:] - u[:, :-1])
            return u.at[:, 1:-1].add(DT * (flux[:, 1:] - flux[:, :-1]))
        return jax.lax.fori_loop(0, STEPS, body, u)

    step_native = jax.jit(jax.value_and_grad(lambda k: jnp.mean((native(k, u0j) - obs) ** 2)))
    a, b = step_zymase(kj)[1], step_native(kj)[1]
    agree = float(jnp.max(jnp.abs(a - b)) / jnp.max(jnp.abs(b)))
    rows.append((f"training step (jit, fori_loop; gradients agree to {agree:.0e})",
                 1e3 * best_time(lambda: jax.block_until_ready(step_zymase(kj)), 2.0),
                 1e3 * best_time(lambda: jax.block_until_ready(step_native(kj)), 2.0), "ms"))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="interop")
    opts = ap.parse_args()
    u0, true_kappa = problem()
    observed = simulate(true_kappa, u0, DT, STEPS)
    kappa = np.full(u0.shape[1], 0.8)
    vg = zymase.value_and_grad(loss_np)
    vg(kappa, u0, observed, DT, STEPS)
    alone = 1e3 * best_time(lambda: vg(kappa, u0, observed, DT, STEPS), 2.0)
    lines = [f"Heat-equation fit: {u0.shape[0]} rods x {u0.shape[1]} cells, {STEPS} steps; "
             f"zymase.value_and_grad alone (NumPy in and out): {alone:.2f} ms per step.", "",
             "| framework | what | through zymase | native | ratio |", "|---|---|---|---|---|"]
    for name, rows in (("PyTorch", torch_rows), ("JAX", jax_rows)):
        try:
            got = rows(kappa, u0, observed)
        except ImportError:
            continue
        for what, ours, theirs, unit in got:
            lines.append(f"| {name} | {what} | {ours:.2f} {unit} | {theirs:.2f} {unit} | "
                         f"{ours / theirs:.2f}x |")
    text = "\n".join(lines) + "\n"
    print(text)
    path = os.path.join(HERE, "results", f"{opts.out}.md")
    with open(path, "w") as fh:
        fh.write(text)


if __name__ == "__main__":
    main()
