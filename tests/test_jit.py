"""zymase.jit on the Python and NumPy that numerical code uses: every program is run by CPython
and by the compiled code on copies of the same inputs; results (and mutated arguments) agree."""

import copy
import math

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
    (P.float_from_strings, (np.array([0.5, -2.0, 3.0]),)),
    (P.int_at_the_edges, (-2.0 ** 63,)),
    (P.numpy_bool_arithmetic, (np.array([1.0, -1.0, 2.0]), np.array([1.0, 1.0, -2.0]))),
    (P.numpy_scalar_details, (np.array([1.5, 0.15, -2.0, 0.0]),)),
    (P.list_of_arrays_by_index, ([np.arange(3.0), np.arange(4.0) + 1, np.ones(2)], 1)),
    (P.list_of_arrays_by_index, ((np.arange(3.0), np.ones(2)), -1)),
    (P.store_floats_in_int_arrays, (np.arange(3), np.arange(3, dtype=np.int32), 2.7)),
    (P.python_division, (7, 3)),
    (P.python_division, (7.5, -2.0)),
    (P.mutate_argument, (np.arange(5.0), 2.0)),
    (P.int_float_comparisons, (2**53 + 1, 2.0**53)),
    (P.int_float_comparisons, (2**53 - 1, 2.0**53)),
    (P.int_float_comparisons, (2**63 - 1, 2.0**63)),
    (P.int_float_comparisons, (-(2**63), -(2.0**63))),
    (P.int_float_comparisons, (-(2**53) - 1, -(2.0**53))),
    (P.int_float_comparisons, (3, 3.0)),
    (P.int_float_comparisons, (3, 3.5)),
    (P.int_float_comparisons, (3, float("nan"))),
    (P.int_float_comparisons, (10**18 + 1, 1e18)),
    (P.int_float_comparisons, (-5, float("-inf"))),
    (P.reversed_loops, (6, 1, 2, np.arange(5.0) ** 2, np.arange(6.0).reshape(3, 2))),
    (P.reversed_loops, (0, 5, -2, np.ones(1), np.ones((1, 3)))),
    (P.reversed_loops, (3, 9, -3, np.ones(0), np.ones((0, 2)))),
    # enumerate's start was ignored (the indices began at 0 whatever start was)
    (P.enumerate_and_zip, (np.arange(4.0) + 1, 5)),
    (P.enumerate_and_zip, (np.ones(1), -7)),
    (P.builtin_keywords, (1.23456, np.arange(4.0))),
    (P.python_max_min, (np.array([1.0, np.nan, 2.0]),)),
    (P.python_max_min, (np.array([np.nan, 1.0, 2.0]),)),
    (P.python_max_min, (np.array([3, 7, -1]),)),
    (P.sum_with_start, (np.array([1e16, 1.0, -1e16]), 10.0)),
    (P.sum_with_start, (np.arange(5), 2)),
    (P.divmod_and_newaxis, (np.arange(3.0), np.arange(4.0) * 0.5, -7)),
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


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's, in the CPython run
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


def _shared(kind):
    """Two 3-element arrays, fresh per call: one buffer seen twice, or two buffers."""
    y = np.zeros(3)
    return (y, y[:]) if kind == "shared" else (y, np.zeros(3))


CONTAINER_CASES = [
    (P.count_through_tuple, lambda a, b: ((a, b), 3)),
    (P.count_through_list, lambda a, b: ([a], b, 3)),
    (P.count_through_dict, lambda a, b: ({"a": a, "b": b}, 3)),
    (P.count_through_dataclass, lambda a, b: (P.TwoArrays(a, b), 3)),
]


@pytest.mark.parametrize("kind", ["shared", "apart"])
@pytest.mark.parametrize("fn,pack", CONTAINER_CASES, ids=[c[0].__name__ for c in CONTAINER_CASES])
def test_arrays_inside_containers_may_share_memory(fn, pack, kind):
    # the compiled code may assume its arrays apart only when no two of them share memory,
    # counting the arrays inside tuples, lists, dicts and dataclasses (they once did not count,
    # and LICM hoisted b[0] out of the loop: 0.0 instead of 6.0)
    want = fn(*pack(*_shared(kind)))
    assert want == (6.0 if kind == "shared" else 0.0)
    f = zymase.jit(fn)
    assert f(*pack(*_shared(kind))) == want
    assert f(*pack(*_shared(kind))) == want  # again, through what the first call compiled


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
    keys = [k for k in f._cache.compiled if k[0] in (("i",), ("b",))]
    assert len(keys) == 2 and all(len(f._cache.compiled[k]) == 1 for k in keys)


