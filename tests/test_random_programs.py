"""Random-program differential test.

``progen.py`` writes small random functions ``f(x, y, a, b, n)`` in the supported subset (loops,
branches, early returns, array reads and writes through views, helper calls).  Each one runs four
ways on copies of the same inputs: CPython, ``zymase.jit``, and the IR interpreter on the
frontend's IR and on the optimized IR of the specialization.  Results and the final contents of
the array arguments must agree.

A failure prints the program (hypothesis ``note``); ``-m slow`` runs 1500 programs, not 250.
The compiler bugs it found are regression tests at the end (an open one is a strict xfail that
``progen.AVOID`` steers the generator around).
"""

import functools
import importlib.util
import itertools
import os
import random
import tempfile
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import progen
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import zymase
from zymase.frontend.args import param_template
from zymase.frontend.module import ModuleLowerer
from zymase.ir import interp
from zymase.options import Options

RTOL, ATOL = 1e-9, 1e-12
_TMP = tempfile.TemporaryDirectory(prefix="zymase_progen_")
_SERIAL = itertools.count()


def load(source: str):
    """The module of ``source``, written to a fresh file (zymase reads functions' source)."""
    name = f"zymase_progen_{os.getpid()}_{next(_SERIAL)}"
    path = os.path.join(_TMP.name, name + ".py")
    with open(path, "w") as fh:
        fh.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@dataclass(frozen=True)
class Inputs:
    """Arguments of ``f``: scalars, array contents, and how ``a`` and ``b`` share memory."""

    x: float
    y: float
    a: tuple
    b: tuple
    n: int
    layout: str = "separate"  # see LAYOUTS

    def make(self) -> list:
        """Fresh arguments, so that every run starts from the same state."""
        a, b = np.array(self.a), np.array(self.b)
        if self.layout == "same":
            b = a
        elif self.layout == "reversed":
            b = a[::-1]
        elif self.layout == "overlap":  # b is a shifted by one element
            base = np.array(self.a + self.b[-1:])
            a, b = base[:-1], base[1:]
        elif self.layout == "strided":
            base = np.full(2 * len(a), 99.0)
            base[::2] = a
            a = base[::2]
        return [self.x, self.y, a, b, self.n]


# separate arrays, then b aliasing a (no noalias specialization), then a non-contiguous a
LAYOUTS = ("separate", "same", "reversed", "overlap", "strided")


def _close(got, want, msg: str) -> None:
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, equal_nan=True, err_msg=msg)


def assert_agree(got, got_args, want, want_args, returns: int, what: str) -> None:
    """Results and the final contents of a and b agree (NaN equals NaN)."""
    if returns == 2:
        assert isinstance(got, tuple) and len(got) == 2, f"{what} returned {got!r}"
    else:
        got, want = (got,), (want,)
    for k, (g, w) in enumerate(zip(got, want)):
        _close(np.float64(g), np.float64(w), f"{what}: result {k}")
    for name, g, w in zip("ab", got_args[2:4], want_args[2:4]):
        _close(g, w, f"{what}: final contents of `{name}`")


def check_program(source: str, make_args: Callable[[], list], returns: int = 1) -> None:
    check_function(load(source).f, make_args, returns)


def check_function(f, make_args: Callable[[], list], returns: int = 1) -> None:
    """CPython, zymase.jit and the interpreter (frontend IR, optimized IR) agree on ``f``, each
    run on fresh arguments from ``make_args()``."""
    want_args = make_args()
    with np.errstate(all="ignore"):  # array elements are NumPy scalars, which warn on inf/nan
        want = f(*want_args)

    jf = zymase.jit(f)
    got_args = make_args()
    assert_agree(jf(*got_args), got_args, want, want_args, returns, "zymase.jit")

    ml = ModuleLowerer(Options())
    func = ml.lower_entry(f, [param_template(a, "arg") for a in make_args()])
    got_args = make_args()
    got = interp.run(ml.module, func.sym_name, *got_args)
    assert_agree(got, got_args, want, want_args, returns, "interpreter on the frontend IR")

    spec = jf.specialization(*make_args())
    got_args = make_args()
    got = interp.run(spec.module, func.sym_name, *got_args)
    assert_agree(got, got_args, want, want_args, returns, "interpreter on the optimized IR")


# ---------------------------------------------------------------------- strategies
# Inputs come from a seeded random.Random rather than from hypothesis draws: hypothesis then
# spends its examples on programs (about 160 distinct ones in 200 examples, against 80 when it
# draws every number), and a failure still prints the inputs.
NICE = (0.0, 1.0, -1.0, 0.5, 2.0, -0.75, 3.0, 0.25)  # equal to each other and to constants
SPECIALS = (float("nan"), float("inf"), float("-inf"), -0.0, 1e300, -1e300, 5e-324)


def random_inputs(rng: random.Random, special: bool) -> Inputs:
    """Numbers in [-4, 4], a third of them NICE; with ``special``, a quarter of them SPECIALS."""

    def number():
        if special and rng.random() < 0.25:
            return rng.choice(SPECIALS)
        return rng.choice(NICE) if rng.random() < 0.3 else rng.uniform(-4.0, 4.0)

    size = rng.randint(3, 12)
    a, b = tuple(number() for _ in range(size)), tuple(number() for _ in range(size))
    layout = "separate" if rng.random() < 0.6 else rng.choice(LAYOUTS[1:])
    return Inputs(number(), number(), a, b, rng.randint(-2, progen.MAX_N), layout)


@functools.cache
def _below(k: int):
    return st.integers(0, k - 1)


