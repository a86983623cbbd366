"""Shared harness for the pass tests: parse IR text, run a pass, FileCheck the printed result
against the ``// CHECK`` lines of the same text, and check with the interpreter that the function
computes the same thing (bit for bit, arrays mutated alike, same exception) before and after."""

from __future__ import annotations

import copy
import io
import os
import tempfile
from dataclasses import dataclass, field

import numpy as np
from filecheck.matcher import Matcher
from filecheck.options import Options

from zymase.ir.interp import run
from zymase.ir.parser import parse_module
from zymase.ir.printer import print_module
from zymase.ir.verify import verify_module


@dataclass
class Case:
    """One IR text test: ``text`` holds the input module and its ``// CHECK`` lines; each tuple
    of ``runs`` is a set of arguments for ``func``."""

    name: str
    text: str
    func: str = "f"
    runs: list[tuple] = field(default_factory=list)
    changed: bool = True

    def __str__(self) -> str:
        return self.name


def filecheck(output: str, checks: str) -> None:
    """Match ``output`` against the CHECK lines in ``checks`` (the ``filecheck`` package)."""
    with tempfile.TemporaryDirectory() as tmp:
        check_path, out_path = os.path.join(tmp, "checks"), os.path.join(tmp, "output")
        with open(check_path, "w") as fh:
            fh.write(checks)
        with open(out_path, "w") as fh:
            fh.write(output)
        matcher = Matcher.from_opts(Options(match_filename=check_path, input_file=out_path))
        matcher.stderr = io.StringIO()
        if matcher.run() != 0:
            raise AssertionError(f"FileCheck failed:\n{matcher.stderr.getvalue()}\n{output}")


def check_case(pass_fn, case: Case):
    """Run ``pass_fn`` on ``case`` and check the IR text and the semantics; the new module."""
    module = parse_module(case.text)
    verify_module(module)
    changed = pass_fn(module)
    verify_module(module)
    output = print_module(module)
    filecheck(output, case.text)
    assert changed == case.changed, f"pass reported changed={changed}\n{output}"
    for args in case.runs:
        assert_same_behaviour(parse_module(case.text), module, case.func, args)
    return module


def assert_same_behaviour(before, after, func: str, args: tuple) -> None:
    """Both modules give the same results (bits), mutate the arrays alike, or raise alike."""
    want_args, got_args = copy.deepcopy(args), copy.deepcopy(args)
    want, want_exc = _outcome(before, func, want_args)
    got, got_exc = _outcome(after, func, got_args)
    assert type(got_exc) is type(want_exc), f"raised {got_exc!r}, expected {want_exc!r}"
    assert _bits(got) == _bits(want), f"result {got!r} != {want!r}"
    assert _bits(got_args) == _bits(want_args), "arrays mutated differently"


def _outcome(module, func, args):
    try:
        return run(module, func, *args), None
    except Exception as e:  # noqa: BLE001  (compared by type with the other outcome)
        return None, e


def _bits(x):
    if isinstance(x, (tuple, list)):
        return tuple(_bits(v) for v in x)
    if x is None:
        return None
    a = np.asarray(x)
    return (a.dtype.str, a.shape, a.tobytes())
