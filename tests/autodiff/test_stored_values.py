"""Values the primal stores into an array that keeps them (an activation ``h[i, j] =
tanh(...)``) are loaded back by the adjoint sweep rather than recomputed or put on the tape
(plan decision "stored", ``plan/memory.py: stored_at``): the gradient of a tanh layer runs
no tanh of its own."""

import os

import numpy as np
from autodiff.ad_check import check_grads

import zymase


def layer(x, W, b):
    h = np.tanh(x @ W + b)
    return np.sum(h * h) + np.sum(h[:, 0])


def overwritten(x, W):
    h = np.tanh(x @ W)
    s = np.sum(h * h)
    h[0, 0] = 5.0  # the location is written again: tanh(...) is not loaded back from h
    return s + np.sum(h)


def stored_twice_in_a_loop(a):
    out = np.zeros(a.shape[0])
    for k in range(2):
        for i in range(a.shape[0]):
            out[i] = np.tanh(a[i] * (k + 1.0))  # the second trip overwrites the first's
    return np.sum(out * out)


def _tanh_count(fn, *args):
    """tanh ops in the gradient function (its forward sweep has the primal's)."""
    with open(os.devnull, "w") as sink:
        text = zymase.explain(fn, *args, transform="grad", stages=["reverse"], file=sink)
    grad = next(part for part in text.split("func.func @")[1:] if part.startswith(
        fn.__name__ + ".grad"))
    return grad.count("math.tanh")


def test_an_activation_is_loaded_back():
    rng = np.random.default_rng(0)
    x, W, b = rng.standard_normal((5, 3)), rng.standard_normal((3, 4)), rng.standard_normal(4)
    check_grads(layer, (x, W, b), argnums=(0, 1, 2))
    assert _tanh_count(layer, x, W, b) == 1  # the primal's only
    report = zymase.tape_report(layer, x, W, b, argnums=(1,))
    assert any("loaded back" in how for _, _, how in report.avoided), str(report)


def test_locations_written_again_are_not_trusted():
    rng = np.random.default_rng(1)
    x, W = rng.standard_normal((4, 3)), rng.standard_normal((3, 3))
    check_grads(overwritten, (x, W), argnums=(0, 1))
    check_grads(stored_twice_in_a_loop, (rng.standard_normal(5),))
