"""licm: invariant pure ops hoisted; reads hoisted only when nothing in the loop may write what
they read, behind a trip-count guard when the loop may not run; nothing that may raise moves."""

from __future__ import annotations

import numpy as np
import pytest
from pass_check import Case, check_case

from zymase.passes.licm import licm

V = np.array([3.0, -1.0, 2.0, 0.5])

CASES = [
    Case(
        "pure_invariants_move_raising_ones_stay",
        """
func.func @f(%x: f64, %k: i64, %n: i64) -> (f64) {
  %lb = arith.constant {value = 0} : i64
  %st = arith.constant {value = 1} : i64
  %r = scf.for %lb, %n, %st, %x : f64 {
  ^(%i: i64, %acc: f64):
    %two = arith.constant {value = 2.0} : f64
    %s = math.sin %x : f64
    %t = arith.mulf %s, %two : f64
    %q = arith.floordivi %k, %n : i64
    %qf = arith.cast %q : f64
    %a = arith.addf %acc, %t : f64
    %b = arith.addf %a, %qf : f64
    scf.yield %b
  }
  func.return %r
}
// CHECK: arith.constant {value = 2.0}
// CHECK-NEXT: math.sin
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: scf.for
// CHECK-NEXT: ^(
// CHECK-NEXT: arith.floordivi
// CHECK-NEXT: arith.cast
""",
        runs=[(0.5, 7, 3), (0.5, 7, 0)],
    ),
    Case(
        "reduction_loop_hoisted_behind_a_guard",
        """
func.func @f(%x: array<f64,1,A>, %out: array<f64,1,C>) -> () {noalias = true} {
  %n = array.dim %x {axis = 0} : i64
  %lb = arith.constant {value = 0} : i64
  %st = arith.constant {value = 1} : i64
  scf.for %lb, %n, %st {
  ^(%i: i64):
    %xi = array.load %x, %i : f64
    %z = arith.constant {value = 0.0} : f64
    %s = scf.for %lb, %n, %st, %z : f64 {
    ^(%j: i64, %acc: f64):
      %xj = array.load %x, %j : f64
      %p = arith.mulf %xj, %xj : f64
      %acc2 = arith.addf %acc, %p : f64
      scf.yield %acc2
    }
    %m = math.sqrt %s : f64
    %q = arith.divf %xi, %m : f64
    %buf = array.alloc %n {init = "zero"} : array<f64,1,C>
    array.store %q, %buf, %i
    %b = array.load %buf, %i : f64
    array.store %b, %out, %i
    scf.yield
  }
  func.return
}
// CHECK: %[[Z:.*]] = arith.constant {value = 0.0}
// CHECK-NEXT: %[[GO:.*]] = arith.cmpi %{{.*}}, %{{.*}} {pred = "lt"}
// CHECK-NEXT: %[[MAG:.*]] = scf.if %[[GO]] : f64 {
// CHECK-NEXT: ^():
// CHECK-NEXT: scf.for
// CHECK: math.sqrt
// CHECK-NEXT: scf.yield
// CHECK-NEXT: } {
// CHECK-NEXT: ^():
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant {value = 0.0}
// CHECK-NEXT: scf.yield %[[ZERO]]
// CHECK: scf.for
// CHECK-NEXT: ^(
// CHECK-NEXT: array.load
// CHECK-NEXT: arith.divf %{{.*}}, %[[MAG]]
// CHECK-NOT: scf.for
""",
        runs=[(V, np.zeros(4, order="C")), (np.zeros(0), np.zeros(0))],
    ),
    Case(
        "constant_trip_count_needs_no_guard",
        """
func.func @f(%a: array<f64,1,A>) -> (f64) {
  %lb = arith.constant {value = 0} : i64
  %ub = arith.constant {value = 3} : i64
  %st = arith.constant {value = 1} : i64
  %z = arith.constant {value = 0.0} : f64
  %r = scf.for %lb, %ub, %st, %z : f64 {
  ^(%i: i64, %acc: f64):
    %v = array.load %a, %lb : f64
    %s = arith.addf %acc, %v : f64
    scf.yield %s
  }
  func.return %r
}
// CHECK: array.load
// CHECK-NEXT: scf.for
// CHECK-NOT: scf.if
""",
        runs=[(V,)],
    ),
    Case(
        "load_stays_when_the_loop_may_write_it",
        """
func.func @f(%a: array<f64,1,A>, %b: array<f64,1,A>, %n: i64) -> () {
  %lb = arith.constant {value = 0} : i64
  %st = arith.constant {value = 1} : i64
  scf.for %lb, %n, %st {
  ^(%i: i64):
    %v = array.load %a, %lb : f64
    %w = array.load %b, %lb : f64
    %s = arith.addf %v, %w : f64
    %one = arith.constant {value = 1} : i64
    %sub = array.subview %a, %one, %one, %one {keep = [true]} : array<f64,1,A>
    array.store %s, %sub, %lb
    scf.yield
  }
  func.return
}
// CHECK: scf.for
// CHECK-NEXT: ^(
// CHECK-NEXT: array.load
// CHECK-NEXT: array.load
""",
        runs=[(V.copy(), V.copy(), 3)],
    ),
    Case(
        "noalias_arguments",
        """
func.func @f(%a: array<f64,1,A>, %b: array<f64,1,A>, %n: i64) -> () {noalias = true} {
  %lb = arith.constant {value = 0} : i64
  %st = arith.constant {value = 1} : i64
  scf.for %lb, %n, %st {
  ^(%i: i64):
    %v = array.load %a, %lb : f64
    array.store %v, %b, %i
    scf.yield
  }
  func.return
}
// CHECK: scf.if
// CHECK-NEXT: ^():
// CHECK-NEXT: array.load
// CHECK: scf.for
// CHECK-NEXT: ^(
// CHECK-NEXT: array.store
""",
        runs=[(V.copy(), np.zeros(4), 3), (V.copy(), np.zeros(4), 0)],
    ),
    Case(
        "no_read_hoisted_past_a_check_that_may_raise",
        """
func.func @f(%a: array<f64,1,A>, %k: i64, %n: i64) -> (f64) {
  %lb = arith.constant {value = 0} : i64
  %st = arith.constant {value = 1} : i64
  %m = array.dim %a {axis = 0} : i64
  %z = arith.constant {value = 0.0} : f64
  %r = scf.for %lb, %n, %st, %z : f64 {
  ^(%i: i64, %acc: f64):
    %j = array.index %k, %m {wrap = true, check = true} : i64
    %v = array.load %a, %j : f64
    %s = arith.addf %acc, %v : f64
    scf.yield %s
  }
  func.return %r
}
// CHECK: scf.for
// CHECK-NEXT: ^(
// CHECK-NEXT: array.index
// CHECK-NEXT: array.load
""",
        runs=[(V, 7, 2), (V, 7, 0), (V, -1, 2)],
        changed=False,
    ),
    Case(
        "while_before_region_reads_and_after_region_pure_ops",
        """
func.func @f(%a: array<f64,1,A>, %x: f64) -> (f64) {
  %z = arith.constant {value = 0} : i64
  %r = scf.while %x : f64 {
  ^(%acc: f64):
    %lim = array.load %a, %z : f64
    %c = arith.cmpf %acc, %lim {pred = "lt"} : i1
    scf.condition %c, %acc
  } {
  ^(%acc2: f64):
    %e = math.exp %x : f64
    %step = arith.mulf %e, %e : f64
    %nxt = arith.addf %acc2, %step : f64
    scf.yield %nxt
  }
  func.return %r
}
// CHECK: array.load
// CHECK-NEXT: math.exp
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: scf.while
""",
        runs=[(V, 0.5), (V, 10.0)],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_licm(case):
    check_case(licm, case)


def test_read_only_call_hoisted_writing_call_stays():
    case = Case(
        "calls",
        """
func.func @total(%a: array<f64,1,A>) -> (f64) {
  %z = arith.constant {value = 0} : i64
  %v = array.load %a, %z : f64
  func.return %v
}

func.func @bump(%a: array<f64,1,A>) -> () {
  %z = arith.constant {value = 0} : i64
  %v = arith.constant {value = 1.0} : f64
  array.store %v, %a, %z
  func.return
}

func.func @f(%a: array<f64,1,A>, %b: array<f64,1,C>, %n: i64) -> () {noalias = true} {
  %lb = arith.constant {value = 0} : i64
  %st = arith.constant {value = 1} : i64
  %buf = array.alloc %n {init = "zero"} : array<f64,1,C>
  %bufa = array.relayout %buf : array<f64,1,A>
  scf.for %lb, %n, %st {
  ^(%i: i64):
    %t = func.call %a {callee = @total} : f64
    array.store %t, %buf, %i
    func.call %bufa {callee = @bump}
    %u = func.call %bufa {callee = @total} : f64
    array.store %u, %b, %i
    scf.yield
  }
  func.return
}
// CHECK-LABEL: func.func @f
// CHECK: scf.if
// CHECK-NEXT: ^():
// CHECK-NEXT: func.call %{{.*}} {callee = {{@|"}}total{{"?}}}
// CHECK: scf.for
// CHECK-NEXT: ^(
// CHECK-NEXT: array.store
// CHECK-NEXT: func.call %{{.*}} {callee = {{@|"}}bump{{"?}}}
// CHECK-NEXT: func.call %{{.*}} {callee = {{@|"}}total{{"?}}}
""",
        runs=[(V.copy(), np.zeros(4), 3), (V.copy(), np.zeros(4), 0)],
    )
    check_case(licm, case)
