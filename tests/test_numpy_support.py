"""The NumPy support page (``docs/numpy.md``) is the one the registry generates, and every NumPy,
``np.linalg``, ``np.fft``, ``np.random`` and ``scipy.special`` function the registry lists is
named in some test (each topic test compares it with NumPy and checks its derivatives)."""

import glob
import os
import re

import pytest

from zymase.frontend.numpy import support

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_the_page_is_generated_from_the_registry():
    with open(os.path.join(ROOT, "docs", "numpy.md")) as f:
        written = f.read()
    assert written == support.page(), (
        "docs/numpy.md is out of date: python -m zymase.frontend.numpy.support > docs/numpy.md")


def _test_words() -> set:
    words = set()
    for path in glob.glob(os.path.join(ROOT, "tests", "**", "*.py"), recursive=True):
        with open(path) as f:
            words |= set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", f.read()))
    return words


@pytest.mark.parametrize("module", ["numpy", "numpy.linalg", "numpy.fft", "numpy.random",
                                    "scipy.special"])
def test_every_registered_function_has_a_test(module):
    words = _test_words()
    names = support.supported().get(module, [])
    assert names, module
    untested = [n for n in names if n.split(".")[-1] not in words]
    assert not untested, f"registered but named in no test: {untested}"
