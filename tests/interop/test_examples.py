"""The interop examples (``examples/*_heat_training.py``) train: a short run of each fits the
diffusivity field of the loop-written heat simulator (the loss falls by more than 100x from
its 1.4e-3 at the start, and the field comes within 0.1 of the true one)."""

import pathlib
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("name,module", [("torch", "torch_heat_training"),
                                         ("jax", "jax_heat_training")])
def test_training_example_fits_the_field(name, module):
    lib = pytest.importorskip(name, reason=f"{name} is not installed")
    x64 = lib.config.jax_enable_x64 if name == "jax" else None
    sys.path.insert(0, str(EXAMPLES))
    try:
        mod = __import__(module)
        loss, err = mod.main(60)
    finally:
        sys.path.remove(str(EXAMPLES))
        if name == "jax":  # the example turns float64 on for the process
            lib.config.update("jax_enable_x64", x64)
    assert loss < 1.4e-5 and err < 0.1, (loss, err)
