"""Programs for the derivative tests: one small function per op or construct (``test_ops.py``)
and the mutation/control-flow programs of ``test_mutation.py``.

zymase reads source with ``inspect``, so these live at module level in a real file.  Every
program is plain Python that CPython runs as well (the finite-difference oracle).
"""

import math

import numpy as np

# ---------------------------------------------------------------------- scalar arithmetic


def add(x, y):
    return x + y


def sub(x, y):
    return x - y


def mul(x, y):
    return x * y


def div(x, y):
    return x / y


def neg(x, y):
    return -x * y


def pow_int(x):
    return x**3


def pow_negint(x):
    return x**-2


def pow_float(x):
    return x**2.5


def pow_half(x):
    return x**0.5


def pow_xy(x, y):
    return x**y


def pow_const_base(x):
    return 2.0**x


def pow_negative_base(x):
    return x**2.0 + x**3 + math.pow(x, 2.0)


def pow_zero_base(x):
    return x**2 + x**2.0 + x**1.0 + x**0


def pow_builtin(x, y):
    return pow(x, y)


def mod(x, y):
    return x % y


def mod_const(x):
    return (x * x) % 1.5


def floordiv(x, y):
    return x * (x // y) + y


# ---------------------------------------------------------------------- math module


def m_sqrt(x):
    return math.sqrt(x)


def m_exp(x):
    return math.exp(x)


def m_log(x):
    return math.log(x)


def m_log_base(x, y):
    return math.log(x, y)


def m_log1p(x):
    return math.log1p(x)


def m_expm1(x):
    return math.expm1(x)


def m_log10(x):
    return math.log10(x)


def m_log2(x):
    return math.log2(x)


def m_sin(x):
    return math.sin(x)


def m_cos(x):
    return math.cos(x)


def m_tan(x):
    return math.tan(x)


def m_asin(x):
    return math.asin(x)


def m_acos(x):
    return math.acos(x)


def m_atan(x):
    return math.atan(x)


def m_atan2(y, x):
    return math.atan2(y, x)


def m_sinh(x):
    return math.sinh(x)


def m_cosh(x):
    return math.cosh(x)


def m_tanh(x):
    return math.tanh(x)


def m_asinh(x):
    return math.asinh(x)


def m_acosh(x):
    return math.acosh(x)


def m_atanh(x):
    return math.atanh(x)


def m_fabs(x):
    return math.fabs(x) * x


def m_erf(x):
    return math.erf(x)


def m_erfc(x):
    return math.erfc(x)


def m_lgamma(x):
    return math.lgamma(x)


def m_gamma(x):
    return math.gamma(x)


def m_hypot(x, y):
    return math.hypot(x, y)


def m_copysign(x, y):
    return math.copysign(x, y) * y


def m_pow(x, y):
    return math.pow(x, y)


def m_fmod(x, y):
    return math.fmod(x, y)


def m_floor(x, y):
    return x * math.floor(y) + math.ceil(x) * y


# ---------------------------------------------------------------------- builtins, selects


def b_abs(x):
    return abs(x) * 2.0


def b_min(x, y):
    return min(x, y) * 3.0


def b_max(x, y):
    return max(x, y, 0.25) * x


def cond_expr(x, y):
    return x * y if x > y else x / y


def if_branches(x, y):
    if x * y > 1.0:
        r = math.sin(x) * y
    else:
        r = math.cos(y) - x
    return r * r


def round_float(x):
    return x * round(x, 2)


# ---------------------------------------------------------------------- NumPy elementwise


def np_arith(a, b):
    return ((a + b) * (a - b) / (b * b + 1.0) - a).sum()


def np_neg(a, b):
    return (-a * b).sum()


def np_pow(a, b):
    return (a**2 + np.abs(a) ** 0.5 + np.power(b, 3) + np.power(np.abs(a), b)).sum()


def np_maximum(a, b):
    return (np.maximum(a, b) * b + np.minimum(a, 0.5) * a).sum()


def np_where(a, b):
    return np.where(a > b, a * b, a - b).sum()


def np_unary(a, b):
    return (np.exp(a) * b + np.log(b) * a + np.sqrt(b) + np.tanh(a) * np.sin(b)).sum()


def np_unary2(a, b):
    return (np.cos(a) * np.abs(a) + np.square(a) * b + np.expm1(a) * np.log1p(b)).sum()


def np_trig(a, b):
    return (np.arctan2(a, b) + np.arctan(a) * np.sinh(b) + np.cosh(a) * np.tan(b * 0.1)).sum()


def np_clip(a, b):
    return (np.clip(a, -0.5, 0.75) * b).sum()


def np_mod(a, b):
    return ((a * 2.3) % b).sum()


def np_hypot(a, b):
    return (np.hypot(a, b) + np.log10(b) * np.log2(b + a * a)).sum()


# ---------------------------------------------------------------------- reductions, products


def r_sum_mean(a, b):
    return a.sum() * np.mean(b) + np.sum(a * b)


def r_prod(a):
    return np.prod(a)


def r_max_min(a, b):
    return a.max() * b.min() + np.max(a * b) - np.min(b)


def r_norm(a):
    return np.linalg.norm(a)


def r_dot(a, b):
    return np.dot(a, b) + a.dot(b * b)


def r_axis(m):
    return (m.sum(axis=0)[:3] * m.mean(axis=1)).sum()


def mm_2d(m, n):
    return ((m @ n) * (m @ n)).sum()


def mm_1d(m, a):
    return np.dot(m @ a, a[:3]) + (a[:3] @ m).sum()


def mm_norm(m):
    return np.linalg.norm(m.T @ m)


def bcast_scalar(a, x):
    return (np.sin(a * x) + x).sum()


def bcast_2d(m, a):
    return ((m + a) * (m - a[0])).sum() + (m.reshape(5, 3) * a[:3]).sum()


def views(a, m):
    return (a[::2][:3] * a[1::2]).sum() + (a[1:-1] * a[:-2]).sum() + (m[:, 1] * m.T[2, :]).sum()


def shapes(a, b):
    c = np.concatenate((a, b * b))
    s = np.stack((a, b))
    return (c * c[::-1]).sum() + (s.T @ s).sum() + np.roll(a, 2)[0] * np.diff(b).sum()


def scans(a):
    return (np.cumsum(a) * np.cumprod(a)).sum()


def linalg_misc(m, a):
    return np.trace(m[:, :3] @ m[:, 2:]) + np.outer(a, a).sum() + np.vdot(a, a) + np.inner(a, a)


def np_misc(a, b):
    return (np.exp2(a) + np.reciprocal(b) + np.negative(a) * b + np.angle(a + 1j * b)).sum()


def gather(a, idx):
    return (a[idx] * a[idx]).sum()


# ---------------------------------------------------------------------- casts


def cast_f32_roundtrip(a):
    return (a.astype(np.float32) * np.float32(2.0)).astype(np.float64).sum()


def cast_f32_arith(a):
    return (a * a + np.sin(a)).sum()


def cast_f32_to_f64(a):
    return (a.astype(np.float64) ** 2).sum()


def cast_scalar_f32(x):
    return float(np.float32(x) * np.float32(x)) + x


def cast_int_to_float(x, n):
    return x * float(n) + n


# ---------------------------------------------------------------------- complex intermediates


def c_abs_product(x, y):
    return abs(complex(x, y) * complex(1.0, x)) ** 2


def c_exp_real(a):
    return np.exp(1j * a).real.sum()


def c_conj(a, b):
    z = a + 1j * b
    return (z * np.conj(z)).real.sum() + (z * z).imag.sum()


def c_parts(x, y):
    z = complex(x, y)
    w = z * z / complex(y, 1.0)
    return w.real * w.imag + z.conjugate().imag


def c_funcs(x, y):
    z = complex(x, y)
    return (np.exp(z) + np.sin(z) * np.cos(z) + np.log(z) + np.sqrt(z) + np.tanh(z)).real


def c_abs_array(a, b):
    return np.abs(a * np.exp(1j * b)).sum() + np.abs(a + 1j * b).sum()


def c_pow(x, y):
    z = complex(x, y)
    return (z**3).imag + abs(z**0.5)


# ---------------------------------------------------------------------- loops and calls


def loop_series(x, n):
    s = 0.0
    for i in range(1, n + 1):
        s += x**i / i
    return s


def _helper(u, v):
    return u * math.exp(-v)


def calls_helper(x, y):
    return _helper(x, y) + _helper(y, x)


# ---------------------------------------------------------------------- mutation and control flow


def overwritten_temp(x, n):
    """A value stored, read back, then overwritten, and needed after the loop."""
    tmp = np.zeros(2)
    acc = 0.0
    y = 0.0
    for _ in range(n):
        tmp[0] = x * x
        y = tmp[0]
        tmp[0] = 0.0
        acc += math.sin(y) + tmp[0]
    return acc * y


def overwritten_needed_later(x, n):
    """The loaded value is needed by the adjoint after its slot was overwritten."""
    tmp = np.zeros(2)
    acc = 0.0
    for _ in range(n):
        tmp[0] = x * x + acc
        y = tmp[0]
        tmp[0] = 0.0
        acc += math.sin(y) * y + tmp[0]
    return acc


def last_value(x, n):
    """A loop-carried variable overwritten each iteration (its old value is never read)."""
    y = 0.0
    for _ in range(n):
        y = 2.0 * x
    return y


def swap_buffers(a, n):
    """Two buffers exchanged every step, each updated in place from the other."""
    u = a.copy()
    v = np.zeros_like(a)
    for _ in range(n):
        for i in range(1, a.shape[0] - 1):
            v[i] = 0.5 * u[i] + 0.25 * (u[i - 1] + u[i + 1]) * u[i]
        u, v = v, u
    return (u * u).sum()


def scatter_repeats(v, idx):
    """y[idx[i]] += v[i] with repeated indices: every contribution must add up."""
    y = np.zeros(4)
    for i in range(idx.shape[0]):
        y[idx[i]] += v[i] * v[i]
    return (y * np.array([1.0, 2.0, 3.0, 4.0])).sum() + y[1] * y[2]


def aliasing_view(a):
    """Writes through a view show up in the base array."""
    b = a.copy()
    v = b[1:]
    v[0] = v[0] * v[1]
    return b[1] * b[0] + (b * b).sum()


def stencil_in_place(u0, c, steps):
    """Explicit diffusion updated in place: u[i] uses the new u[i-1]."""
    u = u0.copy()
    for _ in range(steps):
        for i in range(1, u.shape[0] - 1):
            u[i] = u[i] + c * (u[i - 1] - 2.0 * u[i] + u[i + 1])
    return (u * u).sum()


def early_return(x, n):
    s = x
    for i in range(n):
        s = s * 1.5 + math.sin(s)
        if s > 4.0:
            return s * i
    return -s


def while_break(x):
    s = x
    k = 0
    while True:
        s = s * s + 0.1
        k += 1
        if s > 10.0:
            break
    return s / k


def _write_into(out, a, c):
    for i in range(a.shape[0]):
        out[i] = c * a[i] * a[i]


def helper_writes_output(a, c):
    out = np.empty_like(a)
    _write_into(out, a, c)
    return out.sum() + out[0] * out[1]


def _power_rec(x, n):
    if n == 0:
        return 1.0
    return x * _power_rec(x, n - 1)


def recursion(x, n):
    return _power_rec(x, n) + _power_rec(math.sin(x), 2)


def _mutate_in_place(a):
    for i in range(a.shape[0]):
        a[i] = a[i] * a[i] + 1.0
    a *= 0.5


def mutates_copy_of_input(a):
    b = a.copy()
    _mutate_in_place(b)
    return (b * a).sum()


def mutates_input(a):
    """Mutates its argument: the derivative is with respect to the value passed in."""
    a *= 2.0
    a[0] = a[0] * a[1]
    return (a * a).sum()


def halve_until(x, eps):
    """Data-dependent trip count: the derivative is the product of the (constant) halvings."""
    y = x
    while y > eps:
        y *= 0.5
    return y * x


def data_trip_for(x):
    """A for loop whose trip count is computed from the active input."""
    s = 0.0
    for i in range(int(x * 4.0)):
        s += x * i + math.sin(s)
    return s


def accumulate_with_reset(a):
    """A running buffer, reset in place mid-way through the loop."""
    buf = np.zeros(a.shape[0])
    total = 0.0
    for i in range(a.shape[0]):
        buf[i] = a[i] * total + 1.0
        total += buf[i] * a[i]
        if i == 2:
            buf[:] = 0.0
    return total + buf.sum()


# ---------------------------------------------------------------------- errors


def int_times(x, n):
    return x * n


def returns_array(a):
    return a * 2.0  # the line DifferentiationError names


def uses_erf(x):
    return math.erf(x) * x  # the line a missing rule must name


def swap_with_stencil(a, n):
    """Buffers swapped each step, one read and the other written: reverse mode selects the
    matching shadow by address."""
    u = a.copy()
    v = a * 0.5
    for _ in range(n):
        for i in range(1, u.shape[0] - 1):
            v[i] = 0.5 * (u[i - 1] + u[i + 1]) * u[i]
        u, v = v, u
    return (u * u).sum() + v[0]


def chosen_by_branch(a, b, flag):
    c = a if flag > 0 else b
    s = 0.0
    for i in range(c.shape[0]):
        s += c[i] * c[i]
    return s


def list_in_loop(x, n):
    out = []
    for i in range(n):
        out.append(x * i)
    return np.array(out).sum()


def writes_through_reshape(a, s):
    b = a.copy()
    m = b.reshape(2, -1)  # a view of b
    m[0, :] *= s  # scales b[:3] in place
    for i in range(m.shape[1]):
        m[1, i] += m[0, i] * m[1, i]
    r = b.ravel()
    r[0] = r[0] * r[-1]
    return (b * b).sum() + m[1, 2]


def pairwise_via_newaxis(x, y):
    d = x[:, None] - y[None, :]
    return (d * d * np.exp(-d)).sum()
