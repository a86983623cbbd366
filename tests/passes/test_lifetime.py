"""The lifetime pass: a buffer that stays in its block is freed at the block's end; one that
leaves it (yielded, carried, returned) is marked ``escapes`` for the per-call arena."""

import pytest
from pass_check import Case, check_case

from zymase.passes.lifetime import lifetime

LOCAL = Case("freed_at_block_end", """
func.func @f(%n: i64) -> (f64) {
  %a = array.alloc %n {init = "zero"} : array<f64,1,C>
  %z = arith.constant {value = 0} : i64
  %x = array.load %a, %z : f64
  func.return %x
}
// CHECK: %a{{[0-9]*}} = array.alloc %n{{[0-9]*}} {init = "zero", escapes = false}
// CHECK: array.free %a
// CHECK-NEXT: func.return
""", runs=[(3,)])

RETURNED = Case("returned_escapes", """
func.func @f(%n: i64) -> (array<f64,1,C>) {
  %a = array.alloc %n {init = "zero"} : array<f64,1,C>
  func.return %a
}
// CHECK: {init = "zero", escapes = true}
// CHECK-NOT: array.free
""", runs=[(3,)])

CARRIED = Case("carried_escapes_inner_freed", """
func.func @f(%n: i64) -> (f64) {
  %z = arith.constant {value = 0} : i64
  %one = arith.constant {value = 1} : i64
  %a0 = array.alloc %n {init = "zero"} : array<f64,1,C>
  %r = scf.for %z, %n, %one, %a0 : array<f64,1,C> {
  ^(%i: i64, %a: array<f64,1,C>):
    %b = array.alloc %n {init = "zero"} : array<f64,1,C>
    %t = array.alloc %n {init = "none"} : array<f64,1,C>
    scf.yield %b
  }
  %x = array.load %r, %z : f64
  func.return %x
}
// CHECK: %a{{[0-9]*}} = array.alloc {{.*}}escapes = false
// CHECK: %b{{[0-9]*}} = array.alloc {{.*}}escapes = true
// CHECK: %t{{[0-9]*}} = array.alloc {{.*}}escapes = false
// CHECK: array.free %t
// CHECK-NEXT: scf.yield
// The loop init is read (through %r when n == 0) only before the block ends,
// so it can be freed there; the yielded %b is what escapes into the arena.
// CHECK: array.load
// CHECK: array.free %a
// CHECK-NEXT: func.return
""", runs=[(3,), (0,)])


@pytest.mark.parametrize("case", [LOCAL, RETURNED, CARRIED], ids=str)
def test_lifetime(case):
    check_case(lifetime, case)


