"""dce: unused pure ops, loads, effect-free regions and calls go; raising ops, writes to live
memory and terminators stay; buffers that are only written go with their stores."""

from __future__ import annotations

import numpy as np
import pytest
from pass_check import Case, check_case

from zymase.passes.dce import dce

V = np.array([3.0, -1.0, 2.0, 0.5])

CASES = [
    Case(
        "unused_pure_ops_and_loads_go_raising_ops_stay",
        """
func.func @f(%x: f64, %a: array<f64,1,A>, %k: i64) -> (f64) {
  %s = math.sin %x : f64
  %t = arith.mulf %s, %s : f64
  %v = array.load %a, %k : f64
  %q = arith.floordivi %k, %k : i64
  %ok = arith.cmpi %k, %k {pred = "eq"} : i1
  rt.assert %ok {kind = "AssertionError", msg = "m"}
  func.return %x
}
// CHECK-NOT: math.sin
// CHECK-NOT: arith.mulf
// CHECK-NOT: array.load
// CHECK: arith.floordivi
// CHECK: rt.assert
""",
        runs=[(1.0, V, 1), (1.0, V, 0)],
    ),
    Case(
        "effect_free_loops_go_loops_that_write_stay",
        """
func.func @f(%a: array<f64,1,A>, %n: i64) -> () {
  %lb = arith.constant {value = 0} : i64
  %st = arith.constant {value = 1} : i64
  %z = arith.constant {value = 0.0} : f64
  %unused = scf.for %lb, %n, %st, %z : f64 {
  ^(%i: i64, %acc: f64):
    %v = array.load %a, %i : f64
    %s = arith.addf %acc, %v : f64
    scf.yield %s
  }
  scf.for %lb, %n, %st {
  ^(%j: i64):
    array.store %z, %a, %j
    scf.yield
  }
  func.return
}
// CHECK: scf.for
// CHECK-NEXT: ^(%{{.*}}: i64):
// CHECK-NEXT: array.store
// CHECK-NOT: scf.for
""",
        runs=[(V.copy(), 4), (V.copy(), 2)],
    ),
    Case(
        "loop_with_a_check_stays",
        """
func.func @f(%a: array<f64,1,A>, %n: i64, %k: i64) -> () {
  %lb = arith.constant {value = 0} : i64
  %st = arith.constant {value = 1} : i64
  %m = array.dim %a {axis = 0} : i64
  scf.for %lb, %n, %st {
  ^(%i: i64):
    %j = array.index %k, %m {wrap = false, check = true} : i64
    scf.yield
  }
  func.return
}
// CHECK: scf.for
// CHECK: array.index
""",
        runs=[(V, 2, 9), (V, 2, 1)],
        changed=False,
    ),
    Case(
        "buffers_only_written_go",
        """
func.func @f(%x: f64, %n: i64) -> (f64) {
  %buf = array.alloc %n, %n {init = "none"} : array<f64,2,C>
  %lb = arith.constant {value = 0} : i64
  %st = arith.constant {value = 1} : i64
  scf.for %lb, %n, %st {
  ^(%i: i64):
    %row = array.subview %buf, %i, %lb, %n, %st {keep = [false, true]} : array<f64,1,A>
    %y = math.exp %x : f64
    array.store %y, %row, %i
    scf.yield
  }
  array.free %buf
  %live = array.alloc %n {init = "zero"} : array<f64,1,C>
  array.store %x, %live, %lb
  %r = array.load %live, %lb : f64
  func.return %r
}
// CHECK-NOT: math.exp
// CHECK-NOT: scf.for
// CHECK-NOT: array.free
// CHECK: array.alloc
// CHECK-NEXT: array.store
// CHECK-NEXT: array.load
""",
        runs=[(2.0, 3)],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_dce(case):
    check_case(dce, case)


def test_calls_go_only_when_the_callee_has_no_effects():
    case = Case(
        "calls",
        """
func.func @peek(%a: array<f64,1,A>) -> (f64) {
  %z = arith.constant {value = 0} : i64
  %v = array.load %a, %z : f64
  func.return %v
}

func.func @poke(%a: array<f64,1,A>) -> (f64) {
  %z = arith.constant {value = 0} : i64
  %v = arith.constant {value = 5.0} : f64
  array.store %v, %a, %z
  func.return %v
}

func.func @f(%a: array<f64,1,A>) -> () {
  %p = func.call %a {callee = @peek} : f64
  %q = func.call %a {callee = @poke} : f64
  func.return
}
// CHECK-LABEL: func.func @f
// CHECK-NEXT: func.call
// CHECK-NEXT: func.return
""",
        runs=[(V.copy(),)],
    )
    module = check_case(dce, case)
    assert "poke" in str(module["f"].body.ops[0].attrs["callee"])
