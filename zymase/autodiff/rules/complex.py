"""Records for ``complex`` ops (all linear except ``abs``, which is not holomorphic)."""

from __future__ import annotations

from . import linear, partials


@linear("complex.create")
class Create:
    @staticmethod
    def jvp(b, attrs, x, out, t):  # t = t_re + i t_im
        z = b.const(0.0, out.type.real_type)
        return b.op("complex.create", t[0] or z, t[1] or z)

    @staticmethod
    def vjp(b, attrs, x, out, ct):
        return [b.op("complex.re", ct), b.op("complex.im", ct)]


@linear("complex.re")
class Re:
    @staticmethod
    def jvp(b, attrs, x, out, t):
        return b.op("complex.re", t[0])

    @staticmethod
    def vjp(b, attrs, x, out, ct):  # a real cotangent on the real part
        return [b.op("complex.create", ct, b.c(0.0, ct))]


@linear("complex.im")
class Im:
    @staticmethod
    def jvp(b, attrs, x, out, t):
        return b.op("complex.im", t[0])

    @staticmethod
    def vjp(b, attrs, x, out, ct):
        return [b.op("complex.create", b.c(0.0, ct), ct)]


@linear("complex.conj")
class Conj:
    @staticmethod
    def jvp(b, attrs, x, out, t):
        return b.op("complex.conj", t[0])

    @staticmethod
    def vjp(b, attrs, x, out, ct):
        return [b.op("complex.conj", ct)]


@linear("complex.abs", uses="xo")
class Abs:
    """|z| is real-differentiable: d|z| = Re(conj(z) dz) / |z|; its cotangent is ct z / |z|."""

    @staticmethod
    def jvp(b, attrs, x, out, t):
        return b.div(b.op("complex.re", b.mul(b.op("complex.conj", x[0]), t[0])), out)

    @staticmethod
    def vjp(b, attrs, x, out, ct):
        scale = b.div(ct, out)
        return [b.mul(x[0], b.op("complex.create", scale, b.c(0.0, scale)))]


_ = partials
