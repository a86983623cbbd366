"""``scipy.special`` in compiled code (``frontend/numpy/special.py``): expit, logit, log_expit,
erf, erfc, gammaln, digamma/psi, xlogy, xlog1py, logsumexp, softmax and log_softmax against
SciPy (values, shapes, dtypes, NumPy scalars) on numbers and arrays of float64, float32 and
int64, their edge values, and derivatives against central differences in reverse mode
(``zymase.grad``) and forward mode (``zymase.jvp``).  ``import zymase`` does not import SciPy."""

import subprocess
import sys

import numpy as np
import pytest
from numpy_check import central_differences

import zymase
from zymase.errors import UnsupportedError

sp = pytest.importorskip("scipy.special")

# value tolerances (rtol, atol): libm's float32 functions and SciPy's may differ by an ulp or two
TOL = {np.dtype(np.float64): (1e-12, 1e-14), np.dtype(np.float32): (2e-6, 1e-6)}


def same(got, want, tol=None):
    """``got`` (compiled) is SciPy's ``want``: same dtype, shape, NumPy scalar or array; close
    values (NaN where SciPy has NaN, infinities of the same sign)."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for k, (g, w) in enumerate(zip(got, want)):
            try:
                same(g, w, tol)
            except AssertionError as e:
                raise AssertionError(f"result {k}: {e}") from None
        return
    assert np.asarray(got).dtype == np.asarray(want).dtype, (np.asarray(got).dtype,
                                                             np.asarray(want).dtype)
    assert isinstance(got, np.ndarray) == isinstance(want, np.ndarray), (type(got), type(want))
    assert isinstance(got, np.generic) == isinstance(want, np.generic), (type(got), type(want))
    assert np.shape(got) == np.shape(want)
    rtol, atol = tol or TOL[np.asarray(want).dtype]
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def check(fn, *args, tol=None):
    same(zymase.jit(fn)(*args), fn(*args), tol)


RNG = np.random.default_rng(20240601)
SHAPES = [(), (7,), (3, 4)]
DTYPES = [np.float64, pytest.param(np.float32, marks=pytest.mark.slow), np.int64]


def sample(shape, dtype, lo, hi):
    """Uniform values in [lo, hi) of ``dtype`` (integers rounded); a Python number for ``()``
    (float64 and int64) or a NumPy float32."""
    x = RNG.uniform(lo, hi, shape)
    if np.dtype(dtype).kind == "i":
        x = np.round(x)
    x = x.astype(dtype)
    if shape == ():
        return x.item() if dtype != np.float32 else np.float32(x)
    return x


# ---------------------------------------------------------------------- elementwise


def reals(x):
    return sp.expit(x), sp.log_expit(x), sp.erf(x), sp.erfc(x)


def unit(x):
    return sp.logit(x)


def gammas(x):
    return sp.gammaln(x), sp.digamma(x), sp.psi(x)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_elementwise_against_scipy(shape, dtype):
    check(reals, sample(shape, dtype, -6.0, 6.0))
    lo, hi = (0, 2) if dtype == np.int64 else (0.01, 0.99)  # (ints: logit(0), logit(1): -inf, inf)
    check(unit, sample(shape, dtype, lo, hi))
    check(gammas, sample(shape, dtype, 1.0 if dtype == np.int64 else 0.05, 7.0))
    if shape:  # negative non-integers: log|gamma| and digamma between the poles
        x = sample(shape, np.float64, -4.0, 0.0)
        x[np.abs(x - np.round(x)) < 0.05] += 0.2
        check(gammas, x.astype(dtype) if dtype != np.int64 else x)


def xlogs(x, y):
    return sp.xlogy(x, y), sp.xlog1py(x, y)


PAIRS = [((), ()), ((6,), (6,)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((), (2, 3))]


@pytest.mark.parametrize("shapes", PAIRS)
@pytest.mark.parametrize("dtypes", [(np.float64, np.float64),
                                    pytest.param((np.float32, np.float32), marks=pytest.mark.slow),
                                    (np.float32, np.float64), (np.int64, np.int64)])
def test_xlogy_against_scipy(shapes, dtypes):
    x = sample(shapes[0], dtypes[0], -3.0, 3.0)
    y = sample(shapes[1], dtypes[1], 0.0, 4.0)
    check(xlogs, x, y)


def xlogs_weak(x):
    return sp.xlogy(x, 2.5), sp.xlog1py(0.5, x)


def test_xlogy_python_numbers_are_float64():  # (SciPy's ufuncs: not NumPy's weak promotion)
    check(xlogs_weak, sample((5,), np.float32, 0.0, 3.0))
    check(xlogs_weak, 1.5)


def test_elementwise_edge_values():
    inf, nan = np.inf, np.nan
    big = np.array([-800.0, -100.0, -30.0, -1e-9, 0.0, 1e-9, 30.0, 100.0, 800.0, inf, -inf, nan])
    check(reals, big)
    check(reals, big.astype(np.float32), tol=(2e-6, 1e-37))  # (f32 expit(-100): 0 or e^-100)
    got = zymase.jit(reals)(big)
    assert got[0][0] == 0.0 and got[0][8] == 1.0 and got[1][0] == -800.0  # no overflow
    check(unit, np.array([0.0, 1.0, 0.5, 0.3, 0.65, 0.5000001, 1e-300, 1 - 1e-16, -0.5, 1.5, nan]))
    check(gammas, np.array([1.0, 2.0, 0.5, 1e-8, 170.5, 1e5, 1.4616321449683622]),
          tol=(1e-12, 1e-15))
    x = np.array([0.0, 0.0, 0.0, 0.0, 0.0, -0.0, nan, 2.0, 0.0])
    y = np.array([0.0, -1.0, inf, 0.5, nan, 0.5, 1.0, 0.0, -2.0])
    got = zymase.jit(xlogs)(x, y)
    same(got, xlogs(x, y))
    zero = (x == 0) & ~np.isnan(y)
    assert not np.signbit(got[0][zero]).any() and not np.signbit(got[1][zero]).any()  # +0.0
    check(xlogs, 0.0, 0.0)


# ---------------------------------------------------------------------- reductions


def lse_all(a):
    return (sp.logsumexp(a), sp.logsumexp(a, keepdims=True), sp.logsumexp(a, axis=0),
            sp.logsumexp(a, axis=-1, keepdims=True))


def lse_2d(a):
    return (sp.logsumexp(a, axis=1), sp.logsumexp(a, 0, keepdims=True),
            sp.logsumexp(a, axis=-2))


def soft(a):
    return sp.softmax(a), sp.softmax(a, axis=0), sp.log_softmax(a), sp.log_softmax(a, axis=-1)


def soft_2d(a):
    return sp.softmax(a, axis=1), sp.log_softmax(a, axis=0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(6,), (3, 5), (2, 3, 4)])
def test_reductions_against_scipy(shape, dtype):
    a = sample(shape, dtype, -5.0, 5.0)
    # (a sum that nearly cancels the maximum: SciPy's rounding and ours differ by an ulp of it)
    tol = (1e-12, 1e-14) if dtype != np.float32 else (1e-5, 1e-5)
    check(lse_all, a, tol=tol)
    check(soft, a, tol=tol)
    if len(shape) > 1:
        check(lse_2d, a, tol=tol)
        check(soft_2d, a, tol=tol)


def lse_number(x):
    return sp.logsumexp(x), sp.logsumexp(x, keepdims=True), sp.softmax(x), sp.log_softmax(x)


def test_reductions_of_numbers():
    check(lse_number, 2.5)
    check(lse_number, np.float32(-1.5))
    check(lse_number, 3)


def lse_weighted(a, b):
    return sp.logsumexp(a, b=b), sp.logsumexp(a, axis=1, b=b), sp.logsumexp(a, 0, b, True)


def lse_weighted_number(a):
    return sp.logsumexp(a, b=2.0), sp.logsumexp(a, axis=1, b=0.5)


def test_logsumexp_weights():
    a = RNG.standard_normal((3, 4))
    check(lse_weighted, a, RNG.uniform(0.1, 2.0, (3, 4)))
    check(lse_weighted, a, RNG.uniform(0.1, 2.0, 4))
    check(lse_weighted, a.astype(np.float32), RNG.uniform(0.1, 2.0, (3, 4)).astype(np.float32),
          tol=(1e-5, 1e-5))
    b = np.array([[1.0, 0.0, 2.0, 0.0], [1.0, -1.0, 0.5, 0.0], [0.0, 0.0, 0.0, 0.0]])
    a[0, 1] = np.inf  # (weight 0: ignored)
    check(lse_weighted, a, b)  # (row 1: a negative sum gives NaN; row 2: -inf)
    check(lse_weighted_number, a)


def test_logsumexp_refusals():
    with pytest.raises(UnsupportedError, match="tuple of axes"):
        zymase.jit(lse_tuple_axis)(np.ones((2, 3)))
    with pytest.raises(UnsupportedError, match="return_sign"):
        zymase.jit(lse_sign)(np.ones(3))
    with pytest.raises(UnsupportedError, match="more dimensions than a"):
        zymase.jit(lse_weighted)(np.ones(3), np.ones((2, 3)))
    with pytest.raises(UnsupportedError, match="complex"):
        zymase.jit(reals)(np.ones(3, np.complex128))


def lse_tuple_axis(a):
    return sp.logsumexp(a, axis=(0, 1))


def lse_sign(a):
    return sp.logsumexp(a, return_sign=True)


def test_reduction_edge_values():
    inf, nan = np.inf, np.nan
    rows = np.array([[-inf, -inf, -inf], [-inf, 0.0, 1.0], [inf, 1.0, -inf], [nan, 1.0, 2.0],
                     [1000.0, 1000.0, -1000.0], [0.0, -40.0, -inf], [-1e300, -1e300, -1e300]])
    check(lse_2d, rows)
    got = zymase.jit(lse_2d)(rows)[0]
    assert got[5] == pytest.approx(4.248354255291589e-18, rel=1e-12)  # (log1p, not log)
    assert got[4] == pytest.approx(1000.0 + np.log(2.0), rel=1e-15)
    check(lse_all, np.array([-inf, -inf]))
    check(lse_all, np.zeros(0))
    check(soft_2d, rows[[1, 4, 5]])
    check(soft, np.array([1000.0, 1001.0, -inf]))


# ---------------------------------------------------------------------- derivatives


def d_expit(x, c):
    return np.sum(sp.expit(x) * c)


def d_logit(x, c):
    return np.sum(sp.logit(x) * c)


def d_log_expit(x, c):
    return np.sum(sp.log_expit(x) * c)


def d_erf(x, c):
    return np.sum(sp.erf(x) * c)


def d_erfc(x, c):
    return np.sum(sp.erfc(x) * c)


def d_gammaln(x, c):
    return np.sum(sp.gammaln(x) * c)


def d_digamma(x, c):
    return np.sum(sp.psi(x) * c)


def d_xlogy(x, c):
    return np.sum(sp.xlogy(x, c + 1.5) * c) + np.sum(sp.xlogy(c, x + 3.0))


def d_xlog1py(x, c):
    return np.sum(sp.xlog1py(x, c) * c) + np.sum(sp.xlog1py(c, x + 2.0))


def d_logsumexp(x, c):
    return np.sum(sp.logsumexp(x, axis=1) * c[:, 0]) + sp.logsumexp(x) + np.sum(
        sp.logsumexp(x, axis=0, b=c + 2.0, keepdims=True))


def d_softmax(x, c):
    return np.sum(sp.softmax(x, axis=1) * c) + np.sum(sp.softmax(x) * c)


def d_log_softmax(x, c):
    return np.sum(sp.log_softmax(x, axis=0) * c) + np.sum(sp.log_softmax(x) * c)


DERIVS = [(d_expit, -4, 4), (d_logit, 0.05, 0.95), (d_log_expit, -4, 4), (d_erf, -2, 2),
          (d_erfc, -2, 2), (d_gammaln, 0.3, 5), (d_digamma, 0.3, 5), (d_xlogy, 0.1, 3),
          (d_xlog1py, 0.1, 3), (d_logsumexp, -3, 3), (d_softmax, -3, 3),
          (d_log_softmax, -3, 3)]


@pytest.mark.parametrize("fn,lo,hi", DERIVS, ids=[f.__name__[2:] for f, _, _ in DERIVS])
def test_derivatives_against_central_differences(fn, lo, hi):
    x = RNG.uniform(lo, hi, (3, 4))
    c = RNG.uniform(0.5, 1.5, (3, 4))
    want = central_differences(fn, [x, c], 0)
    np.testing.assert_allclose(zymase.grad(fn)(x, c), want, rtol=1e-6, atol=1e-8)
    v = RNG.standard_normal((3, 4))
    value, tangent = zymase.jvp(fn, (x, c), (v, None))
    assert value == pytest.approx(fn(x, c), rel=1e-12)
    assert tangent == pytest.approx(np.sum(want * v), rel=1e-6, abs=1e-8)


def d_scalar(x):
    return (sp.expit(x) + sp.log_expit(x) + sp.erf(x) + sp.gammaln(x) + sp.digamma(x)
            + sp.xlogy(x, x) + sp.logsumexp(x) + sp.logit(x / 4.0))


def test_derivative_of_numbers():
    h = 1e-6
    want = (d_scalar(1.3 + h) - d_scalar(1.3 - h)) / (2 * h)
    assert zymase.grad(d_scalar)(1.3) == pytest.approx(want, rel=1e-7)
    assert zymase.jvp(d_scalar, (1.3,), (1.0,))[1] == pytest.approx(want, rel=1e-7)


def d_saturated(x):
    return np.sum(sp.expit(x)) + np.sum(sp.log_expit(x)) + np.sum(sp.softmax(x * 2.0))


def d_xlogy_at_zero(x, y):
    return np.sum(sp.xlogy(x, y))


def d_lse_rows(x):
    return np.sum(sp.logsumexp(x, axis=1))


def test_derivative_edge_values():
    """Derivatives stay finite where the functions saturate; xlogy(0, y) has the derivative
    log(y) in x; logsumexp gives -inf entries no weight and shares it between equal maxima."""
    x = np.array([-800.0, 800.0, 0.0, 30.0])
    g = zymase.grad(d_saturated)(x)
    np.testing.assert_allclose(g, central_differences(d_saturated, [x], 0), rtol=1e-6,
                               atol=1e-8)
    assert g[0] == 1.0 and g[1] == 0.0  # (log_expit(x) is x far below 0)
    gx = zymase.grad(d_xlogy_at_zero)(np.array([0.0, 0.0]), np.array([0.5, 3.0]))
    np.testing.assert_allclose(gx, np.log([0.5, 3.0]), rtol=1e-12)
    x = np.array([[-np.inf, 0.0, 1.0], [0.25, 0.25, -0.5], [1000.0, 1000.0, 1000.0]])
    want = np.exp(x - x.max(axis=1, keepdims=True))
    want /= want.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(zymase.grad(d_lse_rows)(x), want, rtol=1e-12)
    v = np.where(np.isinf(x), 0.0, 1.0)
    assert zymase.jvp(d_lse_rows, (x,), (v,))[1] == pytest.approx(np.sum(want * v), rel=1e-12)


# ---------------------------------------------------------------------- import


LATE_IMPORT = """
import sys
import numpy as np
import zymase
assert "scipy" not in sys.modules, "import zymase imported scipy"

def helper(x):
    return x * 2.0

def before(x):
    return np.exp(helper(x))

def after(x):
    return scipy.special.expit(x) + scipy.special.psi(x)

assert zymase.jit(before)(0.0) == 1.0  # (helper: a lookup that misses before the import)
import scipy.special
assert abs(zymase.jit(after)(1.0) - (scipy.special.expit(1.0) + scipy.special.psi(1.0))) < 1e-15
"""


def test_import_zymase_does_not_import_scipy(tmp_path):
    """SciPy's functions are found once the program imports ``scipy.special``, also after
    zymase compiled code without it."""
    script = tmp_path / "late_import.py"
    script.write_text(LATE_IMPORT)
    subprocess.run([sys.executable, str(script)], check=True)
