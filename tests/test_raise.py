"""``raise E("message")`` in compiled code: the path ends with E (a ZymaseError subclass of E)
at the raise's line, the other paths run as in CPython, derivatives follow the paths that do not
raise, and the IR interpreter agrees."""

import math
import traceback

import numpy as np
import pytest

import zymase
from zymase.frontend.args import param_template
from zymase.frontend.module import ModuleLowerer
from zymase.ir import interp
from zymase.options import Options


def guard_first(x):
    if x < 0:
        raise ValueError("negative")
    return math.sqrt(x)


def guard_last(x):
    if x >= 0:
        return math.sqrt(x)
    raise ValueError(f"x must be >= 0, got {x}")


def in_loop(a):
    s = 0.0
    for i in range(a.shape[0]):
        if a[i] < 0:
            raise ValueError("negative entry")
        s += a[i] ** 2
    return s


def checked(n):
    if n < 1:
        raise TypeError("n must be positive")
    return n * 2.0


def calls_checked(x, n):
    return x * checked(n)


def singular(m):
    if m[0, 0] == 0.0:
        raise np.linalg.LinAlgError("Singular matrix")
    return m.sum()


def names_bound_on_the_raising_path(x):
    y = 2.0
    if x > 10:
        z = x * 3.0  # noqa: F841 (bound on the path that raises)
        raise RuntimeError("too big")
    elif x > 5:
        y = x
    else:
        y = -x
    return y * y


def in_while(a):
    out = np.zeros(3)
    k = 0
    while True:
        if k >= 3:
            break
        if a[k] > 100.0:
            raise OverflowError
        out[k] = a[k] * 2
        k += 1
    return out.sum()


def always(x):
    raise NotImplementedError("todo")


CASES = [
    (guard_first, (4.0,)), (guard_first, (-1.0,)), (guard_last, (9.0,)), (guard_last, (-2.5,)),
    (in_loop, (np.arange(3.0),)), (in_loop, (np.array([1.0, -1.0]),)),
    (calls_checked, (1.5, 2)), (calls_checked, (1.5, 0)), (singular, (np.eye(2),)),
    (singular, (np.zeros((2, 2)),)), (names_bound_on_the_raising_path, (3.0,)),
    (names_bound_on_the_raising_path, (7.0,)), (names_bound_on_the_raising_path, (11.0,)),
    (in_while, (np.arange(3.0),)), (in_while, (np.array([1.0, 200.0, 3.0]),)), (always, (1.0,)),
]


def cpython(fn, args):
    try:
        return None, fn(*[np.copy(a) if isinstance(a, np.ndarray) else a for a in args])
    except Exception as e:  # noqa: BLE001 (the kind is compared)
        return e, None


@pytest.mark.parametrize("fn,args", CASES, ids=[f"{f.__name__}-{k}"
                                                for k, (f, _) in enumerate(CASES)])
def test_compiled_raises_what_cpython_raises(fn, args):
    err, want = cpython(fn, args)
    if err is None:
        assert zymase.jit(fn)(*args) == want
        return
    with pytest.raises(type(err)) as info:
        zymase.jit(fn)(*args)
    assert isinstance(info.value, zymase.ZymaseError)
    msg = str(info.value)
    line = traceback.extract_tb(err.__traceback__)[-1].lineno  # where CPython raised
    assert f"test_raise.py:{line}:" in msg, msg
    if str(err) and "{" not in msg:
        assert str(err) in msg


@pytest.mark.parametrize("fn,args", CASES, ids=[f"{f.__name__}-{k}"
                                                for k, (f, _) in enumerate(CASES)])
def test_interpreter_agrees(fn, args):
    err, want = cpython(fn, args)
    ml = ModuleLowerer(Options())
    f = ml.lower_entry(fn, [param_template(a, "arg") for a in args])
    if err is None:
        got = interp.run(ml.module, f.sym_name, *args)
        assert (got[0] if isinstance(got, (tuple, list)) else got) == want
    else:
        with pytest.raises(type(err)):
            interp.run(ml.module, f.sym_name, *args)


def test_f_string_message_keeps_its_text():
    with pytest.raises(ValueError, match=r"x must be >= 0, got \{x\}"):
        zymase.jit(guard_last)(-1.0)


def test_derivatives_follow_the_paths_that_do_not_raise():
    assert zymase.grad(guard_first)(4.0) == pytest.approx(0.25, rel=1e-15)
    np.testing.assert_array_equal(zymase.grad(in_loop)(np.arange(3.0)), [0.0, 2.0, 4.0])
    assert zymase.grad(names_bound_on_the_raising_path)(7.0) == pytest.approx(14.0)
    assert zymase.jvp(guard_last, (9.0,), (1.0,))[1] == pytest.approx(1 / 6, rel=1e-15)
    with pytest.raises(ValueError, match="negative entry"):
        zymase.grad(in_loop)(np.array([1.0, -1.0]))


def reraise(x):
    raise


def custom_class(x):
    raise KeyError("k")


@pytest.mark.parametrize("fn,words", [(reraise, "bare `raise`"),
                                      (custom_class, "builtin exceptions can be raised")])
def test_refused_forms(fn, words):
    with pytest.raises(zymase.UnsupportedError, match=words):
        zymase.jit(fn)(1.0)


def only_valid_for_vectors(a):
    if a.ndim == 1:  # known when compiling: for a matrix only the raise is compiled
        return a[0]
    raise ValueError("need a 1-D array")


def unreachable_return(x):
    raise ValueError("always")
    return x  # noqa: F841 (never reached)


def named_message(x):
    m = "a named message"
    if x < 0:
        raise ValueError(m)
    return x


def test_every_path_raising_compiles_and_raises():
    """A function whose compiled paths all raise still has a `return` in its source: it raised
    an internal error (no value to return) before."""
    assert zymase.jit(only_valid_for_vectors)(np.array([2.0, 3.0])) == 2.0
    for fn, arg in ((only_valid_for_vectors, np.ones((2, 2))), (unreachable_return, 1.0)):
        with pytest.raises(ValueError) as info:
            zymase.jit(fn)(arg)
        assert isinstance(info.value, zymase.ZymaseError)
        with pytest.raises(ValueError):
            zymase.grad(fn)(arg)
    with pytest.raises(ValueError, match="a named message"):
        zymase.jit(named_message)(-1.0)


def same_shapes(a, b):
    if a.shape != b.shape:
        raise ValueError("shapes differ")
    return (a * b).sum()


def shape_tests(a):
    return a.shape == (3,), a.shape == (3, 1), (a.shape[0], 2) == (3, 2), (1, 2.0) != (1, 2)


def test_tuple_equality_for_input_checks():
    assert zymase.jit(same_shapes)(np.ones(3), np.full(3, 2.0)) == 6.0
    with pytest.raises(ValueError, match="shapes differ"):
        zymase.jit(same_shapes)(np.ones(3), np.ones(4))
    for n in (3, 4):
        assert zymase.jit(shape_tests)(np.ones(n)) == shape_tests(np.ones(n))
    np.testing.assert_array_equal(zymase.grad(same_shapes)(np.arange(3.0), np.ones(3)),
                                  np.ones(3))
