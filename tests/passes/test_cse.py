"""cse: pure ops merged under dominance (commutative operands in either order, attributes compared
bit for bit), loads merged within a block until something may write."""

from __future__ import annotations

import numpy as np
import pytest
from pass_check import Case, check_case

from zymase.passes.cse import cse

CASES = [
    Case(
        "commutative_operands_match_swapped",
        """
func.func @f(%x: f64, %y: f64) -> (f64, f64, f64, f64) {
  %a = arith.addf %x, %y : f64
  %b = arith.addf %y, %x : f64
  %c = arith.subf %x, %y : f64
  %d = arith.subf %y, %x : f64
  func.return %a, %b, %c, %d
}
// CHECK: %[[A:.*]] = arith.addf
// CHECK-NEXT: %[[C:.*]] = arith.subf
// CHECK-NEXT: %[[D:.*]] = arith.subf
// CHECK-NEXT: func.return %[[A]], %[[A]], %[[C]], %[[D]]
""",
        runs=[(1.0, 2.0)],
    ),
    Case(
        "attributes_compared_bit_for_bit",
        """
func.func @f(%x: f64) -> (f64, f64, f64, f64, i1, i1) {
  %z = arith.constant {value = 0.0} : f64
  %nz = arith.constant {value = -0.0} : f64
  %n1 = arith.constant {value = nan} : f64
  %n2 = arith.constant {value = nan} : f64
  %lt = arith.cmpf %x, %z {pred = "lt"} : i1
  %gt = arith.cmpf %x, %z {pred = "gt"} : i1
  func.return %z, %nz, %n1, %n2, %lt, %gt
}
// CHECK: %[[Z:.*]] = arith.constant {value = 0.0}
// CHECK-NEXT: %[[NZ:.*]] = arith.constant {value = -0.0}
// CHECK-NEXT: %[[N:.*]] = arith.constant {value = nan}
// CHECK-NEXT: %[[LT:.*]] = arith.cmpf {{.*}}"lt"
// CHECK-NEXT: %[[GT:.*]] = arith.cmpf {{.*}}"gt"
// CHECK-NEXT: func.return %[[Z]], %[[NZ]], %[[N]], %[[N]], %[[LT]], %[[GT]]
""",
        runs=[(1.0,), (-1.0,)],
    ),
    Case(
        "dominance_scopes",
        """
func.func @f(%x: f64, %c: i1, %n: i64) -> (f64, f64, f64) {
  %s = math.sin %x : f64
  %lb = arith.constant {value = 0} : i64
  %st = arith.constant {value = 1} : i64
  %r = scf.for %lb, %n, %st, %x : f64 {
  ^(%i: i64, %acc: f64):
    %s2 = math.sin %x : f64
    %e = math.exp %x : f64
    %a = arith.addf %acc, %s2 : f64
    %b = arith.addf %a, %e : f64
    scf.yield %b
  }
  %e2 = math.exp %x : f64
  %t, %u = scf.if %c : f64, f64 {
    %p = math.cos %x : f64
    scf.yield %p, %e2
  } {
    %q = math.cos %x : f64
    %q2 = math.cos %x : f64
    scf.yield %q, %q2
  }
  %v = arith.addf %t, %u : f64
  func.return %r, %v, %e2
}
// CHECK: %[[S:.*]] = math.sin
// CHECK: scf.for
// CHECK-NOT: math.sin
// CHECK: %[[E:.*]] = math.exp
// CHECK: arith.addf %{{.*}}, %[[S]]
// CHECK: }
// CHECK-NEXT: %[[E2:.*]] = math.exp
// CHECK: %[[P:.*]] = math.cos
// CHECK-NEXT: scf.yield %[[P]], %[[E2]]
// CHECK: %[[Q:.*]] = math.cos
// CHECK-NEXT: scf.yield %[[Q]], %[[Q]]
""",
        runs=[(0.5, True, 3), (0.5, False, 0)],
    ),
    Case(
        "raising_ops_merge_but_asserts_and_allocs_stay",
        """
func.func @f(%a: i64, %b: i64) -> (i64, i64) {
  %q = arith.floordivi %a, %b : i64
  %q2 = arith.floordivi %a, %b : i64
  %ok = arith.cmpi %a, %b {pred = "ne"} : i1
  rt.assert %ok {kind = "ValueError", msg = "equal"}
  rt.assert %ok {kind = "ValueError", msg = "equal"}
  %m = array.alloc %a {init = "zero"} : array<f64,1,C>
  %m2 = array.alloc %a {init = "zero"} : array<f64,1,C>
  func.return %q, %q2
}
// CHECK: %[[Q:.*]] = arith.floordivi
// CHECK-NOT: arith.floordivi
// CHECK-COUNT-2: rt.assert
// CHECK-COUNT-2: array.alloc
// CHECK: func.return %[[Q]], %[[Q]]
""",
        runs=[(7, 2), (7, 0), (2, 2)],
    ),
    Case(
        "loads_merge_until_a_write",
        """
func.func @f(%a: array<f64,1,A>, %b: array<f64,1,A>, %i: i64, %c: i1) -> (f64) {
  %x = array.load %a, %i : f64
  %y = array.load %a, %i : f64
  %s = arith.addf %x, %y : f64
  array.store %s, %b, %i
  %z = array.load %a, %i : f64
  %t = arith.addf %s, %z : f64
  scf.if %c {
    array.store %t, %a, %i
    scf.yield
  } {
    scf.yield
  }
  %w = array.load %a, %i : f64
  %u = arith.addf %t, %w : f64
  func.return %u
}
// CHECK: %[[X:.*]] = array.load
// CHECK-NEXT: arith.addf %[[X]], %[[X]]
// CHECK-NEXT: array.store
// CHECK-NEXT: array.load
// CHECK: scf.if
// CHECK: array.load
""",
        runs=[(np.arange(3.0), np.arange(3.0), 1, True), (np.arange(3.0), np.zeros(3), 2, False)],
    ),
    Case(
        "loads_in_a_nested_block_stay",
        """
func.func @f(%a: array<f64,1,A>, %n: i64) -> (f64) {
  %z = arith.constant {value = 0} : i64
  %x = array.load %a, %z : f64
  %one = arith.constant {value = 1} : i64
  %r = scf.for %z, %n, %one, %x : f64 {
  ^(%i: i64, %acc: f64):
    %y = array.load %a, %z : f64
    %s = arith.addf %acc, %y : f64
    array.store %s, %a, %z
    scf.yield %s
  }
  func.return %r
}
// CHECK: array.load
// CHECK: scf.for
// CHECK: array.load
""",
        runs=[(np.arange(3.0), 3)],
        changed=False,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_cse(case):
    check_case(cse, case)


def test_call_that_writes_ends_load_reuse():
    case = Case(
        "call",
        """
func.func @g(%a: array<f64,1,A>) -> () {
  %z = arith.constant {value = 0} : i64
  %v = arith.constant {value = 9.0} : f64
  array.store %v, %a, %z
  func.return
}

func.func @h(%a: array<f64,1,A>) -> (f64) {
  %z = arith.constant {value = 0} : i64
  %v = array.load %a, %z : f64
  func.return %v
}

func.func @f(%a: array<f64,1,A>) -> (f64) {
  %z = arith.constant {value = 0} : i64
  %x = array.load %a, %z : f64
  %r = func.call %a {callee = @h} : f64
  %x2 = array.load %a, %z : f64
  func.call %a {callee = @g}
  %y = array.load %a, %z : f64
  %s = arith.addf %x, %y : f64
  %s2 = arith.addf %s, %x2 : f64
  %s3 = arith.addf %s2, %r : f64
  func.return %s3
}
// CHECK-LABEL: func.func @f
// CHECK: %[[X:.*]] = array.load
// CHECK-NEXT: func.call
// CHECK-NEXT: func.call
// CHECK-NEXT: %[[Y:.*]] = array.load
// CHECK-NEXT: arith.addf %[[X]], %[[Y]]
// CHECK-NEXT: arith.addf %{{.*}}, %[[X]]
""",
        runs=[(np.arange(2.0),)],
    )
    check_case(cse, case)
