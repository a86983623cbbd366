"""Every corpus problem (../shared/bench/problems) compiles unchanged and matches CPython."""

import numpy as np
import pytest
from conftest import corpus

import zymase

PROBLEMS = ("relu3", "taylor", "norm", "gmm", "ba", "lstm", "heat1d", "nbody", "rk4", "fft")
# medium sizes whose CPython reference takes more than a few seconds run under -m slow
SLOW_MEDIUM = {"ba", "nbody"}


def _check(name, size):
    mod = corpus().load(name)
    args = mod.make_inputs(size)
    before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    got = zymase.jit(mod.primal)(*args)
    for a, b in zip(args, before):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)  # inputs are not mutated
    want = mod.primal(*args)
    assert isinstance(got, float) or np.isscalar(got)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


@pytest.mark.parametrize("name", PROBLEMS)
def test_small(name):
    _check(name, "small")


@pytest.mark.parametrize("name", [p for p in PROBLEMS if p not in SLOW_MEDIUM])
def test_medium(name):
    _check(name, "medium")


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SLOW_MEDIUM))
def test_medium_slow(name):
    _check(name, "medium")


@pytest.mark.slow
@pytest.mark.parametrize("name", PROBLEMS)
def test_large(name):
    _check(name, "large")


@pytest.mark.parametrize("name", ["relu3", "taylor", "norm", "heat1d", "rk4", "fft"])
def test_interpreter_matches_cpython(name):
    """The frontend's IR run by the NumPy interpreter (the oracle) gives CPython's answer."""
    from zymase.frontend.args import param_template
    from zymase.frontend.module import ModuleLowerer
    from zymase.ir import interp
    from zymase.options import Options

    mod = corpus().load(name)
    args = mod.make_inputs("small")
    ml = ModuleLowerer(Options())
    f = ml.lower_entry(mod.primal, [param_template(a, "arg") for a in args])
    np.testing.assert_allclose(interp.run(ml.module, f.sym_name, *args), mod.primal(*args),
                               rtol=1e-12)
