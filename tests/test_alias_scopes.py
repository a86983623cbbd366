"""Scoped-noalias metadata (backends/llvm/alias.py): loops whose arrays the compiler knows apart
vectorize without run-time overlap checks, also under an outer loop that runs backwards (where
LLVM's hoisted checks always fail), and arrays that do share memory still give CPython's
results."""

import numpy as np
import pytest

import zymase


def accumulate_rows_backwards(acc, g, rows):
    for t in range(rows.shape[0] - 1, -1, -1):
        for i in range(acc.shape[0]):
            acc[i] += g[i] * rows[t, i]


def scratch_backwards(out, x, steps):
    n = x.shape[0]
    w = np.zeros(n)  # an allocation: apart from the arguments
    for t in range(steps - 1, -1, -1):
        for i in range(n):
            w[i] = x[i] * t
        for i in range(n):
            out[i] += w[i]


def _inputs(n=37, rows=5):
    rng = np.random.default_rng(1)
    return np.zeros(n), rng.standard_normal(n), rng.standard_normal((rows, n))


@pytest.mark.parametrize("fn,make", [
    (accumulate_rows_backwards, _inputs),
    (scratch_backwards, lambda: (np.zeros(37), np.linspace(0.0, 1.0, 37), 6)),
])
def test_arrays_known_apart_need_no_overlap_checks(fn, make):
    f = zymase.jit(fn)
    want, got = make(), make()
    fn(*want)
    f(*got)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-13)
    spec = f.specialization(*make())
    assert "!alias.scope" in spec.llvm_ir
    optimized = spec.entry.compiled.llvm_ir
    assert "vector.body" in optimized
    assert "found.conflict" not in optimized  # no run-time overlap check left to fail


def test_arrays_that_share_memory_keep_cpython_results():
    f = zymase.jit(accumulate_rows_backwards)
    for shift in (0, 1, 3):  # acc and g are views of one buffer, `shift` elements apart
        want_buf = np.linspace(0.5, 1.5, 40)
        got_buf = want_buf.copy()
        rows = np.random.default_rng(2).standard_normal((4, 37))
        accumulate_rows_backwards(want_buf[shift:shift + 37], want_buf[:37], rows)
        f(got_buf[shift:shift + 37], got_buf[:37], rows)
        np.testing.assert_allclose(got_buf, want_buf, rtol=1e-13)
    # the same for one array passed twice, and a row of `rows` passed as `acc`
    a, b = np.linspace(1.0, 2.0, 37), np.linspace(1.0, 2.0, 37)
    rows = np.random.default_rng(3).standard_normal((3, 37))
    accumulate_rows_backwards(a, a, rows)
    f(b, b, rows)
    np.testing.assert_allclose(b, a, rtol=1e-13)
    r1, r2 = rows.copy(), rows.copy()
    accumulate_rows_backwards(r1[1], np.ones(37), r1)
    f(r2[1], np.ones(37), r2)
    np.testing.assert_allclose(r2, r1, rtol=1e-13)


def test_gradient_through_scopes_matches_differences():
    # the derivative's tape, local shadows and arguments each get their own class
    def loss(x, rows):
        acc = np.zeros(x.shape[0])
        for t in range(rows.shape[0] - 1, -1, -1):
            for i in range(x.shape[0]):
                acc[i] += x[i] * x[i] * rows[t, i]
        return (acc * acc).sum()

    rng = np.random.default_rng(4)
    x, rows = rng.standard_normal(9), rng.standard_normal((4, 9))
    g = zymase.grad(loss)(x, rows)
    h = 1e-6
    fd = np.array([(loss(x + h * e, rows) - loss(x - h * e, rows)) / (2 * h)
                   for e in np.eye(9)])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
