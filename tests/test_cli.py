"""The ``zymase`` command: ``explain`` prints the staged IR or a located error, with exit codes."""

from __future__ import annotations

import os
import textwrap

import pytest

import zymase
from zymase.cli import main

SOURCE = textwrap.dedent("""
    import numpy as np

    def loss(x, n):
        s = 0.0
        for i in range(n):
            s += x[i] * x[i]
        return s

    def bad(x):
        return {1: x}
""")


def _write(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(SOURCE)
    return path


def test_explain_prints_requested_stage(tmp_path, capsys):
    path = _write(tmp_path)
    assert main(["explain", f"{path}:loss", "np.ones(4)", "3", "--stage", "frontend"]) == 0
    out = capsys.readouterr().out
    assert "// ---- after frontend ----" in out
    assert "func.func @loss(%x0: array<f64,1,C>, %n1: i64) -> (f64)" in out
    assert "scf.for" in out
    assert f'loc("{path}":7:' in out            # the loop body's source line
    assert "after licm" not in out


def test_explain_all_stages_and_llvm(tmp_path, capsys):
    path = _write(tmp_path)
    assert main(["explain", f"{path}:loss", "np.ones(4)", "3", "--llvm"]) == 0
    out = capsys.readouterr().out
    for stage in ("frontend", "licm", "lifetime", "llvm"):
        assert f"// ---- after {stage} ----" in out, stage
    assert "define " in out                          # LLVM IR text


def test_explain_a_gradient(tmp_path, capsys):
    path = _write(tmp_path)
    assert main(["explain", f"{path}:loss", "np.ones(4)", "3", "--transform", "grad",
                 "--stage", "reverse"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("// ---- after reverse ----") and "func.func @loss.grad" in out


def test_explain_unsupported_reports_location(tmp_path, capsys):
    path = _write(tmp_path)
    assert main(["explain", f"{path}:bad", "1.0"]) == 1
    err = capsys.readouterr().err
    assert f"{path}:11:12" in err and "dict displays" in err


def test_explain_usage_errors(tmp_path, capsys):
    path = _write(tmp_path)
    assert main(["explain", f"{path}:nope"]) == 2
    assert "defines no 'nope'" in capsys.readouterr().err
    assert main(["explain", "no_such_file.py:f"]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["explain", f"{path}:loss", "np.ones(", "3"]) == 2
    assert "cannot evaluate argument" in capsys.readouterr().err
    assert main(["explain", "loss"]) == 2


def test_demo_runs_and_checks_everything(capsys):
    """`zymase demo` (the README's third command): every example and every gradient checks."""
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "MISMATCH" not in out
    assert "reverse-mode gradients, checked against central differences of CPython" in out
    assert out.count(" ok\n") == 10 and "10 passed, 0 failed" in out


def test_version_and_no_command(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.strip() == f"zymase {zymase.__version__}"
    assert main([]) == 2  # no command: help on stderr, a usage error's exit status
    assert "usage: zymase" in capsys.readouterr().err


def test_the_package_is_typed():
    assert os.path.exists(os.path.join(os.path.dirname(zymase.__file__), "py.typed"))
