"""Verifier tests: the invalid programs in ``invalid/*.zir`` (each names the expected error on its
first line), and IR broken from Python in ways the text form cannot express (back-links, use lists,
values from another function)."""

from __future__ import annotations

from pathlib import Path

import pytest

from zymase.ir import F64, I64, Builder, Func, Loc, Module
from zymase.ir.core import Block, Region
from zymase.ir.ops.base import VerifyError
from zymase.ir.parser import parse_module
from zymase.ir.verify import verify_func, verify_module

INVALID = sorted((Path(__file__).parent / "invalid").glob("*.zir"))


def _expected_error(path: Path) -> str:
    first = path.read_text().splitlines()[0]
    assert first.startswith("// ERROR: "), f"{path.name}: first line must be '// ERROR: <text>'"
    return first.removeprefix("// ERROR: ").strip()


def test_invalid_files_exist():
    assert len(INVALID) >= 30


@pytest.mark.parametrize("path", INVALID, ids=[p.stem for p in INVALID])
def test_invalid_program(path):
    m = parse_module(path.read_text(), filename=path.name)
    with pytest.raises(VerifyError) as info:
        verify_module(m)
    assert _expected_error(path) in str(info.value)


VALID = """
func.func @sq(%x: f64) -> (f64) {
  %y = arith.mulf %x, %x : f64 loc("v.py":2:7)
  func.return %y
}

func.func @main(%x: f64, %n: i64, %c: i1) -> (f64) {entry = true} {
  %0 = arith.constant {value = 0} : i64
  %1 = arith.constant {value = 1} : i64
  %s = scf.for %0, %n, %1, %x : f64 {
  ^(%i: i64, %acc: f64):
    %r = scf.if %c : f64 {
    ^():
      %t = func.call %acc {callee = @sq} : f64
      scf.yield %t
    } {
    ^():
      scf.yield %x
    }
    scf.yield %r
  } loc("v.py":5:3)
  %w = scf.while %s : f64 {
  ^(%v: f64):
    %k = arith.cmpf %v, %x {pred = "gt"} : i1
    scf.condition %k, %v
  } {
  ^(%u: f64):
    %h = math.sqrt %u : f64
    scf.yield %h
  }
  func.return %w
}
"""


def valid() -> Module:
    m = parse_module(VALID, filename="valid.zir")
    verify_module(m)
    return m


def _find(f: Func, name: str):
    return next(op for op in f.walk() if op.name == name)


def test_valid_module_verifies():
    m = valid()
    for f in m:
        verify_func(f)


def test_verify_func_alone_does_not_check_callees():
    f = parse_module(VALID.replace("@sq}", "@elsewhere}"))["main"]
    verify_func(f)
    with pytest.raises(VerifyError, match="calls @elsewhere, which is not in the module"):
        verify_module(Module([f]))


def test_message_names_op_location_and_function():
    m = valid()
    mul = _find(m["sq"], "arith.mulf")
    mul.attrs["pred"] = "x"
    mul.results[0].type = I64  # arith.mulf's own hook rejects the result type
    with pytest.raises(VerifyError, match=r"^arith\.mulf at v\.py:2:7 in @sq: arith\.mulf: result"):
        verify_module(m)


def test_module_key_must_match_function_name():
    m = valid()
    m.funcs["other"] = m.funcs.pop("sq")
    with pytest.raises(VerifyError, match="func.func @sq .*registered in the module as @other"):
        verify_module(m)


# ---- back-links and structure
def test_wrong_op_parent():
    m = valid()
    mul = _find(m["sq"], "arith.mulf")
    mul.parent = Block()
    with pytest.raises(VerifyError, match="arith.mulf at v.py:2:7 in @sq: op.parent is not"):
        verify_module(m)


def test_wrong_region_parent():
    m = valid()
    loop = _find(m["main"], "scf.for")
    loop.regions[0].parent = None
    with pytest.raises(VerifyError, match=r"scf.for at v.py:5:3 in @main: region #0.parent"):
        verify_module(m)


def test_wrong_block_parent():
    m = valid()
    loop = _find(m["main"], "scf.for")
    loop.regions[0].blocks[0].parent = Region()
    with pytest.raises(VerifyError, match="the block of region #0 has a wrong parent"):
        verify_module(m)


def test_op_in_two_places():
    m = valid()
    mul = _find(m["sq"], "arith.mulf")
    m["sq"].body.ops.insert(0, mul)
    with pytest.raises(VerifyError, match="appears twice"):
        verify_module(m)


