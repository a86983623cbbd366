"""The backend interface: the interpreter backend gives the CPU backend's results on every corpus
problem and on random programs (primal, gradients, forward mode, vjp, Hessians), errors name the
user's line on both, and a backend defined here is registered and selected with ``backend=``
without touching zymase's source."""

from __future__ import annotations

import tempfile

import numpy as np
import progen
import pytest
from conftest import corpus

import zymase
from zymase.backends import Backend, Capabilities, InterpBackend, register_backend
from zymase.backends.interp.backend import InterpExecutable
from zymase.errors import ZymaseError

PROBLEMS = ("relu3", "taylor", "norm", "gmm", "ba", "lstm", "heat1d", "nbody", "rk4", "fft")
SIZE = {"ba": "adbench_test"}
_TMP = tempfile.TemporaryDirectory(prefix="zymase_backends_")


def _copies(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


SCALAR_MATH = ("vector-math",)


@pytest.mark.parametrize("name", PROBLEMS)
def test_interp_backend_matches_cpu_on_the_corpus(name):
    """Both backends run the same optimized IR with the same libm (the CPU backend's vector
    math, within 4 ulp, switched off): equal to the last bit."""
    mod = corpus().load(name)
    args = mod.make_inputs(SIZE.get(name, "small"))
    active = tuple(mod.ACTIVE)
    cpu_args, interp_args = _copies(args), _copies(args)
    want = zymase.jit(mod.primal, disable=SCALAR_MATH)(*cpu_args)
    got = zymase.jit(mod.primal, backend="interp")(*interp_args)
    assert got == want and type(got) is type(want)
    for a, b in zip(cpu_args, interp_args):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
    value, grads = zymase.value_and_grad(mod.primal, active, disable=SCALAR_MATH)(*args)
    ivalue, igrads = zymase.value_and_grad(mod.primal, active, backend="interp")(*args)
    assert ivalue == value
    for g, ig in zip(grads, igrads):
        np.testing.assert_array_equal(ig, g)


def _load(prog):
    return progen.load(prog, _TMP.name, "zymase_backends")


def _same(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
    else:
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def _run(fn, *args):
    """(result, arguments after the call) or the exception type raised."""
    args = _copies(args)
    try:
        with np.errstate(all="ignore"):
            return fn(*args), args
    except ZymaseError as e:
        return type(e), None


def test_interp_backend_matches_cpu_on_random_programs():
    """progen's programs (loops, branches, early exits, views, helpers): primal results, final
    argument contents, gradients and jvps agree exactly; a run-time error is the same error."""
    assert _interp_matches(range(16)) >= 10


@pytest.mark.slow
def test_interp_backend_matches_cpu_on_many_random_programs():
    assert _interp_matches(range(16, 104)) >= 55


def _interp_matches(seeds) -> int:
    compared = 0
    for seed in seeds:
        rng = np.random.default_rng(seed)
        size = int(rng.integers(3, 9))
        x, y = rng.uniform(-2, 2, 2)
        a, b = rng.uniform(-2, 2, size), rng.uniform(-2, 2, size)
        n = int(rng.integers(1, progen.MAX_N + 1))
        # (no whole-array NumPy statements: vectorized math may differ from the interpreter's
        # in the last bit, 4 ulp at most)
        F = _load(progen.random_program(seed, numpy=False)).F
        want = _run(zymase.jit(F), x, y, a, b, n)
        got = _run(zymase.jit(F, backend="interp"), x, y, a, b, n)
        _same(got[0], want[0])
        if want[1] is None:
            continue
        _same(tuple(got[1][2:4]), tuple(want[1][2:4]))
        grads = [_run(zymase.grad(F, argnums=(0, 1, 2, 3), backend=be), x, y, a, b, n)[0]
                 for be in ("cpu", "interp")]
        _same(grads[1], grads[0])
        t = (1.0, -0.5, np.linspace(-1, 1, size), np.ones(size), None)
        jvps = [zymase.jvp(F, (x, y, a.copy(), b.copy(), n), t, backend=be)
                for be in ("cpu", "interp")]
        _same(jvps[1], jvps[0])
        compared += 1
    return compared


def test_interp_backend_vjp_hessian_and_autodiff():
    mod = corpus().load("heat1d")
    u0, c, steps = mod.make_inputs("small")
    for be in ("cpu", "interp"):
        y, pullback = zymase.vjp(mod.primal, u0, c, 4, backend=be)
        du, dc, _ = pullback(1.0)
        want = zymase.grad(mod.primal, (0, 1))(u0, c, 4)
        np.testing.assert_allclose(du, want[0], rtol=1e-13)
        np.testing.assert_allclose(dc, want[1], rtol=1e-13)
    x = np.array([0.3, -0.2, 0.5])
    np.testing.assert_array_equal(zymase.hessian(_rosen, backend="interp")(x),
                                  zymase.hessian(_rosen)(x))
    out, d_out = np.zeros(3), np.ones(3)
    dx = np.zeros(3)
    zymase.autodiff(zymase.Reverse, _squares, zymase.Duplicated(out, d_out),
                    zymase.Duplicated(x.copy(), dx), backend="interp")
    np.testing.assert_allclose(dx, 2 * x)


def _rosen(x):
    s = 0.0
    for i in range(x.shape[0] - 1):
        s += 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return s


def _squares(out, x):
    for i in range(x.shape[0]):
        out[i] = x[i] * x[i]


def _index(a, i):
    return a[i] * 2.0


@pytest.mark.parametrize("backend", ["cpu", "interp"])
def test_run_time_errors_name_the_users_line(backend):
    with pytest.raises(zymase.ZymaseIndexError) as info:
        zymase.jit(_index, backend=backend)(np.zeros(3), 5)
    assert f"{__file__}:" in str(info.value) and "return a[i] * 2.0" in str(info.value)


def test_read_only_arrays_are_refused_where_the_code_writes():
    x = np.ones(3)
    out = np.zeros(3)
    out.flags.writeable = False
    with pytest.raises(ZymaseError, match="read-only"):
        zymase.jit(_squares, backend="interp")(out, x)


class _Counting(InterpBackend):
    """The interpreter, counting what it compiles and runs (a backend a user might write)."""

    name = "counting"

    def __init__(self):
        self.compiled, self.calls = [], 0

    def compile(self, module, entries, options, *, count_tape=False):
        self.compiled.append(tuple(entries))
        artifact = super().compile(module, entries, options)
        owner = self

        class Counted(InterpExecutable):
            def call(self, flat, globals_=()):
                owner.calls += 1
                return super().call(flat, globals_)

        artifact.entries = {name: Counted(module, name) for name in entries}
        return artifact


def _poly(x, n):
    s = 0.0
    for i in range(1, n + 1):
        s += x ** i / i
    return s


def test_a_backend_defined_here_is_selected_by_name():
    backend = register_backend(_Counting())
    f = zymase.jit(_poly, backend="counting")
    assert f(0.5, 10) == pytest.approx(_poly(0.5, 10), rel=1e-15)
    assert f(0.25, 10) == pytest.approx(_poly(0.25, 10), rel=1e-15)
    assert backend.calls == 2 and len(backend.compiled) == 1
    g = zymase.grad(_poly, backend="counting")(0.5, 10)
    assert g == pytest.approx(sum(0.5 ** (i - 1) for i in range(1, 11)), rel=1e-14)
    assert len(backend.compiled) == 2 and "grad" in backend.compiled[-1][0]
    _, t = zymase.jvp(_poly, (0.5, 10), (1.0, None), backend="counting")
    assert t == pytest.approx(g, rel=1e-14) and len(backend.compiled) == 3


def test_a_backend_instance_can_be_passed_directly():
    backend = _Counting()
    backend.name = "counting-instance"
    assert zymase.grad(_poly, backend=backend)(0.5, 3) == pytest.approx(1 + 0.5 + 0.25)
    assert backend.calls == 1


class _NoTape(Backend):
    """A backend that runs no reverse-mode tape (like an accelerator without one)."""

    name = "no-tape"
    capabilities = Capabilities(dialects=Capabilities().dialects - {"tape"})

    def compile(self, module, entries, options, *, count_tape=False):
        return InterpBackend().compile(module, entries, options)


def _carried(x, n):
    s = x
    for _ in range(n):
        s = s * x + 1.0
    return s


def test_what_a_backend_cannot_run_is_refused_at_the_users_line():
    register_backend(_NoTape())
    assert zymase.jit(_carried, backend="no-tape")(0.5, 3) == _carried(0.5, 3)
    with pytest.raises(zymase.UnsupportedError, match="no-tape backend cannot run tape") as e:
        zymase.grad(_carried, backend="no-tape")(0.5, 3)
    assert f"{__file__}:" in str(e.value)


def test_unknown_backend_names_are_refused_with_the_choices():
    with pytest.raises(ValueError, match="unknown backend 'gpu'.*cpu.*interp"):
        zymase.jit(_poly, backend="gpu")
    with pytest.raises(ValueError, match="unknown backend"):
        zymase.grad(_poly, backend="gpu")(0.5, 3)
    with pytest.raises(TypeError, match="Backend instance"):
        register_backend(object())


def test_tape_report_needs_a_backend_that_counts():
    with pytest.raises(zymase.UnsupportedError, match="does not count tape slots") as e:
        zymase.tape_report(_carried, 0.5, 3, backend="interp")
    assert f"{__file__}:" in str(e.value)


class _Functional(Backend):
    """A backend whose arrays are values (like XLA's): writes into arguments cannot reach the
    caller."""

    name = "functional"
    capabilities = Capabilities(mutation=False)

    def compile(self, module, entries, options, *, count_tape=False):
        return InterpBackend().compile(module, entries, options)


def test_writes_into_arguments_are_refused_where_a_backend_cannot_make_them():
    register_backend(_Functional())
    assert zymase.jit(_poly, backend="functional")(0.5, 3) == pytest.approx(_poly(0.5, 3))
    with pytest.raises(zymase.UnsupportedError, match="cannot write into argument arrays") as e:
        zymase.jit(_squares, backend="functional")(np.zeros(3), np.ones(3))
    assert f"{__file__}:" in str(e.value)


@pytest.mark.parametrize("transform", ["jacfwd", "jacrev", "hessian"])
def test_jacobians_on_the_interp_backend(transform):
    x = np.array([0.3, -0.2, 0.5, 0.9])
    fn = getattr(zymase, transform)
    np.testing.assert_array_equal(fn(_rosen, backend="interp")(x), fn(_rosen)(x))


def test_hvp_on_the_interp_backend():
    x, v = np.array([0.3, -0.2, 0.5]), np.array([1.0, 0.5, -1.0])
    np.testing.assert_array_equal(zymase.hvp(_rosen, backend="interp")(x, v),
                                  zymase.hvp(_rosen)(x, v))


def test_every_op_has_an_llvm_emitter():
    """A new op needs a row in the LLVM backend's table (region ops, calls and terminators are
    emitted by emit.py itself), as it needs one in the interpreter's (tests/ir/test_interp.py)."""
    from zymase.backends.llvm.table import OP_EMITTERS
    from zymase.ir.core import OPS
    from zymase.ir.ops import Call, Condition, For, Func, If, Parallel, Return, While, Yield

    by_emit_py = {For, Parallel, While, If, Call, Yield, Condition, Return, Func}
    missing = [c.name for c in OPS.values() if c not in OP_EMITTERS and c not in by_emit_py]
    assert missing == []


def test_zymase_backend_sets_the_default(monkeypatch):
    monkeypatch.setenv("ZYMASE_BACKEND", "interp")
    f = zymase.jit(_poly)
    assert f.options.backend == "interp"
    assert f(0.5, 4) == pytest.approx(_poly(0.5, 4), rel=1e-15)
    assert isinstance(f.specialization(0.5, 4).entry, InterpExecutable)
    assert zymase.jit(_poly, backend="cpu").options.backend == "cpu"
