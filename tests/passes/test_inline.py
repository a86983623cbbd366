"""inline: calls of non-recursive functions replaced by copies of the callee body (regions and
locations included); recursive functions stay called; dead non-entry callees are removed."""

from __future__ import annotations

import numpy as np
import pytest
from pass_check import Case, check_case, filecheck

from zymase.ir.parser import parse_module
from zymase.ir.printer import print_module
from zymase.passes.inline import inline, recursive_funcs

CASES = [
    Case(
        "chain_of_calls_and_dead_callees",
        """
func.func @h(%x: f64) -> (f64) {
  %s = math.sin %x : f64
  func.return %s
}

func.func @g(%x: f64, %y: f64) -> (f64, f64) {
  %a = func.call %x {callee = @h} : f64
  %b = arith.mulf %a, %y : f64
  func.return %b, %a
}

func.func @f(%x: f64) -> (f64) {entry = true} {
  %p, %q = func.call %x, %x {callee = @g} : f64, f64
  %r = arith.addf %p, %q : f64
  func.return %r
}
// CHECK-NOT: func.func @h
// CHECK-NOT: func.func @g
// CHECK: func.func @f(%[[X:[a-z0-9]+]]: f64)
// CHECK-NEXT: %[[S:.*]] = math.sin %[[X]]
// CHECK-NEXT: %[[B:.*]] = arith.mulf %[[S]], %[[X]]
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[B]], %[[S]]
// CHECK-NEXT: func.return %[[R]]
// CHECK-NOT: func.call
""",
        runs=[(0.5,), (-2.0,)],
    ),
    Case(
        "entry_callees_stay_and_calls_in_loops",
        """
func.func @sq(%x: f64) -> (f64) {entry = true} {
  %s = arith.mulf %x, %x : f64
  func.return %s
}

func.func @sumsq(%a: array<f64,1,A>) -> (f64) {
  %n = array.dim %a {axis = 0} : i64
  %z = arith.constant {value = 0.0} : f64
  %lb = arith.constant {value = 0} : i64
  %st = arith.constant {value = 1} : i64
  %r = scf.for %lb, %n, %st, %z : f64 {
  ^(%i: i64, %acc: f64):
    %v = array.load %a, %i : f64
    %s = func.call %v {callee = @sq} : f64
    %acc2 = arith.addf %acc, %s : f64
    scf.yield %acc2
  }
  func.return %r
}

func.func @f(%a: array<f64,1,A>) -> (f64) {entry = true} {
  %r = func.call %a {callee = @sumsq} : f64
  %t = func.call %r {callee = @sq} : f64
  func.return %t
}
// CHECK: func.func @sq
// CHECK-NOT: func.func @sumsq
// CHECK: func.func @f
// CHECK: scf.for
// CHECK: array.load
// CHECK-NEXT: arith.mulf
// CHECK: }
// CHECK-NEXT: arith.mulf
// CHECK-NOT: func.call
""",
        runs=[(np.array([1.0, 2.0, 3.0]),)],
    ),
    Case(
        "recursive_functions_stay_called",
        """
func.func @fact(%n: i64) -> (i64) {
  %one = arith.constant {value = 1} : i64
  %c = arith.cmpi %n, %one {pred = "le"} : i1
  %r = scf.if %c : i64 {
    scf.yield %one
  } {
    %m = arith.subi %n, %one : i64
    %k = func.call %m {callee = @fact} : i64
    %p = func.call %n, %k {callee = @mul} : i64
    scf.yield %p
  }
  func.return %r
}

func.func @mul(%a: i64, %b: i64) -> (i64) {
  %p = arith.muli %a, %b : i64
  func.return %p
}

func.func @even(%n: i64) -> (i1) {
  %z = arith.constant {value = 0} : i64
  %c = arith.cmpi %n, %z {pred = "eq"} : i1
  %r = scf.if %c : i1 {
    scf.yield %c
  } {
    %one = arith.constant {value = 1} : i64
    %m = arith.subi %n, %one : i64
    %o = func.call %m {callee = @odd} : i1
    scf.yield %o
  }
  func.return %r
}

func.func @odd(%n: i64) -> (i1) {
  %z = arith.constant {value = 0} : i64
  %c = arith.cmpi %n, %z {pred = "ne"} : i1
  %r = scf.if %c : i1 {
    %one = arith.constant {value = 1} : i64
    %m = arith.subi %n, %one : i64
    %e = func.call %m {callee = @even} : i1
    scf.yield %e
  } {
    scf.yield %c
  }
  func.return %r
}

func.func @f(%n: i64) -> (i64, i1) {entry = true} {
  %r = func.call %n {callee = @fact} : i64
  %e = func.call %n {callee = @even} : i1
  func.return %r, %e
}
// CHECK-LABEL: func.func @fact
// CHECK: func.call %{{.*}} {callee = {{@|"}}fact
// CHECK-NEXT: arith.muli
// CHECK-NOT: func.func @mul
// CHECK-LABEL: func.func @even
// CHECK-LABEL: func.func @odd
// CHECK-LABEL: func.func @f
// CHECK-NEXT: func.call %{{.*}} {callee = {{@|"}}fact
// CHECK-NEXT: func.call %{{.*}} {callee = {{@|"}}even
""",
        runs=[(5,), (0,)],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_inline(case):
    check_case(inline, case)


def test_recursive_funcs():
    module = parse_module(CASES[2].text)
    assert recursive_funcs(module) == {"fact", "even", "odd"}


def test_inlined_ops_keep_the_callee_locations():
    text = """
func.func @g(%x: f64) -> (f64) {
  %s = math.sin %x : f64 loc("lib.py":7:11)
  func.return %s loc("lib.py":8:4)
} loc("lib.py":6:0)

func.func @f(%x: f64) -> (f64) {entry = true} {
  %r = func.call %x {callee = @g} : f64 loc("user.py":3:8)
  func.return %r loc("user.py":4:4)
} loc("user.py":2:0)
"""
    module = parse_module(text)
    assert inline(module)
    filecheck(
        print_module(module, locs=True),
        """
// CHECK: func.func @f
// CHECK-NEXT: math.sin %{{.*}} : f64 loc("lib.py":7:11)
// CHECK-NEXT: func.return %{{.*}} loc("user.py":4:4)
""",
    )


def test_nothing_to_inline_reports_no_change():
    module = parse_module(CASES[2].text)
    inline(module)
    assert not inline(module)
