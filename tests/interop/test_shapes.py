"""Output shapes from argument shapes (``ir/shapes.py``), checked against running the code."""

import pathlib
import sys

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import interop_programs as P  # noqa: E402

from zymase.driver.cache import shared  # noqa: E402
from zymase.ir.shapes import result_shapes  # noqa: E402
from zymase.options import Options  # noqa: E402


def _inferred(fn, args):
    spec = shared(fn, Options()).primal(list(args))
    entry = next(f for f in spec.module if f.attrs.get("entry"))
    return result_shapes(spec.module, entry.sym_name,
                         [np.shape(a) if isinstance(a, np.ndarray) else a for a in args])


def grow(x, n):
    y = x
    for _ in range(n):
        y = np.concatenate((y, x))
    return y


def branchy(x, flag):
    if flag:
        return x[1:]
    return x[:-1]


def loop_swap(a, b, n):
    for _ in range(n):
        a, b = b, a
    return a


CASES = [
    (P.heat, (np.ones(8), np.ones(8), 0.1, 3)),
    (P.outer_and_count, (np.ones(4), np.ones(6), 3)),
    (P.scale_rows, (np.ones((3, 5)), 2.0)),
    (P.first_n, (np.ones(9), 4)),
    (branchy, (np.ones(7), True)),
    (branchy, (np.ones(7), False)),
    (loop_swap, (np.ones(3), np.ones(3), 5)),
]


@pytest.mark.parametrize("fn,args", CASES, ids=lambda x: getattr(x, "__name__", ""))
def test_inferred_shapes_match_a_run(fn, args):
    out = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    outs = out if isinstance(out, tuple) else (out,)
    assert _inferred(fn, args) == [np.shape(o) for o in outs]


def test_unknown_where_data_or_trip_counts_decide():
    assert _inferred(P.positives, (np.ones(5),)) == [(None,)]
    assert _inferred(grow, (np.ones(3), 2)) == [(None,)]
    # arrays of different shapes swapped in a loop: the result's shape depends on the count
    assert _inferred(loop_swap, (np.ones(3), np.ones(4), 5)) == [(None,)]


def test_interop_without_the_framework_says_what_to_install(tmp_path):
    """In a process where torch and jax cannot be imported, to_torch / to_jax raise an
    ImportError that says what to install (import zymase itself never needs them)."""
    import subprocess

    script = tmp_path / "no_frameworks.py"
    script.write_text(
        "import sys\n"
        "sys.modules['torch'] = None\n"  # an import of torch or jax now fails
        "sys.modules['jax'] = None\n"
        "import zymase\n"
        "def f(x):\n    return x\n"
        "for make, what in ((zymase.to_torch, 'PyTorch: pip install torch'),\n"
        "                   (zymase.to_jax, 'JAX: pip install jax')):\n"
        "    try:\n        make(f)\n    except ImportError as e:\n"
        "        assert what in str(e) and isinstance(e, zymase.ZymaseError), e\n"
        "    else:\n        raise AssertionError('no error')\n"
        "print('ok')\n")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr[-2000:]