def test_fastmath_and_boundscheck_options():
    f = zymase.jit(P.continue_skip, fastmath=True, boundscheck=False)
    a = RNG.standard_normal(1000)
    np.testing.assert_allclose(f(a), P.continue_skip(a), rtol=1e-12)


def test_explain_shows_each_stage_with_locations(capsys):
    text = zymase.explain(P.negative_step, 9)
    for stage in ("frontend", "inline", "licm", "boundscheck", "lifetime"):
        assert f"after {stage}" in text
    assert "jit_programs.py" in text


# ---------------------------------------------------------------------- read-only arrays


def _writes_first(x):
    x[0] = 1.0
    return x[0]


def _writes_through_view(x):
    v = x[1:]
    v[0] = 5.0
    return 1.0


def _reads_two(x):
    return x[0] + x[1]


def test_read_only_arrays_are_refused_where_the_code_writes_them():
    """As NumPy raises "assignment destination is read-only": never a write into a bytes
    object, never a fault on a read-only mapping; reading them is fine."""
    import mmap
    import os
    import tempfile

    raw = bytes(16)
    a = np.frombuffer(raw, dtype=np.float64)
    for fn in (_writes_first, _writes_through_view):
        with pytest.raises(ValueError, match="read-only") as e:
            zymase.jit(fn)(a)
        assert "test_jit.py:" in str(e.value)
    assert raw == bytes(16)
    assert zymase.jit(_reads_two)(a) == 0.0
    np.testing.assert_array_equal(zymase.grad(_reads_two)(a), [1.0, 1.0])
    with pytest.raises(ValueError, match="read-only"):
        zymase.grad(_writes_first)(a)
    jf = zymase.jit(_writes_first)
    w = np.zeros(3)
    assert jf(w) == 1.0 and w[0] == 1.0  # the fast entry for writeable arrays is now current
    fd, path = tempfile.mkstemp()
    try:
        os.write(fd, bytes(4096))
        os.close(fd)
        with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as m:
            mapped = np.frombuffer(m, dtype=np.float64)
            with pytest.raises(ValueError, match="read-only"):
                jf(mapped)  # the fast entry checks the flag and hands over to the general path
            assert zymase.jit(_reads_two)(mapped) == 0.0
            del mapped
    finally:
        os.unlink(path)


def _zeros_last(n):
    a = np.zeros(n)
    a[n - 1] = 1.0
    return a


def _zeros_2d(n, m):
    a = np.zeros((n, m))
    a[n - 1, m - 1] = 2.0
    return a


