"""Iterative solvers written as scientists write them (``tests/solver_programs.py``): those
reverse mode follows today, against central differences and forward mode, and the ones it still
refuses at their own line (issue: reverse mode for every iterative solver)."""

from __future__ import annotations

import pathlib
import sys

import pytest
from autodiff.ad_check import check_grads

import zymase
from zymase.errors import ZymaseError

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import solver_programs as S  # noqa: E402

# matrix products on a matrix made before the loop (Crank-Nicolson's, the Kalman filter's F) or
# earlier in the same iteration (X @ w then X.T @ resid), buffer swaps, in-place clamps
WORKS = ["kalman_filter", "adam_least_squares", "projected_gradient_nnls", "crank_nicolson",
         "heat_buffer_swap", "jacobi_parity", "pendulum_energies"]
REFUSED = sorted(set(S.PROGRAMS) - set(WORKS) - {"bezier_length"})


@pytest.mark.parametrize("name", WORKS)
def test_reverse_mode_matches_differences(name):
    fn, args, nums = S.PROGRAMS[name]
    check_grads(fn, args, argnums=nums)


@pytest.mark.parametrize("name", REFUSED)
def test_the_rest_is_refused_at_a_line_of_the_program(name):
    fn, args, nums = S.PROGRAMS[name]
    with pytest.raises(ZymaseError) as e:
        zymase.grad(fn, argnums=nums)(*args)
    first = str(e.value).splitlines()[0]
    assert "solver_programs.py:" in first and f"def {name}" not in str(e.value), first
