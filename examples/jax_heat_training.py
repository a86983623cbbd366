"""Fit the diffusivity field of a heat-equation simulator written as Python loops
(``heat_simulator.py``) with JAX: ``zymase.to_jax`` makes the simulator a JAX operation that
XLA calls as native code, and ``jax.grad`` uses zymase's reverse mode.  The update is Adam,
written out (``optax.adam`` does the same).

    python examples/jax_heat_training.py [iterations]
"""

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

import zymase

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from heat_simulator import DT, STEPS, problem, simulate  # noqa: E402

jax.config.update("jax_enable_x64", True)
sim = zymase.to_jax(simulate)


def main(iterations=300, lr=0.05):
    u0_np, true_kappa = problem()
    u0 = jnp.asarray(u0_np)
    observed = jnp.asarray(simulate(true_kappa, u0_np, DT, STEPS))

    def loss(theta):
        kappa = 0.2 + jax.nn.softplus(theta)
        return jnp.mean((sim(kappa, u0, DT, STEPS) - observed) ** 2)

    @jax.jit
    def step(theta, m, v, t):
        value, g = jax.value_and_grad(loss)(theta)
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        mhat, vhat = m / (1 - 0.9 ** t), v / (1 - 0.999 ** t)
        return theta - lr * mhat / (jnp.sqrt(vhat) + 1e-8), m, v, value

    theta = jnp.zeros(u0.shape[1])
    m = v = jnp.zeros_like(theta)
    for it in range(iterations):
        theta, m, v, value = step(theta, m, v, it + 1)
        if it % 50 == 0 or it == iterations - 1:
            print(f"step {it:4d}  loss {float(value):.3e}")
    kappa = np.asarray(0.2 + jax.nn.softplus(theta))
    err = np.abs(kappa - true_kappa)[1:-1].max()
    print(f"largest error of the fitted diffusivity (inner cells): {err:.3f}")
    return float(value), err


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
