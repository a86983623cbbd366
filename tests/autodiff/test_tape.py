"""What reverse mode stores (tape_report), and that every cache optimization can be switched
off without changing the gradient."""

import numpy as np
import pytest
import tape_programs as T
from conftest import corpus

import zymase

OPTIMIZATIONS = ("recompute", "recompute_expensive", "reload", "snapshot", "carried")


def _report(name, size="small"):
    mod = corpus().load(name)
    args = mod.make_inputs(size)
    return mod, args, zymase.tape_report(mod.primal, *args, argnums=tuple(mod.ACTIVE))


def test_taylor_stores_nothing():
    _, _, r = _report("taylor")
    assert r.total_bytes == 0, r.text
    assert any("recomputed" in how for _, _, how in r.avoided)


def test_norm_stores_nothing_per_iteration():
    mod = corpus().load("norm")
    sizes = []
    for n in (50, 400):
        x, w = np.linspace(0.5, 1.5, n), np.linspace(-1.0, 1.0, n)
        sizes.append(zymase.tape_report(mod.primal, x, w).total_bytes)
    assert sizes[0] == sizes[1] <= 16, sizes


def test_heat1d_stores_one_state_per_step():
    mod, (u0, c, steps), r = _report("heat1d")
    n = u0.shape[0]
    assert r.total_bytes == steps * (n + 1) * 8, r.text  # the state, and where it starts
    assert any("copy" in e.what for e in r.entries)


def test_value_overwritten_later_is_stored():
    r = zymase.tape_report(T.overwritten_later, 0.7, np.linspace(0, 1, 10))
    assert r.total_bytes == 10 * 8, r.text
    assert any("overwritten_later" not in e.where and "tape_programs.py" in e.where
               for e in r.entries)


def test_read_only_loads_are_reloaded():
    r = zymase.tape_report(T.read_only, 0.7, np.linspace(0, 1, 10))
    assert r.total_bytes == 0, r.text
    assert any("reloaded" in how for _, _, how in r.avoided)


def test_loop_invariant_value_is_stored_once():
    small = zymase.tape_report(T.loop_invariant, 0.7, np.linspace(0, 1, 10)).total_bytes
    big = zymase.tape_report(T.loop_invariant, 0.7, np.linspace(0, 1, 100)).total_bytes
    assert small == big, (small, big)


def test_carried_values_are_stored_per_iteration():
    r = zymase.tape_report(T.carried_product, 0.3, 20)
    assert r.total_bytes == 20 * 8, r.text  # the carried product (sin(x + i) is recomputed)


@pytest.mark.parametrize("name", ["taylor", "norm", "heat1d", "nbody", "rk4"])
def test_every_optimization_can_be_switched_off(name):
    mod = corpus().load(name)
    args = mod.make_inputs("small")
    want = zymase.grad(mod.primal, tuple(mod.ACTIVE))(*args)
    configs = [dict(disable={o}) for o in OPTIMIZATIONS]
    configs += [dict(disable=set(OPTIMIZATIONS)), dict(optimize_before_ad=False)]
    for cfg in configs:
        got = zymase.grad(mod.primal, tuple(mod.ACTIVE), **cfg)(*args)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-13, err_msg=str(cfg))


def test_switching_off_snapshots_stores_more():
    mod = corpus().load("heat1d")
    args = mod.make_inputs("small")
    on = zymase.tape_report(mod.primal, *args, argnums=(0, 1)).total_bytes
    off = zymase.tape_report(mod.primal, *args, argnums=(0, 1), disable={"snapshot"}).total_bytes
    assert off > on, (on, off)


def test_differentiating_before_optimizing_stores_per_iteration():
    """Without optimizing first, norm's loop-invariant ``mag(x)`` stays in the loop: one value a
    trip on the tape (and O(n^2) work) instead of 8 bytes; the gradient is the same."""
    mod = corpus().load("norm")
    for n in (50, 400):
        x, w = np.linspace(0.5, 1.5, n), np.linspace(-1.0, 1.0, n)
        on = zymase.tape_report(mod.primal, x, w).total_bytes
        off = zymase.tape_report(mod.primal, x, w, optimize_before_ad=False).total_bytes
        assert on <= 16 and off == 8 * n, (n, on, off)
        np.testing.assert_allclose(zymase.grad(mod.primal, optimize_before_ad=False)(x, w),
                                   zymase.grad(mod.primal)(x, w), rtol=1e-12, atol=1e-15)


def test_expensive_op_over_hoisted_operands_is_recomputed():
    """nbody's pair loop: after LICM, ``math.sqrt`` reads pos[i, :] hoisted to the outer loop
    (stored once per i, since pos is overwritten later); the sqrt is recomputed in the adjoint,
    not stored once per pair."""
    mod = corpus().load("nbody")
    args = mod.make_inputs("small")
    r = zymase.tape_report(mod.primal, *args, argnums=tuple(mod.ACTIVE))
    assert not any(":56:" in e.where for e in r.entries), r.text
    assert any(":56:" in where and what == "sqrt" and how == "recomputed"
               for where, what, how in r.avoided), r.text
    g = zymase.grad(mod.primal, tuple(mod.ACTIVE))(*args)
    g_off = zymase.grad(mod.primal, tuple(mod.ACTIVE), disable={"recompute_expensive"})(*args)
    for a, b in zip(g, g_off):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
