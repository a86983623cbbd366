"""Mistakes and gaps newcomers met in the frontend, each against CPython running the same function:

* unpacking an array (or a row of one, or a list) into names checks the length, raising
  Python's ValueError (at run time, or when compiling where the length is known);
* ``...`` in indexing (reads, writes, augmented writes, with None and integers), derivatives
  against central differences;
* messages in the user's words, at the user's line: list repetition, list/tuple index out of
  range, lambdas, sorted/any/all/isinstance, chained comparisons of arrays, starred targets,
  missing attributes, shapes with floats;
* calls of other libraries' Python code (stdlib, installed packages) refused at the user's call,
  while the user's helpers, numba-style wrappers and packages written for zymase compile.
"""

import copy
import inspect
import itertools
import json
import os
import statistics
import sys
import textwrap

import numpy as np
import numpy.testing
import pytest
from numpy_check import central_differences, check

import zymase

try:
    import scipy.linalg
except ImportError:  # (SciPy is optional)
    scipy = None

HERE = "test_newcomer_frontend.py:"
INTERNAL = ("ifv", "$", "Tup", "TupList", "BoundMethod", "PyObj", "FVal", "Constant(",
            "Attribute(", "Subscript(", "Lambda(", "Starred(",
            " object at 0x", "call it, or return another attribute", "site-packages",
            os.path.dirname(zymase.__file__))


def line_of(fn, text: str) -> int:
    """The line number, in this file, of the first line of ``fn`` that holds ``text``."""
    lines, start = inspect.getsourcelines(fn)
    return start + next(k for k, s in enumerate(lines) if text in s)


def error_of(call, cls=zymase.ZymaseError):
    with pytest.raises(cls) as info:
        call()
    assert isinstance(info.value, zymase.ZymaseError), type(info.value)
    msg = str(info.value)
    for word in INTERNAL:
        assert word not in msg, (word, msg)
    return msg


def python_error(fn, *args):
    try:
        fn(*args)
    except Exception as e:  # (the exception CPython raises, to compare with)
        return e
    raise AssertionError("CPython raised nothing")


def assert_like_python(fn, args, where: str, transform=zymase.jit):
    """The compiled call raises what CPython raises (class and message) at the line holding
    ``where``."""
    want = python_error(fn, *args)
    msg = error_of(lambda: transform(fn)(*args), type(want))
    assert str(want) in msg, (str(want), msg)
    assert f"{HERE}{line_of(fn, where)}:" in msg, msg
    return msg


# ---------------------------------------------------------------------- 1. unpacking lengths


def unpack_pair(a):
    x, y = a
    return x + y * 10


def unpack_rows(A):
    s = 0.0
    for x, y in A:
        s += x * y
    return s


def unpack_row_arrays(A):
    s = 0.0
    for x, y in A:  # rows of a 3-D array: each of x, y is a 1-D array
        s += (x * y).sum()
    return s


def unpack_known_length():
    x, y = np.zeros(3)
    return x + y


def unpack_tuple(t):
    a, b = t
    return a + b


def unpack_list(n):
    lst = []
    for i in range(n):
        lst.append(i * 1.5)
    a, b = lst
    return a - b


def unpack_triple_sum(a):
    x, y, z = a
    return x * y + z * z


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_unpacking_an_array_checks_its_length(n):
    a = np.arange(1.0, n + 1.0)
    if n == 2:
        assert zymase.jit(unpack_pair)(a) == unpack_pair(a)
    else:
        msg = assert_like_python(unpack_pair, (a,), "x, y = a")
        assert "unpack" in msg


@pytest.mark.parametrize("cols", [1, 2, 3])
def test_unpacking_rows_of_a_2d_array_checks_their_length(cols):
    A = np.arange(2.0 * cols).reshape(2, cols)
    if cols == 2:
        assert zymase.jit(unpack_rows)(A) == unpack_rows(A)
    else:
        assert_like_python(unpack_rows, (A,), "for x, y in A")


