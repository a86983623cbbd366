"""np.linalg.cholesky/det/slogdet/eigh/eigvalsh/qr/svd/pinv/lstsq/matrix_rank
(``library_linalg.py``) and complex
np.linalg.solve/inv (``library.py``) against NumPy's LAPACK, their derivatives (standard rules,
both modes) against central differences, and the errors NumPy raises."""

import numpy as np
import pytest
from numpy_check import central_differences, check

import zymase
from zymase.errors import ZymaseError


def _factors(a, s, b):
    sign, logdet = np.linalg.slogdet(a)
    q, r = np.linalg.qr(b)
    return (np.linalg.cholesky(s), np.linalg.cholesky(s, upper=True), np.linalg.det(a), sign,
            logdet, np.linalg.eigvalsh(s), np.linalg.eigh(s, UPLO="U")[0], q, r,
            np.linalg.qr(b, mode="r"))


def _spd(n, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


def _inputs(n):
    rng = np.random.default_rng(n)
    return rng.standard_normal((n, n)), _spd(n, n), rng.standard_normal((n + 2, n))


def test_values_match_numpy():
    for n in (1, 2, 5, 12):  # (one compilation: sizes are not specialized)
        check(_factors, *_inputs(n))


@pytest.mark.slow
def test_values_match_numpy_other_dtypes():
    a, s, b = _inputs(5)
    check(_factors, a.astype(np.float32), s.astype(np.float32), b.astype(np.float32))
    check(_factors, np.round(a * 3).astype(np.int64), np.round(s).astype(np.int64),
          np.round(b * 3).astype(np.int64) + np.eye(7, 5, dtype=np.int64))


def _eigh(s):
    return np.linalg.eigh(s)


def test_eigenvectors_up_to_sign():
    s = _spd(6, 3)
    w, v = zymase.jit(_eigh)(s)
    want_w, want_v = np.linalg.eigh(s)
    np.testing.assert_allclose(w, want_w, rtol=1e-12)
    np.testing.assert_allclose(np.abs(v.T @ want_v), np.eye(6), atol=1e-10)
    np.testing.assert_allclose(s @ v, v * w, atol=1e-10)


def _chol_loss(s):
    return np.sum(np.sin(np.linalg.cholesky(s)))


def _det_loss(a):
    return np.linalg.det(a) ** 2 + np.linalg.slogdet(a)[1] * 1.5


def _eigh_loss(s):
    w, v = np.linalg.eigh(s)
    return np.sum(w ** 3) + np.sum((v * v[0:1, :]) @ np.arange(v.shape[0] * 1.0))


def _qr_loss(b):
    q, r = np.linalg.qr(b)
    return np.sum(np.sin(q)) + np.sum(np.cos(r)) + np.sum(np.linalg.qr(b, mode="r") ** 2)


def _complex_loss(ar, ai, br):
    a = ar + 1j * ai
    x = np.linalg.solve(a, br + 0.3j * br)
    y = np.linalg.inv(a)
    return np.sum(np.abs(x) ** 2) + np.real(np.sum(y * y)) + np.imag(y[0, 1])


def _cases():
    rng = np.random.default_rng(11)
    s_ns = _spd(5, 1) + np.triu(rng.standard_normal((5, 5)), 1)  # the upper triangle is not read
    a = rng.standard_normal((4, 4))
    return [(_chol_loss, (s_ns,)), (_det_loss, (a,)), (_eigh_loss, (s_ns,)),
            (_qr_loss, (rng.standard_normal((6, 4)),)),
            (_complex_loss, (a, rng.standard_normal((4, 4)), rng.standard_normal((4, 2))))]


@pytest.mark.parametrize("fn, args", _cases(), ids=lambda c: getattr(c, "__name__", ""))
def test_derivatives_both_modes(fn, args):
    argnums = tuple(range(len(args)))
    grads = zymase.grad(fn, argnums=argnums)(*args)
    rng = np.random.default_rng(0)
    vs = [rng.standard_normal(x.shape) for x in args]
    for k in argnums:
        fd = central_differences(fn, args, k)
        np.testing.assert_allclose(grads[k], fd, rtol=1e-5, atol=1e-6 * max(1, np.abs(fd).max()))
    _, t = zymase.jvp(fn, args, tuple(vs))
    assert t == pytest.approx(sum(float(np.sum(g * v)) for g, v in zip(grads, vs)), rel=1e-8)


def _complex(a, b):
    return np.linalg.inv(a), np.linalg.solve(a, b), np.linalg.solve(a, b[:, 0])


def test_complex_solve_and_inv_match_numpy():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((4, 4)) + 1j * rng.standard_normal((4, 4))
    b = rng.standard_normal((4, 2)) + 0.5j
    check(_complex, a, b)
    check(_complex, a.real.copy(), b)


@pytest.mark.slow
def test_complex_solve_and_inv_other_dtypes():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((4, 4)) + 1j * rng.standard_normal((4, 4))
    b = rng.standard_normal((4, 2)) + 0.5j
    check(_complex, a, b.real.copy())
    check(_complex, a.astype(np.complex64), b.astype(np.complex64))


def _cholesky(a):
    return np.linalg.cholesky(a)


def _svd(a):
    return np.linalg.svd(a)


def test_errors():
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        zymase.jit(_cholesky)(-np.eye(3))
    with pytest.raises(np.linalg.LinAlgError, match="must be square"):
        zymase.jit(_cholesky)(np.ones((2, 3)))
    for fn, arg, text in [(_cholesky, np.eye(2) * 1j, "complex matrices"),
                          (_svd, np.eye(2) * 1j, "complex matrices")]:
        with pytest.raises(ZymaseError, match=text) as e:
            zymase.jit(fn)(arg)
        assert "test_linalg_factor.py:" in str(e.value)


def _singular_det(a):
    return np.linalg.det(a), np.linalg.slogdet(a)


def test_singular_matrices():
    check(_singular_det, np.ones((3, 3)))
    with pytest.raises(np.linalg.LinAlgError, match="invertible"):
        zymase.grad(lambda a: np.linalg.det(a))(np.ones((3, 3)))


def _svd_family(a, b):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    x, res, rank, sv = np.linalg.lstsq(a, b)
    return (s, np.abs(u.T @ u), np.abs(vt @ vt.T), u @ np.diag(s) @ vt,
            np.linalg.svd(a, compute_uv=False), np.linalg.svdvals(a), np.linalg.pinv(a), x, res,
            rank, sv, np.linalg.lstsq(a, b[:, 0])[0], np.linalg.matrix_rank(a))


@pytest.mark.parametrize("shape", [(6, 3), (3, 5), (4, 4)])
def test_svd_pinv_lstsq_match_numpy(shape):
    rng = np.random.default_rng(sum(shape))
    a, b = rng.standard_normal(shape), rng.standard_normal((shape[0], 2))
    got, want = zymase.jit(_svd_family)(a, b), _svd_family(a, b)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype and np.shape(g) == np.shape(w)
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    low_rank = a[:, :1] @ rng.standard_normal((1, shape[1]))  # rank 1: lstsq's minimum norm
    got, want = zymase.jit(_svd_family)(low_rank, b), _svd_family(low_rank, b)
    for k in (7, 8, 9, 11, 12):
        np.testing.assert_allclose(got[k], want[k], rtol=1e-8, atol=1e-10)


def _singular_values_loss(a):
    s = np.linalg.svd(a, compute_uv=False)
    return np.sum(s ** 3) + np.sum(np.linalg.pinv(a) ** 2)


def test_singular_values_derivatives():  # (the full factors' rule: test_svd_derivatives, slow)
    a = np.random.default_rng(5).standard_normal((5, 3))
    g = zymase.grad(_singular_values_loss)(a)
    np.testing.assert_allclose(g, central_differences(_singular_values_loss, (a,), 0), rtol=1e-5,
                               atol=1e-6)


def _svd_loss(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return (np.sum(s ** 2 * np.arange(1.0, s.shape[0] + 1.0)) + np.sum(np.sin(u * u) @ (vt * vt))
            + np.sum(np.linalg.pinv(a) ** 2) + np.sum(np.linalg.lstsq(a, np.ones(a.shape[0]))[0]
                                                     ** 3))


@pytest.mark.slow
@pytest.mark.parametrize("shape", [(6, 3), (3, 5)])
def test_svd_derivatives(shape):
    a = np.random.default_rng(5).standard_normal(shape)
    g = zymase.grad(_svd_loss)(a)
    np.testing.assert_allclose(g, central_differences(_svd_loss, (a,), 0), rtol=1e-5, atol=1e-6)
    v = np.random.default_rng(6).standard_normal(shape)
    _, t = zymase.jvp(_svd_loss, (a,), (v,))
    assert t == pytest.approx(float(np.sum(g * v)), rel=1e-8)
