"""Forward mode over reverse (``hessian``, ``hvp``) through mutation: in-place updates whose
old values the adjoint reads, buffers swapped every iteration, and forward mode through an
argument that is not differentiated but written.  Reference: second central differences of
CPython running the same function."""

import numpy as np
import pytest

import zymase


def second_differences(f, x, h=1e-4):
    n = x.size
    H = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            def at(di, dj):
                y = x.copy()
                y[i] += di
                y[j] += dj
                return f(y)
            H[i, j] = (at(h, h) - at(h, -h) - at(-h, h) + at(-h, -h)) / (4 * h * h)
    return H


def prefix_product(x):  # the adjoint reads y[i] as it was before the store (a snapshot)
    y = x.copy()
    for i in range(1, y.shape[0]):
        y[i] = y[i - 1] * y[i]
    return y[-1]


def stencil_in_place(x):
    y = x.copy()
    for _t in range(3):
        prev = y[0]
        for i in range(1, y.shape[0] - 1):
            cur = y[i]
            y[i] = cur + 0.3 * (prev - 2.0 * cur + y[i + 1]) + 0.1 * cur * cur
            prev = cur
    return (y * y).sum()


def swapped_buffers(x):  # a, b = b, a: reverse mode picks each shadow by the buffer's address
    a = x.copy()
    b = np.zeros_like(x)
    for _t in range(3):
        for i in range(1, a.shape[0]):
            b[i] = a[i] * a[i - 1] + 0.5 * a[i]
        b[0] = a[0]
        a, b = b, a
    return (a * a).sum()


def heat_nonlinear(u0):  # prev = cur is read from the loop's snapshot ("carried") in grad
    u = u0.copy()
    for _t in range(2):
        prev = u[0]
        for i in range(1, u.shape[0] - 1):
            cur = u[i]
            u[i] = cur + 0.3 * (prev - 2.0 * cur + u[i + 1]) * cur
            prev = cur
    return np.sum(u)


PROGRAMS = [prefix_product, stencil_in_place, swapped_buffers, heat_nonlinear]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("limit", [None, 64], ids=["unlimited", "memory_limit"])
def test_hessian_through_mutation(fn, limit):
    x = np.array([0.9, 0.7, -0.4, 0.6, 0.8])
    want = second_differences(fn, x)
    opts = {} if limit is None else {"memory_limit": limit}
    try:
        H = zymase.hessian(fn, **opts)(x.copy())
    except zymase.ZymaseMemoryError as e:  # the smallest limit that works, as the error says
        need = int(str(e).split("needs at least ")[1].split(" bytes")[0])
        H = zymase.hessian(fn, memory_limit=need)(x.copy())
    np.testing.assert_allclose(H, want, rtol=1e-5, atol=1e-6)
    v = np.array([0.3, -1.0, 0.5, 0.2, -0.7])
    np.testing.assert_allclose(zymase.hvp(fn)(x.copy(), v), want @ v, rtol=1e-5, atol=1e-6)


def writes_constant_argument(x, b):
    v = b[1:]
    v[0] = x * x
    return b[1] * 3.0


def test_jvp_through_an_argument_held_constant_but_written():
    b = np.zeros(3)
    value, tangent = zymase.jvp(writes_constant_argument, (2.0, b), (1.0, None))
    assert (value, tangent) == (12.0, 12.0)
    assert b[1] == 4.0  # the write reached the caller's array, as in CPython
    assert zymase.hessian(writes_constant_argument)(2.0, np.zeros(3)) == 6.0


def zeroes_first(a):
    a[0] = 0.0
    return (a * a).sum()


def test_tangent_arrays_are_never_written():
    """fn writes its argument; jvp and hvp update tangents alongside, on copies: the caller's
    direction stays as given (the primal argument is written, as CPython writes it)."""
    a, t = np.array([1.0, 2.0]), np.array([1.0, 1.0])
    assert zymase.jvp(zeroes_first, (a,), (t,)) == (4.0, 4.0)
    np.testing.assert_array_equal(t, [1.0, 1.0])
    np.testing.assert_array_equal(a, [0.0, 2.0])
    v = np.array([1.0, 1.0])
    np.testing.assert_array_equal(zymase.hvp(zeroes_first)(np.array([1.0, 2.0]), v), [0.0, 2.0])
    np.testing.assert_array_equal(v, [1.0, 1.0])


def doubles_in_place(x):
    x *= 2.0
    return x * x


def cubes_doubled(x):
    x *= 2.0
    return np.sum(x ** 3)


def test_chunked_forward_passes_run_on_the_arguments_as_given():
    """jacfwd and hessian take 4 directions per pass: every pass runs on the arguments as the
    caller gave them, and the caller's array is written once, as CPython writes it."""
    x = np.linspace(0.5, 1.5, 6)
    y = x.copy()
    J = zymase.jacfwd(doubles_in_place)(y)
    np.testing.assert_allclose(J, np.diag(8.0 * x), rtol=1e-15)
    np.testing.assert_array_equal(y, 2.0 * x)
    y = x.copy()
    np.testing.assert_allclose(zymase.hessian(cubes_doubled)(y), np.diag(48.0 * x), rtol=1e-14)
    np.testing.assert_array_equal(y, 2.0 * x)
