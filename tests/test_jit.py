"""zymase.jit on the Python and NumPy that numerical code uses: every program is run by CPython
and by the compiled code on copies of the same inputs; results (and mutated arguments) agree."""

import copy

import jit_programs as P
import numpy as np
import pytest

import zymase

RNG = np.random.default_rng(0)
M = RNG.standard_normal((4, 3))

CASES = [
    (P.use_global, (1.0,)),
    (P.make_closure(3.0), (2.0,)),
    (P.use_dataclass, (P.Params(2.0, np.ones(3)),)),
    (P.use_namedtuple, (P.Pair(3.0, 1.0),)),
    (P.fact, (10,)),
    (P.fib, (15,)),
    (P.complex_scalar, (0.7,)),
    (P.complex_scalar, (-0.7,)),
    (P.complex_array, (np.linspace(0, 1, 5),)),
    (P.build_list, (40,)),
    (P.swap_buffers, (np.zeros(3), np.ones(3), 5)),
    (P.tuples, (1.5,)),
    (P.chained, (1, 2.0, 3)),
    (P.chained, (1, 5.0, 3)),
    (P.negative_step, (9,)),
    (P.while_break, (2.0,)),
    (P.int_becomes_float, (3,)),
    (P.float32_sum, (np.ones(3, np.float32),)),
    (P.early_return_nested, (np.array([[1.0, 2.0], [3.0, -1.0]]),)),
    (P.early_return_nested, (np.ones((2, 2)),)),
    (P.builtins_mix, (2.6, 1.2)),
    (P.continue_skip, (RNG.standard_normal(10),)),
    (P.views_and_writes, (np.arange(7.0),)),
    (P.two_d_views, (RNG.standard_normal((4, 4)),)),
    (P.elementwise, (RNG.standard_normal(6), RNG.standard_normal(6))),
    (P.elementwise, (RNG.standard_normal((2, 3)), RNG.standard_normal(3))),
    (P.reductions, (M,)),
    (P.matrix, (M, M.T.copy(), np.ones(3))),
    (P.math_functions, (1.3,)),
    (P.python_division, (7, 3)),
    (P.python_division, (7.5, -2.0)),
    (P.mutate_argument, (np.arange(5.0), 2.0)),
]


def _same(got, want):
    if want is None:
        assert got is None
        return
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    if isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray) and got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
        return
    assert type(got) is type(want) or (isinstance(got, float) and isinstance(want, float)), \
        (type(got), type(want))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("fn,args", CASES, ids=[f"{c[0].__name__}-{k}" for k, c in
                                                  enumerate(CASES)])
def test_matches_cpython(fn, args):
    want_args, got_args = copy.deepcopy(args), copy.deepcopy(args)
    want = fn(*want_args)
    got = zymase.jit(fn)(*got_args)
    _same(got, want)
    for g, w in zip(got_args, want_args):
        if isinstance(w, np.ndarray):
            np.testing.assert_array_equal(g, w)


def test_numba_functions_are_compiled_from_their_source():
    numba = pytest.importorskip("numba")

    @numba.njit
    def helper(x):
        return x * x + 1.0

    def caller(x):
        return helper(x) + 1.0

    assert zymase.jit(caller)(3.0) == 11.0
    assert zymase.jit(helper)(2.0) == 5.0


def test_returned_view_of_argument_shares_memory():
    def inner(a):
        return a[1:-1]

    a = np.arange(5.0)
    v = zymase.jit(inner)(a)
    v[0] = -1.0
    assert a[1] == -1.0


def test_one_specialization_per_signature():
    f = zymase.jit(P.int_becomes_float)
    assert f(3) == 1.5
    assert f(True) == 0.5
    assert len(f._specs) == 2


def test_fastmath_and_boundscheck_options():
    f = zymase.jit(P.continue_skip, fastmath=True, boundscheck=False)
    a = RNG.standard_normal(1000)
    np.testing.assert_allclose(f(a), P.continue_skip(a), rtol=1e-12)


def test_explain_shows_each_stage_with_locations(capsys):
    text = zymase.explain(P.negative_step, 9)
    for stage in ("frontend", "inline", "licm", "boundscheck", "lifetime"):
        assert f"after {stage}" in text
    assert "jit_programs.py" in text
