"""``np.fft``: ``fft``/``ifft``/``rfft``/``irfft`` (``n=``, ``axis=``, ``norm=``),
``fft2``/``ifft2``/``fftn``/``ifftn``/``rfft2``/``rfftn``/``irfft2``/``irfftn`` (``s=``,
``axes=``, ``norm=``), ``fftfreq``/``rfftfreq``, ``fftshift``/``ifftshift``.

Each transform is NumPy's own (pocketfft, called from the compiled code: ``library_fft.raw`` is a
``host.call``), along the last axis of a view with the transformed axis moved there; the input is
cut or zero-padded to ``n`` first and the result scaled for ``norm`` here, so the four unscaled
transforms of ``library_fft.py`` carry all the derivative rules (an FFT's adjoint is an FFT).
Several axes are transformed one after the other, as NumPy's ``fftn`` does.  Single precision
stays single (complex64), as NumPy 2's.
"""

from __future__ import annotations

import ast

import numpy as np

from ...errors import UnsupportedError, ZymaseTypeError
from ...ir.ops import AddI, CmpI, FloorDivI, MinI, MulI, Sqrt, SubI, Transpose
from ...ir.types import C64, C128, F32, F64, I64, ArrayType
from .. import library_fft
from ..emit import alloc, check, host_call, load, nest, store
from ..typing import Array, Scalar, Tup
from .arrays import as_array, map_elements
from .params import REQUIRED, bind, const_axes, is_none, static
from .registry import CALLS, register_all


def _raw(lw, args, kwargs, node):
    """``library_fft.raw(x, kind, n)``: a new array, the unscaled transform of ``x``'s last
    axis by ``ir/host.py``'s ``fft``."""
    x, kind, n = args
    kind = static(lw, kind)
    t = x.type.dtype
    single = t in (F32, C64)
    out_t = (F32 if single else F64) if kind == "irfft" else (C64 if single else C128)
    n = lw.b.cast(n.value, I64)
    dims = lw.dims(x)
    last = lw.b.op(AddI, lw.b.op(FloorDivI, n, lw.b.i64(2)), lw.b.i64(1)) if kind == "rfft" else n
    out = alloc(lw, out_t, [*dims[:-1], last])
    host_call(lw, "fft", [x.value, n, out.value], writes=[2], kind=kind)
    return out


def _resize(lw, args, kwargs, node):
    """``library_fft.resize(x, n)``: ``x`` cut or zero-padded to ``n`` along its last axis."""
    x, n = args
    n = lw.b.cast(n.value, I64)
    dims = lw.dims(x)
    out = alloc(lw, x.type.dtype, [*dims[:-1], n], init="zero")
    keep = [*dims[:-1], lw.b.op(MinI, n, dims[-1])]
    nest(lw, keep, lambda idx, acc: store(lw, load(lw, x, idx), out, idx))
    return out


def _complex(lw, a: Array, node) -> Array:
    t = a.type.dtype
    want = C64 if t in (F32, C64) else C128
    return a if t == want else map_elements(lw, [a], lambda v: v, want, node)


def _real(lw, a: Array, fname, node) -> Array:
    t = a.type.dtype
    if t.is_complex:
        raise lw.err(UnsupportedError, f"{fname}() of complex input is not supported (NumPy "
                     "discards the imaginary part): pass np.real(a)", node)
    return a if t in (F32, F64) else map_elements(lw, [a], lambda v: v, F64, node)


def _to_last(lw, a: Array, axis: int) -> Array:
    nd = a.type.ndim
    if axis == nd - 1:
        return a
    perm = [d for d in range(nd) if d != axis] + [axis]
    return _transpose(lw, a, perm)


def _from_last(lw, a: Array, axis: int) -> Array:
    nd = a.type.ndim
    if axis == nd - 1:
        return a
    perm = list(range(nd - 1))
    perm.insert(axis, nd - 1)
    return _transpose(lw, a, perm)


