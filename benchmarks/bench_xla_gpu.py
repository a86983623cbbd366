"""``backend="xla"`` on whatever device JAX has (a GPU where jax[cuda] is installed): the
corpus' primal and gradient against the CPU (LLVM) backend, and gradient timings against
JAX's jitted peers on the same device.  Writes $OUT/gpu_check.json (or /tmp).

    python benchmarks/bench_xla_gpu.py      (results/xla_gpu.md was made from its output)
"""

from __future__ import annotations

import json
import os
import time

import jax
import numpy as np
from bench_grad import corpus
from bench_xla import jax_peer
from common import best_time

import zymase

print("jax", jax.__version__, jax.devices(), flush=True)


def rel(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / max(1e-300, float(np.max(np.abs(b)))))

out = {"devices": str(jax.devices())}
for name in ("relu3", "taylor", "norm", "gmm", "ba", "lstm", "heat1d", "nbody", "rk4", "fft"):
    mod = corpus().load(name)
    args = mod.make_inputs("small")
    t0 = time.time()
    try:
        p = rel(zymase.jit(mod.primal, backend="xla")(*args), zymase.jit(mod.primal)(*args))
        if name == "fft":
            g = float("nan")
        else:
            nums = tuple(mod.ACTIVE)
            gx = zymase.grad(mod.primal, argnums=nums, backend="xla")(*args)
            gc = zymase.grad(mod.primal, argnums=nums)(*args)
            g = max(rel(a, b) for a, b in zip(gx, gc))
        out[name] = {"primal_rel": p, "grad_rel": g, "s": round(time.time() - t0, 1)}
    except Exception as e:
        out[name] = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
    print(name, out[name], flush=True)

peer = jax_peer  # (the same peers, on whatever device JAX has)

rows = []
for name in ("heat1d", "rk4", "nbody", "relu3", "norm", "taylor"):
    mod = corpus().load(name)
    args = mod.make_inputs("medium")
    nums = tuple(mod.ACTIVE)
    gx = zymase.grad(mod.primal, argnums=nums, backend="xla")
    gc = zymase.grad(mod.primal, argnums=nums)
    t0 = time.time()
    gx(*args)
    first = time.time() - t0
    r = {"name": name, "first_call_s": round(first, 2),
         "xla_gpu_ms": 1e3 * best_time(lambda: gx(*args), 2.0),
         "cpu_backend_ms": 1e3 * best_time(lambda: gc(*args), 2.0)}
    try:
        r["jax_gpu_ms"] = 1e3 * best_time(peer(name, mod, args, True), 2.0)
    except Exception:
        r["jax_gpu_ms"] = float("nan")
    rows.append(r)
    print(r, flush=True)
out["timing_medium_grad"] = rows
with open(os.path.join(os.environ.get("OUT", "/tmp"), "gpu_check.json"), "w") as fh:
    json.dump(out, fh, indent=1)
