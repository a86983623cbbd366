"""Gradients of array code written the NumPy way, against ``jax.jit(jax.grad)`` (when
installed), side by side in one run, one thread, float64:

* an MLP training loss (3-32-32-1, ``np.tanh``, parameters in a dict, batch 256):
  ``value_and_grad`` per step;
* ``np.sum((x @ W) ** 2)`` at n = 256 and 512: ``grad`` with respect to ``W``.

    taskset -c 0 python benchmarks/bench_mlp.py

(``taskset`` keeps XLA's thread pool on one core too, as OPENBLAS_NUM_THREADS=1 does BLAS.)
"""

from __future__ import annotations

import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")
import numpy as np  # noqa: E402

import zymase  # noqa: E402


def mlp_loss(params, x, y):
    h = np.tanh(x @ params["W1"] + params["b1"])
    h = np.tanh(h @ params["W2"] + params["b2"])
    out = h @ params["W3"] + params["b3"]
    return np.mean((out[:, 0] - y) ** 2)


def square_loss(W, x):
    return np.sum((x @ W) ** 2)


def best_ms(fn, seconds=1.0) -> float:
    fn()
    t_end = time.perf_counter() + seconds
    best = float("inf")
    while time.perf_counter() < t_end:
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def main():
    rng = np.random.default_rng(0)
    sizes = [(3, 32), (32, 32), (32, 1)]
    params = {}
    for k, (a, b) in enumerate(sizes, 1):
        params[f"W{k}"] = rng.standard_normal((a, b)) / np.sqrt(a)
        params[f"b{k}"] = np.zeros(b)
    x, y = rng.standard_normal((256, 3)), rng.standard_normal(256)
    rows = []
    vg = zymase.value_and_grad(mlp_loss)
    rows.append(("MLP value_and_grad, batch 256", "zymase", best_ms(lambda: vg(params, x, y))))
    cases = []
    for n in (256, 512):
        W, xs = rng.standard_normal((n, n)), rng.standard_normal((n, n))
        g = zymase.grad(square_loss)
        rows.append((f"grad sum((x @ W)**2), n={n}", "zymase", best_ms(lambda: g(W, xs))))
        cases.append((n, W, xs))
    try:
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)

        def jmlp(p, x, y):
            h = jnp.tanh(x @ p["W1"] + p["b1"])
            h = jnp.tanh(h @ p["W2"] + p["b2"])
            return jnp.mean(((h @ p["W3"] + p["b3"])[:, 0] - y) ** 2)

        jvg = jax.jit(jax.value_and_grad(jmlp))
        jp = {k: jnp.asarray(v) for k, v in params.items()}
        jx, jy = jnp.asarray(x), jnp.asarray(y)
        rows.append(("MLP value_and_grad, batch 256", "jax.jit",
                     best_ms(lambda: jax.block_until_ready(jvg(jp, jx, jy)))))
        jg = jax.jit(jax.grad(lambda W, x: jnp.sum((x @ W) ** 2)))
        for n, W, xs in cases:
            jW, jxs = jnp.asarray(W), jnp.asarray(xs)
            rows.append((f"grad sum((x @ W)**2), n={n}", "jax.jit",
                         best_ms(lambda: jg(jW, jxs).block_until_ready())))
    except ImportError:
        pass
    by_case: dict = {}
    for case, system, ms in rows:
        by_case.setdefault(case, {})[system] = ms
    print(f"{'case':34} {'zymase ms':>10} {'jax ms':>8} {'zy/jax':>7}")
    for case, t in by_case.items():
        j = t.get("jax.jit", float("nan"))
        print(f"{case:34} {t['zymase']:10.3f} {j:8.3f} {t['zymase'] / j:7.2f}")


if __name__ == "__main__":
    main()