@st.composite
def cases(draw) -> tuple[progen.Program, Inputs]:
    """A program, then inputs for it; in a quarter of the cases the inputs have special numbers
    (and the program avoids what ``progen.AVOID`` names, while any compiler bug is open)."""
    special = draw(st.integers(0, 3)) == 3
    prog = progen.program(lambda k: draw(_below(k)), nonfinite=special)
    return prog, random_inputs(random.Random(draw(st.integers(0, 2**32 - 1))), special)


def _differential(case: tuple[progen.Program, Inputs]) -> None:
    prog, args = case
    note(prog.source)
    note(repr(args))
    check_program(prog.source, args.make, prog.returns)


_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@settings(max_examples=100, derandomize=True, **_SETTINGS)
@given(cases())
def test_random_programs(case):
    _differential(case)


@pytest.mark.slow
@settings(max_examples=1500, **_SETTINGS)
@given(cases())
def test_random_programs_many(case):
    _differential(case)


# ---------------------------------------------------------------------- compiler bugs found
# Reproducers minimized from generated programs, with the inputs that showed the bug.  The fixed
# ones are plain regression tests; an open one is a strict xfail that progen.AVOID steers the
# generator around: when it starts passing, make it a regression test and drop its AVOID entry.


# Fixed in 91dae71: a conditional value (and/or, if-expression, comparison chain) lowered inside a
# branch of another one was written into a stale symbol table and lost.
def nested_if_expression(x, y, a, b, n):  # x=5, n=0: CPython 5.0, zymase 0.0
    return 1.0 if n > 0 else (x if n == 0 else 2.0)


def and_of_three(x, y, a, b, n):  # x=5, y=1, n=6: CPython 1.0, zymase 2.0
    if n > 0 and x > 0.0 and y > 0.0:
        return 1.0
    return 2.0


def if_expression_in_or(x, y, a, b, n):  # x=-1, y=1.5: CPython 2.0, zymase 1.0
    return 2.0 if x > 0.0 or (y if y > 0.0 else x) > 0.5 else 1.0


def comparison_chain_of_three(x, y, a, b, n):  # x=1, y=1.5, n=6: CPython 1.0, zymase 2.0
    return 1.0 if x < y < 2.0 < n else 2.0


def while_and_with_break(x, y, a, b, n):  # x=3.5, y=10: CPython 4.0, zymase 0.0
    s = 0.0
    k = 0
    while k < 5 and s < x:  # with a break in the body, the condition is lowered in a branch
        k += 1
        s += 1.0
        if s > y:
            break
    return s


# Fixed in 91dae71: a name bound to the same value by both branches of an if kept its old binding
# after the if (or none).
def same_assignment_on_both_branches(x, y, a, b, n):  # x=1.3, n=1: CPython 1.3, zymase 0.0
    t = 0.0
    if n > 0:
        t = x
    else:
        t = x
    return t


def same_swap_on_both_branches(x, y, a, b, n):  # CPython b[0] = 1.0, zymase a[0] = 0.0
    c = a.copy()
    d = b.copy()
    if n > 0:
        c, d = d, c
    else:
        c, d = d, c
    return c[0]


def same_return_in_loop(x, y, a, b, n):  # y=-1.5, n=1: CPython -1.5, zymase 0.0
    for i in range(3):
        if i > n:
            return y
        else:
            return y
    return x


def new_name_same_value(x, y, a, b, n):  # CPython 0.0, zymase UnsupportedError: `q` undefined
    p = 0.0
    if n > 0:
        q = p
    else:
        q = p
    return q


def same_return_of_if_else(x, y, a, b, n):  # x=1.3: CPython 1.3, zymase TypeError: Undef()
    if n > 0:
        return x
    else:
        return x


def if_expression_same_value(x, y, a, b, n):  # x=5: CPython 5.0, zymase KeyError: '$ifv'
    return x if n > 0 else x


# Fixed: zy.pymod now emits frem.
def mod_of_nan_product(x, y, a, b, n):  # x=inf: CPython nan; zymase gave 0.0 (instcombine folded
    # fmod(x * 0.0, 1.5) to 0), fixed by emitting frem
    return (x * 0.0) % 1.5


FIXED_BUGS = [  # function, (x, y, n); a = [0, 1, 2], b = [1, 2, 3]
    (nested_if_expression, (5.0, 0.0, 0)),
    (and_of_three, (5.0, 1.0, 6)),
    (if_expression_in_or, (-1.0, 1.5, 0)),
    (comparison_chain_of_three, (1.0, 1.5, 6)),
    (while_and_with_break, (3.5, 10.0, 0)),
    (same_assignment_on_both_branches, (1.3, -1.5, 1)),
    (same_swap_on_both_branches, (1.3, -1.5, 1)),
    (same_return_in_loop, (1.3, -1.5, 1)),
    (new_name_same_value, (1.3, -1.5, 1)),
    (same_return_of_if_else, (1.3, -1.5, 1)),
    (if_expression_same_value, (5.0, 0.0, 2)),
    (mod_of_nan_product, (float("inf"), 0.0, 0)),
]


def _run_reproducer(f, scalars):
    x, y, n = scalars
    check_function(f, Inputs(x, y, (0.0, 1.0, 2.0), (1.0, 2.0, 3.0), n).make)


@pytest.mark.parametrize("f, scalars", FIXED_BUGS, ids=[f.__name__ for f, _ in FIXED_BUGS])
def test_fixed_bug(f, scalars):
    _run_reproducer(f, scalars)
