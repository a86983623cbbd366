"""Local variables bound on some paths only: where CPython raises UnboundLocalError, compiled
code raises it too (at the same line), and where every read is bound the results agree.

These programs used to read a zero placeholder instead: `bound_in_one_branch(-1.0)` returned
0.0, and worse, `last_positive` returned 0.0 for [1, -2, 3, -1] (a loop iteration that did not
assign `last` reset it), a silently wrong answer for correct code."""

import copy
import traceback

import numpy as np
import pytest
import unbound_programs as P

import zymase
from zymase.frontend.args import param_template
from zymase.frontend.module import ModuleLowerer
from zymase.ir import interp
from zymase.options import Options

CASES = [
    (P.loop_variable_after_loop, (0,)),
    (P.loop_variable_after_loop, (3,)),
    (P.bound_in_body, (np.ones(0),)),
    (P.bound_in_body, (np.ones(2),)),
    (P.bound_in_one_branch, (-1.0,)),
    (P.bound_in_one_branch, (1.0,)),
    (P.bound_in_else, (1.0,)),
    (P.bound_in_else, (-1.0,)),
    (P.while_body, (0,)),
    (P.while_body, (4,)),
    (P.last_positive, (-np.ones(3),)),
    (P.last_positive, (np.array([1.0, -2.0, 3.0, -1.0]),)),
    (P.break_before_bind, (np.ones(3), 0)),
    (P.break_before_bind, (np.arange(3.0), 2)),
    (P.inner_loop_zero_trips, (np.ones(3), 0)),
    (P.inner_loop_zero_trips, (np.ones(3), 2)),
    (P.return_or_bind, (-1.0,)),
    (P.return_or_bind, (1.0,)),
    (P.array_bound_in_branch, (np.ones(3), False)),
    (P.array_bound_in_branch, (np.ones(3), True)),
    (P.tuple_bound_in_branch, (-1.0,)),
    (P.tuple_bound_in_branch, (1.0,)),
    (P.augmented_unbound, (-1.0,)),
    (P.augmented_unbound, (1.0,)),
    (P.rebound_after_branch, (-1.0,)),
    (P.loss_with_branch_binding, (5.0, np.arange(4.0))),
    (P.loss_with_branch_binding, (1.0, np.arange(4.0))),
    (P.first_index_where, (np.array([0.5, 2.0, 3.0]), 1.0)),
    (P.first_index_where, (np.array([0.5, 0.2]), 1.0)),
]
IDS = [f"{f.__name__}-{k}" for k, (f, _) in enumerate(CASES)]


def cpython(fn, args):
    """('ok', value) or ('unbound', line) from running ``fn`` in CPython."""
    try:
        return "ok", fn(*copy.deepcopy(args))
    except UnboundLocalError as e:
        return "unbound", traceback.extract_tb(e.__traceback__)[-1].lineno


@pytest.mark.parametrize("fn,args", CASES, ids=IDS)
def test_compiled_matches_cpython(fn, args):
    kind, want = cpython(fn, args)
    compiled = zymase.jit(fn)
    if kind == "ok":
        np.testing.assert_equal(compiled(*copy.deepcopy(args)), want)
        return
    with pytest.raises(UnboundLocalError) as info:
        compiled(*copy.deepcopy(args))
    assert isinstance(info.value, zymase.ZymaseError)
    msg = str(info.value)
    assert f"unbound_programs.py:{want}:" in msg, msg
    assert "cannot access local variable" in msg and "^" in msg, msg


@pytest.mark.parametrize("fn,args", CASES, ids=IDS)
def test_interpreter_matches_cpython(fn, args):
    """The frontend's IR, run by the IR interpreter: the same answers (no LLVM involved)."""
    kind, want = cpython(fn, args)
    ml = ModuleLowerer(Options())
    f = ml.lower_entry(fn, [param_template(a, "arg") for a in args])
    if kind == "ok":
        got = interp.run(ml.module, f.sym_name, *copy.deepcopy(args))
        np.testing.assert_equal(got[0] if isinstance(got, (tuple, list)) else got, want)
        return
    with pytest.raises(UnboundLocalError, match="cannot access local variable"):
        interp.run(ml.module, f.sym_name, *copy.deepcopy(args))


def test_gradient_through_a_conditionally_bound_value():
    """The derivative follows the iteration that last bound ``m``, and raises like the primal
    where nothing did."""
    a = np.array([0.5, 3.0, 1.0, 2.5])
    x = 1.5
    gx, ga = zymase.grad(P.loss_with_branch_binding, argnums=(0, 1))(x, a)
    # the last a[i] > x is a[3]: f = (a[3] x)^2
    assert gx == pytest.approx(2 * a[3] ** 2 * x, rel=1e-14)
    np.testing.assert_allclose(ga, [0.0, 0.0, 0.0, 2 * a[3] * x ** 2], rtol=1e-14)
    with pytest.raises(UnboundLocalError):
        zymase.grad(P.loss_with_branch_binding, argnums=(0, 1))(5.0, a)


def test_last_match_in_loop_with_forward_and_reverse():
    a = np.array([1.0, -2.0, 3.0, -1.0])
    np.testing.assert_equal(zymase.grad(P.last_positive)(a), [0.0, 0.0, 1.0, 0.0])
    _, tangent = zymase.jvp(P.last_positive, (a,), (np.array([1.0, 2.0, 3.0, 4.0]),))
    assert tangent == 3.0


def test_read_before_any_assignment_in_a_loop_is_refused():
    """``last`` is read on later iterations only (CPython runs this); zymase cannot type it
    before its assignment and says so at the read, rather than reading a global or a zero."""
    with pytest.raises(zymase.UnsupportedError) as info:
        zymase.jit(P.read_bound_in_earlier_iteration)(np.arange(4.0))
    msg = str(info.value)
    line = next(k + 1 for k, text in enumerate(open(P.__file__).read().splitlines())
                if "s += a[i] * last" in text)
    assert f"unbound_programs.py:{line}:" in msg and "`last` is read here before" in msg, msg


SCALE = 2.0


def shadows_a_global(x):
    y = x * SCALE  # noqa: F823  (a local below: CPython raises UnboundLocalError here)
    SCALE = 3.0  # noqa: N806
    return y + SCALE


def test_local_shadowing_a_global_is_not_read_as_the_global():
    with pytest.raises(UnboundLocalError):
        shadows_a_global(1.0)
    with pytest.raises(zymase.UnsupportedError, match="`SCALE` is read here before"):
        zymase.jit(shadows_a_global)(1.0)


def final_ir(fn, *args) -> str:
    import io
    text = zymase.explain(fn, *args, stages=["lifetime"], file=io.StringIO())
    assert "after lifetime" in text
    return text


def test_always_bound_programs_carry_no_checks():
    """The corpus-style pattern (temporaries assigned in every iteration, accumulators bound
    before the loop) compiles without any run-time check; a name bound on one path has one."""
    assert "UnboundLocalError" not in final_ir(P.always_bound, np.arange(5.0))
    assert "UnboundLocalError" in final_ir(P.bound_in_one_branch, 1.0)
