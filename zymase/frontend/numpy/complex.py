"""Complex parts: ``np.real``/``imag`` and ``a.real``/``a.imag`` of arrays, ``np.conj``
(``a.conj()``), ``np.angle``.  Of real operands they give what NumPy gives (the operand, zeros,
a copy)."""

from __future__ import annotations

import math

import numpy as np

from ...errors import UnsupportedError
from ...ir.ops import Atan2, ComplexIm, ComplexRe, Conj, MulF
from ..typing import Array, Scalar
from .arrays import elementwise, float_type, map_elements, operand, sdtype
from .params import REQUIRED, bind, static
from .registry import add_methods, register_all


def complex_part(lw, a: Array, name, node):
    op = ComplexRe if name == "real" else ComplexIm
    if not a.type.dtype.is_complex:
        return a if name == "real" else map_elements(
            lw, [a], lambda x: Scalar(lw.b.const(0, x.type)), a.type.dtype, node)
    return map_elements(lw, [a], lambda x: Scalar(lw.b.op(op, x.value), False),
                        a.type.dtype.real_type, node)


def _part(name):
    def h(lw, args, kwargs, node):
        b = bind(lw, f"np.{name}", args, kwargs, node, [("val", REQUIRED)])
        v = operand(lw, b["val"], node)
        if isinstance(v, Scalar):
            return lw.scalar_part(v, name)
        return complex_part(lw, v, name, node)

    return h


def conj(lw, v, node):
    v = operand(lw, v, node)
    if not sdtype(v).type.is_complex:
        return elementwise(lw, v, lambda x: x.value, sdtype(v).type, node)
    return elementwise(lw, v, lambda x: lw.b.op(Conj, x.value), sdtype(v).type, node)


def _conj(lw, args, kwargs, node):
    b = bind(lw, "np.conj", args, kwargs, node, [("x", REQUIRED)])
    return conj(lw, b["x"], node)


def _angle(lw, args, kwargs, node):
    """atan2(imag, real), in degrees with ``deg=True`` (np.angle's own formula)."""
    b = bind(lw, "np.angle", args, kwargs, node, [("z", REQUIRED), ("deg", False)])
    z = operand(lw, b["z"], node)
    deg = static(lw, b["deg"])
    if not isinstance(deg, bool):
        raise lw.err(UnsupportedError, "np.angle(deg=...) must be a constant", node)
    zt = sdtype(z).type
    t = zt.real_type if zt.is_complex else float_type(zt)

    def elem(x):
        if zt.is_complex:
            im, re = lw.b.op(ComplexIm, x.value), lw.b.op(ComplexRe, x.value)
        else:
            im, re = lw.b.const(0, t), lw.b.cast(x.value, t)
        out = lw.b.op(Atan2, im, re)
        return lw.b.op(MulF, out, lw.b.const(180 / math.pi, t)) if deg else out

    return elementwise(lw, z, elem, t, node)


register_all({np.real: _part("real"), np.imag: _part("imag"), np.conj: _conj,
              np.conjugate: _conj, np.angle: _angle})


def _m_conj(lw, a, args, kwargs, node):
    return _conj(lw, [a, *args], kwargs, node)


add_methods({"conj": _m_conj, "conjugate": _m_conj})
