"""The split form of reverse mode (``autodiff/split.py``): ``vjp`` runs the augmented forward
function once and the pullback runs only the adjoint function on what it kept.  Checked against
the one-function gradient (the same float operations, so bit-for-bit) on the corpus and on random
programs, pullbacks called twice, and arguments changed between ``vjp`` and the pullback."""

import numpy as np
import progen
import pytest
from conftest import corpus
from test_random_ad import flat, load, unflat

import zymase
from zymase.driver.cache import Specializations
from zymase.driver.request import Request
from zymase.errors import ZymaseError
from zymase.options import Options

PROBLEMS = ["taylor", "norm", "gmm", "ba", "lstm", "heat1d", "nbody", "rk4", "fft", "relu3"]


@pytest.mark.parametrize("name", PROBLEMS)
def test_vjp_equals_grad_on_the_corpus(name):
    mod = corpus().load(name)
    args = mod.make_inputs("small")
    nums = tuple(mod.ACTIVE)
    want = zymase.grad(mod.primal, nums)(*args)
    value, pullback = zymase.vjp(mod.primal, *args)
    assert value == pytest.approx(mod.primal(*args), rel=1e-12)
    for _ in range(2):  # the second pullback runs the forward function again
        got = pullback(1.0)
        for k, w in zip(nums, want):
            np.testing.assert_array_equal(got[k], w)


def _writes_output(out, x, w):
    """Writes its first argument; the adjoint reads x, which it overwrites at the end."""
    s = 0.0
    for i in range(x.shape[0]):
        out[i] = np.sin(w[i] * x[i])
        s += out[i] * x[i]
    for i in range(x.shape[0]):
        x[i] = 0.0
    return s


def test_arguments_changed_before_the_pullback():
    x, w = np.linspace(0.1, 1.0, 7), np.linspace(-1.0, 1.0, 7)
    want = zymase.grad(_writes_output, argnums=(1, 2))(np.zeros(7), x.copy(), w)
    xs = x.copy()
    value, pullback = zymase.vjp(_writes_output, np.zeros(7), xs, w)
    assert np.all(xs == 0.0)  # the forward function wrote the caller's array, as f does
    w_before = w.copy()
    w[:] = 99.0  # the pullback uses the values the forward run saw
    got = pullback(1.0)
    w[:] = w_before
    np.testing.assert_array_equal(got[1], want[0])
    np.testing.assert_array_equal(got[2], want[1])


def _vector_out(x, a):
    y = np.empty(a.shape[0])
    for i in range(a.shape[0]):
        y[i] = x * np.sin(a[i]) + a[i] * a[(i + 1) % a.shape[0]]
    return y, x * x


def _weighted(x, a, ct, wz):
    y, z = _vector_out(x, a)
    return np.dot(ct, y) + wz * z


def test_vector_outputs_match_the_gradient_of_the_weighted_sum():
    x, a = 0.7, np.linspace(0.2, 1.4, 5)
    (y, z), pullback = zymase.vjp(_vector_out, x, a)
    np.testing.assert_array_equal(y, _vector_out(x, a)[0])
    for ct, wz in ((np.linspace(-1.0, 1.0, 5), 0.0), (np.zeros(5), 1.0), (np.ones(5), -2.0)):
        gx, ga = pullback((ct, wz))
        wx, wa = zymase.grad(_weighted, argnums=(0, 1))(x, a, ct, wz)
        assert gx == pytest.approx(wx, rel=1e-13)
        np.testing.assert_allclose(ga, wa, rtol=1e-13)


def test_split_functions_are_compiled():
    """One module with both entries: the forward returns the primal, residuals and the tape."""
    mod = corpus().load("heat1d")
    args = mod.make_inputs("small")
    comp = Specializations(mod.primal, Options())
    d = comp.get(args, Request("rev-split", (0, 1), 1, (0,)))
    names = [f.sym_name for f in d.module]
    assert "primal.grad.fwd" in names and "primal.grad.adj" in names, names
    assert d.adjoint is not None
    fwd = d.module["primal.grad.fwd"]
    assert not any(op.name.startswith("tape.pop") for op in fwd.walk())
    adj = d.module["primal.grad.adj"]
    assert not any(op.name == "tape.push" for op in adj.walk())


def test_random_programs_vjp_equals_grad():
    assert _vjp_equals_grad(range(300, 314)) >= 9


@pytest.mark.slow
def test_many_random_programs_vjp_equals_grad():
    assert _vjp_equals_grad(range(314, 400)) >= 54


def _vjp_equals_grad(seeds) -> int:
    checked = 0
    for seed in seeds:
        rng = np.random.default_rng(seed)
        size = int(rng.integers(3, 9))
        v = rng.uniform(-2, 2, 2 + 2 * size)
        n = int(rng.integers(1, progen.MAX_N + 1))
        mod, path = load(progen.random_program(seed))
        with np.errstate(all="ignore"):
            want = mod.F(*unflat(v, size), n)
        if not np.isfinite(want) or abs(want) > 1e6:
            continue
        try:
            g = flat(*zymase.grad(mod.F, argnums=(0, 1, 2, 3))(*unflat(v, size), n))
        except ZymaseError:
            continue
        value, pullback = zymase.vjp(mod.F, *unflat(v, size), n)
        assert value == pytest.approx(want, rel=1e-12, abs=1e-12)
        got = pullback(1.0)
        np.testing.assert_array_equal(flat(*got[:4]), g)
        np.testing.assert_array_equal(flat(*pullback(1.0)[:4]), g)
        checked += 1
    return checked


def test_interpreter_runs_the_split_functions():
    """The IR interpreter (an independent executor) runs the forward function, then the adjoint
    on what it returned, and gets the compiled gradient."""
    from zymase.ir.interp import run
    mod = corpus().load("heat1d")
    u0, c, steps = mod.make_inputs("small")
    steps = 5
    comp = Specializations(mod.primal, Options())
    d = comp.get((u0, c, steps), Request("rev-split", (0, 1), 1, (0,)))
    u, cc, su, sc = u0.copy(), c.copy(), np.zeros_like(u0), np.zeros_like(c)
    out = run(d.module, "primal.grad.fwd", u, cc, steps, su, sc)
    assert out[0] == pytest.approx(mod.primal(u0, c, steps), rel=1e-12)
    run(d.module, "primal.grad.adj", u, cc, steps, su, sc, 1.0, *out[1:])
    want = zymase.grad(mod.primal, (0, 1))(u0, c, steps)
    np.testing.assert_allclose(su, want[0], rtol=1e-12)
    np.testing.assert_allclose(sc, want[1], rtol=1e-12)
