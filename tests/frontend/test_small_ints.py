"""Integer dtypes beyond int64/int32: ``int8``, ``int16`` and ``uint8`` ... ``uint64`` (arrays,
scalars, results), NumPy 2's promotion among them and with Python numbers, the operators on
them (``//``, ``%``, comparisons, bitwise, shifts ``<<``/``>>``, ``~``), reductions, casts, and
unsigned index arrays, against NumPy; both native backends."""

import numpy as np
import pytest
from numpy_check import assert_same, check, copy_arg

import zymase
from zymase.errors import ZymaseError

SMALL = [np.int8, np.int16, np.uint8, np.uint16, np.uint32, np.uint64]


def _ops(a, b):
    return (a + b, a - b, a * b, a // np.maximum(b, 1), a % np.maximum(b, 1), a / np.maximum(b, 1),
            a < b, a >= b, a == b, a & b, a | b, a ^ b, ~a, a << 3, a >> 1, b >> 9, a + 1,
            a * 2.5, -a if a.dtype.kind == "i" else a, np.maximum(a, b), np.minimum(a, b),
            np.abs(a), np.sum(a), np.prod(b[:2]), a.max(), np.argmax(a), np.mean(a),
            np.cumsum(a), a.astype(np.float64), a.astype(np.int64), a.astype(np.uint8),
            a[1], a[1] + b[0], a[::-1] > 3)


def _values(dtype, seed):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    lo, hi = max(info.min, -1000), min(info.max, 1000)
    a = rng.integers(lo, hi, 9, endpoint=True).astype(dtype)
    a[:2] = [info.min, info.max]  # the ends: wraparound and unsigned comparisons
    return a


@pytest.mark.parametrize("dtype", SMALL, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("backend", ["cpu", "interp"])
def test_operators_against_numpy(dtype, backend):
    a, b = _values(dtype, 0), _values(dtype, 1)
    want = _ops(a.copy(), b.copy())
    got = zymase.jit(_ops, backend=backend)(a.copy(), b.copy())
    assert_same(got, want)


def _mixed(a, b, c, x):
    return a + b, a + c, b + c, a * x, a + 7, c - 3, a < c, b == x, a | 1, np.uint8(200) >> 3


@pytest.mark.parametrize("dtypes", [
    (np.uint8, np.int8, np.int16), (np.uint32, np.int32, np.int64), (np.uint64, np.int64, np.uint8),
    (np.uint16, np.int8, np.uint64)], ids=lambda ds: "-".join(np.dtype(d).name for d in ds))
def test_promotion_against_numpy(dtypes):
    a, b, c = (_values(d, k)[:4] for k, d in enumerate(dtypes))
    check(_mixed, a, b, c, 2.0)
    check(_mixed, a, b, c, np.float32(2.0))


def crc16(data, poly=0x8408):
    """CRC-16-CCITT of bytes, as checksum code writes it."""
    crc = 0xFFFF
    for b in data:
        cur_byte = 0xFF & b
        for _ in range(0, 8):
            if (crc & 0x0001) ^ (cur_byte & 0x0001):
                crc = (crc >> 1) ^ poly
            else:
                crc >>= 1
            cur_byte >>= 1
    crc = (~crc & 0xFFFF)
    crc = (crc << 8) | ((crc >> 8) & 0xFF)
    return crc & 0xFFFF


def test_checksum_loop():
    data = np.random.default_rng(3).integers(0, 256, 500).astype(np.uint8)
    check(crc16, data)
    check(crc16, data[:0])


def _scalars(x, y):
    return x + y, x * 3, x >> 1, y, -y


def test_numpy_scalars_in_and_out():
    check(_scalars, np.uint8(250), np.int16(-7))
    check(_scalars, np.uint64(2**64 - 2), np.uint64(1))


def spmv(row, col, val, x):
    """Sparse CSR matrix times vector with unsigned index arrays."""
    y = np.empty(row.size - 1, val.dtype)
    for i in range(row.size - 1):
        y[i] = val[row[i]:row[i + 1]] @ x[col[row[i]:row[i + 1]]]
    return y


def test_unsigned_index_arrays_and_gradient():
    row = np.array([0, 2, 3, 5], np.uint32)
    col = np.array([0, 2, 1, 0, 2], np.uint32)
    val = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    x = np.array([0.5, -1.0, 2.0])
    check(spmv, row, col, val, x)
    g = zymase.grad(lambda v, x: np.sum(spmv(row, col, v, x) ** 2), argnums=(0, 1))(val, x)
    y = spmv(row, col, val, x)
    dense = np.zeros((3, 3))
    for i in range(3):
        dense[i, col[row[i]:row[i + 1]]] = val[row[i]:row[i + 1]]
    np.testing.assert_allclose(g[1], 2 * dense.T @ y)


def _shift_counts(a, s):
    return a << s, a >> s


def test_shifts_past_the_width_and_negative_counts():
    a = np.array([1, -8, 2**40], np.int64)
    check(_shift_counts, a, np.array([63, 64, 70]))
    check(_shift_counts, a.astype(np.uint8), np.array([7, 8, 9], np.uint8))
    with pytest.raises(ValueError, match="negative shift count"):
        zymase.jit(_shift_counts)(a, np.array([1, -1, 0]))


def _float_shift(x):
    return x << 1


def test_shift_of_floats_is_refused_at_the_line():
    with pytest.raises(ZymaseError, match="needs integers") as e:
        zymase.jit(_float_shift)(1.5)
    assert "test_small_ints.py:" in str(e.value)


def test_copy_arg_keeps_dtype():  # (the comparison helpers keep small dtypes)
    assert copy_arg(np.ones(2, np.uint8)).dtype == np.uint8


def _compare_wide(a, n):
    return a < 300, a > -1, a == 256, a >= -5, a != n, a <= n, 300 > a, -1 < a


def test_comparisons_with_python_ints_outside_the_range():
    check(_compare_wide, np.array([0, 5, 255], np.uint8), 3)
    check(_compare_wide, np.array([0, 5, 2**64 - 1], np.uint64), -3)
    check(_compare_wide, np.array([-128, 5, 127], np.int8), 1000)


def _overflowing(a):
    return a + 300


def test_python_int_out_of_bounds_is_numpys_overflow_error():
    with pytest.raises(OverflowError, match="300 out of bounds for uint8") as e:
        zymase.jit(_overflowing)(np.zeros(2, np.uint8))
    assert "test_small_ints.py:" in str(e.value)
    check(_overflowing, np.zeros(2, np.uint16))
