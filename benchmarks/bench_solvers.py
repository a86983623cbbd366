"""Reverse mode of iterative solvers written as scientists write them: gradient time over primal
time, side by side with ``jax.jit(jax.grad)`` of an idiomatic JAX version (when installed), in
one run, one thread, float64:

* a Kalman filter (constant-velocity model in 2-D, state 4, T = 1000 scalar observations):
  the negative log-likelihood with respect to the noise levels and the observations;
* conjugate gradients on the dense 1-D Poisson matrix (n = 1000, 100 iterations: a ``while``
  loop with a tolerance that it does not reach), with respect to the right-hand side and the
  shift;
* an adaptive Dormand-Prince RK45 integration of Lotka-Volterra with step rejection (a
  ``while t < t_end`` loop; ``y = y5`` only when a step is accepted), with respect to the
  initial state and the parameters.

JAX cannot reverse ``lax.while_loop``: its versions run a fixed number of iterations with
``lax.fori_loop`` (the CG's 100; the RK45's number of attempted steps, with rejected steps
masked by ``jnp.where``), as JAX users write them.

    taskset -c 0 python benchmarks/bench_solvers.py
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")
import numpy as np  # noqa: E402
from common import best_time  # noqa: E402

import zymase  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from solver_programs import kalman_filter as kalman  # noqa: E402
from solver_programs import poisson_matrix  # noqa: E402

# ---------------------------------------------------------------------------------- the programs


def cg(b, sigma, iters):
    A = poisson_matrix(b.shape[0], sigma)
    x = np.zeros_like(b)
    r = b.copy()
    p = r.copy()
    rs = r @ r
    k = 0
    while rs > 1e-300 and k < iters:
        Ap = A @ p
        alpha = rs / (p @ Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        rs_new = r @ r
        p = r + (rs_new / rs) * p
        rs = rs_new
        k += 1
    return x @ x + 0.5 * (x @ b)


def lotka_volterra(y, a):
    return np.array([a[0] * y[0] - a[1] * y[0] * y[1], -a[2] * y[1] + a[3] * y[0] * y[1]])


# Dormand-Prince tableau
C2, C3, C4, C5 = 1 / 5, (3 / 40, 9 / 40), (44 / 45, -56 / 15, 32 / 9), \
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729)
C6 = (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656)
B5 = (35 / 384, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84)
B4 = (5179 / 57600, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40)


def rk45_run(y0, a, t_end):
    """The adaptive integration: (final state, steps tried)."""
    t, h, y = 0.0, 0.05, y0.copy()
    attempts = 0
    while t < t_end and attempts < 100000:
        if t + h > t_end:
            h = t_end - t
        k1 = lotka_volterra(y, a)
        k2 = lotka_volterra(y + h * C2 * k1, a)
        k3 = lotka_volterra(y + h * (C3[0] * k1 + C3[1] * k2), a)
        k4 = lotka_volterra(y + h * (C4[0] * k1 + C4[1] * k2 + C4[2] * k3), a)
        k5 = lotka_volterra(y + h * (C5[0] * k1 + C5[1] * k2 + C5[2] * k3 + C5[3] * k4), a)
        k6 = lotka_volterra(y + h * (C6[0] * k1 + C6[1] * k2 + C6[2] * k3 + C6[3] * k4
                                     + C6[4] * k5), a)
        y5 = y + h * (B5[0] * k1 + B5[1] * k3 + B5[2] * k4 + B5[3] * k5 + B5[4] * k6)
        k7 = lotka_volterra(y5, a)
        y4 = y + h * (B4[0] * k1 + B4[1] * k3 + B4[2] * k4 + B4[3] * k5 + B4[4] * k6
                      + B4[5] * k7)
        err = np.sqrt(np.mean(((y5 - y4) / (1e-6 * (1.0 + np.abs(y)))) ** 2))
        if err <= 1.0:
            t = t + h
            y = y5
        fac = min(5.0, max(0.2, 0.9 * err ** -0.2)) if err > 0.0 else 5.0
        h = h * fac
        attempts += 1
    return y, attempts


def rk45(y0, a, t_end):
    y, _ = rk45_run(y0, a, t_end)
    return y[0] * y[0] + 0.5 * y[1]


def rk45_attempts(y0, a, t_end) -> int:
    """How many steps the adaptive loop tries (the JAX version's fixed count)."""
    return rk45_run(y0, a, t_end)[1]


# ------------------------------------------------------------------------------ the JAX versions


def jax_versions(rk_steps):
    import jax
    import jax.numpy as jnp
    from jax import lax
    jax.config.update("jax_enable_x64", True)

    def jkalman(ys, q, r):
        F = jnp.eye(4).at[0, 2].set(0.1).at[1, 3].set(0.1)
        Q = q * jnp.eye(4)
        H = jnp.array([1.0, 0.5, 0.0, 0.0])

        def step(carry, yt):
            x, P, nll = carry
            x = F @ x
            P = F @ P @ F.T + Q
            S = H @ P @ H + r
            K = P @ H / S
            innov = yt - H @ x
            x = x + K * innov
            P = P - jnp.outer(K, H @ P)
            return (x, P, nll + 0.5 * (jnp.log(2 * jnp.pi * S) + innov * innov / S)), None
        (_, _, nll), _ = lax.scan(step, (jnp.zeros(4), jnp.eye(4), 0.0), ys)
        return nll

    def jcg(b, sigma, iters):
        n = b.shape[0]
        A = (2.0 + sigma) * jnp.eye(n) - jnp.eye(n, k=1) - jnp.eye(n, k=-1)

        def step(_, c):
            x, r, p, rs = c
            Ap = A @ p
            alpha = rs / (p @ Ap)
            x = x + alpha * p
            r = r - alpha * Ap
            rs_new = r @ r
            return x, r, r + (rs_new / rs) * p, rs_new
        x, _, _, _ = lax.fori_loop(0, iters, step, (jnp.zeros_like(b), b, b, b @ b))
        return x @ x + 0.5 * (x @ b)

    def jlv(y, a):
        return jnp.stack([a[0] * y[0] - a[1] * y[0] * y[1], -a[2] * y[1] + a[3] * y[0] * y[1]])

    def jrk45(y0, a, t_end):
        def step(_, c):
            t, h, y = c
            h = jnp.minimum(h, t_end - t)
            ks = [jlv(y, a)]
            for cc in (C2, C3, C4, C5, C6):
                cc = (cc,) if isinstance(cc, float) else cc
                ks.append(jlv(y + h * sum(ci * k for ci, k in zip(cc, ks)), a))
            y5 = y + h * (B5[0] * ks[0] + B5[1] * ks[2] + B5[2] * ks[3] + B5[3] * ks[4]
                          + B5[4] * ks[5])
            y4 = y + h * (B4[0] * ks[0] + B4[1] * ks[2] + B4[2] * ks[3] + B4[3] * ks[4]
                          + B4[4] * ks[5] + B4[5] * jlv(y5, a))
            err = jnp.sqrt(jnp.mean(((y5 - y4) / (1e-6 * (1.0 + jnp.abs(y)))) ** 2))
            live = t < t_end
            ok = (err <= 1.0) & live
            fac = jnp.where(err > 0.0, jnp.clip(0.9 * err ** -0.2, 0.2, 5.0), 5.0)
            return (jnp.where(ok, t + h, t), jnp.where(live, h * fac, h),
                    jnp.where(ok, y5, y))
        _, _, y = lax.fori_loop(0, rk_steps, step, (0.0, 0.05, y0))
        return y[0] * y[0] + 0.5 * y[1]

    return {
        "kalman": jax.jit(jax.grad(jkalman, argnums=(0, 1, 2))),
        "cg": jax.jit(jax.grad(jcg, argnums=(0, 1)), static_argnums=2),
        "rk45": jax.jit(jax.grad(jrk45, argnums=(0, 1)), static_argnums=2),
    }


# ---------------------------------------------------------------------------------------- timing


def cases():
    rng = np.random.default_rng(0)
    ys = np.cumsum(rng.standard_normal(1000)) * 0.1
    b = np.sin(np.linspace(0.0, 3.0, 1000)) + 0.1 * rng.standard_normal(1000)
    y0, a = np.array([1.0, 0.5]), np.array([1.1, 0.4, 0.4, 0.1])
    return [("kalman", "Kalman filter, T=1000, state 4", kalman, (ys, 0.01, 0.5), (0, 1, 2)),
            ("cg", "CG, Poisson n=1000, 100 iterations", cg, (b, 0.01, 100), (0, 1)),
            ("rk45", "adaptive RK45, Lotka-Volterra, t=0..30", rk45, (y0, a, 30.0), (0, 1))]


def main():
    rows = []
    jx = None
    try:
        _, _, _, (y0, a, t_end), _ = cases()[2]
        jx = jax_versions(rk45_attempts(y0, a, t_end))
    except ImportError:
        pass
    for key, name, fn, args, nums in cases():
        f = zymase.jit(fn)
        g = zymase.grad(fn, argnums=nums)
        primal = 1e3 * best_time(lambda: f(*args))
        grad = 1e3 * best_time(lambda: g(*args))
        jax_ms, agree = float("nan"), float("nan")
        if jx is not None:
            import jax
            jg = jx[key]
            jax_ms = 1e3 * best_time(lambda: jax.block_until_ready(jg(*args)))
            mine, theirs = g(*args), jg(*args)  # the same derivative, computed independently
            agree = max(float(np.max(np.abs(np.asarray(a) - np.asarray(b))) /
                              max(1e-300, float(np.max(np.abs(np.asarray(b))))))
                        for a, b in zip(mine, theirs))
        rows.append((name, primal, grad, jax_ms, agree))
    print(f"{'problem':40} {'primal ms':>10} {'grad ms':>9} {'grad/primal':>12} "
          f"{'jax grad ms':>12} {'zy/jax':>7} {'rel. diff':>10}")
    for name, p, gms, j, d in rows:
        print(f"{name:40} {p:10.3f} {gms:9.3f} {gms / p:12.2f} {j:12.3f} {gms / j:7.2f} "
              f"{d:10.1e}")


if __name__ == "__main__":
    main()
