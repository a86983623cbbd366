"""The unscaled discrete Fourier transforms along the last axis that ``np.fft`` is built from
(``numpy/fft.py`` moves the axis, resizes, scales): each one NumPy's pocketfft, called from the
compiled code (``raw``: a ``host.call``), with its derivative rules, since a transform's adjoint
is a transform:

* ``dft`` (y = D x) and ``idft`` (the unscaled inverse, D^H): each other's adjoint;
* ``rdft`` (real x, the first n//2 + 1 bins): x_bar = Re(D^H pad(y_bar));
* ``irdft`` (the real signal of length n of a half spectrum, unscaled): y_bar = c rdft(x_bar) with
  c = 1 for the first bin (and the last when n is even), 2 for the others.

Cotangents follow zymase's convention for complex values (that of PyTorch and JAX's ``grad``).
Plain Python, so they run under CPython too.
"""

import numpy as np

from ..lang import custom_vjp

_NAMES = {"fft": ("fft", "backward"), "ifft": ("ifft", "forward"),
          "rfft": ("rfft", "backward"), "irfft": ("irfft", "forward")}


def raw(x, kind, n):
    """The unscaled ``np.fft.<kind>`` of ``x`` along the last axis, output length ``n`` for
    ``irfft`` (compiled: a ``host.call`` of ``ir/host.py``'s ``fft``)."""
    name, norm = _NAMES[kind]
    return getattr(np.fft, name)(x, n=n, axis=-1, norm=norm)


def resize(x, n):
    """``x`` cut or padded with zeros to length ``n`` along its last axis (a new array;
    compiled: ``numpy/fft.py``'s loop)."""
    out = np.zeros(x.shape[:-1] + (n,), x.dtype)
    k = min(n, x.shape[-1])
    out[..., :k] = x[..., :k]
    return out


@custom_vjp
def dft(x):
    return raw(x, "fft", x.shape[-1])


@custom_vjp
def idft(x):
    return raw(x, "ifft", x.shape[-1])


def _dft_fwd(x):
    return dft(x), 0


def _dft_bwd(res, ct):
    return (idft(ct),)


def _dft_jvp(primals, tangents):
    return dft(primals[0]), dft(tangents[0])


def _idft_fwd(x):
    return idft(x), 0


def _idft_bwd(res, ct):
    return (dft(ct),)


def _idft_jvp(primals, tangents):
    return idft(primals[0]), idft(tangents[0])


dft.defvjp(_dft_fwd, _dft_bwd)
dft.defjvp(_dft_jvp)
idft.defvjp(_idft_fwd, _idft_bwd)
idft.defjvp(_idft_jvp)


@custom_vjp
def rdft(x):
    return raw(x, "rfft", x.shape[-1])


def _rdft_fwd(x):
    return rdft(x), x.shape[-1]


def _rdft_bwd(n, ct):
    return (np.real(idft(resize(ct, n))),)


def _rdft_jvp(primals, tangents):
    return rdft(primals[0]), rdft(tangents[0])


rdft.defvjp(_rdft_fwd, _rdft_bwd)
rdft.defjvp(_rdft_jvp)


def _weights(n, m):
    """c: 1 for bin 0 and (n even) bin n/2, 2 for the bins in between; length m = n//2 + 1."""
    c = np.full(m, 2.0)
    c[0] = 1.0
    if n % 2 == 0:
        c[m - 1] = 1.0
    return c


@custom_vjp
def irdft(y, n):
    return raw(resize(y, n // 2 + 1), "irfft", n)


def _irdft_fwd(y, n):
    return irdft(y, n), y.shape[-1]


def _irdft_bwd(m, ct):
    n = ct.shape[-1]
    yb = rdft(ct) * _weights(n, n // 2 + 1)
    return resize(yb, m), None


def _irdft_jvp(primals, tangents):
    y, n = primals
    return irdft(y, n), irdft(tangents[0], n)


irdft.defvjp(_irdft_fwd, _irdft_bwd)
irdft.defjvp(_irdft_jvp)


def fftfreq(n, d):
    """``np.fft.fftfreq(n, d)``: 0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1 over n d."""
    out = np.empty(n)
    for i in range(n):
        out[i] = (i if i < (n + 1) // 2 else i - n) / (n * d)
    return out


def rfftfreq(n, d):
    """``np.fft.rfftfreq(n, d)``: 0, 1, ..., n // 2 over n d."""
    out = np.empty(n // 2 + 1)
    for i in range(n // 2 + 1):
        out[i] = i / (n * d)
    return out
