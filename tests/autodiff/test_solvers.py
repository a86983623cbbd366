"""Iterative solvers written as scientists write them (``tests/solver_programs.py``): reverse
mode against central differences and forward mode, and the Hessian-vector product (forward over
reverse) against central differences of the gradient (issue: reverse mode for every iterative
solver)."""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest
from autodiff.ad_check import check_grads

import zymase
from zymase.errors import ZymaseError

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import solver_programs as S  # noqa: E402

# arrays renewed by while loops and loops with break (CG, Newton, fixed point, adaptive RK45 with
# rejected steps, an inner Newton loop), chosen by branches (Levenberg-Marquardt's accepted
# step, a view of one of two buffers), matrix products on carried arrays (the Kalman filter's
# covariance), a recursive helper and a custom_vjp function returning new arrays in a loop,
# buffer swaps, in-place clamps
ALL = sorted(S.PROGRAMS)
# forward over reverse re-runs a recursive call in the adjoint sweep, which it refuses in a loop
NO_HVP = {"bezier_length"}
# finite-difference steps other than the default: Levenberg-Marquardt's accept/reject test flips
# between the shifted evaluations at some steps near 1e-5 (the difference quotient at h = 3e-5 is
# off by 2e-6, and the extrapolation at 1e-4 amplifies it); at 1e-3 the quotients are smooth
EPS = {"levenberg_marquardt": 1e-3}


@pytest.mark.parametrize("name", ALL)
def test_reverse_mode_matches_differences(name):
    fn, args, nums = S.PROGRAMS[name]
    check_grads(fn, args, argnums=nums, eps=EPS.get(name))


@pytest.mark.parametrize("name", sorted(set(ALL) - NO_HVP))
def test_hvp_matches_differences_of_the_gradient(name):
    fn, args, nums = S.PROGRAMS[name]
    k = nums if isinstance(nums, int) else nums[0]
    x = np.asarray(args[k], dtype=float)
    v = np.random.default_rng(1).standard_normal(x.shape)

    def grad_at(xx):
        a = list(args)
        a[k] = xx
        return zymase.grad(fn, argnums=k)(*a)
    hv = zymase.hvp(fn, argnums=k)(*args, v)
    scale = max(1.0, float(np.abs(x).max()))
    errors = []  # (a solver's differences are noisy at small steps, some have kinks: the best)
    for h in (1e-3 * scale, 1e-4 * scale, 1e-5 * scale):
        fd = (grad_at(x + h * v) - grad_at(x - h * v)) / (2 * h)
        errors.append(np.abs(hv - fd).max() / max(1.0, np.abs(fd).max()))
    assert min(errors) < 1e-5, errors


def test_hvp_through_a_recursive_call_in_a_loop_is_refused_at_the_call():
    fn, args, nums = S.PROGRAMS["bezier_length"]
    with pytest.raises(ZymaseError) as e:
        zymase.hvp(fn, argnums=nums)(*args, np.ones_like(args[0]))
    assert "solver_programs.py:" in str(e.value) and "_de_casteljau(" in str(e.value)


def cg_steps(b, k):
    n = b.shape[0]
    x = np.zeros(n)
    r = b.copy()
    p = r.copy()
    rs = r @ r
    it = 0
    while rs > 1e-300 and it < k:
        Ap = 2.0 * p - 0.5 * np.roll(p, 1) - 0.5 * np.roll(p, -1)
        alpha = rs / (p @ Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        rs_new = r @ r
        p = r + (rs_new / rs) * p
        rs = rs_new
        it += 1
    return x @ x


@pytest.mark.parametrize("n", [50, 200])
def test_conjugate_gradients_keep_o_of_k_n_numbers(n):
    """A CG solve of ``k`` iterations keeps O(k n) numbers on the tape (each version of a
    renewed vector once), not more."""
    b = np.sin(np.arange(n) * 0.1) + 1.0
    small = zymase.tape_report(cg_steps, b, 5).total_bytes
    large = zymase.tape_report(cg_steps, b, 10).total_bytes
    per_iteration = (large - small) / 5
    assert per_iteration <= 8 * 8 * n + 512, (n, per_iteration)
    check_grads(cg_steps, (b, 10), argnums=0)


# under memory_limit a recursive call in a loop is re-run, which is refused there; a list grown
# across iterations cannot be saved as a loop state
NO_LIMIT = {"bezier_length", "pendulum_energies"}


@pytest.mark.parametrize("name", sorted(set(ALL) - NO_LIMIT))
def test_checkpointing_gives_the_same_gradient(name):
    """memory_limit checkpoints the loops, carried arrays included (saved by contents, or
    swapped buffers by which one), and runs the same float operations."""
    fn, args, nums = S.PROGRAMS[name]
    want = zymase.grad(fn, argnums=nums)(*args)
    limit = 1 << 12
    for _ in range(4):
        try:
            got = zymase.grad(fn, argnums=nums, memory_limit=limit)(*args)
            break
        except zymase.ZymaseMemoryError as e:
            limit = int(str(e).split("needs at least ")[1].split(" bytes")[0])
    want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("name", sorted(NO_LIMIT))
def test_what_checkpointing_cannot_do_is_refused_at_a_line(name):
    fn, args, nums = S.PROGRAMS[name]
    with pytest.raises(ZymaseError) as e:
        zymase.grad(fn, argnums=nums, memory_limit=1 << 16)(*args)
    assert "solver_programs.py:" in str(e.value).splitlines()[0]


def grows(x, n):
    y = x.copy()
    for _ in range(n):  # CHANGES SIZE
        y = np.concatenate((y * 0.5, y[:1]))
    return np.sum(y * y)


def test_checkpointing_an_array_that_changes_size_raises_at_the_loop():
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(zymase.grad(grows, memory_limit=1 << 16)(x, 6),
                               zymase.grad(grows)(x, 6), rtol=1e-15)  # whole loop recorded
    with pytest.raises(zymase.ShapeError, match="keep its size") as e:
        zymase.grad(grows, memory_limit=64)(x, 6)  # states saved: the size must not change
    line = next(k + 1 for k, t in enumerate(open(__file__).read().splitlines())
                if t.rstrip().endswith("# CHANGES SIZE"))
    assert f"test_solvers.py:{line}:" in str(e.value) and zymase.__path__[0] not in str(e.value)


def doubling(n):
    if n <= 0:
        return np.ones(2)
    return doubling(n - 1) * 2.0


def array_or_float(x, c):
    if c > 0:
        return x * 2.0
    return 1.0  # MIXED RETURN


def test_recursive_function_returning_an_array_compiles():
    np.testing.assert_array_equal(zymase.jit(doubling)(3), doubling(3))


def test_returns_of_two_types_are_refused_in_users_words():
    with pytest.raises(ZymaseError) as e:
        zymase.jit(array_or_float)(np.ones(2), 1.0)
    msg = str(e.value)
    line = next(k + 1 for k, t in enumerate(open(__file__).read().splitlines())
                if t.rstrip().endswith("# MIXED RETURN"))
    assert "the value returned" in msg and "`rv`" not in msg, msg
    assert f"test_solvers.py:{line}:" in msg and zymase.__path__[0] not in msg, msg
