"""NumPy under zymase.jit matches NumPy: values, shapes, result dtypes (and NumPy scalar vs Python
scalar), broadcasting, in-place effects, and errors (ShapeError is a ValueError, IndexError for
bad indices, UnsupportedError naming this file and line).

Each case is a small function defined here (zymase compiles from source files), run once compiled
and once by CPython/NumPy on copies of the same arguments.  float32 results get rtol 1e-6 (sums
may round in another order than NumPy's pairwise sums); float64 and complex128 get 1e-12; integers
and booleans must be equal.
"""

import numpy as np
import pytest
from numpy_check import DTYPES, arr, check, check_interp, copy_arg

import zymase

# ---------------------------------------------------------------------- existing behaviour


def ufuncs(a):
    return np.exp(a), np.sin(a), np.sqrt(np.abs(a)), np.tanh(a), np.square(a), np.abs(a)


def scalar_ufuncs(x):
    return np.exp(x), np.sin(x), np.sqrt(abs(x)), np.maximum(x, 0.5)


def binary_ufuncs(a, b):
    return np.maximum(a, b), np.minimum(a, 0.5), np.power(np.abs(a), 2.0), np.arctan2(a, b)


def reductions(a):
    return (
        a.sum(axis=1),
        a.sum(axis=0),
        np.sum(a),
        np.max(a),
        np.argmax(a),
        np.mean(a),
        np.mean(a, axis=0),
        a.min(),
        np.prod(a, axis=1),
        a.sum(axis=-1),
        np.max(a, -2),
    )


def views(a, j):
    return a.T, a[:, j], a[::2], a[1:, ::-1], a.T[1]


def elementwise_ops(a, b):
    return a + b * 2, a - b, a * b, -a, a > b


@pytest.mark.parametrize("dtype", DTYPES)
def test_existing_elementwise(dtype):
    a, b = arr(3, 4, dtype=dtype), arr(4, dtype=dtype)
    check(ufuncs, a)
    check(binary_ufuncs, a, b)
    check(reductions, a)
    check(views, a, 2)
    check(elementwise_ops, a, b)


def test_existing_scalars():
    check(scalar_ufuncs, 0.7)
    check(scalar_ufuncs, np.float32(0.7))


# ---------------------------------------------------------------------- elementwise functions


def where3(c, a, b):
    return np.where(c > 0, a, b), np.where(a > 0, a, 0.0), np.where(a > b, 1, b)


def where_bcast(a, v):
    return np.where(a > v, a, v), np.where(v > 0, 1.0, -1.0)


def clips(a, lo):
    return (
        np.clip(a, -1, 1),
        a.clip(-0.5, 2),
        np.clip(a, None, 0.2),
        np.clip(a, lo, 3),
        np.clip(a, a_min=0, a_max=None),
    )


def clip_scalar(x):
    return np.clip(x, 0.0, 1.0), np.clip(3, 0, 2)


def signs(a):
    return np.sign(a), np.floor(a), np.ceil(a), np.trunc(a), np.negative(a)


def nan_tests(a):
    return np.isnan(a), np.isinf(a), np.isfinite(a)


def nan_tests_scalar(x):
    return np.isnan(x), np.isinf(x), np.isfinite(x)


def more_ufuncs(a, b):
    return np.hypot(a, b), np.exp2(a), np.reciprocal(a)


def int_reciprocal(a):
    return np.reciprocal(a)


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
@pytest.mark.parametrize("dtype", DTYPES)
def test_where_clip_sign(dtype):
    a, b, v = arr(3, 4, dtype=dtype), arr(3, 4, dtype=dtype), arr(4, dtype=dtype)
    check(where3, b, a, b)
    check(where_bcast, a, v)
    check(clips, a, v)
    check(signs, np.concatenate([a.ravel(), np.zeros(2, dtype)]))
    check(more_ufuncs, a, b)