def test_unpacking_rows_of_a_3d_array():
    good = np.arange(12.0).reshape(3, 2, 2)
    assert zymase.jit(unpack_row_arrays)(good) == unpack_row_arrays(good)
    assert_like_python(unpack_row_arrays, (np.arange(18.0).reshape(2, 3, 3),), "for x, y in A")


def test_unpacking_a_length_known_when_compiling():
    assert_like_python(unpack_known_length, (), "x, y = np.zeros(3)")
    assert_like_python(unpack_tuple, ((1.0, 2.0, 3.0),), "a, b = t")
    assert_like_python(unpack_tuple, ((1.0,),), "a, b = t")
    assert zymase.jit(unpack_tuple)((1.0, 2.0)) == 3.0


@pytest.mark.parametrize("n", [1, 2, 3])
def test_unpacking_a_list_built_by_append(n):
    if n == 2:
        assert zymase.jit(unpack_list)(n) == unpack_list(n)
    else:
        assert_like_python(unpack_list, (n,), "a, b = lst")


def test_unpacking_under_grad():
    a = np.array([0.5, -1.25, 2.0])
    g = zymase.grad(unpack_triple_sum)(a)
    np.testing.assert_allclose(g, central_differences(unpack_triple_sum, [a], 0), rtol=1e-7)
    A = np.array([[0.5, 1.5], [2.0, -3.0], [0.25, 4.0]])
    g = zymase.grad(unpack_rows)(A)
    np.testing.assert_allclose(g, central_differences(unpack_rows, [A], 0), rtol=1e-7)
    assert_like_python(unpack_pair, (np.ones(3),), "x, y = a", transform=zymase.grad)
    assert_like_python(unpack_rows, (np.ones((2, 3)),), "for x, y in A", transform=zymase.grad)
    assert_like_python(unpack_pair, (np.ones(1),), "x, y = a", transform=zymase.grad)


# ---------------------------------------------------------------------- 2. Ellipsis


def ellipsis_reads(t, m):
    return (t[..., 0], t[:, ...], t[..., 1:], t[0, ..., 1], t[...], t[1, 2, ...],
            t[..., None, 0], t[None, ..., ::-1], t[..., [0, 2]], m[...], m[..., -1],
            m[1, ...], t[1, ..., 2:0:-1])


def ellipsis_element(t):
    # (NumPy gives a 0-d array; compiled code the element it holds, which NumPy's arithmetic
    # on the 0-d array gives too)
    return t[..., 1, 2, 3] * 2.0 + t[0, ..., 1, 1] + t[1, 0, 2, ...]


def ellipsis_fill(t):
    t[...] = 3.0
    return t


def ellipsis_writes(t):
    t[..., 0] = 7.0
    t[1, ...] *= 2.0
    t[..., 1:] += t[..., :-1]
    t[0, ..., 2] = t[1, ..., 0]
    return t


def ellipsis_with_index_arrays(t):
    t[..., [0, 2]] = -1.0
    t[t > 10, ...] = 0.0
    m = t[:, :, 1] > -1.0
    return t[m, ...], t[..., [1, 1, 3]]


def ellipsis_in_a_name(t):
    idx = (Ellipsis, 1)
    return t[idx]


def ellipsis_loss(t):
    return (t[..., 1:] * t[..., :-1]).sum() + (t[0, ..., 1] ** 2).sum() + \
        (t[..., None, 2] * t[1, ...][None]).sum()


def ellipsis_write_loss(t):
    b = t * 1.0
    b[..., 0] = t[..., 1] * 2.0
    b[1, ...] += t[0, ...] ** 2
    return (b ** 2).sum()


def two_ellipses(t):
    return t[..., ...]


def too_many_beside_ellipsis(t):
    return t[1, 1, 1, 1, ...]


T = np.arange(24.0).reshape(2, 3, 4)


def test_ellipsis_reads_match_numpy():
    check(ellipsis_reads, T, np.arange(6.0).reshape(2, 3))
    check(ellipsis_element, T)


@pytest.mark.parametrize("fn", [ellipsis_fill, ellipsis_writes, ellipsis_in_a_name,
                                ellipsis_with_index_arrays])
