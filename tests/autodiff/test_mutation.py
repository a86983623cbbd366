"""Derivatives through memory and control flow: values overwritten after use, buffers swapped,
scatters with repeated indices, writes through views, in-place stencils, early exits, data-
dependent trip counts, helpers writing into arguments, recursion and mutated inputs.

Each row runs once per mode (forward, reverse) against central differences of CPython, so a
failure in one mode does not hide the other.  Known bugs are ``xfail(strict=True)`` with the
minimal reproducer in the reason: fixing one turns its test into an XPASS failure, which says to
drop the mark.
"""

from __future__ import annotations

import inspect

import numpy as np
import programs as P
import pytest
from ad_check import check_grads

import zymase

U0 = np.array([0.3, 0.9, 0.4, 1.1, 0.6, 0.2])

# minimal reproducers of the bugs these tests found (see the reasons below)
def row(name, fn, *args, fwd=None, rev=None, **opts):
    """One program; ``fwd``/``rev``: the xfail reason of a mode that is known to be wrong."""
    out = []
    for mode, reason in (("fwd", fwd), ("rev", rev)):
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(fn, args, mode, opts, id=f"{name}-{mode}", marks=marks))
    return out


CASES = [
    *row("overwritten_temp", P.overwritten_temp, 0.7, 3),
    *row("overwritten_needed_later", P.overwritten_needed_later, 0.7, 3),
    *row("last_value", P.last_value, 0.7, 3),
    *row(
        "scatter_repeats",
        P.scatter_repeats,
        np.array([0.5, 1.2, -0.7, 0.9, 1.4]),
        np.array([1, 2, 1, 1, 3]),
    ),
    *row("aliasing_view", P.aliasing_view, U0),
    *row("stencil_in_place", P.stencil_in_place, U0, 0.2, 4),
    *row("accumulate_with_reset", P.accumulate_with_reset, U0),
    *row("early_return_taken", P.early_return, 0.9, 10),
    *row("early_return_not_taken", P.early_return, 0.1, 2),
    *row("while_break", P.while_break, 0.9),
    *row("data_trip_for", P.data_trip_for, 1.3),
    *row("halve_until", P.halve_until, 3.7, 0.01),
    *row("helper_writes_output", P.helper_writes_output, U0, 1.3),
    *row("recursion", P.recursion, 0.8, 5),
    *row("mutates_copy_of_input", P.mutates_copy_of_input, U0),
    *row("mutates_input", P.mutates_input, U0),
    *row("writes_through_reshape", P.writes_through_reshape, U0, 1.3),
    *row("pairwise_via_newaxis", P.pairwise_via_newaxis, U0, U0[:4] * 0.5),
]


@pytest.mark.parametrize("fn,args,mode,opts", CASES)
def test_mutation(fn, args, mode, opts):
    check_grads(fn, args, modes=(mode,), **opts)


def test_mutates_input_leaves_gradient_for_the_value_passed_in():
    a = U0.copy()
    g = zymase.grad(P.mutates_input)(a)
    want = 2.0 * 2.0 * U0 * 2.0  # d/da sum((2a)^2) for the untouched entries
    b0, b1 = 2 * U0[0], 2 * U0[1]
    want[0] = 2 * (b0 * b1) * b1 * 2.0
    want[1] = 2 * b1 * 2.0 + 2 * (b0 * b1) * b0 * 2.0
    np.testing.assert_allclose(g, want, rtol=1e-12)
    np.testing.assert_allclose(a[2:], 2.0 * U0[2:])  # the caller sees the mutation, as in CPython


# ---------------------------------------------------------------------- buffers swapped each step


def test_swap_buffers_forward():
    check_grads(P.swap_buffers, (U0, 3), modes=("fwd",))


def test_swap_buffers_reverse():
    """Reverse mode either differentiates correctly or refuses at the user's line."""
    try:
        check_grads(P.swap_buffers, (U0, 3), modes=("rev",))
    except zymase.DifferentiationError as e:
        lines, first = inspect.getsourcelines(P.swap_buffers)
        msg = str(e)
        assert "programs.py:" in msg, msg
        line = int(msg.split("programs.py:")[1].split(":")[0])
        assert first <= line < first + len(lines), msg


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_swapped_buffers_with_stencil(mode):
    check_grads(P.swap_with_stencil, (U0, 3), modes=(mode,))


@pytest.mark.parametrize("flag", [1, -1])
def test_array_chosen_by_branch(flag):
    check_grads(P.chosen_by_branch, (U0, 2.0 * U0, flag), argnums=(0, 1))


def test_list_grown_in_loop():
    """The list's buffer is reallocated inside the loop: its buffers share one shadow."""
    check_grads(P.list_in_loop, (0.5, 10), argnums=(0,), modes=("fwd", "rev"))
    check_grads(P.list_in_loop, (0.5, 40), argnums=(0,), modes=("fwd", "rev"))