def test_elementwise_scalars_and_special_values():
    check(clip_scalar, 1.5)
    check(clip_scalar, np.float32(-2.0))
    x = np.array([0.0, np.nan, np.inf, -np.inf, 1.0])
    check(nan_tests, x)
    check(nan_tests, x.astype(np.float32))
    check(nan_tests, np.array([1, 2]))
    check(nan_tests, np.array([1 + 1j, complex(np.nan, 0), complex(0, np.inf)]))
    for s in (np.nan, 1.0, -np.inf, 3):
        check(nan_tests_scalar, s)
    check(signs, np.array([np.nan, -0.0, 2.5]))
    check(int_reciprocal, np.array([1, -1, 2, -3, 5]))


def parts(z):
    return np.real(z), np.imag(z), np.conj(z), np.conjugate(z), z.conj(), np.angle(z)


def angle_deg(z):
    return np.angle(z, deg=True), np.angle(z, True)


def scalar_parts(z, x):
    return np.real(z), np.imag(z), np.conj(z), np.real(x), np.imag(x), np.conj(x), np.angle(z)


def test_complex_parts():
    z = arr(5, dtype=np.complex128)
    check(parts, z)
    check(parts, arr(2, 3))
    check(angle_deg, z)
    check(angle_deg, np.array([-1.0, 2.0]))
    check(scalar_parts, 1.5 - 2j, 3.0)
    check(scalar_parts, np.complex64(0.5 + 1j), np.float32(3.0))


def ctors(x, n):
    return (
        np.float64(n),
        np.float32(x),
        np.int64(x),
        np.int32(n) * 2,
        np.complex128(x),
        np.bool_(x),
        np.float64(),
        np.complex128(x, 2.0),
        np.array((np.int32(n), np.int32(1))),
        np.array((np.float32(n), np.float32(x))),
    )


def ctor_array(a):
    return np.float32(a), np.int64(a)


def test_scalar_constructors():
    check(ctors, 2.75, 3)
    check(ctors, -0.0, 0)
    check(ctor_array, arr(4))


# ---------------------------------------------------------------------- cumulative, diff, roll


def cumulative(a):
    return np.cumsum(a), np.cumsum(a, axis=0), np.cumsum(a, axis=1), a.cumsum(), np.cumprod(a)


def cum_1d(a):
    return np.cumsum(a), np.cumprod(a, axis=0), a.cumsum(-1), a.cumprod()


def diffs(a):
    return np.diff(a), np.diff(a, 2), np.diff(a, n=0)


def diffs_2d(a):
    return np.diff(a), np.diff(a, axis=0), np.diff(a, n=2, axis=1)


def rolls(a, s):
    return np.roll(a, 2), np.roll(a, -1), np.roll(a, s), np.roll(a, 0)


def rolls_2d(a):
    return np.roll(a, 1), np.roll(a, 5, axis=0), np.roll(a, -2, axis=1), np.roll(a, 1, axis=-1)


@pytest.mark.parametrize("dtype", [*DTYPES, np.bool_])
def test_cumulative_diff_roll(dtype):
    a2, a1 = arr(3, 4, dtype=dtype), arr(6, dtype=dtype)
    if dtype is not np.bool_:
        check(cumulative, a2)
    check(cum_1d, a1)
    check(diffs, a1)
    check(diffs_2d, a2)
    check(rolls, a1, 13)
    check(rolls, a1, -7)
    check(rolls_2d, a2)


def test_roll_and_diff_of_empty_arrays():
    check(rolls, np.zeros(0), 3)
    check(diffs, np.zeros(1))


# ---------------------------------------------------------------------- joining, reshaping


def joins(a, b, v):
    return (
        np.concatenate((a, b)),
        np.concatenate([a, b], axis=1),
        np.concatenate((v, v, v)),
        np.concatenate((a, b), axis=None),
        np.vstack((a, b)),
        np.hstack((a, b)),
        np.hstack((v, v)),
        np.vstack((v, v)),
        np.stack((v, v)),
        np.stack((a, b), axis=1),
        np.stack([a, b], axis=-1),
    )