def _empty_strided(n):
    a = np.empty(n)
    for i in range(0, n, n // 4):
        a[i] = 1.0
    return a[0]


@pytest.mark.parametrize("fn, args", [(_zeros_last, (2 ** 61 + 5,)),
                                      (_zeros_2d, (2 ** 32, 2 ** 32)),
                                      (_zeros_last, (2 ** 62,)), (_empty_strided, (2 ** 61,))])
def test_array_sizes_that_overflow_raise_memory_error(fn, args):
    """The byte count of an allocation is checked for overflow: 2**61 + 5 doubles once allocated
    40 bytes and were written past, and np.empty(2**61) segfaulted."""
    with pytest.raises(MemoryError) as e:
        zymase.jit(fn)(*args)
    assert "test_jit.py:" in str(e.value)
    small = [8 for _ in args]
    np.testing.assert_array_equal(zymase.jit(fn)(*small), fn(*small))


def _elementwise_sum(a, b):
    return np.sum(a * b)


def test_ndarray_subclasses_with_other_operators_are_refused(tmp_path):
    """np.matrix's * is a matrix product, a masked array skips masked entries: compiled with
    ndarray semantics they gave other numbers than CPython.  np.memmap behaves as ndarray."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        m = np.matrix([[1.0, 2.0], [3.0, 4.0]])
    masked = np.ma.masked_array([1.0, 2.0, 3.0], mask=[False, True, False])
    for a in (m, masked):
        with pytest.raises(zymase.ZymaseTypeError, match="subclass") as e:
            zymase.jit(_elementwise_sum)(a, a)
        assert "test_jit.py:" in str(e.value)
    mm = np.memmap(tmp_path / "a.bin", dtype=np.float64, mode="w+", shape=(3,))
    mm[:] = [1.0, 2.0, 3.0]
    assert zymase.jit(_elementwise_sum)(mm, mm) == 14.0


def complex64_functions(z):
    return np.exp(z) + np.sqrt(z) + z ** 0.5 + np.log(z) * np.sin(z[0])


def test_complex64_functions_keep_the_imaginary_part():
    # float complex goes to libm as one <2 x float> register on x86-64: passed as two floats,
    # the imaginary part was dropped (np.exp(1+2j) gave e+0j)
    z = np.array([1 + 2j, -1 + 0.5j, 0.3 - 2j], np.complex64)
    want = complex64_functions(z)
    got = zymase.jit(complex64_functions)(z)
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got, want, rtol=2e-6)


def test_broadcastable_in_place_writes_still_work():
    def f(a, b, c):
        a[1:3] = b  # (2,) <- (1,) broadcasts
        a += c  # (5,) += ()
        return a
    want = f(np.zeros(5), np.ones(1), np.float64(2.0))
    got = zymase.jit(f)(np.zeros(5), np.ones(1), np.float64(2.0))
    np.testing.assert_array_equal(got, want)


ROUND_CASES = [0.15, 0.25, 0.35, 0.45, 2.675, -0.05, 0.5, 2.5, -2.5, 1e300, float("inf"),
               float("nan"), -0.0, 1e-20, 6.6050699999999996, 4503599627370497.5 / 10,
               # exact halves at 1 and 2 digits, and the floats either side of them
               *(np.nextafter(h, d) for h in (0.125, 0.375, 1.25, 1.5e-3) for d in (-1, 1))]


@pytest.mark.parametrize("x", ROUND_CASES)
def test_round_with_ndigits_is_correctly_rounded(x):
    # Python rounds the exact value of x (0.15 is 0.1499... -> 0.1); x * 10 ** n in floats
    # lands on halves the exact product is not on
    want, got = P.round_digits(float(x)), zymase.jit(P.round_digits)(float(x))
    assert repr(got) == repr(want)


def test_list_of_arrays_by_index_gradient_and_range():
    def loss(arrs):
        s = 0.0
        for i in range(len(arrs)):
            s += (arrs[i] ** 2).sum() * (i + 1)
        return s
    arrs = [np.linspace(0.1, 1.0, 3), np.linspace(-1.0, 0.5, 4)]
    g = zymase.grad(loss)(arrs)
    for k, a in enumerate(arrs):
        np.testing.assert_allclose(g[k], 2.0 * (k + 1) * a, rtol=1e-13)
    with pytest.raises(IndexError):
        zymase.jit(P.list_of_arrays_by_index)([np.ones(2), np.ones(2)], 2)


def test_float32_sums_do_not_stall():
    """A float32 accumulator stops growing at 2**24 (adding 1.0 rounds back): sums and means of
    float32 arrays accumulate in float64, closer to the exact sum than NumPy's pairwise one."""
    def total(a):
        return a.sum(), np.mean(a), a.reshape(2, -1).sum(axis=1)

    a = np.ones(2**24 + 2**20, np.float32)
    s, m, rows = zymase.jit(total)(a)
    assert s == np.float32(2**24 + 2**20) == a.sum() and s.dtype == np.float32
    assert m == 1.0 and m.dtype == np.float32
    np.testing.assert_array_equal(rows, [2**23 + 2**19] * 2)
    r = np.random.default_rng(1).standard_normal(100_001).astype(np.float32)
    exact = math.fsum(r.astype(np.float64))
    got = zymase.jit(total)(np.concatenate([r, r[:1]]))[0]
    # the float64 accumulation errs far below a float32 ulp: it rounds as the exact sum does
    assert got == np.float32(math.fsum([exact, float(r[0])]))
    assert abs(float(got) - float(np.concatenate([r, r[:1]]).sum())) <= 4 * abs(np.spacing(got))


def _dict_and_tuple(d, t):
    return d["a"] * 2 + t[0] + t[1][0]


def test_containers_are_keyed_by_their_items():
    """A dict or tuple argument gets the specialization of its items' types (a float32 array
    after a float64 one, an int after a float, another key)."""
    f = zymase.jit(_dict_and_tuple)
    cases = [({"a": 1.5}, (1.0, np.ones(2))), ({"a": 3}, (1.0, np.ones(2))),
             ({"a": 1.5}, (2, np.ones(2, np.float32))), ({"a": 1.5}, (2, np.arange(2))),
             ({"a": np.float32(1.5)}, (True, np.ones(2)))]
    for d, t in cases:
        got, want = f(d, t), _dict_and_tuple(d, t)
        assert got == want and type(got) is type(want), (d, t, got, want)
    assert f({"a": 1.5, "b": "x"}, (1.0, np.ones(2))) == 5.0  # (a string is held constant)
    with pytest.raises(zymase.ZymaseError, match=r"argument `d` of _dict_and_tuple\(\)\['b'\]"):
        f({"a": 1.5, "b": {1, 2}}, (1.0, np.ones(2)))
