"""Views of two different buffers, chosen by a branch or swapped in a loop, then written
through.  Reverse mode once took the shadow of whichever buffer's address equalled the view's --
a view's address never does -- so it used the last buffer's whole shadow as the view: wrong
adjoints silently (found by an adversarial survey).  A view chosen by a branch now gets the same
choice made on the shadows (the view of the chosen buffer's shadow); views swapped in a loop and
written are refused at the loop; choosing or swapping whole buffers stays differentiable."""

import numpy as np
import pytest
from autodiff.ad_check import check_grads

import zymase

X = np.array([0.8, 1.1, 0.6, 1.3, 0.9, 1.2])


def view_by_condition(a, c, flag):
    v = a[1:] if flag > 0 else c[:-1]
    v[0] = v[0] * v[1]
    return (a * a).sum() + (c * c * 2.0).sum()


def view_by_if(x, flag):
    a = x.copy()
    c = x.copy()
    if flag > 0:
        v = a[::2]
    else:
        v = c[1::2]
    for i in range(3):
        v[i] = v[i] * a[2 * i + 1]
    return (a * a).sum() + (c * c).sum()


def swapped_views(x, n):
    a = x.copy()
    b = x * 0.5
    u = a[1:]
    v = b[1:]
    for _ in range(n):
        for i in range(4):
            v[i] = u[i] * u[i + 1] * 0.9 + 0.1
        v[4] = u[4]
        u, v = v, u
    return (a * a).sum() + (b * np.arange(1.0, 7.0)).sum()


def whole_by_if(x, flag):
    a = x.copy()
    c = x * 2.0
    v = a if flag > 0 else c
    v[0] = v[0] * v[1]
    return (a * a).sum() + (c * c).sum()


def swapped_buffers(x, n):
    u = x.copy()
    v = np.zeros_like(x)
    for _ in range(n):
        for i in range(1, x.shape[0] - 1):
            v[i] = u[i] + 0.25 * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        u, v = v, u
    return (u * u).sum()


def test_views_swapped_in_a_loop_and_written_are_refused_at_the_loop():
    with pytest.raises(zymase.DifferentiationError, match="reverse mode cannot follow") as info:
        zymase.grad(swapped_views)(X, 2)
    assert "test_chosen_views.py:" in str(info.value)
    assert "for _ in range(n):" in str(info.value)  # the loop, at its own line
    assert "whole arrays" in str(info.value) and zymase.__path__[0] not in str(info.value)
    check_grads(swapped_views, (X, 2), argnums=0, modes=("fwd",))  # forward mode follows them


@pytest.mark.parametrize("flag", [1.0, -1.0])
@pytest.mark.parametrize("argnums", [0, 1])
def test_a_view_chosen_by_a_conditional_expression_then_written(flag, argnums):
    check_grads(view_by_condition, (X, X[::-1].copy(), flag), argnums=argnums)


@pytest.mark.parametrize("flag", [1.0, -1.0])
def test_a_strided_view_chosen_by_an_if_then_written_in_a_loop(flag):
    check_grads(view_by_if, (X, flag), argnums=0)


@pytest.mark.parametrize("fn,args", [(whole_by_if, (X, 1.0)), (whole_by_if, (X, -1.0)),
                                     (swapped_buffers, (X, 3))])
def test_whole_buffers_chosen_or_swapped(fn, args):
    check_grads(fn, args, argnums=0)