def test_ellipsis_writes_match_numpy(fn):
    check(fn, T.copy())


@pytest.mark.parametrize("fn", [ellipsis_loss, ellipsis_write_loss])
def test_ellipsis_derivatives_against_central_differences(fn):
    t = np.random.default_rng(3).standard_normal((2, 3, 4))
    g = zymase.grad(fn)(t)
    np.testing.assert_allclose(g, central_differences(fn, [t], 0), rtol=1e-6, atol=1e-8)
    _, tangent = zymase.jvp(fn, (t,), (np.ones_like(t),))
    assert tangent == pytest.approx(g.sum(), rel=1e-10)


@pytest.mark.parametrize("fn,where", [(two_ellipses, "t[..., ...]"),
                                      (too_many_beside_ellipsis, "t[1, 1, 1, 1, ...]")])
def test_ellipsis_errors_are_numpys(fn, where):
    assert_like_python(fn, (T,), where)


# ---------------------------------------------------------------------- 3. messages


def repeats_a_list(n):
    y = [0.0] * n
    return y[0]


def comprehension_instead(n):
    y = [0.0 for _ in range(n)]
    y[1] = 2.0
    return y[1] + y[0]


def repeats_a_tuple(x):
    t = (x, 1.0) * 2
    return t[2] + t[3]


def list_index_out_of_range(a):
    return [a[0], a[1]][2]


def tuple_index_out_of_range(a):
    return (a[0], a[1])[-3]


def calls_a_lambda(x):
    return (lambda y: y * 2.0)(x)


double = lambda y: y * 2.0  # noqa: E731


def calls_a_module_lambda(x):
    return double(x)


def applies(f, x):
    return f(x) + 1.0


def sorts(a):
    return sorted(a)


def any_of_array(a):
    return any(a > 2)


def all_of_array(a):
    return all(a > 2)


def checks_type(x):
    return isinstance(x, float)


def chains_arrays(a):
    return 0 < a < 2


def chains_scalars(x, n):
    return 0 < x < n <= 10


def chains_number_and_array(x, a):
    return 0 < x < a


def conditional_types(a, c):
    return a if c > 0 else 1.0


def and_types(a, c):
    return c > 0 and a


def starred(t):
    a, *rest = t
    return a


def float_shape(x):
    return x.shape


def array_foo(a):
    return a.foo


def numpy_scalar_shape(a):
    return a[0].shape, a[0].ndim, a[0].size


def float_shape_tuple(n):
    return np.zeros((n, 2))


def test_list_repetition_says_what_to_write():
    msg = error_of(lambda: zymase.jit(repeats_a_list)(3), zymase.UnsupportedError)
    assert f"{HERE}{line_of(repeats_a_list, '[0.0] * n')}:" in msg
    assert "lists cannot be repeated with `*`" in msg and "np.zeros(n)" in msg and \
        "[0.0 for _ in range(n)]" in msg, msg
    assert zymase.jit(comprehension_instead)(4) == comprehension_instead(4)  # (what it says)
    assert zymase.jit(repeats_a_tuple)(2.5) == repeats_a_tuple(2.5)


@pytest.mark.parametrize("fn,where,words", [
    (list_index_out_of_range, "[2]", "list index out of range"),
    (tuple_index_out_of_range, "[-3]", "tuple index out of range")])
def test_index_out_of_range_names_list_or_tuple(fn, where, words):
    assert str(python_error(fn, np.ones(3))) == words
    msg = error_of(lambda: zymase.jit(fn)(np.ones(3)), IndexError)
    assert words in msg and f"{HERE}{line_of(fn, where)}:" in msg, msg


def test_lambda_message_says_what_works():
    msg = error_of(lambda: zymase.jit(calls_a_lambda)(1.0), zymase.UnsupportedError)
    assert f"{HERE}{line_of(calls_a_lambda, 'lambda y')}:" in msg
    assert "call it where it is defined" not in msg
    assert "module level" in msg and "pass the lambda in as an argument" in msg, msg
    # (what it says works)
    assert zymase.jit(calls_a_module_lambda)(1.5) == calls_a_module_lambda(1.5)
    assert zymase.jit(applies)(lambda y: y * 2.0, 1.5) == 4.0


