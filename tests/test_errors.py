"""Every user error names the user's file:line:col with the source line and a caret, and never
a zymase-internal path."""

import os

import error_programs as E
import numpy as np
import pytest

import zymase

ZYMASE_DIR = os.path.dirname(os.path.abspath(zymase.__file__))
SOURCE = open(E.__file__).read().splitlines()


def line_of(tag: str) -> int:
    return next(k + 1 for k, text in enumerate(SOURCE) if text.rstrip().endswith(f"# ERR {tag}")
                or f"# ERR {tag}  #" in text)


def check(exc_info, tag, *fragments):
    msg = str(exc_info.value)
    assert f"error_programs.py:{line_of(tag)}:" in msg, msg
    assert ZYMASE_DIR not in msg, msg
    assert "^" in msg, msg
    for f in fragments:
        assert f in msg, msg


COMPILE_ERRORS = [
    (E.uses_generator, (np.ones(3),), "generator", zymase.UnsupportedError,
     "generator expression is supported as the argument of sum()"),
    (E.uses_try, (1.0,), "try", zymase.UnsupportedError, "`try` statements"),
    (E.unsupported_numpy, (np.ones(4),), "polyfit", zymase.UnsupportedError, "polyfit"),
    (E.calls_print, (1.0,), "print", zymase.UnsupportedError, "print"),
    (E.name_changes_kind, (np.ones(2), True), "kind", zymase.ZymaseTypeError, "`y`"),
    (E.returns_none_sometimes, (1.0,), "none", zymase.UnsupportedError, "None"),
    (E.truth_of_array, (np.ones(2),), "truth", zymase.ZymaseTypeError, "ambiguous"),
    (E.undefined_name, (1.0,), "undefined", zymase.UnsupportedError, "not_defined_anywhere"),
    (E.writes_global_array, (1.0,), "global", zymase.UnsupportedError, "read from a global"),
    (E.writes_global_in_helper, (1.0,), "global-helper", zymase.UnsupportedError,
     "read from a global"),
    (E.float_of_bad_string, (1.0,), "float-string", ValueError, "'1.5e'"),
    (E.negates_a_mask, (np.ones(2),), "bool-negative", TypeError, "np.logical_not"),
    (E.round_to_negative_digits, (1234.5,), "round-digits", zymase.UnsupportedError, "ndigits"),
    (E.dtype_of_python_float, (1.5,), "float-dtype", zymase.UnsupportedError, "dtype"),
    (E.compares_a_method, (np.ones(2),), "method-compare", zymase.UnsupportedError,
     "shape_typo"),
    (E.pow_with_modulus, (3, 5), "pow-mod", zymase.UnsupportedError, "modulus"),
    (E.int_array_plus_float_in_place, (np.arange(3),), "same-kind", TypeError, "same_kind"),
    (E.returns_a_list, (3,), "list-return", zymase.UnsupportedError, "np.array(lst)"),
    (E.returns_a_method, (np.ones(2),), "method-return", zymase.UnsupportedError, "shape_typo"),
    (E.builtin_extra_argument, (1.0,), "builtin-args", TypeError, "at most 1"),
    (E.builtin_unknown_keyword, (np.ones(2),), "builtin-keyword", TypeError, "'begin'"),
    # this was an internal TypeError naming zymase's own objects
    (E.calls_varargs_helper, (1.0,), "varargs-helper", zymase.UnsupportedError, "*args"),
    # NumPy returns a read-only view there; zymase's copy took the write silently
    (E.writes_into_a_diagonal, (np.ones((2, 2)),), "diag-write", zymase.UnsupportedError,
     "read-only view"),
    # 10**19 wrapped to a negative int64 and `i > 10**19` was True
    (E.constant_int_past_64_bits, (3,), "int-constant", zymase.UnsupportedError, "64 bits"),
    # the message called the list "a tuple of 3"
    (E.assigns_into_a_literal_list, (1.0,), "literal-list", zymase.UnsupportedError,
     "np.array([...])"),
]


@pytest.mark.parametrize("fn,args,tag,cls,fragment", COMPILE_ERRORS,
                         ids=[c[2] for c in COMPILE_ERRORS])
def test_compile_errors(fn, args, tag, cls, fragment):
    with pytest.raises(cls) as info:
        zymase.jit(fn)(*args)
    check(info, tag, fragment)


