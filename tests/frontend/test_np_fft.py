"""``np.fft`` in compiled code (NumPy's pocketfft called from the program: ``host.call``)
against NumPy: every transform with ``n``/``s``, ``axis``/``axes``, ``norm``, single and double
precision, the frequency and shift helpers; derivatives (an FFT's adjoint is an FFT) against
central differences in both modes; both native backends."""

import numpy as np
import pytest
from numpy_check import central_differences, check

import zymase
from zymase.errors import ZymaseError


def _transforms(x, z):
    return (np.fft.fft(x), np.fft.ifft(z), np.fft.rfft(x), np.fft.irfft(np.fft.rfft(x)),
            np.fft.fft(x, 12, norm="ortho"), np.fft.ifft(z, 5, axis=0, norm="forward"),
            np.fft.fft(z, axis=0), np.fft.fft2(z), np.fft.ifft2(z, s=(4, 6)), np.fft.fftn(z),
            np.fft.ifftn(z, axes=(1,)), np.fft.rfftn(x), np.fft.rfft2(x, norm="ortho"),
            np.fft.irfft2(np.fft.rfft2(x), s=x.shape), np.fft.irfftn(z, axes=(0, 1)),
            np.fft.irfft(z, 7, norm="forward"), np.fft.rfft(x, n=5, axis=0))


def _helpers(x, n, d):
    return (np.fft.fftfreq(n, d), np.fft.rfftfreq(n), np.fft.fftshift(x),
            np.fft.ifftshift(x, axes=1), np.fft.fftshift(np.fft.fftfreq(n)))


@pytest.mark.parametrize("backend", ["cpu", "interp"])
def test_transforms_against_numpy(backend):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 8))
    z = x + 1j * rng.standard_normal((3, 8))
    want = _transforms(x, z)
    got = zymase.jit(_transforms, backend=backend)(x, z)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_single_precision_and_helpers():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 6)).astype(np.float32)
    z = (x + 1j * x[::-1]).astype(np.complex64)
    for g, w in zip(zymase.jit(_transforms)(x, z), _transforms(x, z)):
        assert g.dtype == w.dtype and g.shape == w.shape  # single precision stays single
        np.testing.assert_allclose(g, w, atol=2e-6 * max(1.0, np.abs(w).max()))
    check(_helpers, x, 7, 0.25)
    check(_helpers, x, 8, 2.0)


def _loss(x, w):
    z = np.fft.fft(x * w[:, None], axis=1)
    r = np.fft.rfft(x, n=10, norm="ortho")
    y = np.fft.irfft(r * np.conj(r), n=7)
    q = np.fft.ifft2(z * 1j + np.fft.fftshift(x))
    s = np.fft.irfftn(np.fft.rfftn(x * 2.0), s=x.shape, axes=(0, 1))
    return (np.sum(np.abs(z) ** 2) * 0.01 + np.sum(np.sin(y)) + np.sum(np.real(q) * np.imag(q))
            + np.sum(s ** 3) + np.sum(np.abs(np.fft.ifft(z, n=5, norm="forward"))))


def test_derivatives_both_modes():
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((3, 8)), rng.standard_normal(3)
    g = zymase.grad(_loss, argnums=(0, 1))(x, w)
    for k in range(2):
        fd = central_differences(_loss, (x, w), k)
        np.testing.assert_allclose(g[k], fd, rtol=1e-6, atol=1e-6)
    v = (rng.standard_normal(x.shape), rng.standard_normal(w.shape))
    _, t = zymase.jvp(_loss, (x, w), v)
    assert t == pytest.approx(sum(float(np.sum(a * b)) for a, b in zip(g, v)), rel=1e-9)


def _spectral_derivative(u, length):
    """du/dx of a periodic signal by the FFT, as spectral solvers write it."""
    n = u.shape[0]
    k = 2 * np.pi * np.fft.fftfreq(n, length / n)
    return np.real(np.fft.ifft(1j * k * np.fft.fft(u)))


def test_spectral_derivative():
    xs = np.linspace(0, 2 * np.pi, 32, endpoint=False)
    du = zymase.jit(_spectral_derivative)(np.sin(3 * xs), 2 * np.pi)
    np.testing.assert_allclose(du, 3 * np.cos(3 * xs), atol=1e-12)


def _rfft_of_complex(z):
    return np.fft.rfft(z)


def _bad_norm(x):
    return np.fft.fft(x, norm="unit")


def _no_points(x, n):
    return np.fft.fft(x, n)


def test_errors_name_the_line():
    for fn, arg, text in [(_rfft_of_complex, np.ones(4) * 1j, "complex input"),
                          (_bad_norm, np.ones(4), "norm=")]:
        with pytest.raises(ZymaseError, match=text) as e:
            zymase.jit(fn)(arg)
        assert "test_np_fft.py:" in str(e.value)
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        zymase.jit(_no_points)(np.ones(4), 0)
