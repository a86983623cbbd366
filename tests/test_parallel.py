"""prange loops: primal and derivatives against CPython and central differences, with 1, 2 and 4
threads, and in the interpreter with the iterations shuffled (code that depends on their order
shows there); the refusals at the user's line."""

from __future__ import annotations

import io
import random
import threading

import numpy as np
import parallel_programs as P
import pytest
from autodiff.ad_check import check_grads

import zymase
import zymase.ir.interp as interp
from zymase.errors import UnsupportedError

RNG = np.random.default_rng(7)
X = RNG.random(37)
A = RNG.random((9, 11))
POS, Q = RNG.random((12, 3)), RNG.random(12) + 0.5
IDX, W = RNG.integers(0, 6, 40), RNG.random(40)

# name -> (arguments, the indices of the arguments to differentiate, or None)
CASES = {
    "total": ((X,), (0,)),
    "stats": ((X,), (0,)),
    "squares_into": ((X, np.zeros(37)), (0,)),
    "last_value": ((X,), (0,)),
    "strided": ((X,), (0,)),
    "empty_range": ((X,), None),
    "histogram": ((IDX, W, 6), (1,)),
    "scatter": ((IDX, W, np.zeros(7)), (1, 2)),
    "stencil2d": ((A, 0.1), (0, 1)),
    "pairwise": ((POS, Q), (0, 1)),
    "rows": ((A, A[0].copy()), (0, 1)),
    "calls": ((X,), (0,)),
    "skips": ((X,), (0,)),
    "nested_prange": ((A,), (0,)),
    "complex_sum": ((X + 1j * X[::-1],), None),
    "int_sum": ((IDX,), None),
}


def fresh(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


@pytest.fixture
def threads():
    before = zymase.get_num_threads()
    yield zymase.set_num_threads
    zymase.set_num_threads(before)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("n", [1, 2, 4])
def test_primal_matches_python(name, n, threads):
    threads(n)
    f = getattr(P, name)
    args, _ = CASES[name]
    want = f(*fresh(args))
    got = zymase.jit(f)(*fresh(args))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(CASES))
def test_shuffled_order_in_the_interpreter(name):
    f = getattr(P, name)
    args, _ = CASES[name]
    want = f(*fresh(args))
    interp.SHUFFLE = random.Random(3)
    try:
        got = zymase.jit(f, backend="interp")(*fresh(args))
    finally:
        interp.SHUFFLE = None
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(k for k, (_, nums) in CASES.items() if nums))
@pytest.mark.parametrize("n", [1, 2])
def test_derivatives(name, n, threads):
    threads(n)
    args, nums = CASES[name]
    check_grads(getattr(P, name), fresh(args), argnums=nums)


def _llvm(f, *args, transform="jit"):
    return zymase.explain(f, *args, stages=["llvm"], llvm=True, transform=transform,
                          file=io.StringIO())


@pytest.mark.parametrize("name", ["total", "stats", "squares_into", "histogram", "stencil2d",
                                  "pairwise", "rows", "calls", "complex_sum", "int_sum"])
def test_the_loop_runs_on_the_pool(name):
    """A check that the loops above were not quietly run serially."""
    args, _ = CASES[name]
    assert "call void @zy.parallel_for" in _llvm(getattr(P, name), *fresh(args))


def test_forward_mode_stays_parallel():
    assert "call void @zy.parallel_for" in _llvm(P.total, X, transform="jvp")


def test_an_error_in_one_iteration_is_raised_at_its_line(threads):
    threads(2)
    with pytest.raises(IndexError) as e:
        zymase.jit(P.raises)(X, 1)
    assert "parallel_programs.py:" in str(e.value) and "index 37" in str(e.value)
    assert zymase.jit(P.raises)(X, 0) == pytest.approx(np.sum(X))


