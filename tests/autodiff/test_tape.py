"""What reverse mode stores (tape_report), and that every cache optimization can be switched
off without changing the gradient."""

import numpy as np
import pytest
import tape_programs as T
from conftest import corpus

import zymase

OPTIMIZATIONS = ("recompute", "recompute_expensive", "reload", "snapshot", "carried", "mincut")


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


def test_heat1d_stores_one_value_per_update():
    """The update needs only its Laplacian back (for c's adjoint): one value per updated cell,
    read once, rather than a copy of the state per step read three times."""
    mod, (u0, c, steps), r = _report("heat1d")
    n = u0.shape[0]
    assert r.total_bytes == steps * (n - 2) * 8, r.text
    assert not any("copy" in e.what for e in r.entries), r.text
    assert all(":27:30" in e.where for e in r.entries), r.text  # prev - 2 cur + u[i + 1]


def test_snapshot_kept_when_an_update_needs_two_values():
    n, steps = 40, 6
    u0, c = np.linspace(0.1, 0.9, n), np.linspace(-0.3, 0.3, n)
    r = zymase.tape_report(T.stencil_needs_two, u0, c, steps, argnums=(0, 1))
    copies = [e for e in r.entries if "copy" in e.what]
    assert len(copies) == 1 and copies[0].bytes == steps * n * 8, r.text  # one state a step
    greedy = zymase.tape_report(T.stencil_needs_two, u0, c, steps, argnums=(0, 1),
                                disable={"mincut"})
    assert r.total_bytes == greedy.total_bytes, (r.text, greedy.text)
    g = zymase.grad(T.stencil_needs_two, (0, 1))(u0, c, steps)
    g0 = zymase.grad(T.stencil_needs_two, (0, 1), disable={"snapshot", "mincut"})(u0, c, steps)
    for a, b in zip(g, g0):
        np.testing.assert_allclose(a, b, rtol=1e-13)
    _fd_check(T.stencil_needs_two, (u0, c, steps), g[0], 0)


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


@pytest.mark.parametrize("name", ["taylor", "norm", "heat1d", "rk4",
                                  pytest.param("nbody", marks=pytest.mark.slow)])
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
    # (with the min-cut on, one value per update is stored, the Laplacian; without both, the
    # loads of each update are)
    off = zymase.tape_report(mod.primal, *args, argnums=(0, 1),
                             disable={"snapshot", "mincut"}).total_bytes
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


def _fd_check(f, args, g, k):
    d = np.random.default_rng(5).standard_normal(args[k].shape)
    plus, minus = list(args), list(args)
    plus[k], minus[k] = args[k] + 1e-6 * d, args[k] - 1e-6 * d
    np.testing.assert_allclose(np.dot(g, d), (f(*plus) - f(*minus)) / 2e-6, rtol=1e-6)


def test_min_cut_stores_one_value_instead_of_two():
    n = 50
    a, b = np.linspace(0.1, 0.9, n), np.linspace(-0.5, 0.5, n)
    cut = zymase.tape_report(T.two_carried_one_needed, a, b, argnums=(0, 1))
    greedy = zymase.tape_report(T.two_carried_one_needed, a, b, argnums=(0, 1),
                                disable={"mincut"})
    assert cut.total_bytes == n * 8, cut.text
    assert greedy.total_bytes == 2 * n * 8, greedy.text
    g = zymase.grad(T.two_carried_one_needed, (0, 1))(a, b)
    g0 = zymase.grad(T.two_carried_one_needed, (0, 1), disable={"mincut"})(a, b)
    np.testing.assert_allclose(g[0], g0[0], rtol=1e-14)
    _fd_check(T.two_carried_one_needed, (a, b), g[1], 1)


def test_constant_factors_need_no_primal_value():
    a = np.linspace(0.1, 0.9, 40)
    assert zymase.tape_report(T.scaled_carry, a).total_bytes == 0
    np.testing.assert_allclose(zymase.grad(T.scaled_carry)(a), 0.5 ** np.arange(39, -1, -1),
                               rtol=1e-14)


def test_min_cut_leaves_optimal_choices_alone():
    a, b = np.linspace(0.5, 1.5, 30), np.linspace(-1, 1, 30)
    on = zymase.tape_report(T.greedy_is_optimal, a, b, argnums=(0, 1))
    off = zymase.tape_report(T.greedy_is_optimal, a, b, argnums=(0, 1), disable={"mincut"})
    assert on.total_bytes == off.total_bytes == 30 * 8, (on.text, off.text)


def test_index_advanced_by_an_inner_loop_is_recovered_not_stored():
    n = 7
    a, w = np.linspace(0.2, 1.0, n), np.linspace(-1.0, 1.0, n * (n - 1) // 2)
    r = zymase.tape_report(T.triangular_index, a, w, argnums=(0, 1))
    ints = [e for e in r.entries if e.dtype == "int64"]
    assert sum(e.count for e in ints) <= 3, r.text  # the final index of each run, not each row
    g = zymase.grad(T.triangular_index, (0, 1))(a, w)
    g0 = zymase.grad(T.triangular_index, (0, 1), memory_limit=10**12)(a, w)
    for x, y in zip(g, g0):
        np.testing.assert_array_equal(x, y)
    _fd_check(T.triangular_index, (a, w), g[0], 0)
    _fd_check(T.triangular_index, (a, w), g[1], 1)
