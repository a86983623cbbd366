"""Plain-Python programs used by test_jit.py (zymase reads source, so they live in a file)."""

import collections
import dataclasses
import math

import numpy as np

SCALE = 2.5
TABLE = np.array([1.0, 2.0, 4.0])


@dataclasses.dataclass
class Params:
    a: float
    w: np.ndarray


Pair = collections.namedtuple("Pair", "x y")


def use_global(x):
    return x * SCALE + TABLE[1]


def make_closure(k):
    def scaled(x):
        return x * k
    return scaled


def use_dataclass(p):
    return p.a * p.w.sum()


def use_namedtuple(p):
    return p.x - p.y


def fact(n):
    if n <= 1:
        return 1
    return n * fact(n - 1)


def fib(n):
    if n < 2:
        return float(n)
    return fib(n - 1) + fib(n - 2)


def complex_scalar(x):
    z = complex(x, 1.0)
    w = z * z + 1j
    return abs(w) + (w.real if x > 0 else w.imag)


def complex_array(a):
    z = np.exp(1j * a)
    return np.abs(z).sum() + z.real.sum() + np.conj(z).imag.sum()


def build_list(n):
    out = []
    for i in range(n):
        if i % 3 == 0:
            out.append(i * 0.5)
    return np.array(out)


def swap_buffers(u, v, steps):
    for _ in range(steps):
        u, v = v, u
        u[0] += 1.0
    return u[0] - v[0]


def tuples(x):
    return x, 2 * x, (x, 1)


def chained(a, b, c):
    return a < b < c


def negative_step(n):
    s = 0
    for i in range(n, 0, -2):
        s += i
    return s


def while_break(x):
    i = 0
    while True:
        i += 1
        if x ** i > 1000:
            break
    return i


def int_becomes_float(n):
    s = 0
    for _ in range(n):
        s += 0.5
    return s


def float32_sum(a):
    s = np.float32(0)
    for i in range(a.shape[0]):
        s += a[i] * 2.0
    return s


def early_return_nested(a):
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            if a[i, j] < 0:
                return i * 10 + j
    return -1


def builtins_mix(a, b):
    return max(a, b, 3.0) - min(a, b) + abs(a - b) + round(a) + int(b) + math.floor(a)


def continue_skip(a):
    s = 0.0
    for i in range(a.shape[0]):
        if a[i] < 0:
            continue
        s += a[i]
    return s


def views_and_writes(a):
    b = a.copy()
    v = b[1:-1]
    v[0] = 100.0
    w = b[::2]
    w[-1] += 1.0
    r = b[::-1]
    return r[0] + b[1] + b.sum()


def two_d_views(m):
    col = m[:, 1]
    row = m[2]
    return col.sum() * 10.0 + row.sum() + m.T[1, 2]


def elementwise(a, b):
    c = a * b + 1.0
    c += np.sin(a) ** 2
    c[c > 2.0] = 2.0
    return c


def reductions(m):
    return (m.sum(axis=0), m.max(axis=1), np.argmax(m), m.mean(), np.prod(m[0]), m.min())


def matrix(a, b, v):
    return a @ b, a @ v, np.dot(v, v)


def math_functions(x):
    return (math.sqrt(x) + math.exp(-x) + math.log(x) + math.log1p(x) + math.expm1(x) * 0.1
            + math.log10(x) + math.log2(x) + math.sin(x) + math.cos(x) + math.tan(x)
            + math.asin(x / 4) + math.acos(x / 4) + math.atan(x) + math.atan2(x, 2.0)
            + math.sinh(x) + math.cosh(x) + math.tanh(x) + math.pow(x, 1.5) + math.fabs(-x)
            + math.erf(x) + math.erfc(x) + math.lgamma(x) + math.gamma(x) + math.hypot(x, 3.0)
            + math.copysign(x, -1.0) + math.floor(x) + math.ceil(x) + math.pi + math.e
            + float(math.isnan(x)) + float(math.isinf(x)) + float(math.isfinite(x)))


def python_division(a, b):
    return a // b, a % b, -a // b, -a % b, a / b


def mutate_argument(a, k):
    for i in range(a.shape[0]):
        a[i] = a[i] * k + i
    return None


@dataclasses.dataclass
class TwoArrays:
    a: np.ndarray
    b: np.ndarray


def _count_through(a, b, n):
    """Writes a[0] and reads b[0] in a loop: b[0] may only be hoisted when a and b are known
    apart."""
    s = 0.0
    for _ in range(n):
        a[0] = a[0] + 1.0
        s += b[0]
    return s


