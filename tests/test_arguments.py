"""Arguments as users pass them: strings, None, enum members and functions held constant (one
specialization per value, like JAX's static arguments), 0-d arrays as NumPy scalars, float16
arrays computed in float32, byte-swapped arrays, ndarray subclasses, and parameter names in the
messages about them."""

import enum

import numpy as np
import pytest

import zymase
from zymase.driver.signature import same_everywhere, signature_key


def _mode(x, mode="sq"):
    if mode == "sq":
        return x * x
    if mode == "cube":
        return x * x * x
    return x


def test_string_arguments_are_constants_one_specialization_per_value():
    f = zymase.jit(_mode)
    for _ in range(3):  # (alternating: the fast entry of one value never serves another)
        assert f(3.0) == 9.0
        assert f(3.0, mode="cube") == 27.0
        assert f(3.0, "lin") == 3.0
        assert f(3.0, mode="sq") == 9.0
    assert zymase.grad(_mode)(3.0, mode="cube") == 27.0
    assert zymase.grad(_mode)(3.0) == 6.0
    assert zymase.value_and_grad(_mode)(2.0, "lin") == (2.0, 1.0)


def _weighted(x, w=None):
    if w is None:
        return (x * x).sum()
    return (w * x * x).sum()


def test_none_and_an_array_in_the_same_parameter():
    x, w = np.arange(3.0), np.array([1.0, 2.0, 3.0])
    f = zymase.jit(_weighted)
    assert f(x) == 5.0 and f(x, w) == 14.0 and f(x, None) == 5.0
    np.testing.assert_allclose(zymase.grad(_weighted)(x), 2 * x)
    np.testing.assert_allclose(zymase.grad(_weighted)(x, w), 2 * w * x)


class Kind(enum.Enum):
    LINEAR = 1
    QUADRATIC = 2


def _by_kind(x, kind):
    if kind == Kind.QUADRATIC:
        return x * x
    return 2.0 * x


def _apply(fn, x):
    return fn(x).sum()


def _user_square(v):
    return v * v


def test_enum_members_and_functions_are_constants():
    f = zymase.jit(_by_kind)
    assert f(3.0, Kind.QUADRATIC) == 9.0 and f(3.0, Kind.LINEAR) == 6.0
    assert zymase.grad(_by_kind)(3.0, Kind.QUADRATIC) == 6.0
    x = np.array([0.1, 0.2])
    g = zymase.jit(_apply)
    for fn in (np.sin, np.cos, _user_square, np.sin):
        assert g(fn, x) == pytest.approx(_apply(fn, x))
    np.testing.assert_allclose(zymase.grad(_apply, argnums=1)(np.sin, x), np.cos(x))


def test_constants_that_name_objects_stay_out_of_the_disk_cache():
    """A function or enum member's text does not say which object it was in another process:
    code specialized on one is not stored; strings are."""
    assert same_everywhere(signature_key(_mode, (1.0, "sq")))
    assert not same_everywhere(signature_key(_apply, (np.sin, np.ones(2))))
    assert not same_everywhere(signature_key(_by_kind, (1.0, Kind.LINEAR)))


def _affine(a, x):
    return a * x + 1.0


def test_zero_dimensional_arrays_are_numpy_scalars():
    a = np.array(2.0)
    got = zymase.jit(_affine)(a, np.array([1.0, 2.0]))
    np.testing.assert_array_equal(got, _affine(a, np.array([1.0, 2.0])))
    assert zymase.jit(_affine)(a, np.array(3.0)) == 7.0
    assert zymase.grad(_affine)(np.array(2.0), 3.0) == 3.0
    assert zymase.grad(_affine, argnums=1)(2.0, np.array(3.0)) == 2.0
    assert zymase.jit(_affine)(np.array(2, np.int32), 1.5) == _affine(np.int32(2), 1.5)


def _norm2(x):
    return (x * x).sum()


def _double_in_place(a):
    a *= 2.0
    return a.sum()


