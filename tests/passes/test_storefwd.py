"""storefwd: a load of what the previous iteration stored becomes a carried value, and a store the
next iteration overwrites leaves the loop (reverse mode's stencil adjoints vectorize then); loops
where a buffer may be reached another way, or where an op may raise, are left alone."""

from __future__ import annotations

import numpy as np
import pytest
from pass_check import Case, check_case

from zymase.passes.storefwd import storefwd

D = np.array([0.5, -1.0, 2.0, 0.25, 3.0, -0.75])
C = np.array([0.1, 0.2, 0.3, 0.4, 0.25, 0.15])

# the adjoint of heat1d's in-place update, as reverse mode writes it: i runs backwards, d[i + 1]
# gets c[i] * d[i] added after the previous iteration wrote it, d[i] is written twice
ADJOINT = """
func.func @f(%d: array<f64,1,C>, %c: array<f64,1,C>, %n: i64) -> (f64) {noalias = true} {
  %one = arith.constant {value = 1} : i64
  %m1 = arith.constant {value = -1} : i64
  %two = arith.constant {value = 2} : i64
  %z = arith.constant {value = 0} : i64
  %zero = arith.constant {value = 0.0} : f64
  %hi = arith.subi %n, %two : i64
  %r = scf.for %hi, %z, %m1, %zero : f64 {
  ^(%i: i64, %p: f64):
    %ub = array.load %d, %i : f64
    array.store %zero, %d, %i
    %ip = arith.addi %i, %one : i64
    %t = array.load %d, %ip : f64
    %ci = array.load %c, %i : f64
    %x = arith.mulf %ci, %ub : f64
    %t2 = arith.addf %t, %x : f64
    array.store %t2, %d, %ip
    %cur = array.load %d, %i : f64
    %y = arith.addf %p, %ub : f64
    %cur2 = arith.addf %cur, %y : f64
    array.store %cur2, %d, %i
    scf.yield %x
  }
  func.return %r
}
"""

CASES = [
    Case(
        "adjoint_stencil",
        ADJOINT + """
// CHECK: scf.if
// CHECK: array.load %d
// CHECK: scf.for
// CHECK-NOT: array.load %d{{[0-9]+}}, %ip
// CHECK: array.store
// CHECK-NOT: array.store
// CHECK: scf.yield
// CHECK: scf.if
// CHECK-NEXT: ^(
// CHECK-NEXT: array.store
""",
        runs=[(D, C, 6), (D, C, 3), (D, C, 2), (D, C, 0)],
    ),
    Case(
        "prefix_recurrence",
        """
func.func @f(%a: array<f64,1,C>, %x: array<f64,1,C>, %n: i64) -> () {noalias = true} {
  %one = arith.constant {value = 1} : i64
  %z = arith.constant {value = 0} : i64
  %h = arith.constant {value = 0.5} : f64
  %m = arith.subi %n, %one : i64
  scf.for %z, %m, %one {
  ^(%i: i64):
    %v = array.load %a, %i : f64
    %xi = array.load %x, %i : f64
    %w = arith.mulf %v, %h : f64
    %s = arith.addf %w, %xi : f64
    %ip = arith.addi %i, %one : i64
    array.store %s, %a, %ip
    scf.yield
  }
  func.return
}
// CHECK: scf.for
// CHECK-NOT: array.load %a
// CHECK: array.store
// CHECK: scf.yield
""",
        runs=[(D, C, 6), (D, C, 1), (D, C, 0)],
    ),
    Case(
        "arguments_may_alias",  # without noalias, d and c may be the same buffer
        ADJOINT.replace(" {noalias = true}", "") + "// CHECK: array.load %d{{[0-9]+}}, %ip\n",
        runs=[(D, C, 6)],
        changed=False,
    ),
    Case(
        "raising_op_stays",
        """
func.func @f(%a: array<f64,1,C>, %n: i64) -> () {noalias = true} {
  %one = arith.constant {value = 1} : i64
  %z = arith.constant {value = 0} : i64
  %d = array.dim %a {axis = 0} : i64
  scf.for %z, %n, %one {
  ^(%i: i64):
    %j = array.index %i, %d {wrap = false, check = true} : i64
    %v = array.load %a, %j : f64
    %ip = arith.addi %i, %one : i64
    %k = array.index %ip, %d {wrap = false, check = true} : i64
    array.store %v, %a, %k
    scf.yield
  }
  func.return
}
// CHECK: array.load %a
""",
        runs=[(D, 5), (D, 6)],
        changed=False,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_storefwd(case):
    check_case(storefwd, case)


def adjoint_like(d, c):
    """The same pattern from Python, compiled: the pass must keep CPython's answer."""
    n = d.shape[0]
    p = 0.0
    for i in range(n - 2, 0, -1):
        ub = d[i]
        d[i] = 0.0
        x = c[i] * ub
        d[i + 1] += x
        d[i] += p + ub
        p = x
    return p


def test_compiled_matches_cpython():
    import zymase
    f = zymase.jit(adjoint_like)
    for n in (0, 1, 2, 3, 7, 40):
        d, c = np.linspace(-1.0, 2.0, n), np.linspace(0.1, 0.4, n)
        d1, d2 = d.copy(), d.copy()
        assert f(d1, c) == adjoint_like(d2, c)
        np.testing.assert_array_equal(d1, d2)