def join_mixed(a, i):
    return np.concatenate((a, i)), np.hstack((1.5, i)), np.stack((i, i))


def reshapes(a):
    return (
        a.reshape(4, 3),
        a.reshape((2, -1)),
        np.reshape(a, (12,)),
        a.ravel(),
        a.flatten(),
        np.ravel(a.T),
        a.T.reshape(-1),
        a.transpose(),
        a.transpose(1, 0),
        np.transpose(a),
        a.reshape(3, 2, 2).transpose((2, 0, 1)).ravel(),
    )


def test_joins_and_reshapes():
    a, b, v = arr(3, 4), arr(3, 4), arr(4)
    check(joins, a, b, v)
    check(join_mixed, a.ravel(), np.arange(3))
    check(reshapes, a)
    check(reshapes, np.arange(12).reshape(3, 4))


def reshape_writes_through(a):
    b = a.reshape(-1)
    b[0] = 99.0
    c = np.reshape(a, (a.size // 2, 2))
    c[-1, :] += 1.0
    np.ravel(a)[1] = -5.0
    d = a.reshape(2, -1).T  # a view of a view
    d[0, 1] = 7.0
    a.ravel()[2:4] *= 10.0
    e = a.flatten()  # always a copy
    e[0] = -1.0
    return a, b, e


def test_reshape_of_contiguous_arrays_is_a_view():
    """As in NumPy: writing through reshape/ravel of a C-contiguous array changes the original
    (zymase used to copy here)."""
    for a in (np.zeros((2, 2)), np.arange(6.0), np.arange(12.0).reshape(2, 3, 2)):
        want = reshape_writes_through(a.copy())
        got = zymase.jit(reshape_writes_through)(a.copy())
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


def strided_reshape_written(a):
    b = a[::2].reshape(2, -1)
    b[0, 0] = 9.0
    return a


def strided_reshape_read(a):
    b = a[::2].reshape(2, -1)
    return b.sum() + b[1, 0]


def _writes_first(z):
    z[0] = 1.0


def _reads_first(z):
    return z[0] * 2.0


def transposed_reshape_to_writer(m):
    b = m.T.reshape(-1)
    _writes_first(b)  # refused: a helper that writes its argument
    return b


def transposed_reshape_to_reader(m):
    return _reads_first(m.T.reshape(-1))  # fine: the helper only reads


def test_reshape_of_strided_arrays_copies_and_refuses_writes():
    """A slice's reshape is a copy here (NumPy may view it): reading agrees, writing into it is
    refused at the write, which names the line."""
    a = np.arange(8.0)
    assert zymase.jit(strided_reshape_read)(a) == strided_reshape_read(a)
    with pytest.raises(zymase.UnsupportedError, match="may not be contiguous") as info:
        zymase.jit(strided_reshape_written)(a)
    line = strided_reshape_written.__code__.co_firstlineno + 2
    assert f"test_numpy.py:{line}:" in str(info.value)
    m = np.arange(4.0).reshape(2, 2)
    with pytest.raises(zymase.UnsupportedError, match="may not be contiguous"):
        zymase.jit(transposed_reshape_to_writer)(m)
    assert zymase.jit(transposed_reshape_to_reader)(m) == transposed_reshape_to_reader(m)


# ---------------------------------------------------------------------- ranges


def ranges(n, x):
    return (
        np.arange(5),
        np.arange(2, 10, 3),
        np.arange(10, 0, -3),
        np.arange(n),
        np.arange(1.0, 2.0, 0.1),
        np.arange(x),
        np.arange(0, n, 0.5),
        np.arange(3, 1),
        np.arange(5, dtype=float),
        np.arange(-x, x, 0.7),
    )


def linspaces(n, a, b):
    return (
        np.linspace(0, 1, 5),
        np.linspace(a, b),
        np.linspace(a, b, n),
        np.linspace(a, b, 7, endpoint=False),
        np.linspace(2.0, 3.0, 1),
        np.linspace(a, b, 0),
        np.linspace(a, b, n, retstep=True),
        np.linspace(0, 10, 4, dtype=int),
        np.linspace(1.0, 1.0 + 1e-310, 3),
        np.linspace(np.float32(0), np.float32(1), n),
    )


def eyes(n):
    return (
        np.eye(3),
        np.eye(3, 4, k=1),
        np.eye(n, dtype=int),
        np.eye(n, 2, -1),
        np.identity(n),
        np.eye(2, k=5),
    )


def diagonals(a, v):
    return (
        np.trace(a),
        np.trace(a, 1),
        a.trace(),
        a.trace(-1),
        np.diag(v),
        np.diag(v, 1),
        np.diag(v, k=-2),
        np.diag(a),
        np.diag(a, 2),
        np.diag(a, -1),
        a.diagonal(),
    )


def test_ranges_and_diagonals():
    check(ranges, 7, 3.3)
    check(ranges, 0, 0.25)
    check(linspaces, 9, -1.5, 4.25)
    check(linspaces, 2, 1.0, -1.0)
    check(eyes, 4)
    for dtype in DTYPES:
        check(diagonals, arr(3, 4, dtype=dtype), arr(3, dtype=dtype))


# ---------------------------------------------------------------------- statistics


def stats(a):
    return (
        np.mean(a),
        np.var(a),
        np.std(a),
        np.var(a, ddof=1),
        a.var(),
        a.std(),
        np.std(a, ddof=1.5),
        np.count_nonzero(a),
        np.var(a, axis=0),
        np.mean(a, -1),
        np.count_nonzero(a, axis=0),
        np.std(a, 0),
    )


def stats_2d(a):
    return np.var(a, axis=1), a.std(axis=0), np.var(a, -1, ddof=2), np.count_nonzero(a, 1)


@pytest.mark.parametrize("dtype", [*DTYPES, np.complex128, np.bool_])
def test_statistics(dtype):
    check(stats, arr(3, 4, dtype=dtype))
    check(stats, arr(5, dtype=dtype))
    check(stats_2d, arr(3, 4, dtype=dtype))


def norms(a, v):
    return np.linalg.norm(a), np.linalg.norm(v), np.linalg.norm(a.T)


@pytest.mark.parametrize("dtype", [*DTYPES, np.complex128])
def test_norm(dtype):
    check(norms, arr(3, 4, dtype=dtype), arr(5, dtype=dtype))


# ---------------------------------------------------------------------- matrix products


def products(a, b, v, w):
    return (
        a @ b,
        a @ w,
        v @ a,
        v @ v,
        np.dot(a, b),
        np.matmul(a, w),
        a.dot(b),
        np.dot(v, v),
        a.T @ v,
        np.inner(v, v),
        np.inner(a, a),
        np.outer(v, w),
        np.vdot(v, v),
        np.dot(2.0, v),
        np.dot(a, 3),
    )


@pytest.mark.parametrize("dtype", [*DTYPES, np.complex128, np.bool_])
def test_products(dtype):
    xs = [arr(3, 4, dtype=dtype), arr(4, 2, dtype=dtype), arr(3, dtype=dtype), arr(4, dtype=dtype)]
    if dtype == np.float32:  # whole numbers: exact in float32 whatever the order of the sums
        xs = [np.round(x) for x in xs]  # (the shared generator's values vary with test order)
    check(products, *xs)


def mixed_products(a, i, z):
    return a @ i, i @ a, np.vdot(z, z), np.vdot(z, a[0]), np.outer(i, z)


def test_mixed_products():
    check(mixed_products, arr(3, 3), arr(3, 3, dtype=np.int64), arr(3, dtype=np.complex128))
    check(
        mixed_products,
        arr(3, 3, dtype=np.float32),
        arr(3, 3, dtype=np.int64),
        arr(3, dtype=np.complex128),
    )


def empty_product(a, b):
    return a @ b


def test_empty_inner_dimension():
    check(empty_product, np.zeros((2, 0)), np.zeros((0, 3)))


def test_interpreter_agrees():
    a, v = arr(3, 4), arr(4)
    for fn, args in [(products, (a, arr(4, 2), arr(3), v)), (cumulative, (a,)),
                     (joins, (a, a, v)), (reshapes, (a,)), (linspaces, (9, -1.5, 4.25)),
                     (ranges, (7, 3.3)), (stats, (a,)), (diagonals, (a, arr(3))),
                     (rolls_2d, (a,)), (diffs_2d, (a,))]:  # fmt: skip
        check_interp(fn, *args)


# ---------------------------------------------------------------------- errors


def matmul_any(a, b):
    return a @ b


def where_any(c, a, b):
    return np.where(c, a, b)


def concat_any(a, b):
    return np.concatenate((a, b))


def read_idx(x, i):
    return x[i]


def write_idx(x, i, v):
    x[i] = v
    return x


def reshape_any(a, n):
    return a.reshape(n, -1)


@pytest.mark.parametrize(
    "fn,args,exc",
    [
        (matmul_any, (np.ones((2, 3)), np.ones((2, 3))), zymase.ShapeError),
        (matmul_any, (np.ones(3), np.ones(4)), zymase.ShapeError),
        (matmul_any, (np.ones((2, 3), int), np.ones(2, int)), zymase.ShapeError),
        (where_any, (np.ones(3) > 0, np.ones(3), np.ones(2)), zymase.ShapeError),
        (concat_any, (np.ones((2, 3)), np.ones((2, 2))), zymase.ShapeError),
        (read_idx, (np.ones(3), np.array([0, 3])), IndexError),
        (read_idx, (np.ones(3), np.array([-4])), IndexError),
        (read_idx, (np.ones(3), np.array([True, False])), IndexError),
        (write_idx, (np.ones(3), np.array([5]), 1.0), IndexError),
        (write_idx, (np.ones(3), np.array([0, 1]), np.ones(3)), ValueError),
        (write_idx, (np.ones(3), np.ones(3) > 0, np.ones(2)), ValueError),
        (reshape_any, (np.ones(6), 4), ValueError),
    ],
)
def test_runtime_errors(fn, args, exc):
    with pytest.raises(ValueError if exc is zymase.ShapeError else exc):
        fn(*map(copy_arg, args))  # NumPy agrees
    with pytest.raises(exc) as info:
        zymase.jit(fn)(*map(copy_arg, args))
    assert isinstance(info.value, zymase.ZymaseError)
    if exc is zymase.ShapeError:
        assert isinstance(info.value, ValueError)


def sum_keepdims(a):
    return np.sum(a, keepdims=a[0, 0] > 0)  # keepdims must be known at compile time


def norm_ord(a):
    return np.linalg.norm(a, ord=1)


def cumsum_out(a):
    return np.cumsum(a, out=a)


def where_one(a):
    return np.where(a > 0)


def var_dtype(a):
    return np.var(a, dtype=np.float32)


def mean_method_keepdims(a):
    return a.mean(keepdims=a.shape[0])


def two_index_arrays(a):  # (a mask beside another index array)
    return a[np.array([True, False]), np.array([1])]


def where_scalars(x):
    return np.where(x > 0, 1.0, 2.0)


def keepdims_forms(a):
    return (
        np.sum(a, axis=1, keepdims=True),
        a.sum(axis=0, keepdims=True),
        np.max(a, keepdims=True),
        a.min(axis=-1, keepdims=True),
        np.mean(a, axis=0, keepdims=True),
        np.prod(a, axis=1, keepdims=False),
        a.T.sum(axis=1, keepdims=True),
        np.argmax(a, axis=1, keepdims=True),
        np.std(a, axis=1, keepdims=True),
        np.var(a, keepdims=True),
        np.linalg.norm(a, keepdims=True),
        np.sum(a[0], keepdims=True),
        np.any(a > 1, axis=0, keepdims=True),
    )


def keepdims_writes(a):
    m = a.max(axis=1, keepdims=True)
    m[0, 0] = -1.0  # a fresh array (a view of the fresh reduction), as in NumPy
    return a - m, m


def softmax_rows(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def roundings(a):
    return (np.round(a), np.round(a, 1), np.around(a, decimals=2), a.round(1),
            np.round(a, -1), np.round(a[0, 0] * 3.0, 3))


def int_roundings(a):
    return np.round(a), np.round(a, 2), a.round()


# (max/min of complex numbers are refused: NumPy orders them lexicographically)
@pytest.mark.parametrize("dtype", [d for d in DTYPES if np.dtype(d).kind != "c"])
def test_keepdims(dtype):
    a = arr(3, 4, dtype=dtype)
    check(keepdims_forms, a)
    if np.dtype(dtype).kind == "f":
        check(keepdims_writes, a)
        check(softmax_rows, a)


def test_keepdims_gradient():
    from autodiff.ad_check import check_grads

    def loss(x):
        return (softmax_rows(x) * np.arange(12.0).reshape(3, 4)).sum() + \
            np.std(x, axis=0, keepdims=True).sum()

    check_grads(loss, (arr(3, 4, dtype=np.float64),))


def closeness(a, b):
    return (np.isclose(a, b), np.allclose(a, b), np.isclose(a, b, equal_nan=True),
            np.isclose(a, 1.0, rtol=0.1, atol=0.0), np.allclose(a[0], b[0]),
            np.isclose(a, b, 1e-3, 1e-12))


def fixed_point(x):
    y = x.copy()
    k = 0
    while not np.allclose(y, np.cos(y)) and k < 1000:
        y = np.cos(y)
        k += 1
    return y, k


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_isclose_like_numpy(dtype):
    inf, nan = np.inf, np.nan
    a = np.array([1.0, 1.0 + 1e-9, inf, inf, nan, 1.0, 0.0, 1e-9, 1.05, 1e30, 2.0])
    b = np.array([1.0, 1.0, inf, -inf, nan, inf, 1e-9, 0.0, 1.0, 1e30 * 1.000001, 2.0])
    if np.dtype(dtype).kind == "i":
        a, b = np.arange(11), np.arange(11)[::-1].copy()
    check(closeness, a.astype(dtype), b.astype(dtype))
    check(closeness, a.astype(dtype), b[:1].astype(dtype))  # broadcasting
    check(fixed_point, np.linspace(0.0, 1.0, 4))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_round_like_numpy(dtype):
    # halves and values whose scaled product rounds across a half (NumPy's method, not Python's)
    a = np.array([[0.5, 1.5, 2.5, -0.5], [0.15, 0.25, 2.675, -1.005], [14.5, 15.0, 25.0, -35.0]],
                 dtype=dtype)
    check(roundings, a)
    check(int_roundings, np.array([[1, -2], [3, 4]]))
    g = zymase.grad(lambda x: np.round(x * 3.0, 1).sum() + x.sum())(a.astype(np.float64))
    np.testing.assert_array_equal(g, np.ones_like(g))


@pytest.mark.parametrize(
    "fn,words",
    [
        (sum_keepdims, "keepdims"),
        (norm_ord, "ord"),
        (cumsum_out, "out"),
        (where_one, "nonzero"),
        (var_dtype, "dtype"),
        (mean_method_keepdims, "keepdims"),
        (two_index_arrays, "index array"),
        (where_scalars, "0-d"),
    ],
)
def test_unsupported_is_reported_at_the_call(fn, words):
    arg = 1.0 if fn is where_scalars else np.ones((2, 2))
    with pytest.raises(zymase.UnsupportedError) as info:
        zymase.jit(fn)(arg)
    msg = str(info.value)
    line = fn.__code__.co_firstlineno + 1
    assert f"{fn.__code__.co_filename}:{line}:" in msg
    assert words in msg