def test_many_python_threads_at_once(threads):
    threads(2)
    f = zymase.jit(P.pairwise)
    want = P.pairwise(POS, Q)
    bad = []

    def work():
        for _ in range(30):
            if abs(f(POS, Q) - want) > 1e-9 * abs(want):
                bad.append(1)

    ts = [threading.Thread(target=work) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not bad


def test_large_reduction_with_many_threads(threads):
    x = RNG.random(1_000_003)
    for n in (1, 2, 3, 4, 8):
        threads(n)
        assert zymase.jit(P.total)(x) == pytest.approx(np.dot(x, x), rel=1e-12)


# ---- refusals, at the user's line

def carried(x):
    s = 0.0
    for i in zymase.prange(x.shape[0]):
        s = s * 0.5 + x[i]
    return s


def shifted(x, out):
    for i in zymase.prange(1, x.shape[0]):
        out[i] = out[i - 1] + x[i]


def same_element(x, out):
    for i in zymase.prange(x.shape[0]):
        out[0] = x[i]


def breaks(x):
    s = 0.0
    for i in zymase.prange(x.shape[0]):
        if x[i] > 0.5:
            break
        s += x[i]
    return s


def shared_multiply(idx, x):
    h = np.ones(4)
    for i in zymase.prange(x.shape[0]):
        h[idx[i]] *= x[i]
    return h


def shared_slice(x, out):
    for i in zymase.prange(x.shape[0]):
        out[:] += x[i]


def reads_scattered(idx, w, h):
    for i in zymase.prange(idx.shape[0]):
        h[idx[i]] += w[i] * h[idx[i] % 3]


@pytest.mark.parametrize("fn, args, words, line", [
    (carried, (X,), "`s` carries a value from one iteration", "s = s * 0.5 + x[i]"),
    (shifted, (X, np.zeros(37)), "reads `out[i - 1]`, which another iteration writes",
     "out[i] = out[i - 1] + x[i]"),
    (same_element, (X, np.zeros(3)), "writes the same element of `out`", "out[0] = x[i]"),
    (breaks, (X,), "cannot `break` or `return`", "for i in zymase.prange"),
    (shared_multiply, (IDX[:37], X), "can only be updated with `+=` or `-=`",
     "h[idx[i]] *= x[i]"),
    (shared_slice, (X, np.zeros(3)), "would race between iterations", "out[:] += x[i]"),
    (reads_scattered, (IDX, W, np.zeros(6)), "reads `h[idx[i] % 3]` while its iterations update",
     "h[idx[i]] += w[i] * h[idx[i] % 3]"),
])
def test_refusals(fn, args, words, line):
    with pytest.raises(UnsupportedError) as e:
        zymase.jit(fn)(*fresh(args))
    msg = str(e.value)
    assert words in msg and line in msg and "test_parallel.py:" in msg, msg
    assert zymase.__path__[0] not in msg


# ---- deterministic=True

@pytest.mark.parametrize("name, args", [("total", (RNG.random(100_003),)),
                                        ("stats", (RNG.random(5001),)),
                                        ("histogram", (IDX, W, 6))])
def test_deterministic_results_do_not_depend_on_the_thread_count(name, args, threads):
    f = zymase.jit(getattr(P, name), deterministic=True)
    got = set()
    for n in (1, 2, 3, 4, 7):
        threads(n)
        got.add(float(f(*fresh(args))).hex())
    assert len(got) == 1, got
    assert float.fromhex(got.pop()) == pytest.approx(getattr(P, name)(*fresh(args)), rel=1e-12)


def test_deterministic_keeps_reductions_parallel_and_atomics_serial():
    f = zymase.jit(P.total, deterministic=True)
    text = zymase.explain(f, X, stages=["llvm"], llvm=True, file=io.StringIO())
    assert "call void @zy.parallel_for" in text and ".blocks" in text
    h = zymase.jit(P.histogram, deterministic=True)
    assert "call void @zy.parallel_for" not in zymase.explain(
        h, IDX, W, 6, stages=["llvm"], llvm=True, file=io.StringIO())


# ---- vmap

def predict(w, x):
    return np.tanh(w @ x)


def two_results(x, k):
    return np.sum(x) * k, x * 2.0


def count(x):
    return int(np.sum(x > 0.5))


def test_vmap_matches_a_python_loop(threads):
    threads(2)
    w, xs = RNG.random((4, 3)), RNG.random((10, 3))
    got = zymase.vmap(predict, in_axes=(None, 0))(w, xs)
    np.testing.assert_allclose(got, np.stack([predict(w, x) for x in xs]), rtol=1e-14)
    s, d = zymase.vmap(two_results, in_axes=(1, None), out_axes=-1)(xs, 3.0)
    np.testing.assert_allclose(s, [np.sum(xs[:, b]) * 3.0 for b in range(3)], rtol=1e-14)
    np.testing.assert_allclose(d, 2.0 * xs, rtol=1e-14)
    c = zymase.vmap(count)(xs)
    assert c.dtype == np.int64 and list(c) == [count(x) for x in xs]


def test_vmap_checks_its_arguments():
    xs = RNG.random((10, 3))
    with pytest.raises(ValueError, match="different sizes"):
        zymase.vmap(predict, in_axes=(0, 0))(RNG.random((4, 3, 3)), xs)
    with pytest.raises(ValueError, match="no axis 2"):
        zymase.vmap(count, in_axes=2)(xs)
    with pytest.raises(TypeError, match="vmap of what `zymase.hessian` returned is not supported"):
        zymase.vmap(zymase.hessian(count))
    with pytest.raises(TypeError, match="has_aux=True is not supported"):
        zymase.vmap(zymase.grad(count, has_aux=True))


def layer(w, x):
    return np.tanh(w @ x) * x[0]


@pytest.mark.parametrize("n", [1, 2])
def test_vmap_of_jacrev_gives_per_example_jacobians(n, threads):
    threads(n)
    w, xs = RNG.standard_normal((3, 4)), RNG.standard_normal((9, 4))
    got = zymase.vmap(zymase.jacrev(layer, argnums=(0, 1)), in_axes=(None, 0))(w, xs)
    for k in range(2):
        want = np.stack([zymase.jacrev(layer, argnums=k)(w, x) for x in xs])
        assert got[k].shape == want.shape
        np.testing.assert_allclose(got[k], want, rtol=1e-12, atol=1e-14)
    one = zymase.vmap(zymase.jacrev(mlp_loss, argnums=0), in_axes=(None, None, 0, 1))
    w1, w2, ys = RNG.standard_normal((4, 7)), RNG.standard_normal(7), RNG.random((2, 9))
    np.testing.assert_allclose(one(w1, w2, xs, ys), zymase.vmap(
        zymase.grad(mlp_loss), in_axes=(None, None, 0, 1))(w1, w2, xs, ys), rtol=1e-12)


def mlp_loss(w1, w2, x, y):
    h = np.tanh(x @ w1)
    return (np.sum(h * w2) - y[0]) ** 2 + y[1] * np.sum(w1 * w1)


@pytest.mark.parametrize("n", [1, 2, 4])
def test_vmap_of_grad_gives_per_example_gradients(n, threads):
    """Shared weights (a copy per example), batched data on axis 0 and on axis 1."""
    threads(n)
    w1, w2 = RNG.standard_normal((5, 7)), RNG.standard_normal(7)
    xs, ys = RNG.standard_normal((33, 5)), RNG.standard_normal((2, 33))
    g = zymase.grad(mlp_loss, argnums=(0, 1, 2))
    want = [g(w1, w2, xs[b], ys[:, b]) for b in range(33)]
    got = zymase.vmap(g, in_axes=(None, None, 0, 1))(w1, w2, xs, ys)
    for k in range(3):
        assert got[k].shape == (33,) + want[0][k].shape
        np.testing.assert_allclose(got[k], np.stack([w[k] for w in want]), rtol=1e-12,
                                   atol=1e-12)
    v, g1 = zymase.vmap(zymase.value_and_grad(mlp_loss), in_axes=(None, None, 0, 1),
                        out_axes=-1)(w1, w2, xs, ys)
    np.testing.assert_allclose(v, [mlp_loss(w1, w2, xs[b], ys[:, b]) for b in range(33)],
                               rtol=1e-13)
    np.testing.assert_allclose(np.moveaxis(g1, -1, 0), got[0], rtol=1e-12, atol=1e-12)
    # the function vmap differentiates: its forward loop and its adjoint loop on the pool
    summed = zymase.api.vmap._write_sum(mlp_loss, 4, (True, True, True, True))
    copies = [np.stack([w] * 33) for w in (w1, w2)]
    text = _llvm(summed, *copies, xs, ys.T.copy(), np.empty(33), transform="grad")
    assert text.count("call void @zy.parallel_for") >= 2


GRAD_TOTAL = zymase.grad(P.total)


def uses_grad_inside(x):
    return GRAD_TOTAL(x)


def test_a_transform_called_in_compiled_code_is_refused():
    """It used to compile the function the transform wraps and return its value."""
    with pytest.raises(UnsupportedError, match="calling `zymase.grad` inside a compiled"):
        zymase.jit(uses_grad_inside)(X)


def doubled(fn):
    import functools

    @functools.wraps(fn)
    def wrapper(x):
        return 2.0 * fn(x)
    return wrapper


@doubled
def decorated(x):
    return x * x


def calls_decorated(x):
    return decorated(x)


def test_a_functools_wraps_decorator_runs_the_wrapper():
    assert zymase.jit(calls_decorated)(3.0) == 18.0 == calls_decorated(3.0)


BIG = RNG.random((300, 120))  # (36,000 elements: over the grain)
NUMPY_CASES = {"array_expressions": (BIG, BIG[::-1].copy()), "normalize_rows": (BIG,),
               "softmax_loss": (BIG, BIG[0].copy())}


@pytest.mark.parametrize("name", sorted(NUMPY_CASES))
@pytest.mark.parametrize("n", [1, 2, 4])
def test_jit_parallel_runs_numpy_code_on_the_pool(name, n, threads):
    threads(n)
    f, args = getattr(P, name), NUMPY_CASES[name]
    want = f(*fresh(args))
    got = zymase.jit(f, parallel=True)(*fresh(args))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    small = tuple(a[:3] if a.ndim == 2 else a for a in args)  # under the grain: one thread
    np.testing.assert_allclose(zymase.jit(f, parallel=True)(*small), f(*small), rtol=1e-12)
    assert "call void @zy.parallel_for" in _llvm(zymase.jit(f, parallel=True), *fresh(args))
    assert "call void @zy.parallel_for" not in _llvm(f, *fresh(args))


def test_jit_parallel_derivatives_and_shuffled_order(threads):
    threads(2)
    x, w = RNG.random((40, 500)), RNG.random(500)
    g = zymase.grad(P.softmax_loss, argnums=(0, 1), parallel=True)(x, w)
    want = zymase.grad(P.softmax_loss, argnums=(0, 1))(x, w)
    for a, b in zip(g, want):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-13)
    interp.SHUFFLE = random.Random(5)
    try:
        got = zymase.jit(P.array_expressions, parallel=True, backend="interp")(BIG, BIG.T.copy().T)
    finally:
        interp.SHUFFLE = None
    np.testing.assert_allclose(got, P.array_expressions(BIG, BIG.copy()), rtol=1e-12)
