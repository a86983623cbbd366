"""Run by ``test_xla_sharding.py`` in a process of its own, with 8 virtual CPU devices
(``XLA_FLAGS`` is read when JAX starts): sharded runs of ``backend="xla"`` against the CPU
backend's results, and what XLA compiled.  Prints one JSON object.

    python tests/backends/xla_sharded.py [SEEDS]
"""

from __future__ import annotations

import os

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + \
    " --xla_force_host_platform_device_count=8"

import json  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import jax  # noqa: E402
import progen  # noqa: E402
from jax.sharding import Mesh, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

import zymase  # noqa: E402
from zymase.backends.xla import backend as xla_backend  # noqa: E402
from zymase.errors import ZymaseError  # noqa: E402


def heat(u0, c, T):
    """A halo stencil: each step reads both neighbours."""
    u = u0.copy()
    new = np.empty_like(u)
    n = u.shape[0]
    for _ in range(T):
        new[0] = u[0]
        new[n - 1] = u[n - 1]
        for i in range(1, n - 1):
            new[i] = u[i] + c[i] * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        for i in range(n):
            u[i] = new[i]
    s = 0.0
    for i in range(n):
        s += u[i] * u[i]
    return s


def data_parallel_loss(w, x, y):
    """A least-squares loss over examples sharded across devices (x: examples by features)."""
    loss = 0.0
    for i in range(x.shape[0]):
        p = 0.0
        for j in range(x.shape[1]):
            p += x[i, j] * w[j]
        r = p - y[i]
        loss += r * r
    return loss / x.shape[0]


def max_diff(a, b):
    return float(np.max(np.abs(np.asarray(a, dtype=np.float64) - np.asarray(b))))


def compiled_text(fn, *args):
    """What XLA compiled for the last call of ``fn(*args)`` on the XLA backend."""
    seen = []
    real = xla_backend.XlaExecutable.call

    def spy(self, flat, globals_=()):
        seen.append((self, list(flat), list(globals_)))
        return real(self, flat, globals_)

    xla_backend.XlaExecutable.call = spy
    try:
        fn(*args)
    finally:
        xla_backend.XlaExecutable.call = real
    ex, flat, globals_ = seen[-1]
    return ex.listing(flat, globals_, compiled=True)


def collectives(text):
    return {k: len(re.findall(rf"\b{k}\(", text)) for k in
            ("all-gather", "collective-permute", "all-reduce", "all-to-all")}


def buffer_sizes(text, dtype="f64"):
    return sorted({int(m) for m in re.findall(rf"{dtype}\[(\d+)\]", text)})


def main():
    seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 12
    out: dict = {"devices": len(jax.devices())}
    mesh = Mesh(np.array(jax.devices()), ("x",))
    rows = NamedSharding(mesh, P("x"))
    rng = np.random.default_rng(0)

    # a halo stencil, inputs sharded, primal and gradient
    n, T = 1024, 40  # (40 steps: a fori_loop, not unrolled)
    u0, c = rng.standard_normal(n), 0.1 + 0.2 * rng.random(n)
    with jax.enable_x64(True):
        U, C = jax.device_put(u0, rows), jax.device_put(c, rows)
    f = zymase.jit(heat, backend="xla")
    g = zymase.grad(heat, argnums=(0, 1), backend="xla")
    want_f, want_g = zymase.jit(heat)(u0, c, T), zymase.grad(heat, argnums=(0, 1))(u0, c, T)
    got_g = g(U, C, T)
    out["stencil"] = {
        "primal": max_diff(f(U, C, T), want_f),
        "grad": max(max_diff(a, b) for a, b in zip(got_g, want_g)),
        "grad_types": [type(a).__name__ for a in got_g],
        "grad_sharded_like_input": all(a.sharding == rows for a in got_g),
        "primal_hlo": {"collectives": collectives(compiled_text(f, U, C, T)),
                       "f64_sizes": buffer_sizes(compiled_text(f, U, C, T))},
        "grad_hlo": {"collectives": collectives(compiled_text(g, U, C, T)),
                     "f64_sizes": buffer_sizes(compiled_text(g, U, C, T))},
        "n": n, "steps": T,
    }

    # in_shardings= with NumPy arguments, out_shardings= replicated
    gs = zymase.grad(data_parallel_loss, argnums=0, backend="xla",
                     in_shardings=(None, rows, rows), out_shardings=NamedSharding(mesh, P()))
    w, x, y = rng.standard_normal(4), rng.standard_normal((64, 4)), rng.standard_normal(64)
    got = gs(w, x, y)
    out["data_parallel"] = {
        "grad": max_diff(got, zymase.grad(data_parallel_loss)(w, x, y)),
        "replicated": bool(got.sharding.is_fully_replicated),
    }

    # N-body: positions sharded by body
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "..", "shared",
                                    "bench"))
    try:
        from problems import nbody  # (../shared/bench/problems)
    except ImportError:
        nbody = None
    if nbody is not None:
        pos, vel, mass, dt, steps = nbody.make_inputs("small")
        with jax.enable_x64(True):
            placed = [jax.device_put(a, NamedSharding(mesh, P("x", *[None] * (a.ndim - 1))))
                      for a in (pos, vel, mass)]
        gz = zymase.grad(nbody.primal, argnums=(0, 1), backend="xla")(*placed, dt, steps)
        gw = zymase.grad(nbody.primal, argnums=(0, 1))(pos, vel, mass, dt, steps)
        out["nbody"] = {"grad": max(max_diff(a, b) / max(1.0, float(np.max(np.abs(b))))
                                    for a, b in zip(gz, gw))}

    # random programs (loops, branches, early exits, views, helpers) on sharded arrays
    tmp = tempfile.mkdtemp(prefix="zymase_sharded_")
    compared = refused = 0
    worst = 0.0
    for seed in range(seeds):
        r = np.random.default_rng(seed)
        xs, ys = r.uniform(-2, 2, 2)
        a, b = r.uniform(-2, 2, 8), r.uniform(-2, 2, 8)
        k = int(r.integers(1, progen.MAX_N + 1))
        mod = progen.load(progen.random_program(seed, numpy=False), tmp, f"zs{seed}_")
        path = os.path.join(tmp, f"zs{seed}_copying.py")
        with open(path, "w") as fh:  # (jax.Arrays are read-only: the program writes copies)
            fh.write(f"from {mod.__name__} import F\n\n\ndef G(x, y, a, b, n):\n"
                     "    return F(x, y, a.copy(), b.copy(), n)\n")
        sys.path.insert(0, tmp)
        G = __import__(f"zs{seed}_copying").G
        with jax.enable_x64(True):
            A, B = jax.device_put(a, rows), jax.device_put(b, rows)
        try:
            with np.errstate(all="ignore"):
                want = zymase.grad(G, argnums=(0, 1, 2, 3))(xs, ys, a, b, k)
        except ZymaseError:
            continue
        try:
            with np.errstate(all="ignore"):
                got = zymase.grad(G, argnums=(0, 1, 2, 3), backend="xla")(xs, ys, A, B, k)
        except ZymaseError as e:
            if "XLA backend" not in str(e):
                raise
            refused += 1
            continue
        for gv, wv in zip(got, want):
            scale = max(1.0, float(np.max(np.abs(wv))))
            worst = max(worst, max_diff(gv, wv) / scale)
        compared += 1
    out["random"] = {"compared": compared, "refused": refused, "worst_relative": worst}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