@pytest.mark.parametrize("fn,arg,words", [
    (sorts, np.array([3.0, 1.0]), "np.sort"),
    (any_of_array, np.array([3.0, 1.0]), "np.any"),
    (all_of_array, np.array([3.0, 1.0]), "np.all"),
    (checks_type, 1.0, "isinstance() is not supported"),
])
def test_builtins_suggest_what_works(fn, arg, words):
    msg = error_of(lambda: zymase.jit(fn)(arg), zymase.UnsupportedError)
    assert words in msg and f"{HERE}{line_of(fn, 'return')}:" in msg, msg


def test_chained_comparison_of_an_array():
    a = np.array([0.5, 1.5, 2.5])
    want = python_error(chains_arrays, a)
    assert isinstance(want, ValueError) and "ambiguous" in str(want)
    msg = error_of(lambda: zymase.jit(chains_arrays)(a), ValueError)
    assert "ambiguous" in msg and "(0 < a) & (a < 2)" in msg, msg
    assert f"{HERE}{line_of(chains_arrays, '0 < a < 2')}:" in msg
    for args in ((1.0, 3), (5.0, 3), (1.0, 11), (-1.0, 3)):
        assert zymase.jit(chains_scalars)(*args) == chains_scalars(*args)


def test_chained_comparison_of_a_number_and_an_array():
    # (CPython gives False or an array, by the value of x: one type is needed here)
    msg = error_of(lambda: zymase.jit(chains_number_and_array)(1.0, np.ones(3)), TypeError)
    assert "the chained comparison `0 < x < a`" in msg and "(0 < x) & (x < a)" in msg, msg
    assert f"{HERE}{line_of(chains_number_and_array, '0 < x < a')}:" in msg


def test_conditional_expression_types_no_internal_name():
    msg = error_of(lambda: zymase.jit(conditional_types)(np.ones(2), 1.0), TypeError)
    assert "`... if ... else ...` expression" in msg and "an array of float64" in msg, msg
    msg = error_of(lambda: zymase.jit(and_types)(np.ones(2), 1.0), TypeError)
    assert "this `and` expression" in msg and "an array of float64" in msg, msg


def test_starred_targets_are_named():
    msg = error_of(lambda: zymase.jit(starred)((1.0, 2.0, 3.0)), zymase.UnsupportedError)
    assert "starred assignment targets" in msg and "cannot unpack" not in msg, msg
    assert f"{HERE}{line_of(starred, '*rest')}:" in msg


@pytest.mark.parametrize("fn,arg,words", [
    (float_shape, 1.5, "a Python float has no attribute `shape`"),
    (array_foo, np.ones(2), "an array of float64 (ndim=1) has no attribute `foo`"),
])
def test_missing_attributes(fn, arg, words):
    assert isinstance(python_error(fn, arg), AttributeError)
    msg = error_of(lambda: zymase.jit(fn)(arg), zymase.UnsupportedError)
    assert words in msg and f"{HERE}{line_of(fn, 'return')}:" in msg, msg


def test_numpy_scalars_have_a_shape():
    a = np.arange(3.0)
    assert zymase.jit(numpy_scalar_shape)(a) == numpy_scalar_shape(a)


def test_a_float_in_a_shape_is_named():
    msg = error_of(lambda: zymase.jit(float_shape_tuple)(2.0), TypeError)
    assert "a Python float" in msg and f"{HERE}{line_of(float_shape_tuple, 'np.zeros')}:" in msg


# ---------------------------------------------------------------------- 4. other libraries


def uses_statistics(a):
    return statistics.mean(a)


def uses_copy(a):
    return copy.copy(a)


def uses_numpy_testing(a):
    numpy.testing.assert_allclose(a, a)
    return a


def uses_os_path(a):
    return os.path.join("a", "b")


def uses_json(a):
    return json.dumps(1)


def uses_itertools(a):
    s = 0.0
    for i, j in itertools.product(range(2), range(2)):
        s += a[i] * a[j]
    return s


