"""``print`` in compiled code, for debugging: numbers, arrays and string constants printed as
Python prints them, when their line runs (in loops, branches and under ``grad``); what it
cannot print is refused at the line."""

import numpy as np
import pytest

import zymase
from zymase.errors import ZymaseError


def _traced(x, n):
    s = 0.0
    for i in range(n):
        s += x[i]
        if i % 2 == 0:
            print("step", i, s, x[:2], end=";\n")
    print(np.float32(1.5), True, 3 + 4j, np.int8(-3), None, sep="|")
    return s


def test_prints_like_python(capsys):
    x = np.arange(5.0)
    _traced(x, 5)
    want = capsys.readouterr().out
    assert zymase.jit(_traced)(x, 5) == 10.0
    assert capsys.readouterr().out == want
    assert zymase.jit(_traced, backend="interp")(x, 5) == 10.0
    assert capsys.readouterr().out == want


def test_prints_under_grad(capsys):
    g = zymase.grad(_traced)(np.arange(5.0), 3)
    np.testing.assert_array_equal(g, [1.0, 1.0, 1.0, 0.0, 0.0])
    want = "step 0 0.0 [0. 1.];\nstep 2 3.0 [0. 1.];\n1.5|True|(3+4j)|-3|None\n"
    assert capsys.readouterr().out == want


def _print_tuple(x):
    print((x, x))
    return x


def _print_file(x):
    print(x, flush=True)
    return x


@pytest.mark.parametrize("fn, text", [(_print_tuple, "print\\(\\) of a tuple"),
                                      (_print_file, "flush=")])
def test_refusals(fn, text):
    with pytest.raises(ZymaseError, match=text) as e:
        zymase.jit(fn)(1.0)
    assert "test_print.py:" in str(e.value)
