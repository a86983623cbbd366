"""``backend="xla"`` sharded over 1, 2, 4 and 8 devices (virtual CPU devices here: XLA's
``--xla_force_host_platform_device_count=8``): a halo stencil and an N-body step, primal and
gradient, arguments sharded along their first axis (``in_shardings=``).  Reports the time per
call and the memory XLA plans per device (arguments, outputs and temporaries of the compiled
program, ``memory_analysis()``).

The virtual devices share this machine's cores, so time does not drop with more of them
here; memory per device does, which is what a run on real GPUs or TPUs also needs.

    python benchmarks/bench_xla_scaling.py      (writes results/xla_scaling.md)
"""

from __future__ import annotations

import os

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import numpy as np  # noqa: E402
from common import HERE, best_time  # noqa: E402

import zymase  # noqa: E402
from zymase.backends.xla import backend as xla_backend  # noqa: E402


def stencil(u0, c, T):
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


def nbody(pos, mass, dt, steps):
    pos = pos.copy()
    vel = np.zeros_like(pos)
    acc = np.zeros_like(pos)
    n = pos.shape[0]
    for _ in range(steps):
        for i in range(n):
            ax = 0.0
            ay = 0.0
            az = 0.0
            for j in range(n):
                dx = pos[j, 0] - pos[i, 0]
                dy = pos[j, 1] - pos[i, 1]
                dz = pos[j, 2] - pos[i, 2]
                r2 = dx * dx + dy * dy + dz * dz + 0.01
                s = mass[j] / (r2 * np.sqrt(r2))
                ax += s * dx
                ay += s * dy
                az += s * dz
            acc[i, 0] = ax
            acc[i, 1] = ay
            acc[i, 2] = az
        for i in range(n):
            for k in range(3):
                vel[i, k] += dt * acc[i, k]
                pos[i, k] += dt * vel[i, k]
    e = 0.0
    for i in range(n):
        e += mass[i] * (pos[i, 0] ** 2 + pos[i, 1] ** 2 + pos[i, 2] ** 2)
    return e


def per_device_bytes(fn, args):
    """What XLA plans per device for the last call of ``fn(*args)``."""
    with xla_backend.recording() as seen:
        fn(*args)
    ex, flat, globals_ = seen[-1]
    m = ex.compiled(flat, globals_).memory_analysis()
    return m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes


def main():
    import jax
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    rng = np.random.default_rng(0)
    n, T = 1 << 16, 50
    cases = {
        "stencil (n = 65536, 50 steps)": (stencil, (rng.standard_normal(n),
                                                    0.1 + 0.2 * rng.random(n), T), (0, 1)),
        "N-body (n = 256, 2 steps)": (nbody, (rng.standard_normal((256, 3)),
                                              0.5 + rng.random(256), 0.01, 2), (0,)),
    }
    lines = ["Sharded over D virtual CPU devices (one process, this machine's cores shared); "
             "memory is what XLA plans per device.", "",
             "| program | D | primal | gradient | primal memory / device | "
             "gradient memory / device |", "|---|---|---|---|---|---|"]
    for label, (f, args, nums) in cases.items():
        want = zymase.grad(f, argnums=nums)(*args)
        for d in (1, 2, 4, 8):
            mesh = Mesh(np.array(jax.devices()[:d]), ("x",))
            shard = [NamedSharding(mesh, P("x", *[None] * (a.ndim - 1)))
                     if isinstance(a, np.ndarray) else None for a in args]
            px = zymase.jit(f, backend="xla", in_shardings=tuple(shard))
            gx = zymase.grad(f, argnums=nums, backend="xla", in_shardings=tuple(shard))
            got = gx(*args)
            got = got if isinstance(got, tuple) else (got,)
            want_t = want if isinstance(want, tuple) else (want,)
            assert all(np.allclose(np.asarray(g), w, rtol=1e-9) for g, w in zip(got, want_t))
            tp, tg = best_time(lambda: px(*args), 2.0), best_time(lambda: gx(*args), 2.0)
            mp, mg = per_device_bytes(px, args), per_device_bytes(gx, args)
            lines.append(f"| {label} | {d} | {1e3 * tp:.1f} ms | {1e3 * tg:.1f} ms | "
                         f"{mp / 2**20:.2f} MiB | {mg / 2**20:.2f} MiB |")
            print(lines[-1], flush=True)
    with open(os.path.join(HERE, "results", "xla_scaling.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