def count_through_tuple(pair, n):
    a, b = pair
    return _count_through(a, b, n)


def count_through_list(arrs, b, n):
    return _count_through(arrs[0], b, n)


def count_through_dict(d, n):
    return _count_through(d["a"], d["b"], n)


def count_through_dataclass(p, n):
    return _count_through(p.a, p.b, n)


def float_from_strings(xs):
    best, worst = float("inf"), float("-Infinity")
    for x in xs:
        best = min(best, x)
        worst = max(worst, x)
    missing = float("nan")
    return best, worst, missing != missing, float(" 2.5 ")


def int_at_the_edges(x):
    # -2**63 converts exactly; 0.0 ** -inf is inf (only finite negative powers of 0 raise)
    return int(x), math.floor(x / 2.0), 0.0 ** float("-inf"), (-0.0) ** 0.0


def numpy_bool_arithmetic(a, b):
    # NumPy booleans: + is or, * is and (Python's True + True stays 2)
    pa, pb = a > 0, b > 0
    return pa + pb, pa * pb, pa[0] + pb[0], pa[1] * pb[1], True + True, pa.sum()


def round_digits(x):
    return round(x, 0), round(x, 1), round(x, 2), round(x, 7), round(x, 15), round(x, 17)


def numpy_scalar_details(a):
    # a NumPy scalar's dtype; NumPy's floor_divide by 0.0 is a / 0.0 (inf, -inf, nan)
    return a[0].dtype == np.float64, a.sum().dtype == a.dtype, a // 0.0, round(a[1], 1)


def list_of_arrays_by_index(arrs, k):
    # a list (or tuple) of arrays of one dtype and rank, indexed at run time
    s = 0.0
    for i in range(len(arrs)):
        s += arrs[i].sum() * (i + 1)
    arrs[k][0] = s
    return s + arrs[-1][0]


def store_floats_in_int_arrays(a, b, x):
    a[0] = x  # truncates toward zero, as NumPy's setitem
    b[1] = -x
    a[1] += 0.5
    return a, b


def int_float_comparisons(i, f):
    # a Python int and a Python float compare exactly in CPython (no rounding of the int)
    return (i == f, i != f, i < f, i <= f, i > f, i >= f, f < i, f == i, f >= i)


def reversed_loops(n, lo, step, a, m):
    s = 0
    for i in reversed(range(n)):
        s = s * 10 + i
    t = 0
    for i in reversed(range(lo, n, step)):
        t = t * 7 + i
    u = 0.0
    for v in reversed(a):
        u = u * 0.5 + v
    acc = np.zeros(m.shape[1])
    for row in reversed(m):
        acc = acc * 2.0 + row
    b = a.copy()
    for i in reversed(range(1, b.shape[0])):
        b[i] -= b[i - 1]
    return s, t, u, acc, b


def enumerate_and_zip(x, k):
    s = 0.0
    for i, v in enumerate(x, start=3):
        s += i * v
    for i, v in enumerate(x, -2):
        s += i * v * 10.0
    for i, v in enumerate(x, k):
        s += i * v * 100.0
    for u, v in zip(x, x[1:]):
        s += u * v * 1000.0
    for u, v in zip(x, x[::-1], strict=True):
        s += u - v
    return s


def builtin_keywords(x, a):
    # keywords and optional arguments of builtins were dropped: round(x, ndigits=2) gave
    # round(x), sum(a, 10.0) ignored the start, complex(x, imag=2.0) lost the imaginary part
    return (round(x, ndigits=2), round(number=x), round(x, None), sum(a, 10.0),
            sum(a, start=-1), complex(x, imag=2.0), complex(imag=x), complex(real=x))


def python_max_min(a):
    # the builtins compare one element at a time: a NaN wins only where it comes first
    return max(a), min(a), np.max(a)


def sum_with_start(a, start):
    # Python adds from start on, one element at a time
    return sum(a, start), sum(a)


def divmod_and_newaxis(x, y, k):
    q, r = divmod(k, 3)
    fq, fr = divmod(-7.5, 2.0)
    d = (x[:, None] - y[None, :]) ** 2
    m = d[:, :, np.newaxis]
    c = x[:, None]
    c[0, 0] = 7.0  # a view: writes reach x, as in NumPy
    return q, r, fq, fr, d, m.sum(axis=2), x[None].sum(), x
