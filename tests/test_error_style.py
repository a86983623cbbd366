"""One error style from ``jit`` and every transform: the user's file, line and column with the
source line and a caret, the function and parameter names, what to do; never an ``ast`` class
name, an internal object's repr or a zymase path."""

import os

import numpy as np
import pytest

import zymase

ZYMASE_DIR = os.path.dirname(zymase.__file__)
INTERNAL = ("JoinedStr", "ImportFrom", "BoundMethod", " object at 0x", "FVal", "PyObj",
            ZYMASE_DIR)


def message(call) -> str:
    with pytest.raises(zymase.ZymaseError) as info:
        call()
    msg = str(info.value)
    for word in INTERNAL:
        assert word not in msg, msg
    assert "test_error_style.py:" in msg and "^" in msg, msg
    return msg


def _sum_of(x, y):
    return (x + y).sum()


def _formats(x):
    return f"{x:.3f}"


def _imports(x):
    from math import sin
    return sin(x)


def _method_plus(x):
    m = x.sum
    return m + 1.0


def _square(x):
    return (x * x).sum()


TRANSFORMS = [("jit", zymase.jit), ("grad", zymase.grad),
              ("value_and_grad", zymase.value_and_grad), ("jacrev", zymase.jacrev),
              ("jacfwd", zymase.jacfwd), ("hessian", zymase.hessian)]


@pytest.mark.parametrize("name,transform", TRANSFORMS, ids=[t[0] for t in TRANSFORMS])
def test_argument_type_errors_name_the_parameter_and_the_call(name, transform):
    msg = message(lambda: transform(_square)([1.0, 2.0]))  # the call
    assert "argument `x` of _square()" in msg and "np.asarray" in msg, msg


@pytest.mark.parametrize("name,transform", TRANSFORMS[:3], ids=[t[0] for t in TRANSFORMS[:3]])
def test_broadcast_errors_name_both_operands_and_their_sizes(name, transform):
    msg = message(lambda: transform(_sum_of)(np.ones(3), np.ones(4)))
    assert "`x` (rank 1) has size 3 and `y` (rank 1) size 4" in msg, msg
    assert f"test_error_style.py:{_sum_of.__code__.co_firstlineno + 1}:" in msg


def test_syntax_is_named_in_python_words_with_what_to_do():
    msg = message(lambda: zymase.jit(_formats)(1.0))
    assert "f-strings are not supported" in msg and "after the call" in msg
    msg = message(lambda: zymase.grad(_imports)(1.0))
    assert "`from ... import` statements" in msg and "top of the module" in msg


def test_compile_time_objects_are_described_not_printed():
    msg = message(lambda: zymase.jit(_method_plus)(np.ones(2)))
    assert "the method `sum` of an array of float64" in msg, msg


def test_hvp_says_the_vector_comes_last():
    msg = message(lambda: zymase.hvp(_square)(np.ones(1000), np.ones(2)))
    assert "the vector v, the last argument, has shape (2,)" in msg
    assert "argument `x` of _square() has shape (1000,)" in msg


def test_grad_of_a_string_argument_names_it():
    msg = message(lambda: zymase.grad(_square)("abc"))
    assert "argument `x`" in msg and "str 'abc'" in msg and "argnums" in msg


OTHER_ENTRY_POINTS = [
    ("jvp", lambda: zymase.jvp(_square, ([1.0, 2.0],), ([1.0, 1.0],))),
    ("vjp", lambda: zymase.vjp(_square, [1.0, 2.0])),
    ("autodiff", lambda: zymase.autodiff(zymase.Reverse, _square, zymase.Active([1.0, 2.0]))),
    ("tape_report", lambda: zymase.tape_report(_square, [1.0, 2.0])),
    ("explain", lambda: zymase.explain(_square, [1.0, 2.0], file=open(os.devnull, "w"))),
    ("vmap", lambda: zymase.vmap(_square)([1.0, 2.0])),
    ("vmap-grad", lambda: zymase.vmap(zymase.grad(_square))([1.0, 2.0])),
]


@pytest.mark.parametrize("name,call", OTHER_ENTRY_POINTS, ids=[c[0] for c in OTHER_ENTRY_POINTS])
def test_every_entry_point_names_the_parameter_at_the_call(name, call):
    msg = message(call)
    assert "argument `x` of _square()" in msg, msg