def _transpose(lw, a: Array, perm) -> Array:
    t = ArrayType(a.type.dtype, a.type.ndim, "A")
    return Array(lw.b.create(Transpose, [a.value], [t], {"perm": list(perm)}).result)


def _scale(lw, y: Array, n, kind: str, norm: str, node) -> Array:
    """``y`` times the factor ``norm`` asks of the unscaled ``kind`` with length ``n``."""
    inverse = kind in ("ifft", "irfft")
    if norm == "ortho":
        power = 0.5
    elif (norm == "backward") == inverse:
        power = 1.0
    else:
        return y
    nf = lw.b.cast(n, F64)
    if power == 0.5:
        nf = lw.b.op(Sqrt, nf)
    return lw.binop(ast.Div(), y, Scalar(nf, True), node)


def _one_axis(lw, a: Array, kind: str, n, axis: int, norm: str, node) -> Array:
    """The ``kind`` transform of ``a`` along ``axis`` with length ``n`` (a Value or None)."""
    x = _to_last(lw, a, axis)
    m = lw.dim(x, x.type.ndim - 1)
    if kind == "irfft":
        if n is None:
            n = lw.b.op(MulI, lw.b.op(SubI, m, lw.b.i64(1)), lw.b.i64(2))
        _check_length(lw, n)
        y = lw.call_library(library_fft.irdft, [x, Scalar(n, True)], node)
    else:
        if n is not None:
            _check_length(lw, n)
            x = _resize(lw, [x, Scalar(n, True)], {}, node)
        else:
            n = m
        fn = {"fft": library_fft.dft, "ifft": library_fft.idft, "rfft": library_fft.rdft}[kind]
        y = lw.call_library(fn, [x], node)
    y = _scale(lw, y, n, kind, norm, node)
    return _from_last(lw, y, axis)


def _check_length(lw, n) -> None:
    check(lw, lw.b.op(CmpI, n, lw.b.i64(1), pred="ge"), "ValueError",
          "Invalid number of FFT data points (n or s) specified.")


def _norm(lw, v, fname, node) -> str:
    norm = "backward" if is_none(v) else static(lw, v)
    if norm not in ("backward", "ortho", "forward"):
        raise lw.err(ZymaseTypeError, f'{fname}(norm=) is "backward", "ortho" or "forward", '
                     "known when compiling", node)
    return norm


def _length(lw, v, fname, node):
    if is_none(v):
        return None
    if not (isinstance(v, Scalar) and (v.type.is_int or v.type.is_bool)):
        raise lw.err(ZymaseTypeError, f"{fname}(n=) must be an integer", node)
    return lw.b.cast(v.value, I64)


def _input(lw, v, kind, fname, node) -> Array:
    a = as_array(lw, v, fname, node)
    if a.type.ndim == 0:
        raise lw.err(ZymaseTypeError, f"{fname}() needs an array of at least one dimension",
                     node)
    return _real(lw, a, fname, node) if kind == "rfft" else _complex(lw, a, node)


def _one_d(kind):
    fname = f"np.fft.{kind}"

    def h(lw, args, kwargs, node):
        p = bind(lw, fname, args, kwargs, node,
                 [("a", REQUIRED), ("n", None), ("axis", -1), ("norm", None)], {"out": None})
        a = _input(lw, p["a"], kind, fname, node)
        (axis,) = const_axes(lw, p["axis"], a.type.ndim, f"{fname}(axis=)", node)
        return _one_axis(lw, a, kind, _length(lw, p["n"], fname, node), axis,
                         _norm(lw, p["norm"], fname, node), node)

    return h