def test_float16_arrays_are_computed_in_float32():
    x = np.array([0.5, 1.5, -2.0], np.float16)
    got = zymase.jit(_norm2)(x)
    assert got == _norm2(x.astype(np.float32)) and np.asarray(got).dtype == np.float32
    np.testing.assert_array_equal(zymase.grad(_norm2)(x), 2 * x.astype(np.float32))
    assert zymase.jit(_affine)(np.float16(3.0), 2.0) == 7.0
    a = np.array([1.0, 2.5], np.float16)
    assert zymase.jit(_double_in_place)(a) == 7.0
    assert a.dtype == np.float16 and a.tolist() == [2.0, 5.0]  # the write reached the caller


def test_byte_swapped_arrays_are_read_and_written_in_place():
    x = np.arange(4.0).astype(">f8")
    assert zymase.jit(_norm2)(x) == 14.0
    np.testing.assert_array_equal(zymase.grad(_norm2)(x), 2 * np.arange(4.0))
    assert zymase.jit(_double_in_place)(x) == 12.0
    assert x.dtype == np.dtype(">f8") and x.tolist() == [0.0, 2.0, 4.0, 6.0]
    ro = np.arange(3.0).astype(">f8")
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        zymase.jit(_double_in_place)(ro)
    assert ro.tolist() == [0.0, 1.0, 2.0]


class Tagged(np.ndarray):
    """An ndarray subclass that adds a method and keeps ndarray's operators."""

    def describe(self):
        return "tagged"


def test_plain_subclasses_are_viewed_matrix_and_masked_arrays_refused():
    x = np.arange(3.0).view(Tagged)
    assert zymase.jit(_norm2)(x) == 5.0
    np.testing.assert_array_equal(zymase.grad(_norm2)(x), 2 * np.arange(3.0))
    with pytest.raises(zymase.ZymaseTypeError) as e:
        zymase.jit(_norm2)(np.ma.masked_array([1.0, 2.0], mask=[False, True]))
    msg = str(e.value)
    assert "argument `x` of _norm2()" in msg and "np.asarray(x)" in msg
    assert "test_arguments.py:" in msg


def test_an_unsupported_object_is_named_by_parameter_and_type():
    class Model:
        pass

    with pytest.raises(zymase.ZymaseTypeError) as e:
        zymase.jit(_affine)(Model(), 1.0)
    msg = str(e.value)
    assert "argument `a` of _affine()" in msg and "Model" in msg and " at 0x" not in msg
    assert "held constant" in msg or "constant" in msg
    with pytest.raises(zymase.ZymaseTypeError) as e:
        zymase.grad(_affine, argnums=1)(Model(), 1.0)
    assert "argument `a` of _affine()" in str(e.value) and "test_arguments.py:" in str(e.value)


def _add_into(a, b):
    a += b
    return a.sum()


def test_one_float16_array_passed_twice_stays_one_buffer():
    a = np.array([1.0, 2.0], np.float16)
    assert zymase.jit(_add_into)(a, a) == 6.0 and a.tolist() == [2.0, 4.0]
    b = np.arange(4.0, dtype=np.float16)
    with pytest.raises(zymase.ZymaseTypeError, match="overlaps"):
        zymase.jit(_add_into)(b[1:], b[:3])


def test_a_compiled_function_as_a_constant_argument():
    x = np.array([0.5, 1.0])
    assert zymase.jit(_apply)(zymase.jit(_user_square), x) == 1.25


def _by_name(x, mode):
    if mode in ("sq", "square") or mode.upper() == "SQUARE2":
        return x * x
    if mode == 3:  # (a string never equals a number: Python says False)
        return -x
    return x * len(mode)


def _membership(x, i):
    return x * 2.0 if i in (0, 3) else x


def test_strings_are_compared_and_their_methods_run_when_compiling():
    f = zymase.jit(_by_name)
    for mode in ("sq", "square", "square2", "abc"):
        assert f(3.0, mode) == _by_name(3.0, mode)
    assert zymase.grad(_by_name)(3.0, "sq") == 6.0
    g = zymase.jit(_membership)
    assert [g(1.0, i) for i in range(5)] == [_membership(1.0, i) for i in range(5)]


def _bad_index(x, s):
    return x * s.index("z")


def test_a_string_method_that_raises_raises_the_same_class():
    with pytest.raises(ValueError, match="substring not found") as e:
        zymase.jit(_bad_index)(1.0, "abc")
    assert "test_arguments.py:" in str(e.value)
