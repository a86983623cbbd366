"""Comprehensions, generator expressions and loop ``else`` (frontend/desugar.py), and
``enumerate``/``zip`` of ranges and of each other: compiled code and the IR interpreter agree
with CPython, derivatives with finite differences (forward and reverse), and the places where a
comprehension cannot keep Python's order of evaluation are refused at the comprehension."""

import copy
import sys

import comprehension_programs as P
import numpy as np
import pytest
from autodiff.ad_check import check_grads

import zymase
from zymase.frontend.args import param_template
from zymase.frontend.module import ModuleLowerer
from zymase.ir import interp
from zymase.options import Options

A = np.array([0.3, 1.7, 2.9, -0.4])
B = np.array([1.0, 2.0, 3.0, 4.0])
POS = np.array([0.7, 1.2, 0.4])

CASES = [
    (P.sum_of_squares, (A,)),
    (P.neighbour_products, (A,)),
    (P.filtered_sines, (A,)),
    (P.dot_by_zip, (A, B[:3])),
    (P.extremes, (A,)),
    (P.any_all, (A,)),
    (P.any_all, (-A,)),
    (P.any_stops_early, (B,)),
    (P.all_stops_early, (B,)),
    (P.loop_over_comprehension, (A,)),
    (P.pairs, (A,)),
    (P.pairs, (A[:1],)),
    (P.reads_outer_name, (A,)),
    (P.does_not_leak, (A,)),
    (P.nested_sums, (A,)),
    (P.inner_shadows_outer, (A,)),
    (P.comprehension_in_branch, (A,)),
    (P.comprehension_in_branch, (-A,)),
    (P.assign_in_branch, (A,)),
    (P.assign_in_branch, (-A,)),
    (P.count_above, (A,)),
    (P.mean_of_list, (A,)),
    *([(P.python_order, (B,))] if sys.version_info < (3, 12) else []),
    (P.enumerate_zip, (A, B[:3])),
    (P.zip_with_ranges, (A,)),
    (P.enumerate_reversed, (np.arange(8.0),)),
    (P.comprehension_then_helper, (A,)),
    (P.for_else_not_found, (A,)),
    (P.for_else_not_found, (A * 10.0,)),
    (P.while_else, (A,)),
    (P.while_else, (A * 0.1,)),
    (P.nested_for_else, (A,)),
    (P.nested_for_else, (A * 0.1,)),
    (P.break_in_inner_else, (A,)),
    (P.break_in_inner_else, (POS * 0.1,)),
]
IDS = [f"{f.__name__}-{k}" for k, (f, _) in enumerate(CASES)]


@pytest.mark.parametrize("fn,args", CASES, ids=IDS)
def test_compiled_matches_cpython(fn, args):
    want = fn(*copy.deepcopy(args))
    a = copy.deepcopy(args)
    got = zymase.jit(fn)(*a)
    np.testing.assert_allclose(got, want, rtol=1e-14)
    b = copy.deepcopy(args)
    fn(*b)
    for x, y in zip(a, b):  # the same writes to the arguments
        np.testing.assert_equal(x, y)


@pytest.mark.parametrize("fn,args", CASES, ids=IDS)
def test_interpreter_matches_cpython(fn, args):
    want = fn(*copy.deepcopy(args))
    ml = ModuleLowerer(Options())
    f = ml.lower_entry(fn, [param_template(a, "arg") for a in args])
    got = interp.run(ml.module, f.sym_name, *copy.deepcopy(args))
    np.testing.assert_allclose(got[0] if isinstance(got, (tuple, list)) else got, want,
                               rtol=1e-14)


def test_sum_of_a_generator_adds_left_to_right():
    """``sum(genexp)`` adds left to right from 0 (a tree sum would keep the 1.0), as Python
    up to 3.11 does (3.12's sum compensates float rounding; the README says so)."""
    assert zymase.jit(P.python_order)(B) == 5.0
    if sys.version_info < (3, 12):
        assert P.python_order(B) == 5.0


