"""Reverse mode is compiled for arguments that do not share memory (what the adjoint sweep
needs is kept from being overwritten through the array it lives in).  Passing one array twice,
or overlapping views, to a function that writes one of them gave a wrong adjoint silently
(found by an adversarial survey): such calls are refused now, naming the arguments and the
call.  Aliased arguments the function only reads stay fine; forward mode handles aliasing."""

import numpy as np
import pytest

import zymase
from zymase import Duplicated


def scale_in_place(x, y):
    for i in range(y.shape[0]):
        x[i] = x[i] * y[i]
    return x.sum()


def reads_only(x, y):
    return (x * y).sum()


X0 = np.array([0.8, 1.1, 0.6, 1.3])


def test_same_array_twice_is_refused_in_reverse_mode():
    a, da = X0.copy(), np.zeros(4)
    with pytest.raises(zymase.DifferentiationError) as info:
        zymase.autodiff(zymase.Reverse, scale_in_place, Duplicated(a, da), Duplicated(a, da))
    msg = str(info.value)
    assert "argument `x` and argument `y` share memory" in msg and "test_alias_args.py:" in msg
    assert (da == 0).all() and (a == X0).all()  # refused before running
    with pytest.raises(zymase.DifferentiationError, match="share memory"):
        zymase.grad(scale_in_place, argnums=(0, 1))(a, a)
    with pytest.raises(zymase.DifferentiationError, match="share memory"):
        zymase.grad(scale_in_place)(a, a)  # y held constant, still aliased
    with pytest.raises(zymase.DifferentiationError, match="share memory"):
        zymase.vjp(scale_in_place, a, a)


def test_overlapping_views_are_refused():
    b, db = np.linspace(0.5, 1.5, 5), np.zeros(5)
    with pytest.raises(zymase.DifferentiationError, match="share memory"):
        zymase.autodiff(zymase.Reverse, scale_in_place, Duplicated(b, db),
                        Duplicated(b[1:], db[1:]))


def test_shadow_shared_by_two_arguments_is_refused():
    a, b, d = X0.copy(), X0.copy() + 1.0, np.zeros(4)
    with pytest.raises(zymase.DifferentiationError, match="the shadow of argument"):
        zymase.autodiff(zymase.Reverse, reads_only, Duplicated(a, d), Duplicated(b, d))


def test_disjoint_views_and_read_only_aliasing_still_work():
    b, db = np.linspace(0.5, 1.5, 6), np.zeros(6)
    zymase.autodiff(zymase.Reverse, scale_in_place, Duplicated(b[:3], db[:3]),
                    Duplicated(b[3:], db[3:]))
    x0 = np.linspace(0.5, 1.5, 6)
    np.testing.assert_allclose(db, np.r_[x0[3:], x0[:3]], rtol=1e-15)
    a = X0.copy()
    gx, gy = zymase.grad(reads_only, argnums=(0, 1))(a, a)  # nothing written: fine
    np.testing.assert_allclose(gx + gy, 2 * X0, rtol=1e-15)


def test_forward_mode_follows_the_aliasing():
    a, ta = X0.copy(), np.ones(4)
    out = zymase.autodiff(zymase.ForwardWithPrimal, scale_in_place, Duplicated(a, ta),
                          Duplicated(a, ta))
    # g(a, a) = sum(a**2): derivative along ones is 2 sum(a)
    assert out[0] == pytest.approx(2 * X0.sum(), rel=1e-14)


def test_interleaved_or_side_by_side_views_are_not_refused():
    """Columns of one matrix and interleaved slices share a buffer but no element."""
    m, dm = np.arange(6.0).reshape(3, 2) + 1.0, np.zeros((3, 2))
    zymase.autodiff(zymase.Reverse, scale_in_place, Duplicated(m[:, 0], dm[:, 0]),
                    Duplicated(m[:, 1], dm[:, 1]))
    np.testing.assert_allclose(dm, [[2.0, 1.0], [4.0, 3.0], [6.0, 5.0]], rtol=1e-15)
