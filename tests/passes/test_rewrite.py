"""The shared rewrite helpers: safe walks, deep clones, scoping, attribute keys, effects."""

from __future__ import annotations

import math

from zymase.ir.core import MAY_RAISE, READS, WRITES
from zymase.ir.parser import parse_module
from zymase.ir.printer import print_func
from zymase.ir.verify import verify_func
from zymase.passes.rewrite import Effects, attr_key, clone_op, is_defined_outside, trip_count, walk

TEXT = """
func.func @f(%x: f64, %a: array<f64,1,A>, %n: i64) -> (f64) {
  %lb = arith.constant {value = 0} : i64
  %st = arith.constant {value = 1} : i64
  %r = scf.for %lb, %n, %st, %x : f64 {
  ^(%i: i64, %acc: f64):
    %v = array.load %a, %i : f64
    %s = arith.addf %acc, %v : f64
    scf.yield %s
  }
  func.return %r
}

func.func @loop(%n: i64) -> (i64) {
  %r = func.call %n {callee = @loop} : i64
  func.return %r
}

func.func @g(%a: array<f64,1,A>) -> () {
  %z = arith.constant {value = 0} : i64
  %v = arith.constant {value = 1.0} : f64
  array.store %v, %a, %z
  func.return
}
"""


def test_walk_skips_ops_erased_on_the_way():
    f = parse_module(TEXT)["f"]
    names = []
    for op in walk(f):
        names.append(op.name)
        if op.name == "scf.for":
            op.results[0].replace_all_uses_with(f.args[0])
            op.erase()
    assert names == ["arith.constant", "arith.constant", "scf.for", "func.return"]


def test_clone_is_deep_and_remaps_values():
    f = parse_module(TEXT)["f"]
    loop = f.body.ops[2]
    before = print_func(f)
    copy = clone_op(loop, {})
    f.body.insert_before(f.body.ops[-1], copy)
    verify_func(f)
    inner = copy.regions[0].block
    assert inner is not loop.regions[0].block
    assert inner.ops[0].operands[1] is inner.args[0]  # the clone's own induction variable
    assert inner.ops[0].operands[0] is f.args[1]  # a value from outside is shared
    inner.ops[1].attrs["fastmath"] = True
    assert "fastmath" not in loop.regions[0].block.ops[1].attrs
    assert print_func(f).count("scf.for") == 2 and before.count("scf.for") == 1


def test_is_defined_outside():
    f = parse_module(TEXT)["f"]
    loop = f.body.ops[2]
    load, add = loop.regions[0].block.ops[:2]
    assert is_defined_outside(f.args[1], loop)
    assert not is_defined_outside(loop.regions[0].block.args[0], loop)
    assert not is_defined_outside(load.result, loop)
    assert not is_defined_outside(loop.results[0], loop)
    assert is_defined_outside(load.result, add)


def test_attr_keys_tell_bits_apart():
    assert attr_key(0.0) != attr_key(-0.0)
    assert attr_key(math.nan) == attr_key(math.nan)
    assert attr_key(math.nan) != attr_key(-math.nan)
    assert attr_key(True) != attr_key(1)
    assert attr_key([1, 2.0]) == attr_key((1, 2.0))


def test_effects_look_into_regions_and_callees():
    m = parse_module(TEXT)
    eff = Effects(m)
    assert eff.of(m["f"].body.ops[2]) == {READS}
    assert eff.of_func("g") == {WRITES}
    assert MAY_RAISE in eff.of_func("loop")  # recursion: the worst case
    assert MAY_RAISE in eff.of_func("missing")


def test_trip_count():
    f = parse_module("""
func.func @f(%n: i64) -> () {
  %a = arith.constant {value = 10} : i64
  %b = arith.constant {value = 0} : i64
  %s = arith.constant {value = -3} : i64
  scf.for %a, %b, %s {
    scf.yield
  }
  scf.for %b, %n, %s {
    scf.yield
  }
  scf.for %n, %n, %s {
    scf.yield
  }
  func.return
}
""")["f"]
    assert [trip_count(op) for op in f.body.ops[3:6]] == [4, None, 0]
