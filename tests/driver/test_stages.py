"""The pipeline as data: every mode's stage list, what ``explain`` and ``ZYMASE_DUMP`` see of
it, stages turned off by name, and the one cache of compiled specializations."""

from __future__ import annotations

import numpy as np
import pytest

import zymase
from zymase.driver import pipeline
from zymase.driver.cache import Specializations, shared
from zymase.driver.request import Request
from zymase.options import Options


def _names(mode):
    return [s.name for s in pipeline.STAGES[mode]]


def test_every_mode_is_a_list_of_named_stages():
    assert _names("primal") == ["frontend", "rules", "optimize", "lifetime", "backend"]
    ad = {"fwd": ["forward"], "rev": ["reverse"], "rev-split": ["reverse", "split"],
          "fwd-rev": ["reverse", "forward"]}
    for mode, middle in ad.items():
        assert _names(mode) == ["frontend", "rules", "optimize", "activity", *middle,
                                "entries", "optimize", "lifetime", "backend"], mode


def _energy(u, c, steps):
    u = u.copy()
    for _ in range(steps):
        for i in range(1, u.shape[0] - 1):
            u[i] = u[i] + c[i] * (u[i - 1] - 2.0 * u[i] + u[i + 1])
    return (u * u).sum()


def test_zymase_dump_walks_the_derivative_stages(monkeypatch, capfd):
    monkeypatch.setenv("ZYMASE_DUMP", "after:frontend,reverse,lifetime")
    u, c = np.linspace(0, 1, 6), np.full(6, 0.2)
    zymase.grad(_energy, argnums=(0, 1), disable={"cse"})(u, c, 2)
    err = capfd.readouterr().err
    order = [line for line in err.splitlines() if line.startswith("// ---- after")]
    assert order == ["// ---- after frontend ----", "// ---- after reverse ----",
                     "// ---- after lifetime ----"]
    assert "func.func @_energy.grad" in err


def test_explain_shows_each_stage_and_each_pass():
    text = zymase.explain(_energy, np.zeros(5), np.zeros(5), 1, file=open("/dev/null", "w"))
    shown = [line[len("// ---- after "):-len(" ----")] for line in text.splitlines()
             if line.startswith("// ---- after")]
    assert shown[0] == "frontend" and shown[-1] == "lifetime"
    assert {"licm", "cse", "dce"} <= set(shown)


def test_disable_skips_stages_and_passes_by_name():
    """``disable`` turns off a pass or an optional stage; the result does not change."""
    u, c = np.linspace(0, 1, 6), np.full(6, 0.2)
    want = zymase.grad(_energy, argnums=(0, 1))(u, c, 3)
    for off in ({"licm", "cse"}, {"lifetime"}, {"optimize"}):
        got = zymase.grad(_energy, argnums=(0, 1), disable=off)(u, c, 3)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-13)


def test_one_cache_for_every_transform():
    """A transform object compiles each signature and request once; ``shared`` keeps one
    cache per function and options, which jvp, vjp and autodiff use."""
    cache = Specializations(_energy, Options())
    args = (np.zeros(5), np.zeros(5), 2)
    req = Request("rev", (0, 1))
    assert cache.get(args, req) is cache.get(args, req)
    assert cache.get(args, req) is not cache.get(args, Request("fwd", (0,)))
    assert cache.get((np.zeros(5, np.float32), np.zeros(5), 2), req) is not cache.get(args, req)
    assert cache.primal(args) is cache.primal(args)
    assert shared(_energy, Options()) is shared(_energy, Options())
    assert shared(_energy, Options()) is not shared(_energy, Options(backend="interp"))
    zymase.jvp(_energy, args, (np.ones(5), None, None))
    assert any(k[1].mode == "fwd" for k in shared(_energy, Options()).compiled)


def test_requests_are_checked():
    with pytest.raises(ValueError, match="unknown mode"):
        Request("sideways")


@pytest.mark.parametrize("transform,ad", [("grad", ["reverse"]), ("jvp", ["forward"]),
                                          ("vjp", ["reverse", "split"]),
                                          ("hvp", ["reverse", "forward"])])
def test_explain_walks_the_derivative_stages(transform, ad):
    u, c = np.linspace(0, 1, 5), np.full(5, 0.2)
    text = zymase.explain(_energy, u, c, 1, transform=transform, argnums=(0, 1),
                          stages=["frontend", *ad, "lifetime"], file=open("/dev/null", "w"))
    shown = [line for line in text.splitlines() if line.startswith("// ---- after")]
    assert shown == [f"// ---- after {s} ----" for s in ["frontend", *ad, "lifetime"]]
    with pytest.raises(ValueError, match="transform must be one of"):
        zymase.explain(_energy, u, c, 1, transform="hessian")


def test_zymase_log_prints_each_compilation_with_its_stage_times(monkeypatch, capfd):
    monkeypatch.setenv("ZYMASE_LOG", "compile")
    u, c = np.linspace(0, 1, 6), np.full(6, 0.2)
    zymase.grad(_energy, argnums=(0, 1), fastmath=True)(u, c, 2)
    lines = [x for x in capfd.readouterr().err.splitlines() if x.startswith("zymase: compiled")]
    assert len(lines) == 1 and "rev _energy on cpu" in lines[0]
    for stage in ("frontend", "optimize", "reverse", "lifetime", "backend"):
        assert f" {stage} " in lines[0], lines[0]