def test_region_with_no_block():
    m = valid()
    _find(m["main"], "scf.if").regions[1].blocks.clear()
    with pytest.raises(VerifyError, match="region #1 has 0 blocks"):
        verify_module(m)


def test_wrong_region_count():
    m = valid()
    op = _find(m["main"], "scf.if")
    op.regions.pop()
    with pytest.raises(VerifyError, match="scf.if .*expects 2 regions, has 1"):
        verify_module(m)


def test_wrong_result_index():
    m = valid()
    _find(m["sq"], "arith.mulf").results[0].index = 3
    with pytest.raises(VerifyError, match="result #0 has a wrong owner or index"):
        verify_module(m)


def test_wrong_block_argument_owner():
    m = valid()
    loop = _find(m["main"], "scf.for")
    loop.regions[0].block.args[1].owner = Block()
    with pytest.raises(VerifyError, match="argument #1 of region #0 has a wrong owner"):
        verify_module(m)


def test_unknown_region_op_needs_a_terminator():
    f = Func("f", [], [])
    b = Builder.at_end(f.body)
    b.create("array.const", [], [F64], {}, regions=[Region()])  # no table entry: any terminator
    b.create("func.return", [], [])
    with pytest.raises(VerifyError, match="region #0 must end in a terminator, found an empty"):
        verify_func(f)


# ---- dominance beyond what text can say
def test_value_from_another_function():
    m = valid()
    mul = _find(m["sq"], "arith.mulf")
    mul.set_operand(1, m["main"].args[0])
    with pytest.raises(VerifyError, match="operand #1 does not dominate .*in another function"):
        verify_module(m)


def test_use_of_erased_definition():
    m = valid()
    sqrt = _find(m["main"], "math.sqrt")
    sqrt.detach()  # still used by scf.yield
    with pytest.raises(VerifyError, match="scf.yield .*does not dominate .*in no block"):
        verify_module(m)


def test_block_argument_of_sibling_region():
    m = valid()
    loop_arg = _find(m["main"], "scf.for").regions[0].block.args[1]
    h = _find(m["main"], "math.sqrt")
    h.set_operand(0, loop_arg)
    with pytest.raises(VerifyError, match="math.sqrt .*argument #1 of a block of scf.for"):
        verify_module(m)


def test_forward_use_in_builder_ir():
    f = Func("f", [F64], [F64], loc=Loc("b.py", 1, 1))
    b = Builder.at_end(f.body, Loc("b.py", 2, 5))
    y = b.op("math.sin", f.args[0])
    z = b.op("math.cos", f.args[0])
    b.create("func.return", [y], [])
    y.op.set_operand(0, z)
    with pytest.raises(VerifyError, match="math.sin at b.py:2:5 in @f: operand #0 .*after its use"):
        verify_func(f)


# ---- use lists
def test_stale_use_by_detached_op():
    m = valid()
    f = m["sq"]
    extra = Builder.before(f.body.ops[-1]).op("math.sin", f.args[0]).op
    extra.detach()  # detach keeps the operand uses: a stale use
    with pytest.raises(
        VerifyError, match="argument #0 .*stale use by math.sin .*not in this function"
    ):
        verify_module(m)


def test_erased_op_leaves_no_stale_use():
    m = valid()
    f = m["sq"]
    Builder.before(f.body.ops[-1]).op("math.sin", f.args[0]).op.erase()
    verify_module(m)


def test_use_missing_from_use_list():
    m = valid()
    x = m["sq"].args[0]
    x.uses.pop()
    with pytest.raises(
        VerifyError, match=r"arith.mulf .*operand #1 .*missing from that value's use"
    ):
        verify_module(m)


def test_operand_changed_without_updating_uses():
    m = valid()
    mul = _find(m["sq"], "arith.mulf")
    other = Builder.before(mul).f64(2.0)
    mul.operands[1] = other  # bypasses set_operand
    with pytest.raises(VerifyError, match="stale use as operand #1 of arith.mulf"):
        verify_module(m)


def test_duplicated_use_record():
    m = valid()
    x = m["sq"].args[0]
    x.uses.append(x.uses[0])
    with pytest.raises(VerifyError, match="same use recorded twice"):
        verify_module(m)


def test_builder_made_function_verifies():
    f = Func("g", [F64, I64], [F64])
    b = Builder.at_end(f.body)
    y = b.op("arith.addf", f.args[0], b.cast(f.args[1], F64))
    b.create("func.return", [y], [])
    verify_func(f)
