"""A 1-D heat-equation simulator written as plain Python loops: the rod's diffusivity varies
along it (``kappa``, one value per cell), the ends are held at their initial temperatures, and
every row of ``u0`` is an initial condition run for ``steps`` explicit steps of size ``dt``.

zymase compiles it and differentiates it; ``torch_heat_training.py`` and
``jax_heat_training.py`` fit ``kappa`` to observed final temperatures with it.
"""

import numpy as np


def simulate(kappa, u0, dt, steps):
    """The temperatures after ``steps`` steps, one row per initial condition."""
    m, n = u0.shape
    u = u0.copy()
    new = u0.copy()
    for _ in range(steps):
        for r in range(m):
            for i in range(1, n - 1):
                right = 0.5 * (kappa[i] + kappa[i + 1]) * (u[r, i + 1] - u[r, i])
                left = 0.5 * (kappa[i - 1] + kappa[i]) * (u[r, i] - u[r, i - 1])
                new[r, i] = u[r, i] + dt * (right - left)
        u, new = new, u
    return u


def problem(n=64, m=8, seed=0):
    """Initial conditions, the true diffusivity and the observed final temperatures."""
    rng = np.random.default_rng(seed)
    x = np.linspace(0.0, 1.0, n)
    u0 = np.stack([np.sin(np.pi * (k + 1) * x) + 0.1 * rng.standard_normal(n)
                   for k in range(m)])
    true_kappa = 0.6 + 0.3 * np.sin(2.0 * np.pi * x) ** 2
    return u0, true_kappa


STEPS, DT = 200, 0.2
