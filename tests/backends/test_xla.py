"""``backend="xla"``: the optimized IR lowered to JAX and run by XLA gives the CPU backend's
results (float64) on every corpus problem and on random programs, primal, forward and reverse
mode (the iterative solvers' gradients through ``while`` loops included); writes into arguments
reach the caller; run-time errors name the user's line; what XLA cannot run is refused at the
user's line, saying why: never a different answer."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="JAX is not installed (pip install jax)")
import progen  # noqa: E402
from conftest import corpus  # noqa: E402

import zymase  # noqa: E402
from zymase.errors import UnsupportedError, ZymaseError, ZymaseIndexError  # noqa: E402

PROBLEMS = ("relu3", "taylor", "norm", "gmm", "ba", "lstm", "heat1d", "nbody", "rk4")
_TMP = tempfile.TemporaryDirectory(prefix="zymase_xla_")


def _close(got, want, rtol=1e-12):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=1e-300)


HEAVY = {"gmm", "ba", "lstm", "nbody"}  # (their derivatives' traces take seconds: -m slow)


@pytest.mark.parametrize("name", PROBLEMS)
def test_corpus_primal_and_forward_mode_match_the_cpu_backend(name):
    mod = corpus().load(name)
    args = mod.make_inputs("small")
    _close(zymase.jit(mod.primal, backend="xla")(*args), zymase.jit(mod.primal)(*args))
    if name not in HEAVY:
        _derivatives_match(mod, args)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(HEAVY))
def test_heavy_corpus_derivatives_match_the_cpu_backend(name):
    mod = corpus().load(name)
    _derivatives_match(mod, mod.make_inputs("small"))


def _derivatives_match(mod, args):
    k = getattr(mod, "ACTIVE", (0,))[0]
    tans = [None] * len(args)
    tans[k] = np.linspace(0.5, 1.5, np.size(args[k])).reshape(np.shape(args[k])) \
        if isinstance(args[k], np.ndarray) else 1.0
    got = zymase.jvp(mod.primal, args, tans, backend="xla")
    want = zymase.jvp(mod.primal, args, tans)
    _close(got[0], want[0])
    _close(got[1], want[1], rtol=1e-11)
    nums = tuple(getattr(mod, "ACTIVE", (0,)))
    for g, w in zip(zymase.grad(mod.primal, argnums=nums, backend="xla")(*args),
                    zymase.grad(mod.primal, argnums=nums)(*args)):
        _close(g, w, rtol=1e-11)


SOLVERS = ("cg_poisson", "rk45_adaptive", "levenberg_marquardt", "fixed_point",
           "upwind_advection", "scaled_or_copied")


def test_iterative_solvers_gradients_match_or_are_refused():
    """Reverse mode through while loops with tolerances, accepted and rejected steps, and
    arrays chosen by branches (what jax.grad cannot differentiate): the XLA backend gives the
    CPU backend's gradient, or refuses at the user's line; never another number."""
    matched = _solvers(SOLVERS)
    assert {"cg_poisson", "rk45_adaptive", "levenberg_marquardt", "fixed_point",
            "upwind_advection"} <= set(matched), matched


@pytest.mark.slow
def test_every_iterative_solver_gradient_matches_or_is_refused():
    matched = _solvers(None)
    assert {"cg_poisson", "rk45_adaptive", "levenberg_marquardt", "fixed_point",
            "kalman_filter", "upwind_advection"} <= set(matched), matched


def _solvers(names):
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
    import solver_programs as S

    matched = []
    for name, (fn, args, nums) in S.PROGRAMS.items():
        if names is not None and name not in names:
            continue
        def copies():
            return [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        try:
            got = zymase.grad(fn, argnums=nums, backend="xla")(*copies())
        except UnsupportedError as e:
            assert "solver_programs.py" in str(e) and "XLA backend" in str(e), str(e)
            continue
        want = zymase.grad(fn, argnums=nums)(*copies())
        for g, w in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12, err_msg=name)
        matched.append(name)
    return matched


@pytest.mark.slow
def test_recursive_fft_matches_the_cpu_backend():
    """(every recursive call is inlined: a slow trace)"""
    mod = corpus().load("fft")
    args = mod.make_inputs("small")
    _close(zymase.jit(mod.primal, backend="xla")(*args), zymase.jit(mod.primal)(*args))


def _load(prog):
    return progen.load(prog, _TMP.name, "zymase_xla")


def _run(fn, *args):
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    try:
        with np.errstate(all="ignore"):
            return fn(*args), args
    except UnsupportedError as e:
        return "unsupported", str(e)
    except ZymaseError as e:
        return type(e), None


def _random_programs(seeds):
    compared = refused = 0
    for seed in seeds:
        rng = np.random.default_rng(seed)
        size = int(rng.integers(3, 9))
        x, y = rng.uniform(-2, 2, 2)
        a, b = rng.uniform(-2, 2, size), rng.uniform(-2, 2, size)
        n = int(rng.integers(1, progen.MAX_N + 1))
        F = _load(progen.random_program(seed, numpy=False)).F
        want = _run(zymase.jit(F), x, y, a, b, n)
        got = _run(zymase.jit(F, backend="xla"), x, y, a, b, n)
        if got[0] == "unsupported":
            assert "zymase_xla_" in got[1] and "XLA backend" in got[1], got[1]
            refused += 1
            continue
        if want[1] is None:
            assert got[0] == want[0], (seed, got, want)
            continue
        assert got[1] is not None, (seed, got)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-10, atol=1e-12, err_msg=str(seed))
        for g, w in zip(got[1][2:4], want[1][2:4]):
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12, err_msg=str(seed))
        grads = [_run(zymase.grad(F, argnums=(0, 1, 2, 3), backend=be), x, y, a, b, n)[0]
                 for be in ("cpu", "xla")]
        if grads[1] != "unsupported":
            for g, w in zip(grads[1], grads[0]):
                np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12, err_msg=str(seed))
        compared += 1
    return compared, refused


def test_random_programs_match_the_cpu_backend():
    """progen's programs (loops, branches, early exits, views, helpers, writes into the
    arguments): results, the arguments' final contents and gradients agree with the CPU
    backend, or the XLA backend refuses at the user's line; a run-time error is the same
    error."""
    compared, refused = _random_programs(range(16))
    assert compared >= 10 and refused <= 3, (compared, refused)


@pytest.mark.slow
def test_more_random_programs_match_the_cpu_backend():
    compared, refused = _random_programs(range(16, 100))
    assert compared >= 60 and refused <= 10, (compared, refused)


def _fill(x, out):
    for i in range(x.shape[0]):
        out[i] = x[i] * 2.0 + out[i]
    return np.sum(out)


def _at(x, i):
    return x[i] * 2.0


def _halvings(x):
    n = 0
    while x > 1.0:
        x = x / 2.0
        n += 1
    return x, n


def _swap(u0, steps):
    u, new = u0.copy(), u0.copy()
    for _ in range(steps):
        for i in range(1, u.shape[0] - 1):
            new[i] = 0.5 * (u[i - 1] + u[i + 1])
        u, new = new, u
    return u


def _swap_argument(u0, steps):
    u, new = u0, u0.copy()
    for _ in range(steps):
        for i in range(1, u.shape[0] - 1):
            new[i] = 0.5 * (u[i - 1] + u[i + 1])
        u, new = new, u
    return u


def _swap_in_helper(x, steps):
    y = x.copy()
    z = _swap_argument(y, steps)  # (writes into y's buffer on every other step)
    return np.sum(z) + 2.0 * np.sum(y)


def _sized_by_data(x):
    return np.zeros(int(x[0])) + 1.0


def test_semantics_users_rely_on():
    x, out = np.arange(4.0), np.ones(4)
    assert zymase.jit(_fill, backend="xla")(x, out) == 16.0
    np.testing.assert_array_equal(out, 2.0 * x + 1.0)  # the write reached the caller
    assert zymase.jit(_halvings, backend="xla")(37.0) == _halvings(37.0)
    u0 = np.random.default_rng(0).random(9)
    _close(zymase.jit(_swap, backend="xla")(u0, 7), _swap(u0, 7))
    f32 = np.arange(5, dtype=np.float32)
    assert zymase.jit(_at, backend="xla")(f32, 3) == np.float32(6.0)
    with pytest.raises(ZymaseIndexError, match=r"test_xla.py:\d+:\d+: index 7 is out of bounds"):
        zymase.jit(_at, backend="xla")(np.arange(4.0), 7)


def test_what_xla_cannot_run_is_refused_at_the_line():
    with pytest.raises(UnsupportedError, match=r"test_xla.py:\d+:\d+: the XLA backend needs "
                                               "every array size"):
        zymase.jit(_sized_by_data, backend="xla")(np.array([3.0]))
    # a loop of many trips carries its arrays by value: refused where that shows
    with pytest.raises(UnsupportedError, match="writes into one that may be an argument"):
        zymase.jit(_swap_argument, backend="xla")(np.ones(5), 300)
    # a few trips are traced one by one (unrolled): the arrays stay what they are
    a, b = np.linspace(0.0, 1.0, 6), np.linspace(0.0, 1.0, 6)
    _close(zymase.jit(_swap_argument, backend="xla")(a, 3), zymase.jit(_swap_argument)(b, 3))
    _close(a, b)  # (the argument, written on the second trip)
    # the same loop in a helper: the helper's argument is the caller's buffer
    x = np.linspace(0.0, 1.0, 8)
    try:
        got = zymase.jit(_swap_in_helper, backend="xla")(x, 3)
    except UnsupportedError as e:
        assert "test_xla.py" in str(e) and "by value" in str(e), str(e)
    else:
        _close(got, zymase.jit(_swap_in_helper)(x, 3))
    with pytest.raises(UnsupportedError, match="split form"):
        zymase.grad(_recursive_norm, backend="xla")(np.arange(1.0, 9.0))


def _recursive_norm(x):
    return _halves(x) ** 0.5


def _halves(x):
    if x.shape[0] == 1:
        return x[0] * x[0]
    h = x.shape[0] // 2
    return _halves(x[:h]) + _halves(x[h:])


def _long_loop(x, n):
    s = 0.0
    for i in range(n):
        s += np.sin(x[i % x.shape[0]] * s + 0.001 * i)
    return s


def test_reverse_mode_tapes_of_any_length_and_second_order():
    """The tape's size is found by running: a call whose tape outgrows the first guess runs
    again with room for it; vjp runs the whole gradient; hvp is forward over reverse."""
    x = np.linspace(0.1, 0.9, 7)
    for n in (10, 5000):
        _close(zymase.grad(_long_loop, backend="xla")(x, n), zymase.grad(_long_loop)(x, n),
               rtol=1e-10)
    y, pull = zymase.vjp(_long_loop, x, 50, backend="xla")
    _close(pull(2.0)[0], 2.0 * zymase.grad(_long_loop)(x, 50), rtol=1e-10)
    v = np.linspace(-1, 1, 7)
    _close(zymase.hvp(_long_loop, backend="xla")(x, 20, v), zymase.hvp(_long_loop)(x, 20, v),
           rtol=1e-9)


def test_user_jax_configuration_is_left_alone():
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", False)
    try:
        r = zymase.jit(_fill, backend="xla")(np.full(3, 1.0 + 1e-12), np.zeros(3))
        assert r == 3 * (2.0 + 2e-12)  # float64 inside the computation
        assert not jax.config.jax_enable_x64
    finally:
        jax.config.update("jax_enable_x64", before)


def test_without_jax_the_backend_says_what_to_install(tmp_path):
    script = tmp_path / "no_jax.py"
    script.write_text(
        "import sys\nsys.modules['jax'] = None\nimport numpy as np, zymase\n"
        "def f(x):\n    return x * 2.0\n"
        "try:\n    zymase.jit(f, backend='xla')(1.0)\n"
        "except ImportError as e:\n    assert 'pip install jax' in str(e), e\n    print('ok')\n")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr[-2000:]


def _sweep(u, c):
    v = u.copy()
    prev = v[0]
    for i in range(1, v.shape[0] - 1):
        cur = v[i]
        v[i] = cur + c[i] * (prev - 2.0 * cur + v[i + 1])
        prev = cur
    s = 0.0
    for i in range(v.shape[0]):
        s += v[i] * v[i]
    return s


def test_explain_shows_how_each_loop_was_lowered_and_the_stablehlo():
    u, c = np.linspace(0.0, 1.0, 8), np.full(8, 0.2)
    text = zymase.explain(_sweep, u, c, transform="grad", argnums=(0, 1), backend="xla",
                          stages=["xla"], file=open(os.devnull, "w"))
    line = _sweep.__code__.co_firstlineno
    assert f"test_xla.py:{line + 3}:5: raised to array operations" in text, text[:800]
    assert "stablehlo." in text and "func.func public @main" in text
    assert np.array_equal(u, np.linspace(0.0, 1.0, 8))  # (ran on copies)
    with pytest.raises(ValueError, match="transform='jit', 'grad', 'jvp' or 'hvp'"):
        zymase.explain(_sweep, u, c, transform="vjp", backend="xla", stages=["xla"],
                       file=open(os.devnull, "w"))


def test_jax_arrays_in_jax_arrays_out():
    jnp = jax.numpy
    with jax.enable_x64(True):
        u, c = jnp.linspace(0.0, 1.0, 8), jnp.full(8, 0.2)
    want = zymase.grad(_sweep, argnums=(0, 1))(np.asarray(u), np.asarray(c))
    for backend in ("xla", "cpu"):
        got = zymase.grad(_sweep, argnums=(0, 1), backend=backend)(u, c)
        assert all(isinstance(g, jax.Array) and g.dtype == np.float64 for g in got)
        for g, w in zip(got, want):
            _close(g, w)
    assert isinstance(zymase.jit(_fill_twice, backend="xla")(u), jax.Array)


def test_a_jax_array_is_not_written_in_place():
    with jax.enable_x64(True):
        x = jax.numpy.ones(4)
    out = jax.numpy.zeros(4)
    with pytest.raises(ZymaseError, match="not writeable"):
        zymase.jit(_fill, backend="xla")(x, out)


def test_shardings_need_the_xla_backend():
    with pytest.raises(ValueError, match="needs backend='xla'"):
        zymase.jit(_sweep, in_shardings=None, out_shardings=jax.devices()[0])


def _fill_twice(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = 2.0 * x[i]
    return out
