"""Matrix products in every layout the kernels tell apart (row-major, transposed views, other
strides, slices, vectors, stacks) for float64, float32, complex128 and complex64, below and above
the sizes from which they call BLAS, against NumPy; the same products compiled without BLAS (the
loops) agree with BLAS's to rounding; derivatives of products against central differences;
``np.einsum`` against NumPy, with its derivatives and its refusals."""

import os

import numpy as np
import pytest
from autodiff.ad_check import check_grads
from frontend.numpy_check import check_interp

import zymase
import zymase.backends.cpu.backend as cpu_backend
from zymase.backends.llvm.matmul import GEMM_MIN, GEMV_MIN, matmul_kernels
from zymase.backends.llvm.target import Target
from zymase.ir.ops import Matmul

RNG = np.random.default_rng(11)
SMALL, LARGE = 3, 24  # below and above both thresholds
assert SMALL * (SMALL + 1) * (SMALL + 2) < GEMM_MIN and SMALL * (SMALL + 1) < GEMV_MIN
assert LARGE ** 3 > GEMM_MIN and LARGE ** 2 > GEMV_MIN
DTYPES = [np.float64, np.float32, np.complex128, np.complex64]
RTOL = {np.float64: 1e-12, np.complex128: 1e-12, np.float32: 2e-5, np.complex64: 2e-5}


def arr(shape, dtype=np.float64):
    x = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


# ---------------------------------------------------------------------- layouts


def row_major(a, b):
    return a @ b


def transposed(a, b):
    return a.T @ b


def both_transposed(a, b):
    return a.T @ b.T


def strided(a, b):
    return a[:, ::2] @ b


def submatrix(a, b):
    return a[1:-1, 2:] @ b[2:, 1:]


def reversed_views(a, b):
    return a[::-1] @ b[:, ::-1]


def matrix_vector(a, v):
    return a @ v


def transposed_matrix_vector(a, v):
    return a.T @ v


def strided_matrix_vector(a, v):
    return a[:, ::2] @ v[::-2]


def vector_matrix(v, a):
    return v @ a


def vector_transposed_matrix(v, a):
    return np.dot(v[::-1], a.T)


def vector_vector(v, w):
    return v @ w


def batched(a, b):
    return a @ b


def batched_transposed(a, b):
    return np.matmul(a.transpose(0, 2, 1), b)


def vector_batch(v, b):
    return v @ b


# (program, shape of a, shape of b) for a size n
LAYOUTS = {
    "row_major": (row_major, lambda n: (n, n + 1), lambda n: (n + 1, n + 2)),
    "transposed": (transposed, lambda n: (n + 1, n), lambda n: (n + 1, n + 2)),
    "both_transposed": (both_transposed, lambda n: (n + 1, n), lambda n: (n + 2, n + 1)),
    "strided": (strided, lambda n: (n, 2 * n + 2), lambda n: (n + 1, n + 2)),
    "submatrix": (submatrix, lambda n: (n + 2, n + 3), lambda n: (n + 3, n + 3)),
    "reversed": (reversed_views, lambda n: (n, n + 1), lambda n: (n + 1, n + 2)),
    "matrix_vector": (matrix_vector, lambda n: (n, n + 1), lambda n: (n + 1,)),
    "transposed_matrix_vector": (transposed_matrix_vector, lambda n: (n + 1, n),
                                 lambda n: (n + 1,)),
    "strided_matrix_vector": (strided_matrix_vector, lambda n: (n, 2 * n + 2),
                              lambda n: (2 * n + 2,)),
    "vector_matrix": (vector_matrix, lambda n: (n,), lambda n: (n, n + 1)),
    "vector_transposed_matrix": (vector_transposed_matrix, lambda n: (n,), lambda n: (n + 1, n)),
    "vector_vector": (vector_vector, lambda n: (n * n,), lambda n: (n * n,)),
    "batched": (batched, lambda n: (3, n, n + 1), lambda n: (3, n + 1, n + 2)),
    "batched_broadcast": (batched, lambda n: (2, 1, n, n + 1), lambda n: (3, n + 1, n + 2)),
    "batched_transposed": (batched_transposed, lambda n: (2, n + 1, n), lambda n: (n + 1, n + 2)),
    "vector_batch": (vector_batch, lambda n: (n + 1,), lambda n: (2, n + 1, n)),
}


def operands(layout, n, dtype):
    _, sa, sb = LAYOUTS[layout]
    return arr(sa(n), dtype), arr(sb(n), dtype)


