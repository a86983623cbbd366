"""The bounds-check pass: checks it proves away, loops it versions, and that behaviour (results,
partial writes, the IndexError and its line) is unchanged."""

import numpy as np
import pytest
from pass_check import Case, assert_same_behaviour, check_case

import zymase
from zymase.ir.parser import parse_module
from zymase.passes.boundscheck import boundscheck

STENCIL = Case("stencil_i_plus_1", """
func.func @f(%u: array<f64,1,C>) -> (f64) {
  %z = arith.constant {value = 0.0} : f64
  %one = arith.constant {value = 1} : i64
  %n = array.dim %u {axis = 0} : i64
  %hi = arith.subi %n, %one : i64
  %s = scf.for %one, %hi, %one, %z : f64 {
  ^(%i: i64, %acc: f64):
    %j = arith.addi %i, %one : i64
    %k = array.index %j, %n {wrap = true, check = true} : i64
    %x = array.load %u, %k : f64
    %t = arith.addf %acc, %x : f64
    scf.yield %t
  }
  func.return %s
}
// CHECK-NOT: array.index
// CHECK: array.load %u{{[0-9]*}}, %j
""", runs=[(np.arange(6.0),), (np.arange(2.0),)])

MODULO = Case("modulo_index", """
func.func @f(%u: array<f64,1,C>, %m: i64) -> (f64) {
  %n = array.dim %u {axis = 0} : i64
  %q = arith.modi %m, %n : i64
  %k = array.index %q, %n {wrap = true, check = true} : i64
  %x = array.load %u, %k : f64
  func.return %x
}
// CHECK-NOT: array.index
""", runs=[(np.arange(5.0), 7), (np.arange(5.0), -3)])

VERSIONED = Case("versioned_loop", """
func.func @f(%a: array<f64,1,A>, %b: array<f64,1,A>) -> (f64) {
  %z = arith.constant {value = 0.0} : f64
  %zero = arith.constant {value = 0} : i64
  %one = arith.constant {value = 1} : i64
  %n = array.dim %a {axis = 0} : i64
  %nb = array.dim %b {axis = 0} : i64
  %s = scf.for %zero, %n, %one, %z : f64 {
  ^(%i: i64, %acc: f64):
    %k = array.index %i, %nb {wrap = true, check = true} : i64
    %x = array.load %b, %k : f64
    %t = arith.addf %acc, %x : f64
    scf.yield %t
  }
  func.return %s
}
// CHECK: scf.if
// CHECK: scf.for
// CHECK-NOT: array.index
// CHECK: scf.yield
// CHECK: scf.for
// CHECK-SAME: checked = true
// CHECK: array.index
""", runs=[(np.arange(4.0), np.arange(5.0)), (np.arange(4.0), np.arange(3.0))])


@pytest.mark.parametrize("case", [STENCIL, MODULO, VERSIONED], ids=str)
def test_boundscheck(case):
    check_case(boundscheck, case)


def test_checked_copy_is_not_versioned_again():
    """A second run (the pipeline runs the pass again after AD) leaves the checked copy alone:
    its guard is the one that failed, so another fast copy inside it could never run."""
    module = check_case(boundscheck, VERSIONED)
    loops = sum(op.name == "scf.for" for op in module["f"].walk())
    assert not boundscheck(module)
    assert sum(op.name == "scf.for" for op in module["f"].walk()) == loops == 2
    for args in VERSIONED.runs:
        assert_same_behaviour(parse_module(VERSIONED.text), module, "f", args)


def copy_with_shift(src, dst, shift):
    for i in range(src.shape[0]):
        dst[i] = src[i + shift]
    return dst[0]


def test_versioned_loop_raises_at_the_same_iteration():
    """The out-of-range case runs the checked loop: earlier writes happen, then IndexError."""
    f = zymase.jit(copy_with_shift)
    src, dst = np.arange(5.0), np.zeros(5)
    assert f(src, dst, 0) == 0.0 and np.array_equal(dst, src)
    dst = np.zeros(5)
    with pytest.raises(IndexError) as info:
        f(src, dst, 2)
    np.testing.assert_array_equal(dst, [2.0, 3.0, 4.0, 0.0, 0.0])
    assert "test_boundscheck.py:" in str(info.value) and "src[i + shift]" in str(info.value)


def rows_dot(A, x):
    m = x.shape[0]
    s = 0.0
    for i in range(m):
        for j in range(m):
            s += A[i, j] * x[j]
    return s


def test_remaining_checks_in_rk4_style_loops_are_versioned():
    f = zymase.jit(rows_dot)
    A, x = np.ones((3, 3)), np.arange(3.0)
    assert f(A, x) == rows_dot(A, x)
    with pytest.raises(IndexError):
        f(np.ones((2, 3)), x)
    text = "\n".join(str(op.name) for op in f.specialization(A, x).module.walk())
    assert text.count("array.index") < 6  # only in the checked copies


def rows_matvec(r, A, x, out):
    m = x.shape[0]
    for i in range(m):
        s = r[i]
        for j in range(m):
            s += A[i, j] * x[j]
        out[i] = s
    return out[0]


def test_a_nest_is_versioned_once():
    """The outer loop takes over the inner loop's guard: two copies of the nest (all fast, all
    checked) instead of a fast and a checked inner loop in each copy of the outer one."""
    f = zymase.jit(rows_matvec)
    r, A, x = np.arange(3.0), np.ones((3, 3)), np.arange(3.0)
    assert f(r, A, x, np.zeros(3)) == rows_matvec(r, A, x, np.zeros(3))
    names = [op.name for op in f.specialization(r, A, x, np.zeros(3)).module.walk()]
    assert names.count("scf.for") == 4
    for bad in (np.ones((2, 3)), np.ones((3, 2))):  # IndexError at the same element
        out, expected = np.zeros(3), np.zeros(3)
        with pytest.raises(IndexError):
            rows_matvec(r, bad, x, expected)
        with pytest.raises(IndexError):
            f(r, bad, x, out)
        np.testing.assert_array_equal(out, expected)


def test_the_checked_copy_of_a_nest_is_not_vectorized():
    """It runs only on the way to an IndexError: its loops go to LLVM as not to be vectorized
    or unrolled (compile time), the fast copy's as any other loop."""
    f = zymase.jit(rows_matvec)
    args = (np.arange(3.0), np.ones((3, 3)), np.arange(3.0), np.zeros(3))
    f(*args)
    text = f.specialization(*args).llvm_ir
    assert '!"llvm.loop.vectorize.enable", i1 false' in text
    assert '!"llvm.loop.unroll.disable"' in text
