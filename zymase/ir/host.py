"""The Python functions that ``host.call`` runs (``ir/ops/host.py``): NumPy's FFT, NumPy's random
generators and ``print``, reached from compiled code.  Every backend that runs ``host.call``
calls ``run(fn, kw, operands)`` with the operands as NumPy values (arrays as views of the
program's memory: the function writes its results into them).

Random generators made in compiled code (``np.random.default_rng(seed)``) are NumPy
``Generator`` objects kept here under an integer handle; the legacy functions
(``np.random.normal``, ...) use NumPy's global state, so a program and the Python around it
draw from one stream, as they would without zymase.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable

import numpy as np

HOST: dict[str, Callable] = {}
_GENERATORS: OrderedDict = OrderedDict()  # handle -> np.random.Generator (the newest last)
_MAX_GENERATORS = 1 << 16
_LOCK = threading.Lock()
_PENDING = threading.local()  # the exception a host function raised, for the backend to raise


def host(name: str):
    """Register ``fn(*operands, **kw)`` as the host function ``name``."""
    def deco(fn):
        HOST[name] = fn
        return fn
    return deco


def run(fn: str, kw: str, operands: list) -> bool:
    """Run host function ``fn``; False when it raised (the exception is kept: ``take_error``)."""
    try:
        HOST[fn](*operands, **json.loads(kw))
        return True
    except Exception as e:  # noqa: BLE001 (handed to the program's caller as its error)
        _PENDING.error = e
        return False


def take_error() -> BaseException | None:
    """The exception the last failed host function raised in this thread (once)."""
    e = getattr(_PENDING, "error", None)
    _PENDING.error = None
    return e


# ---------------------------------------------------------------------- FFT


_UNSCALED = {"fft": ("fft", "backward"), "ifft": ("ifft", "forward"),
             "rfft": ("rfft", "backward"), "irfft": ("irfft", "forward")}


@host("fft")
def _fft(x, n, out, *, kind: str):
    """``out[...]`` = the unscaled ``np.fft.<kind>`` of ``x`` along its last axis (``n``: the
    output length of ``irfft``): pocketfft, in ``x``'s precision."""
    name, norm = _UNSCALED[kind]
    out[...] = getattr(np.fft, name)(x, n=int(n), axis=-1, norm=norm)


# ---------------------------------------------------------------------- LAPACK


@host("lapack")
def _lapack(a, *outs, name: str):
    """NumPy's LAPACK factorization ``name`` of ``a`` into ``outs``: cholesky (L), eigh (w, V;
    the lower triangle), qr (reduced Q, R), svd (reduced U, s, V^T)."""
    if name == "cholesky":
        res = (np.linalg.cholesky(a),)
    elif name == "eigh":
        res = np.linalg.eigh(a)
    elif name == "qr":
        res = np.linalg.qr(a)
    else:
        res = np.linalg.svd(a, full_matrices=False)
    for out, r in zip(outs, res, strict=True):
        out[...] = r


# ---------------------------------------------------------------------- random


def _generator(handle) -> np.random.Generator:
    with _LOCK:
        g = _GENERATORS.get(int(handle))
    if g is None:
        raise RuntimeError("this random generator is no longer available (more than "
                           f"{_MAX_GENERATORS} generators were made since)")
    return g


@host("rng_new")
def _rng_new(seed, out, *, seeded: bool):
    """A new ``np.random.default_rng(seed)``; its handle into ``out[0]``."""
    g = np.random.default_rng(int(seed[()]) if seeded and np.ndim(seed) == 0 else
                              (np.asarray(seed).tolist() if seeded else None))
    with _LOCK:
        handle = (next(reversed(_GENERATORS)) + 1) if _GENERATORS else 1
        _GENERATORS[handle] = g
        while len(_GENERATORS) > _MAX_GENERATORS:
            _GENERATORS.popitem(last=False)
    out[0] = handle


def _draw(source, operands, *, method: str, nparams: int, nsize, kind: str, kw=None):
    """``out[...] = source.<method>(*params, size=size, **kw)``: the operands are the
    parameters, the size's dimensions (``nsize`` of them; None: ``size=None``) and ``out``.
    ``kind``: "dims" passes the size as arguments (``np.random.rand(2, 3)``), "choice" passes
    ``a`` and ``p=`` (``kw["with_p"]``)."""
    params = list(operands[:nparams])
    size = None if nsize is None else tuple(int(s) for s in operands[nparams:nparams + nsize])
    out = operands[-1]
    fn = getattr(source, method)
    kw = dict(kw or {})
    if kind == "dims":
        r = fn(*(size or ()))
    elif kind == "choice":
        with_p = kw.pop("with_p")
        r = fn(params[0], size=size, p=params[1] if with_p else None, **kw)
    elif method == "permutation":
        r = fn(params[0])
    else:
        r = fn(*params, size=size, **kw)
    out[...] = r


@host("rng")
def _rng(handle, *operands, **kw):
    _draw(_generator(handle), operands, **kw)


@host("np_random")
def _np_random(*operands, **kw):
    _draw(np.random, operands, **kw)


@host("rng_shuffle")
def _rng_shuffle(handle, x, *, legacy: bool):
    (np.random if legacy else _generator(handle)).shuffle(x)


@host("np_seed")
def _np_seed(seed):
    np.random.seed(int(seed))


# ---------------------------------------------------------------------- print


@host("print")
def _print(*values, sep: str, end: str, texts: list):
    """``print(*values, sep=sep, end=end)``; ``texts[k]`` replaces value k when not None (string
    constants of the program)."""
    shown = []
    it = iter(values)
    for t in texts:
        if t is not None:
            shown.append(t)
            continue
        v = next(it)
        shown.append(v[()] if isinstance(v, np.ndarray) and v.ndim == 0 and v.dtype != object
                     else v)
    print(*shown, sep=sep, end=end, flush=True)