def assert_product(got, want, dtype, a, b):
    """Equal to rounding: the error of a product is relative to sum |a||b|, not to |a @ b|."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    scale = np.max(np.abs(a)) * np.max(np.abs(b)) * a.shape[-1]
    np.testing.assert_allclose(got, want, rtol=RTOL[dtype], atol=RTOL[dtype] * scale)


def fresh(fn):
    """A new function object for ``fn`` (its own compiled specializations)."""
    return type(fn)(fn.__code__, fn.__globals__, fn.__name__)


@pytest.mark.parametrize("n", [SMALL, LARGE])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_layout_against_numpy(layout, dtype, n):
    fn = LAYOUTS[layout][0]
    a, b = operands(layout, n, dtype)
    assert_product(zymase.jit(fn)(a, b), fn(a, b), dtype, a, b)


@pytest.mark.parametrize("dtype", [np.float64, np.complex64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_loops_agree_with_blas(layout, dtype, monkeypatch):
    """Compiled for a machine without BLAS (the loops at every size) and with it."""
    fn = LAYOUTS[layout][0]
    a, b = operands(layout, LARGE, dtype)
    with_blas = zymase.jit(fresh(fn))(a, b)
    monkeypatch.setattr(cpu_backend, "host_target", lambda: Target("host", frozenset()))
    loops = zymase.jit(fresh(fn))(a, b)
    assert_product(loops, with_blas, dtype, a, b)
    assert_product(loops, fn(a, b), dtype, a, b)


def test_kernels_without_blas_declare_none():
    for ranks in ((2, 2), (2, 1), (1, 2), (3, 3)):
        text = "\n".join(matmul_kernels(ranks, "f64", False, frozenset()).values())
        assert "cblas" not in text and "zy.mm.loops.f64" in text


# ---------------------------------------------------------------------- derivatives


def squared_product(x, w):
    return np.sum((x @ w) ** 2)


def transposed_times_vector(a, y):
    return np.sum(np.sin(a.T @ y))


def vector_times_matrix(v, a):
    return np.sum(np.cos(v[::-1] @ a))


def strided_operand(x, w):
    return np.sum((x[:, ::2] @ w) ** 2)  # reverse mode adds into a strided view of x's shadow


def transposed_operand(x, w):
    return np.sum(np.sin(x.T @ w))  # ... and into a column-major one


def batched_loss(a, b):
    return np.sum(np.sin(np.matmul(a * 2.0, b)))


def complex_product(x, y, w):
    z = (x + 1j * y) @ (w - 0.5j * w.T)
    return np.sum(np.abs(z) ** 2)


@pytest.mark.parametrize("n", [SMALL, LARGE])
@pytest.mark.parametrize("fn,shapes", [
    (squared_product, lambda n: [(n, n + 1), (n + 1, n + 2)]),
    (strided_operand, lambda n: [(n, 2 * n + 2), (n + 1, n + 2)]),
    (transposed_operand, lambda n: [(n + 1, n), (n + 1, n + 2)]),
    (transposed_times_vector, lambda n: [(n + 1, n), (n + 1,)]),
    (vector_times_matrix, lambda n: [(n,), (n, n + 1)]),
    (batched_loss, lambda n: [(2, 1, n, n + 1), (3, n + 1, n)]),
    (complex_product, lambda n: [(n, n), (n, n), (n, n)]),
], ids=lambda x: getattr(x, "__name__", ""))
def test_derivatives(fn, shapes, n):
    """jvp and grad against central differences, and the two modes against each other."""
    check_grads(fn, [arr(s) for s in shapes(n)])


def test_interpreter_agrees_on_stacks():
    """The IR interpreter (the oracle) on a broadcast stack, and on the reverse pass, which
    accumulates the products of all matrices into the shadow of the broadcast operand."""
    a, b = arr((2, 1, 4, 5)), arr((3, 5, 6))
    check_interp(batched, a, b)
    grads = [zymase.grad(batched_loss, argnums=(0, 1), backend=k)(a, b) for k in ("cpu", "interp")]
    for g_cpu, g_interp in zip(*grads):
        np.testing.assert_allclose(g_interp, g_cpu, rtol=1e-12)


def test_derivatives_float32():
    check_grads(squared_product, [arr((LARGE, LARGE), np.float32), arr((LARGE, 5), np.float32)])


def matrix_times(x, a):
    return a.T @ np.sin(x)


def test_jacobians_of_a_product():
    a, x = arr((LARGE, LARGE + 2)), arr(LARGE)
    want = a.T * np.cos(x)
    np.testing.assert_allclose(zymase.jacfwd(matrix_times)(x, a), want, rtol=1e-12)
    np.testing.assert_allclose(zymase.jacrev(matrix_times)(x, a), want, rtol=1e-12)


# ---------------------------------------------------------------------- einsum


def einsum_of(subscripts, n):
    def one(a):
        return np.einsum(subscripts, a)

    def two(a, b):
        return np.einsum(subscripts, a, b)

    def three(a, b, c):
        return np.einsum(subscripts, a, b, c)

    return (one, two, three)[n - 1]


EINSUM = [  # (subscripts, operand shapes, lowered to linalg.matmul)
    ("ij,jk->ik", [(3, 4), (4, 5)], True),
    ("ij,jk", [(3, 4), (4, 5)], True),
    ("ji,jk->ik", [(4, 3), (4, 5)], True),
    ("ij,kj->ki", [(3, 4), (5, 4)], True),
    ("ij,j->i", [(3, 4), (4,)], True),
    ("i,ij->j", [(3,), (3, 4)], True),
    ("i,i->", [(6,), (6,)], False),  # the dot product's reduction loop
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)], True),
    ("bij,bjk->kbi", [(2, 3, 4), (2, 4, 5)], True),
    ("ij,ij->", [(3, 4), (3, 4)], False),
    ("ij,ij->i", [(3, 4), (3, 4)], False),
    ("i,j->ij", [(3,), (4,)], False),
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)], False),
    ("ij->ji", [(3, 4)], False),
    ("ba", [(3, 4)], False),
    ("ii->", [(4, 4)], False),
    ("ii", [(4, 4)], False),
    ("ij->", [(3, 4)], False),
    ("ii->i", [(4, 4)], False),
    ("ij,ij->ij", [(1, 4), (3, 4)], False),
]


@pytest.mark.parametrize("dtype", [np.float64, np.complex128], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("subscripts,shapes,product", EINSUM, ids=[e[0] for e in EINSUM])
def test_einsum_against_numpy(subscripts, shapes, product, dtype):
    fn = einsum_of(subscripts, len(shapes))
    ops = [arr(s, dtype) for s in shapes]
    got, want = zymase.jit(fn)(*ops), fn(*ops)
    assert np.shape(got) == np.shape(want) and np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got, want, rtol=1e-12)
    module = zymase.jit(fn).specialization(*ops).module
    assert any(isinstance(op, Matmul) for f in module for op in f.walk()) == product


def einsum_losses(a, b):
    return (np.sum(np.sin(np.einsum("ij,jk->ik", a, b))) + np.einsum("ij,ij->", a, a)
            + np.einsum("ii->", b[:3, :3] @ a[:, :3]) + np.sum(np.einsum("ij->ji", a)[0] ** 2))


def einsum_batched(a, b):
    return np.sum(np.cos(np.einsum("bij,bjk->kbi", a, b)))


def test_einsum_derivatives():
    check_grads(einsum_losses, [arr((3, 4)), arr((4, 5))])
    check_grads(einsum_batched, [arr((2, 3, 4)), arr((2, 4, 5))])


def einsum_ellipsis(a):  # (too many '...': one per operand)
    return np.einsum("...i...->i", a)


def einsum_missing_operand(a):
    return np.einsum("ij,jk->ik", a)


def einsum_dtype(a):
    return np.einsum("ij->", a, dtype=np.float32)


def einsum_bad_output(a):
    return np.einsum("ij->ik", a)


def einsum_diagonal_written(a):
    d = np.einsum("ii->i", a)
    d[0] = 1.0
    return d


@pytest.mark.parametrize("fn,exc,words", [
    (einsum_ellipsis, ValueError, "does not fit an operand"),
    (einsum_missing_operand, ValueError, "2 operand(s) in the subscripts, 1 given"),
    (einsum_dtype, zymase.UnsupportedError, "dtype="),
    (einsum_bad_output, ValueError, "output 'ik'"),
    (einsum_diagonal_written, zymase.UnsupportedError, "np.einsum"),
], ids=lambda x: getattr(x, "__name__", ""))
def test_einsum_refusals_point_at_the_user(fn, exc, words):
    with pytest.raises(exc) as e:
        zymase.jit(fn)(np.ones((3, 3)))
    msg = str(e.value)
    assert words in msg and f"{os.path.basename(__file__)}:" in msg
    assert os.path.dirname(zymase.__file__) not in msg


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.bool_])
@pytest.mark.parametrize("shapes", [((1, 2, 3), (3, 3, 2)), ((3, 2, 3), (1, 3, 2)),
                                    ((2, 1, 4, 5), (3, 5, 6))])
def test_integer_stacks_broadcast_a_batch_dim_of_size_one(dtype, shapes):
    a = (np.arange(np.prod(shapes[0])).reshape(shapes[0]) % 3).astype(dtype)
    b = (np.arange(np.prod(shapes[1])).reshape(shapes[1]) % 2).astype(dtype)
    np.testing.assert_array_equal(zymase.jit(_mm_only)(a, b), a @ b)


def _mm_only(a, b):
    return a @ b