def test_any_stops_at_the_first_deciding_element():
    """Past the end of ``a`` the generator would raise IndexError; Python never gets there."""
    assert zymase.jit(P.any_stops_early)(B) is not None
    with pytest.raises(IndexError):
        zymase.jit(P.any_stops_early)(-B)
    with pytest.raises(IndexError):
        P.any_stops_early(-B)


SMOOTH = [
    (P.sum_of_squares, (A,)),
    (P.neighbour_products, (A,)),
    (P.filtered_sines, (A,)),
    (P.dot_by_zip, (A, B[:3])),
    (P.extremes, (A,)),
    (P.loop_over_comprehension, (A,)),
    (P.pairs, (A,)),
    (P.reads_outer_name, (A,)),
    (P.nested_sums, (A,)),
    (P.comprehension_in_branch, (A,)),
    (P.mean_of_list, (A,)),
    (P.enumerate_zip, (A, B[:3])),
    (P.zip_with_ranges, (A,)),
    (P.enumerate_reversed, (np.arange(8.0),)),
    (P.while_else, (A,)),
    (P.nested_for_else, (A,)),
    (P.nested_for_else, (A * 0.1,)),
    (P.break_in_inner_else, (A,)),
    (P.break_in_inner_else, (POS * 0.1,)),
]


@pytest.mark.parametrize("fn,args", SMOOTH, ids=[f"{f.__name__}-{k}"
                                                 for k, (f, _) in enumerate(SMOOTH)])
def test_derivatives_match_finite_differences(fn, args):
    check_grads(fn, args)


def test_list_built_in_a_branch():
    """A list (not a sum) built on one branch: its buffers are the branch's, handed on as
    arrays the branch passes out (reverse mode refused them before)."""
    check_grads(P.assign_in_branch, (A,))
    check_grads(P.assign_in_branch, (-A,))


def test_gradient_of_a_comprehension_loss():
    a = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(zymase.grad(P.sum_of_squares)(a), 2 * a, rtol=1e-15)
    g_a, g_b = zymase.grad(P.dot_by_zip, argnums=(0, 1))(a, B[:3])
    np.testing.assert_allclose(g_a, B[:3], rtol=1e-15)
    np.testing.assert_allclose(g_b, a, rtol=1e-15)


REFUSED = [
    (P.after_writing_call, "generator expression is not supported here",
     "before the call to a function that may write arrays"),
    (P.in_while_test, "generator expression is not supported here", "`while` test"),
    (P.in_boolean_tail, "generator expression is not supported here", "`and`/`or`"),
    (P.generator_kept, "generator expression is supported as the argument of sum()", ""),
    (P.rows, "list comprehension's elements must be numbers", "np.empty"),
    (P.set_comprehension, "set comprehensions are not supported", ""),
]


@pytest.mark.parametrize("fn,msg,why", REFUSED, ids=[f.__name__ for f, _, _ in REFUSED])
def test_refusals_name_the_comprehension(fn, msg, why):
    with pytest.raises(zymase.UnsupportedError) as info:
        zymase.jit(fn)(A.copy())
    text = str(info.value)
    assert msg in text and why in text, text
    src = open(P.__file__).read().splitlines()
    start = next(k for k, line in enumerate(src) if line.startswith(f"def {fn.__name__}("))
    comp = next(k for k in range(start, len(src)) if " for " in src[k])
    col = src[comp].index(" for ")
    assert f"comprehension_programs.py:{comp + 1}:" in text, text
    # the column points at the comprehension (its opening bracket, before its `for`)
    reported = int(text.split(f"comprehension_programs.py:{comp + 1}:")[1].split(":")[0])
    assert reported <= col + 1, text


def test_hessian_through_a_generator():
    def f(a):
        return sum(a[i] * a[i] * a[i] for i in range(len(a)))

    a = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(zymase.hessian(f)(a), np.diag(6 * a), rtol=1e-14)
