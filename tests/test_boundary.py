"""Values at the call boundary that compiled code cannot represent are refused, never wrapped:
Python ints outside the 64-bit range (they would index another element or run another number of
steps) and cotangents that are not numbers."""

from __future__ import annotations

import numpy as np
import pytest

import zymase


def _pick(a, i):
    return a[i]


def _steps(x, T):
    s = 0.0
    for _ in range(T):
        s += x
    return s


@pytest.mark.parametrize("big", [2 ** 63, 2 ** 64 + 2, -(2 ** 63) - 1, 2 ** 100])
def test_ints_that_do_not_fit_are_refused_by_every_transform(big):
    a = np.arange(5.0)
    f = zymase.jit(_pick)
    assert f(a, 2) == 2.0  # the fast entry is installed: the big int takes the general path
    with pytest.raises(OverflowError, match="does not fit in a 64-bit integer"):
        f(a, big)
    calls = [lambda: zymase.jit(_steps)(1.0, big),
             lambda: zymase.grad(_steps)(1.0, big),
             lambda: zymase.value_and_grad(_steps)(1.0, big),
             lambda: zymase.jvp(_steps, (1.0, big), (1.0, None)),
             lambda: zymase.vjp(_steps, 1.0, big),
             lambda: zymase.jit(_steps, backend="interp")(1.0, big)]
    for call in calls:
        with pytest.raises(OverflowError, match="argument `T` of _steps") as e:
            call()
        assert f"{__file__}:" in str(e.value) and zymase.__path__[0] not in str(e.value)


def test_the_largest_ints_that_fit_are_accepted():
    a = np.arange(5.0)
    assert zymase.jit(_steps)(1.0, -(2 ** 63)) == 0.0
    with pytest.raises(IndexError):
        zymase.jit(_pick)(a, 2 ** 63 - 1)


@pytest.mark.parametrize("ct", [None, "1.0", True, [None]])
def test_cotangents_that_are_not_numbers_are_refused(ct):
    _, pullback = zymase.vjp(_steps, 1.0, 3)
    with pytest.raises(zymase.DifferentiationError, match="must be a number or an array"):
        pullback(ct)
    assert pullback(2.0)[0] == 6.0
