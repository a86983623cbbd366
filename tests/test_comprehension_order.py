"""Comprehensions where running them before their statement would change what the program
computes are refused, and the NumPy/list details a second adversarial survey found
(np.array's dtype, mixed-type lists, np.round's range, isclose's rule, allclose's type)."""

import warnings

import numpy as np
import pytest

import zymase


def bump(a):
    a[0] += 1.0
    return a[0]


def read_then_writing_comprehension(a):
    return a[0] + sum(bump(a) for _ in range(2))


def read_then_writing_list(a):
    return a[0], sum([bump(a) for _ in range(1)])


def writing_comprehension_first(a):
    return sum(bump(a) for _ in range(2)) + a[0]


def generator_in_for(a):
    s = 0.0
    for i, v in enumerate(a[k] for k in range(3)):
        a[i + 1] += v
        s += v
    return s


def start_written(a):
    return sum((a[0] for _ in range(2)), bump(a))


def len_of_generator(a):
    return len(x for x in a)


def numpy_of_generator(a):
    return np.sum(x for x in a)


def assert_all(a):
    assert all(x < 10.0 for x in a), "too big"
    return a.sum()


def sum_of_rows(m):
    return sum(r for r in m)


@pytest.mark.parametrize("fn,words", [
    (read_then_writing_comprehension, "reads values before it"),
    (read_then_writing_list, "reads values before it"),
    (generator_in_for, "argument of sum(), max(), min(), any() and all()"),
    (start_written, "other arguments are evaluated before"),
    (len_of_generator, "use a list comprehension"),
    (numpy_of_generator, "use a list comprehension"),
    (sum_of_rows, "`sum(...) at line"),
])
def test_refused_where_order_or_meaning_would_change(fn, words):
    arg = np.array([[1.0, 2.0], [3.0, 4.0]]) if fn is sum_of_rows else np.array([0.3, 1.0, 2.0])
    with pytest.raises(zymase.ZymaseError) as info:
        zymase.jit(fn)(arg)
    assert words in str(info.value) and "test_comprehension_order.py:" in str(info.value)


def test_writing_comprehension_evaluated_first_is_fine():
    a = np.array([0.3, 1.0])
    assert zymase.jit(writing_comprehension_first)(a.copy()) == \
        pytest.approx(writing_comprehension_first(a.copy()), rel=1e-15)


def test_assert_test_holds_a_generator():
    assert zymase.jit(assert_all)(np.arange(3.0)) == 3.0
    with pytest.raises(AssertionError, match="too big"):
        zymase.jit(assert_all)(np.array([1.0, 20.0]))


def array_dtypes(a):
    lst = []
    for x in a:
        lst.append(x)
    return (np.array([1.0, 2.7], np.int64), np.array([1, 2], np.float32),
            np.array([x for x in a], dtype=np.float32), np.array([x for x in a], dtype=np.int64),
            np.array(lst, dtype=np.float32), np.copy(a, "C"), np.ascontiguousarray(a[::-1]))


def asarray_aliases(a):
    b = np.asarray(a)
    b[0] = 9.0
    c = np.array(a, copy=False)
    c[1] = 7.0
    d = np.array(a)
    d[2] = -1.0
    return a.copy()


def test_array_constructors_follow_numpy():
    a = np.array([1.7, -2.3, 0.5])
    for got, want in zip(zymase.jit(array_dtypes)(a.copy()), array_dtypes(a.copy())):
        assert got.dtype == want.dtype and np.array_equal(got, want)
    np.testing.assert_array_equal(zymase.jit(asarray_aliases)(a.copy()), asarray_aliases(a.copy()))


def float_into_int_list(a):
    lst = [k for k in range(3)]
    lst.append(a[0])
    return lst[3]


def append_to_literal(a):
    lst = [1.0]
    lst.append(a[0])
    return lst[1]


@pytest.mark.parametrize("fn,words", [(float_into_int_list, "holds int64 numbers"),
                                      (append_to_literal, "start with `[]` and append")])
def test_list_refusals(fn, words):
    with pytest.raises(zymase.UnsupportedError) as info:
        zymase.jit(fn)(np.array([0.7]))
    assert words in str(info.value)


def rounding_extremes(a):
    return np.round(a, 400), np.round(a, -400), np.round(a.astype(np.float32), 300)


def closeness(a):
    return np.isclose(a, a, rtol=-1.0), np.isclose(np.inf, a), np.allclose(a, a)


def test_rounding_and_closeness_edges():
    a = np.array([1.5, -2.25, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = rounding_extremes(a)
    for got, w in zip(zymase.jit(rounding_extremes)(a), want):
        assert got.dtype == w.dtype and np.array_equal(got, w, equal_nan=True)
    got, want = zymase.jit(closeness)(a), closeness(a)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    assert got[2] is True and want[2] is True
    with pytest.raises(zymase.UnsupportedError, match="booleans"):
        zymase.jit(lambda b: np.round(b))(np.array([True, False]))


def contiguous_of_slice(a):
    b = np.ascontiguousarray(a[1:3])
    b[0] = 100.0
    return a


def array_signatures(a, z):
    return np.array([]), np.array(z, dtype=bool), np.asarray(a, np.float32, "C")


def test_array_constructor_edges():
    with pytest.raises(zymase.UnsupportedError, match="ascontiguousarray"):
        zymase.jit(contiguous_of_slice)(np.arange(4.0))  # NumPy views it: the write reaches a
    a, z = np.arange(3.0), np.array([1 + 2j, 0j, 1j])
    for got, want in zip(zymase.jit(array_signatures)(a, z), array_signatures(a, z)):
        assert got.dtype == want.dtype and np.array_equal(got, want)
    with pytest.raises(TypeError, match="positional"):
        zymase.jit(lambda v: np.array(v, float, "C"))(a)
    with pytest.raises(zymase.UnsupportedError, match="`dtype`"):
        zymase.jit(lambda v: np.copy(v, dtype=np.float32))(a)
