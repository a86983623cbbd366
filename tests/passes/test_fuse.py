"""fuse: elementwise loops that fill a temporary are computed where it is read.  Checked on the
optimized IR (no temporary left where the pattern holds, one kept where it must be) and on the
results (against NumPy, and derivatives against central differences)."""

from __future__ import annotations

import io

import fuse_programs as P
import numpy as np
import pytest

import zymase


def optimized(fn, *args) -> str:
    return zymase.explain(fn, *args, stages=["dce"], file=io.StringIO()).rsplit("after dce", 1)[1]


X = np.linspace(-1.0, 2.0, 37)
W = np.cos(np.arange(37.0))


def test_a_sum_of_an_expression_is_one_loop():
    ir = optimized(P.weighted_sum, X, W)
    assert "array.alloc" not in ir and ir.count("scf.for") == 2  # (the lanes and the rest)
    assert zymase.jit(P.weighted_sum)(X, W) == pytest.approx(P.weighted_sum(X, W), rel=1e-15)


def test_an_expression_fills_only_its_result():
    ir = optimized(P.tanh_times, X, W)
    assert ir.count("array.alloc") == 1 and ir.count("scf.for") == 1
    np.testing.assert_allclose(zymase.jit(P.tanh_times)(X, W), P.tanh_times(X, W), rtol=1e-15)


@pytest.mark.parametrize("w", [W, np.array([2.5])], ids=["same shape", "broadcast"])
def test_broadcasting_operands(w):
    np.testing.assert_allclose(zymase.jit(P.tanh_times)(X, w), P.tanh_times(X, w), rtol=1e-15)


def test_two_dimensional():
    a, b = np.arange(12.0).reshape(3, 4), np.linspace(0, 1, 12).reshape(3, 4)
    assert "array.alloc" not in optimized(P.grid_sum, a, b)
    assert zymase.jit(P.grid_sum)(a, b) == pytest.approx(P.grid_sum(a, b), rel=1e-15)


@pytest.mark.parametrize("fn", [P.written_between, P.reversed_in_place],
                         ids=lambda f: f.__name__)
def test_a_write_to_what_the_producer_reads_keeps_the_temporary(fn):
    a = np.arange(1.0, 9.0)
    assert "array.alloc" in optimized(fn, a.copy())
    np.testing.assert_array_equal(zymase.jit(fn)(a.copy()), fn(a.copy()))


def test_an_array_read_twice_is_kept():
    assert "array.alloc" in optimized(P.used_twice, X)
    assert zymase.jit(P.used_twice)(X) == pytest.approx(P.used_twice(X), rel=1e-14)


def test_derivatives_of_fused_code():
    g = zymase.grad(P.loss, argnums=(0, 1))(X, W)
    h = 1e-6
    for k, arg in enumerate((X, W)):
        e = np.zeros_like(arg)
        e[5] = h
        args_p = [X, W]
        args_m = [X, W]
        args_p[k], args_m[k] = arg + e, arg - e
        fd = (P.loss(*args_p) - P.loss(*args_m)) / (2 * h)
        assert g[k][5] == pytest.approx(fd, rel=1e-6)
