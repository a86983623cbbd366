"""Fit the diffusivity field of a heat-equation simulator written as Python loops
(``heat_simulator.py``) inside a PyTorch training loop: ``zymase.to_torch`` makes the simulator
a PyTorch operation whose backward pass is zymase's reverse mode.

    python examples/torch_heat_training.py [iterations]
"""

import os
import sys

import numpy as np
import torch

import zymase

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from heat_simulator import DT, STEPS, problem, simulate  # noqa: E402

sim = zymase.to_torch(simulate)


def main(iterations=300):
    u0_np, true_kappa = problem()
    u0 = torch.from_numpy(u0_np)
    observed = torch.from_numpy(simulate(true_kappa, u0_np, DT, STEPS))
    # kappa = 0.2 + softplus(theta): positive, and the explicit scheme stays stable
    theta = torch.zeros(u0.shape[1], dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([theta], lr=0.05)
    for it in range(iterations):
        opt.zero_grad()
        kappa = 0.2 + torch.nn.functional.softplus(theta)
        loss = ((sim(kappa, u0, DT, STEPS) - observed) ** 2).mean()
        loss.backward()
        opt.step()
        if it % 50 == 0 or it == iterations - 1:
            print(f"step {it:4d}  loss {loss.item():.3e}")
    kappa = (0.2 + torch.nn.functional.softplus(theta)).detach().numpy()
    err = np.abs(kappa - true_kappa)[1:-1].max()
    print(f"largest error of the fitted diffusivity (inner cells): {err:.3f}")
    return loss.item(), err


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
