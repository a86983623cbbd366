"""Programs zymase must refuse, or that fail at run time: test_errors.py checks each message
names this file, the right line, and no zymase-internal path.  ``# ERR`` marks the line."""

import math

import numpy as np


def uses_generator(a):
    g = (x for x in a)  # ERR generator
    return sum(g)


def uses_try(x):
    try:  # ERR try
        return x
    except ValueError:
        return 0.0


def unsupported_numpy(a):
    return np.polyfit(a, a, 1)  # ERR polyfit


def calls_print(x):
    print((x, x))  # ERR print
    return x


def name_changes_kind(a, flag):
    y = a
    if flag:
        y = 1.0  # ERR kind
    return y


def returns_none_sometimes(x):  # ERR none
    if x > 0:
        return x


def shape_mismatch(a, b):
    return a + b  # ERR shape


def out_of_range(a, i):
    return a[i]  # ERR index


def python_zero_division(x, y):
    return x / y  # ERR zerodiv


def helper_fails(a):
    return a[10]  # ERR helper


def calls_failing_helper(a):
    return helper_fails(a) + 1.0


def truth_of_array(a):
    if a:  # ERR truth
        return 1.0
    return 0.0


def int_float_of_nan(x):
    return int(x)  # ERR nan


def undefined_name(x):
    return x + not_defined_anywhere  # ERR undefined  # noqa: F821


def assert_fails(x):
    assert x > 0, "x must be positive"  # ERR assert
    return x


TABLE = np.zeros(3)


def writes_global_array(x):
    TABLE[0] = TABLE[0] + x  # ERR global
    return TABLE[0]


def _bump(a, x):
    a[1] = x  # ERR global-helper  # the write, inlined from the helper


def writes_global_in_helper(x):
    _bump(TABLE, x)
    return TABLE[1]


def float_of_bad_string(x):
    return float("1.5e") + x  # ERR float-string


def int_of_huge_float(x):
    return int(x * 1e20)  # ERR int-overflow


def zero_to_negative_power(x, y):
    return x ** y  # ERR zero-power


def slice_assign_wrong_length(a, b):
    a[0:4] = b  # ERR slice-shape


def inplace_add_wrong_shape(a, b):
    a += b  # ERR inplace-shape


def negates_a_mask(a):
    return -(a > 0)  # ERR bool-negative


def pow_with_modulus(a, b):
    return pow(a, b, 7)  # ERR pow-mod


def returns_a_list(n):
    lst = []
    for i in range(n):
        lst.append(i * 0.5)
    return lst  # ERR list-return


def int_array_negative_power(a):
    return a ** -1  # ERR int-neg-power


def int_array_plus_float_in_place(a):
    a += 1.5  # ERR same-kind
    return a


def store_float_in_int_array(a, v):
    a[0] = v  # ERR int-store
    return a


def round_to_negative_digits(x):
    return round(x, -2)  # ERR round-digits


def dtype_of_python_float(x):
    return x.dtype  # ERR float-dtype


def compares_a_method(a):
    return a[0].shape_typo == 3  # ERR method-compare


def returns_a_method(a):
    return a.shape_typo  # ERR method-return


def log_base_one(x, base):
    return math.log(x, base)  # ERR log-base


def zip_strict_unequal(a, b):
    s = 0.0
    for u, v in zip(a, b, strict=True):  # ERR zip-strict
        s += u * v
    return s


def builtin_extra_argument(x):
    return abs(x, 2.0)  # ERR builtin-args


def builtin_unknown_keyword(a):
    return sum(a, begin=1.0)  # ERR builtin-keyword


def range_near_the_int64_limit(step):
    count = 0
    for _ in range(9223372036854775800, 9223372036854775807, step):  # ERR range-limit
        count += 1
    return count


def _adds_all(*xs):
    return xs[0]


def calls_varargs_helper(x):
    return _adds_all(x, 2.0)  # ERR varargs-helper


def max_along_empty_axis(a):
    return np.max(a, axis=0)  # ERR empty-axis


def writes_into_a_diagonal(m):
    d = np.diag(m)
    d[0] = 100.0  # ERR diag-write
    return m


def stores_a_big_int_into_int32(a):
    a[0] = 2**40  # ERR int32-store
    return a


def constant_int_past_64_bits(i):
    return i > 10**19  # ERR int-constant


def reversed_range_too_wide(a, b, c):
    k = 0
    for _ in reversed(range(a, b, c)):  # ERR range-span
        k += 1
    return k


def assigns_into_a_literal_list(x):
    lst = [1.0, 2.0, x]
    lst[0] = 5.0  # ERR literal-list
    return lst[0]
