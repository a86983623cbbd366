"""``backend="xla"`` on 8 virtual CPU devices (``xla_sharded.py``, in a process of its own):
sharded ``jax.Array`` arguments and ``in_shardings=``/``out_shardings=`` give the CPU backend's
results, gradients come back sharded like their arguments, and the compiled program keeps a
halo stencil's arrays in per-device blocks (no all-gather, no buffer of the whole array in the
primal; neighbours come by collective-permute)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("jax", reason="JAX is not installed (pip install jax)")

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="module")
def report():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.dirname(os.path.dirname(HERE))] + sys.path))
    run = subprocess.run([sys.executable, os.path.join(HERE, "xla_sharded.py"), "12"],
                         capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_eight_devices(report):
    assert report["devices"] == 8


def test_sharded_stencil_matches_and_its_gradient_is_sharded_like_its_arguments(report):
    s = report["stencil"]
    assert s["primal"] < 1e-10 and s["grad"] < 1e-10, s
    assert s["grad_types"] == ["ArrayImpl", "ArrayImpl"]
    assert s["grad_sharded_like_input"]


def test_sharded_stencil_stays_in_per_device_blocks(report):
    s = report["stencil"]
    hlo = s["primal_hlo"]
    n = s["n"]
    assert hlo["collectives"]["all-gather"] == 0, hlo
    assert hlo["collectives"]["collective-permute"] > 0, hlo  # the halo exchange
    assert max(hlo["f64_sizes"]) == n // 8, hlo  # no buffer of the whole array
    # the gradient's arrays are blocks too; the values reverse mode keeps go to one tape
    # buffer on every device, and the adjoint sweep's carried neighbours are gathered: a few
    # all-gathers in the loop, not one per array or per element
    grad = s["grad_hlo"]
    assert grad["collectives"]["all-gather"] <= 4, grad


def test_in_and_out_shardings(report):
    assert report["data_parallel"]["grad"] < 1e-12
    assert report["data_parallel"]["replicated"]


def test_sharded_nbody_gradient(report):
    if "nbody" not in report:
        pytest.skip("../shared/bench is not beside the checkout")
    assert report["nbody"]["grad"] < 1e-10


def test_random_programs_on_sharded_arrays_match_the_cpu_backend(report):
    r = report["random"]
    assert r["compared"] >= 8, r
    assert r["worst_relative"] < 1e-9, r
