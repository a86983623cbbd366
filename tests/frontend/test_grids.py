"""``np.mgrid``/``np.ogrid`` (integer, float and ``a:b:kj`` slices), ``a.shape = ...`` and
indexing with several integer arrays (``x[rows, cols]``, reads and writes), against NumPy, with
derivatives (``frontend/numpy/tiling.py``, ``lower/stmts.py``, ``frontend/numpy/fancy.py``)."""

import numpy as np
import pytest
from numpy_check import arr, central_differences, check

import zymase
from zymase.errors import ZymaseError


def _grids(n, m):
    a, b = np.mgrid[0:n, 0:m]
    d = np.mgrid[-1:1:5j, 0:2:3j]
    e = np.ogrid[0:n, 1:m:2]
    return (a, b, np.mgrid[1:n:2], d, e[0], e[1], np.mgrid[0.5:n, 0:m], np.ogrid[0:n],
            np.mgrid[n:0:-1, 0:2, 0:1])


@pytest.mark.parametrize("n, m", [(3, 4), (1, 5), (0, 2)])
def test_grids_against_numpy(n, m):
    check(_grids, n, m)


def _mandelbrot(xn, yn, itermax):  # the shrinking-arrays pattern of NumPy fractal code
    Xi, Yi = np.mgrid[0:xn, 0:yn]
    C = np.linspace(-2.0, 0.5, xn)[Xi] + np.linspace(-1.0, 1.0, yn)[Yi] * 1j
    N = np.zeros(C.shape, dtype=np.int64)
    Xi.shape = Yi.shape = C.shape = xn * yn
    Z = np.zeros(C.shape, np.complex128)
    for i in range(itermax):
        np.multiply(Z, Z, Z)
        np.add(Z, C, Z)
        out = abs(Z) > 2.0
        N[Xi[out], Yi[out]] = i + 1
        np.logical_not(out, out)
        Z, Xi, Yi, C = Z[out], Xi[out], Yi[out], C[out]
    return N


def test_mandelbrot_with_shape_assignment():
    check(_mandelbrot, 9, 7, 12)


def _pick(x, r, c, m):
    y = x.copy()
    y[r, c] = -1.0
    z = x.copy()
    z[r[m], c[m]] = np.arange(np.sum(m)) * 1.0
    t = np.zeros((3,) + x.shape)
    t[0, r, c] = 2.0
    return x[r, c], x[r[:, None], c[None, :]], y, z, x[r, 1], t, x[:, r, c] if x.ndim == 3 else x


def test_several_index_arrays():
    r, c = np.array([0, 3, -1, 2]), np.array([1, 4, 0, 0])
    check(_pick, arr(4, 5), r, c, np.array([True, False, True, True]))
    check(_pick, np.round(arr(4, 5)).astype(np.int64), r, c, np.array([False] * 4))


def _loss(x, r, c):
    y = x * 1.0
    y[r, c] = np.cos(x[c, r])
    return np.sum(np.sin(x[r[:, None], c]) * y[c, r])


def test_several_index_arrays_derivatives():
    x = arr(5, 5)
    r, c = np.array([0, 1, 2, 2]), np.array([4, 3, 2, 2])
    g = zymase.grad(_loss)(x, r, c)
    np.testing.assert_allclose(g, central_differences(_loss, (x, r, c), 0), atol=1e-7)
    v = arr(5, 5)
    _, t = zymase.jvp(_loss, (x, r, c), (v, None, None))
    assert t == pytest.approx(float(np.sum(g * v)), rel=1e-9)


def _aliased_shape(x):
    y = x
    x.shape = (x.size,)
    return y


def _shape_of_scalar(n):
    n.shape = (1,)
    return n


def _mask_and_array(x, m, c):
    return x[m, c]


@pytest.mark.parametrize("fn, args, text", [
    (_aliased_shape, (np.ones((2, 2)),), "would reshape `y` too"),
    (_shape_of_scalar, (3,), "needs n to be an array"),
    (_mask_and_array, (np.ones((2, 2)), np.array([True, False]), np.array([0, 1])),
     "boolean mask beside other index arrays"),
])
def test_refusals_name_the_line(fn, args, text):
    with pytest.raises(ZymaseError, match=text) as e:
        zymase.jit(fn)(*args)
    assert "test_grids.py:" in str(e.value)
