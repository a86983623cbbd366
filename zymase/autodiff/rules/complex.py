"""Records for ``complex`` ops (all linear except ``abs``, which is not holomorphic)."""

from __future__ import annotations

from ...ir.ops import ComplexAbs, ComplexCreate, ComplexIm, ComplexRe, Conj
from .registry import linear


@linear(ComplexCreate)
class _Create:
    @staticmethod
    def jvp(b, attrs, x, out, t):  # t = t_re + i t_im
        z = b.const(0.0, out.type.real_type)
        return b.op(ComplexCreate, t[0] or z, t[1] or z)

    @staticmethod
    def vjp(b, attrs, x, out, ct):
        return [b.op(ComplexRe, ct), b.op(ComplexIm, ct)]


@linear(ComplexRe)
class _Re:
    @staticmethod
    def jvp(b, attrs, x, out, t):
        return b.op(ComplexRe, t[0])

    @staticmethod
    def vjp(b, attrs, x, out, ct):  # a real cotangent on the real part
        return [b.op(ComplexCreate, ct, b.c(0.0, ct))]


@linear(ComplexIm)
class _Im:
    @staticmethod
    def jvp(b, attrs, x, out, t):
        return b.op(ComplexIm, t[0])

    @staticmethod
    def vjp(b, attrs, x, out, ct):
        return [b.op(ComplexCreate, b.c(0.0, ct), ct)]


@linear(Conj)
class _Conj:
    @staticmethod
    def jvp(b, attrs, x, out, t):
        return b.op(Conj, t[0])

    @staticmethod
    def vjp(b, attrs, x, out, ct):
        return [b.op(Conj, ct)]


@linear(ComplexAbs, uses="xo")
class _Abs:
    """|z| is real-differentiable: d|z| = Re(conj(z) dz) / |z|; its cotangent is ct z / |z|."""

    @staticmethod
    def jvp(b, attrs, x, out, t):
        return b.div(b.op(ComplexRe, b.mul(b.op(Conj, x[0]), t[0])), out)

    @staticmethod
    def vjp(b, attrs, x, out, ct):
        scale = b.div(ct, out)
        return [b.mul(x[0], b.op(ComplexCreate, scale, b.c(0.0, scale)))]