RUNTIME_ERRORS = [
    (E.shape_mismatch, (np.ones(3), np.ones(4)), "shape", ValueError, "broadcast"),
    (E.out_of_range, (np.ones(3), 3), "index", IndexError, "index 3 is out of bounds"),
    (E.out_of_range, (np.ones(3), -4), "index", IndexError, "index -4"),
    (E.python_zero_division, (1.0, 0.0), "zerodiv", ZeroDivisionError, "division by zero"),
    (E.calls_failing_helper, (np.ones(3),), "helper", IndexError, "a[10]"),
    (E.int_float_of_nan, (float("nan"),), "nan", ValueError, "NaN"),
    (E.int_of_huge_float, (1e3,), "int-overflow", OverflowError, "64-bit"),
    (E.int_of_huge_float, (float("inf"),), "int-overflow", OverflowError, "64-bit"),
    (E.zero_to_negative_power, (0.0, -2.0), "zero-power", ZeroDivisionError, "negative power"),
    (E.log_base_one, (100.0, 1.0), "log-base", ZeroDivisionError, "base 1"),
    (E.zip_strict_unequal, (np.ones(3), np.ones(2)), "zip-strict", ValueError, "lengths"),
    # the counter wrapped past 2**63 - 1 and the loop never ended (CPython runs 3 trips)
    (E.range_near_the_int64_limit, (3,), "range-limit", OverflowError, "64-bit integer limit"),
    # a zero-length axis: NumPy raises even when the result is empty (this returned [])
    (E.max_along_empty_axis, (np.zeros((0, 0)),), "empty-axis", ValueError, "empty sequence"),
    # NumPy raises for an int element that does not fit (this wrapped)
    (E.stores_a_big_int_into_int32, (np.zeros(2, np.int32),), "int32-store", OverflowError,
     "int32"),
    # the bounds' distance wrapped negative and the loop ran no times
    (E.reversed_range_too_wide, (-5 * 10**18, 5 * 10**18, 10**18), "range-span", OverflowError,
     "64 bits"),
    (E.int_array_negative_power, (np.array([3, 2]),), "int-neg-power", ValueError, "negative"),
    # storing a float into an int array element: NaN and out-of-range values raise, as in NumPy
    (E.store_float_in_int_array, (np.zeros(2, np.int64), float("nan")), "int-store", ValueError,
     "NaN"),
    (E.store_float_in_int_array, (np.zeros(2, np.int32), 3e9), "int-store", OverflowError,
     "32-bit"),
    # a value that does not broadcast into the array written (this read past the value's end)
    (E.slice_assign_wrong_length, (np.zeros(5), np.ones(2)), "slice-shape", ValueError,
     "broadcast"),
    (E.inplace_add_wrong_shape, (np.zeros(4), np.ones(2)), "inplace-shape", ValueError,
     "broadcast"),
    (E.inplace_add_wrong_shape, (np.zeros((2, 3)), np.ones((3, 2))), "inplace-shape", ValueError,
     "broadcast"),
    (E.assert_fails, (-1.0,), "assert", AssertionError, "x must be positive"),
]


@pytest.mark.parametrize("fn,args,tag,cls,fragment", RUNTIME_ERRORS,
                         ids=[f"{c[2]}-{k}" for k, c in enumerate(RUNTIME_ERRORS)])
def test_runtime_errors(fn, args, tag, cls, fragment):
    f = zymase.jit(fn)
    with pytest.raises(cls) as info:
        f(*args)
    assert isinstance(info.value, zymase.ZymaseError)
    check(info, tag, fragment)
    with pytest.raises(cls):  # the second call takes the fast path when there is one
        f(*args)


def test_wrong_argument_type_points_at_the_call():
    f = zymase.jit(E.out_of_range)
    with pytest.raises(zymase.ZymaseTypeError) as info:
        f([1.0, 2.0], 0)  # the call
    msg = str(info.value)
    assert "test_errors.py:" in msg and "np.asarray" in msg and ZYMASE_DIR not in msg
    assert "argument `a` of out_of_range()" in msg


def test_unsupported_dtype():
    with pytest.raises(zymase.ZymaseTypeError, match="dtype <U3") as info:
        zymase.jit(E.out_of_range)(np.array(["abc"]), 0)
    assert "argument `a` of out_of_range()" in str(info.value)


def test_errors_are_catchable_as_builtin_exceptions():
    with pytest.raises(IndexError):
        zymase.jit(E.out_of_range)(np.ones(2), 5)


class _Model:
    def energy(self, x):
        return x * 2.0


def test_bound_methods_are_refused_by_name():
    """Was "name `x` is not defined" (the method's self shifted the arguments)."""
    with pytest.raises(zymase.UnsupportedError, match="bound method _Model.energy") as e:
        zymase.jit(_Model().energy)(1.0)
    assert "test_errors.py:" in str(e.value) and ZYMASE_DIR not in str(e.value)
