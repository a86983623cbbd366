"""Programs for test_api.py."""

import collections
import dataclasses
import math

import numpy as np

import zymase


def f_vec(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += math.sin(x[i]) * x[i] ** 2 + x[i] * x[(i + 1) % x.shape[0]]
    return s


def vec_out(x):
    y = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        y[i] = x[i] * x[i] + math.exp(x[(i + 1) % x.shape[0]])
    return y


def scal(a, b):
    return a * a * b + math.sin(a * b)


def with_aux(x):
    return x * x, x + 1.0


def total(ws, x):
    s = 0.0
    for w in ws:
        for i in range(w.shape[0]):
            s += w[i] * w[i] * x
    return s


@dataclasses.dataclass
class Params:
    w: np.ndarray
    k: float
    n: int


Pair = collections.namedtuple("Pair", "a b")


def loss_dc(p):
    return (p.w * p.w).sum() * p.k + p.n


def loss_nt(p):
    return p.a * p.b * p.b


def f32(a):
    return (a * a).sum()


def square_into(out, x, s):
    for i in range(x.shape[0]):
        out[i] = x[i] * x[i] * s


def poly(x, a, n):
    t = 0.0
    for i in range(n):
        t += a[i] * x ** i
    return t


@zymase.custom_jvp
def softplus(x):
    return math.log1p(math.exp(x))


@softplus.defjvp
def softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return softplus(x), t / (1.0 + math.exp(-x)) * 2.0  # x2: shows the rule is used


@zymase.custom_vjp
def square(x):
    return x * x


def square_fwd(x):
    return square(x), x


def square_bwd(res, g):
    return (g * 3.0 * res,)  # 3x instead of 2x: shows the rule is used


square.defvjp(square_fwd, square_bwd)


def uses_custom(x, a):
    s = 0.0
    for i in range(a.shape[0]):
        s += softplus(a[i] * x) + square(a[i] * x)
    return s


def mixed(x, a, b, n):
    s = 0.0
    for i in range(n):
        s += x * a[i] * a[i] + math.sin(b[i] * x)
    return s


def indexes(a, k):
    return a[k] * a[k]
