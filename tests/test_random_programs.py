"""Random-program differential test.

``progen.py`` writes small random functions ``f(x, y, a, b, n)`` in the supported subset (loops,
branches, early returns, array reads and writes through views, helper calls).  Each one runs four
ways on copies of the same inputs: CPython, ``zymase.jit``, and the IR interpreter on the
frontend's IR and on the optimized IR of the specialization.  Results and the final contents of
the array arguments must agree.

A failure prints the program (hypothesis ``note``); ``-m slow`` runs 1500 programs, not 200.
The known compiler bugs the generator steers around (``progen.AVOID``) have xfail reproducers at
the end.
"""

import functools
import importlib.util
import itertools
import os
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


def assert_agree(got, got_args, want, want_args, returns, what):
    if returns == 2:
        assert isinstance(got, tuple) and len(got) == 2, f"{what} returned {got!r}"
    else:
        got, want = (got,), (want,)
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(
            np.float64(g),
            np.float64(w),
            rtol=RTOL,
            atol=ATOL,
            equal_nan=True,
            err_msg=f"{what}: result {k}",
        )
    for name, g, w in zip("ab", got_args[2:4], want_args[2:4]):
        np.testing.assert_allclose(
            g,
            w,
            rtol=RTOL,
            atol=ATOL,
            equal_nan=True,
            err_msg=f"{what}: final contents of `{name}`",
        )


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
@functools.cache
def _below(k: int):
    return st.integers(0, k - 1)


@st.composite
def programs(draw) -> progen.Program:
    return progen.program(lambda k: draw(_below(k)))


_FLOATS = st.floats(-4.0, 4.0, allow_nan=False, allow_infinity=False)
# in a quarter of the inputs, about one number in eight is one of these
SPECIALS = (float("nan"), float("inf"), float("-inf"), -0.0, 1e300, -1e300, 5e-324)


@st.composite
def inputs(draw) -> Inputs:
    size = draw(st.integers(3, 12))
    special = draw(st.integers(0, 3)) == 3

    def number():
        if special and draw(st.integers(0, 7)) == 7:
            return draw(st.sampled_from(SPECIALS))
        return draw(_FLOATS)

    x, y = number(), number()
    a = tuple(number() for _ in range(size))
    b = tuple(number() for _ in range(size))
    n = draw(st.integers(-2, progen.MAX_N))
    layout = "separate" if draw(st.integers(0, 2)) else draw(st.sampled_from(LAYOUTS[1:]))
    return Inputs(x, y, a, b, n, layout)


def _differential(prog: progen.Program, args: Inputs) -> None:
    note(prog.source)
    note(repr(args))
    check_program(prog.source, args.make, prog.returns)


_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@settings(max_examples=200, derandomize=True, **_SETTINGS)
@given(programs(), inputs())
def test_random_programs(prog, args):
    _differential(prog, args)


@pytest.mark.slow
@settings(max_examples=1500, **_SETTINGS)
@given(programs(), inputs())
def test_random_programs_many(prog, args):
    _differential(prog, args)


# ---------------------------------------------------------------------- known compiler bugs
# Reproducers minimized from generated programs.  progen.AVOID steers the generator around them;
# when one of these starts passing (strict xfail fails), drop its entry from progen.AVOID.
_LOST_VALUE = (
    "frontend/lower.py lower_if_value: the branch lambda binds self.symtab.__setitem__ before "
    "fn() runs, so a conditional value (and/or, if-expression, comparison chain) lowered inside "
    "a branch of another one is written into a stale symbol table and lost "
    "(progen.AVOID 'nested_conditional')"
)
_SAME_VALUE = (
    "frontend/lower.py _merge_envs skips a name bound to the same value by both branches of an "
    "if (`vals[0] is vals[1]`), so after the if it keeps its old binding or none "
    "(progen.AVOID 'identical_branches')"
)


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


def _bug(f, scalars, reason: str, raises=None):
    mark = pytest.mark.xfail(strict=True, reason=reason, raises=raises)
    return pytest.param(f, scalars, id=f.__name__, marks=mark)


KNOWN_BUGS = [  # function, (x, y, n); a = [0, 1, 2], b = [1, 2, 3]
    _bug(nested_if_expression, (5.0, 0.0, 0), _LOST_VALUE),
    _bug(and_of_three, (5.0, 1.0, 6), _LOST_VALUE),
    _bug(if_expression_in_or, (-1.0, 1.5, 0), _LOST_VALUE),
    _bug(comparison_chain_of_three, (1.0, 1.5, 6), _LOST_VALUE),
    _bug(while_and_with_break, (3.5, 10.0, 0), _LOST_VALUE),
    _bug(same_assignment_on_both_branches, (1.3, -1.5, 1), _SAME_VALUE),
    _bug(same_swap_on_both_branches, (1.3, -1.5, 1), _SAME_VALUE),
    _bug(same_return_in_loop, (1.3, -1.5, 1), _SAME_VALUE),
    _bug(new_name_same_value, (1.3, -1.5, 1), _SAME_VALUE, raises=zymase.UnsupportedError),
    _bug(same_return_of_if_else, (1.3, -1.5, 1), _SAME_VALUE, raises=TypeError),
    _bug(if_expression_same_value, (5.0, 0.0, 2), _SAME_VALUE, raises=KeyError),
]


@pytest.mark.parametrize("f, scalars", KNOWN_BUGS)
def test_known_bug(f, scalars):
    x, y, n = scalars
    check_function(f, Inputs(x, y, (0.0, 1.0, 2.0), (1.0, 2.0, 3.0), n).make)
