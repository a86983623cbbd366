"""The pipeline table and ``run_pipeline`` (ablations, verification after each pass, dumps), and
the measured goal: the ``norm`` benchmark's O(n**2) loop nest becomes O(n)."""

from __future__ import annotations

import numpy as np
import pytest
from pass_check import assert_same_behaviour, filecheck

from zymase.ir.core import Module
from zymase.ir.ops.base import VerifyError
from zymase.ir.parser import parse_module
from zymase.ir.printer import print_module
from zymase.passes import PIPELINE, run_pipeline

# /work/shared/bench/problems/norm.py as the frontend lowers it: mag(x) called once per i
NORM = """
func.func @mag(%x: array<f64,1,A>) -> (f64) {
  %n = array.dim %x {axis = 0} : i64
  %z = arith.constant {value = 0.0} : f64
  %lb = arith.constant {value = 0} : i64
  %st = arith.constant {value = 1} : i64
  %s = scf.for %lb, %n, %st, %z : f64 {
  ^(%j: i64, %acc: f64):
    %jj = array.index %j, %n {wrap = true, check = true} : i64
    %a = array.load %x, %jj : f64
    %b = array.load %x, %jj : f64
    %p = arith.mulf %a, %b : f64
    %acc2 = arith.addf %acc, %p : f64
    scf.yield %acc2
  }
  %r = math.sqrt %s : f64
  func.return %r
}

func.func @primal(%x: array<f64,1,A>, %w: array<f64,1,A>) -> (f64) {entry = true} {
  %n = array.dim %x {axis = 0} : i64
  %out = array.alloc %n {init = "none"} : array<f64,1,C>
  %lb = arith.constant {value = 0} : i64
  %st = arith.constant {value = 1} : i64
  scf.for %lb, %n, %st {
  ^(%i: i64):
    %ii = array.index %i, %n {wrap = true, check = true} : i64
    %xi = array.load %x, %ii : f64
    %m = func.call %x {callee = @mag} : f64
    %q = arith.divf %xi, %m : f64
    %n2 = array.dim %out {axis = 0} : i64
    %io = array.index %i, %n2 {wrap = true, check = true} : i64
    array.store %q, %out, %io
    scf.yield
  }
  %z = arith.constant {value = 0.0} : f64
  %loss = scf.for %lb, %n, %st, %z : f64 {
  ^(%k: i64, %acc: f64):
    %kk = array.index %k, %n {wrap = true, check = true} : i64
    %o = array.load %out, %kk : f64
    %nw = array.dim %w {axis = 0} : i64
    %kw = array.index %k, %nw {wrap = true, check = true} : i64
    %wk = array.load %w, %kw : f64
    %p = arith.mulf %o, %wk : f64
    %acc2 = arith.addf %acc, %p : f64
    scf.yield %acc2
  }
  func.return %loss
}
"""
RNG = np.random.default_rng(0)
NORM_RUNS = [(RNG.standard_normal(7), RNG.standard_normal(7)), (np.zeros(0), np.zeros(0)),
             (RNG.standard_normal(3), RNG.standard_normal(2))]  # fmt: skip


def loop_depth(op, depth: int = 0) -> int:
    """The deepest nesting of ``scf.for``/``scf.while`` inside ``op``."""
    here = depth + (op.name in ("scf.for", "scf.while"))
    return max([here] + [loop_depth(o, here) for r in op.regions for o in r.block.ops])


def test_pipeline_reads_like_a_table_of_contents():
    assert [name for name, _ in PIPELINE] == [
        "inline", "canonicalize", "cse", "canonicalize", "fuse", "licm", "boundscheck",
        "canonicalize", "cse", "licm", "storefwd", "dce"]  # fmt: skip


def test_norm_becomes_linear():
    module = parse_module(NORM)
    assert run_pipeline(module, verify=True)
    assert list(module.funcs) == ["primal"]
    assert loop_depth(module["primal"]) == 1
    filecheck(
        print_module(module),
        """
// CHECK: %[[MAG:.*]] = scf.if
// CHECK: scf.for
// CHECK: math.sqrt
// CHECK: scf.for
// CHECK-NOT: array.index
// CHECK: arith.divf %{{.*}}, %[[MAG]]
""",
    )
    for args in NORM_RUNS:
        assert_same_behaviour(parse_module(NORM), module, "primal", args)


def test_ablation_without_licm_keeps_the_loop_nest():
    module = parse_module(NORM)
    changed = run_pipeline(module, disable={"licm"}, verify=True)
    assert "licm" not in changed and "inline" in changed
    assert loop_depth(module["primal"]) == 2
    for args in NORM_RUNS:
        assert_same_behaviour(parse_module(NORM), module, "primal", args)


def test_dump_sees_every_stage_that_ran():
    seen = []
    run_pipeline(parse_module(NORM), disable={"cse"}, dump=lambda s, m: seen.append(s))
    assert seen == [name for name, _ in PIPELINE if name != "cse"]


def _break_ir(module: Module) -> bool:
    """A broken pass: uses a value of one function in another."""
    f, g = list(module)[:2]
    g.body.ops[0].set_operand(0, f.args[0])
    return True


@pytest.mark.parametrize("how", ["argument", "environment"])
def test_verify_names_the_pass_that_broke_the_ir(how, monkeypatch):
    passes = [("inline", lambda m: False), ("breaker", _break_ir)]
    module = parse_module(NORM)
    if how == "environment":
        monkeypatch.setenv("ZYMASE_VERIFY", "1")
    with pytest.raises(VerifyError, match="after pass 'breaker'"):
        run_pipeline(module, passes, verify=how == "argument")


def test_no_verification_unless_asked(monkeypatch):
    monkeypatch.delenv("ZYMASE_VERIFY", raising=False)
    assert run_pipeline(parse_module(NORM), [("breaker", _break_ir)]) == ["breaker"]