def uses_scipy(A, b):
    return scipy.linalg.solve(A, b)


def helper(x):
    return x * 2.0


class NumbaLike:
    """What numba.njit returns, as zymase sees it: the Python function as ``py_func``."""

    def __init__(self, fn):
        self.py_func = fn

    def __call__(self, *args):
        return self.py_func(*args)


jitted_helper = NumbaLike(helper)


def uses_helpers(x):
    return helper(x) + jitted_helper(x)


@pytest.mark.parametrize("fn,name,words", [
    (uses_statistics, "statistics.mean", "np.mean"),
    (uses_copy, "copy.copy", "np.copy"),
    (uses_numpy_testing, "numpy.testing.assert_allclose", "NumPy functions zymase compiles"),
    (uses_os_path, "os.path.join", "outside the compiled function"),
    (uses_json, "json.dumps", "outside the compiled function"),
    (uses_itertools, "itertools.product", "nested for loops"),
])
def test_other_libraries_are_refused_at_the_users_call(fn, name, words):
    a = np.array([1.0, 2.0])
    msg = error_of(lambda: zymase.jit(fn)(a), zymase.UnsupportedError)
    assert f"calling `{name}` is not supported" in msg and words in msg, msg
    assert msg.startswith(os.path.abspath(__file__)) or HERE in msg.splitlines()[0], msg
    assert f"{HERE}{line_of(fn, name + '(')}:" in msg, msg
    for lib in ("statistics.py", "copy.py", "utils.py", "json", "posixpath"):
        assert f"{lib}:" not in msg, msg


def test_scipy_is_refused_with_the_numpy_namesake():
    if scipy is None:
        pytest.skip("SciPy is not installed")
    msg = error_of(lambda: zymase.jit(uses_scipy)(np.eye(2), np.ones(2)),
                   zymase.UnsupportedError)
    assert "is not supported" in msg and "np.linalg.solve" in msg, msg
    assert f"{HERE}{line_of(uses_scipy, 'solve(')}:" in msg


def test_the_users_helpers_and_numba_style_wrappers_compile():
    assert zymase.jit(uses_helpers)(1.5) == uses_helpers(1.5)
    assert zymase.grad(uses_helpers)(1.5) == 4.0


def _package(root, name, text):
    pkg = root / "site-packages" / name
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(textwrap.dedent(text))


@pytest.fixture
def installed(tmp_path):
    """Two packages in a directory named site-packages: one plain, one that imports zymase."""
    _package(tmp_path, "zy_newcomer_plain", """
        def double(x):
            return x * 2.0


        def calls_double(x):
            return double(x) + 1.0
        """)
    _package(tmp_path, "zy_newcomer_forzy", """
        import zymase


        def triple(x):
            return x * 3.0
        """)
    sys.path.insert(0, str(tmp_path / "site-packages"))
    try:
        import zy_newcomer_forzy
        import zy_newcomer_plain
        yield zy_newcomer_plain, zy_newcomer_forzy
    finally:
        sys.path.remove(str(tmp_path / "site-packages"))
        for name in ("zy_newcomer_plain", "zy_newcomer_forzy"):
            sys.modules.pop(name, None)


def test_installed_packages(installed):
    plain, forzy = installed

    def calls_plain(x):
        return plain.double(x)

    def calls_forzy(x):
        return forzy.triple(x)

    msg = error_of(lambda: zymase.jit(calls_plain)(1.0), zymase.UnsupportedError)
    assert "calling `plain.double` is not supported" in msg, msg
    assert f"{HERE}{line_of(calls_plain, 'plain.double')}:" in msg
    msg = error_of(lambda: zymase.jit(applies)(plain.double, 1.0), zymase.UnsupportedError)
    assert "zy_newcomer_plain.double" in msg and f"{HERE}{line_of(applies, 'f(x)')}:" in msg
    # a package's own helpers, and a package written for zymase, compile
    assert zymase.jit(plain.calls_double)(1.0) == 3.0
    assert zymase.jit(calls_forzy)(1.0) == 3.0