def _n_d(kind, two):
    """fft2/fftn (kind fft), ifft2/ifftn, rfft2/rfftn, irfft2/irfftn."""
    fname = f"np.fft.{kind}{'2' if two else 'n'}"

    def h(lw, args, kwargs, node):
        default_axes = Tup((lw.const_int(-2), lw.const_int(-1))) if two else None
        p = bind(lw, fname, args, kwargs, node,
                 [("a", REQUIRED), ("s", None), ("axes", default_axes), ("norm", None)],
                 {"out": None})
        a = _input(lw, p["a"], kind, fname, node)
        nd = a.type.ndim
        if is_none(p["axes"]):
            axes = list(range(nd)) if is_none(p["s"]) else list(
                range(nd - len(_items(p["s"])), nd))
        else:
            axes = const_axes(lw, p["axes"], nd, f"{fname}(axes=)", node)
        sizes = [None] * len(axes) if is_none(p["s"]) else [
            _length(lw, v, fname, node) for v in _items(p["s"])]
        if len(sizes) != len(axes):
            raise lw.err(ZymaseTypeError, f"{fname}(): s and axes need the same length", node)
        norm = _norm(lw, p["norm"], fname, node)
        if not axes:
            return a
        last = len(axes) - 1
        if kind == "rfft":  # the real transform on the last axis, then the others
            out = _one_axis(lw, a, "rfft", sizes[last], axes[last], norm, node)
            for ax, n in zip(axes[:last], sizes[:last]):
                out = _one_axis(lw, out, "fft", n, ax, norm, node)
            return out
        if kind == "irfft":  # the others first, the real transform on the last axis
            out = a
            for ax, n in zip(axes[:last], sizes[:last]):
                out = _one_axis(lw, out, "ifft", n, ax, norm, node)
            return _one_axis(lw, out, "irfft", sizes[last], axes[last], norm, node)
        out = a
        for ax, n in zip(axes, sizes):
            out = _one_axis(lw, out, kind, n, ax, norm, node)
        return out

    return h


def _items(v):
    return v.items if isinstance(v, Tup) else (v,)


def _freq(rfft):
    fname = "np.fft.rfftfreq" if rfft else "np.fft.fftfreq"

    def h(lw, args, kwargs, node):
        p = bind(lw, fname, args, kwargs, node, [("n", REQUIRED), ("d", 1.0)], {"device": None})
        n = _length(lw, p["n"], fname, node)
        fn = library_fft.rfftfreq if rfft else library_fft.fftfreq
        d = p["d"] if isinstance(p["d"], Scalar) else Scalar(lw.b.const(float(static(
            lw, p["d"])), F64), True)
        return lw.call_library(fn, [Scalar(n, True), d], node)

    return h


def _shift(inverse):
    fname = "np.fft.ifftshift" if inverse else "np.fft.fftshift"

    def h(lw, args, kwargs, node):
        p = bind(lw, fname, args, kwargs, node, [("x", REQUIRED), ("axes", None)])
        a = as_array(lw, p["x"], fname, node)
        nd = a.type.ndim
        axes = list(range(nd)) if is_none(p["axes"]) else const_axes(
            lw, p["axes"], nd, f"{fname}(axes=)", node)
        out = a
        for ax in axes:  # fftshift rolls by n // 2, ifftshift back by as much
            n = lw.dim(out, ax)
            half = lw.b.op(FloorDivI, n, lw.b.i64(2))
            shift = lw.b.op(SubI, n, half) if inverse else half
            out = CALLS[np.roll](lw, [out, Scalar(shift, True)], {"axis": lw.const_int(ax)},
                                 node)
        return out

    return h


register_all({
    library_fft.raw: _raw,
    library_fft.resize: _resize,
    **{getattr(np.fft, k): _one_d(k) for k in ("fft", "ifft", "rfft", "irfft")},
    **{getattr(np.fft, k + "2"): _n_d(k, True) for k in ("fft", "ifft", "rfft", "irfft")},
    **{getattr(np.fft, k + "n"): _n_d(k, False) for k in ("fft", "ifft", "rfft", "irfft")},
    np.fft.fftfreq: _freq(False),
    np.fft.rfftfreq: _freq(True),
    np.fft.fftshift: _shift(False),
    np.fft.ifftshift: _shift(True),
})
