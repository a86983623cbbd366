"""The NumPy interpreter (``zymase.ir.interp``) against plain Python and NumPy references."""

from __future__ import annotations

import math
import operator
import struct

import numpy as np
import pytest

from zymase.ir import OPS, ArrayType, Block, Builder, Func, Module, Region
from zymase.ir.interp import EXCEPTIONS, HANDLERS, TERMINATORS, run
from zymase.ir.ops import Condition, Sin
from zymase.ir.ops import rt as rt_ops
from zymase.ir.printer import Symbol
from zymase.ir.types import C64, C128, F32, F64, I1, I32, I64

try:
    from zymase.ir.verify import verify_module
except ImportError:  # the verifier is optional here: fall back to each op's own checks

    def verify_module(m: Module) -> None:
        for op in m.walk():
            getattr(op, "verify", lambda: None)()


A1 = ArrayType(F64, 1, "A")
A2 = ArrayType(F64, 2, "A")
C1 = ArrayType(F64, 1, "C")
C2 = ArrayType(F64, 2, "C")


# ---------------------------------------------------------------- building helpers


def module(*funcs: Func) -> Module:
    """A module of ``funcs``, checked by the verifier."""
    m = Module(list(funcs))
    verify_module(m)
    return m


def func(name, arg_types, body) -> Func:
    """A function whose body ``body(b, *args)`` builds and returns the returned values."""
    f = Func(name, arg_types, [])
    b = Builder.at_end(f.body)
    results = list(body(b, *f.args))
    f.attrs["result_types"] = [v.type for v in results]
    b.create("func.return", results, [])
    return f


def single(arg_types, body) -> Module:
    return module(func("f", arg_types, body))


def for_loop(b, lb, ub, step, inits, body):
    """``scf.for`` (int bounds become constants); ``body(b, iv, *carried)`` gives the next ones."""
    lb, ub, step = (b.i64(v) if isinstance(v, int) else v for v in (lb, ub, step))
    types = [v.type for v in inits]
    region = Region([Block([I64, *types])])
    loop = b.create("scf.for", [lb, ub, step, *inits], types, regions=[region])
    with b.at(loop.body):
        b.yield_(*body(b, *loop.body.args))
    return loop.results


def while_loop(b, inits, before, after):
    """``scf.while``: ``before(b, *args)`` gives (cond, fwd...), ``after(b, *fwd)`` the next."""
    types = [v.type for v in inits]
    regions = [Region([Block(types)]), Region([Block(types)])]
    op = b.create("scf.while", inits, types, regions=regions)
    with b.at(op.regions[0].block):
        b.yield_(*before(b, *op.regions[0].block.args), kind=Condition)
    with b.at(op.regions[1].block):
        b.yield_(*after(b, *op.regions[1].block.args))
    return op.results


def if_(b, cond, types, then, else_):
    op = b.create("scf.if", [cond], types, regions=[Region(), Region()])
    for region, fill in zip(op.regions, (then, else_)):
        with b.at(region.block):
            b.yield_(*fill(b))
    return op.results


def bits(x) -> bytes:
    return struct.pack("<d", float(x))


# ---------------------------------------------------------------- control flow


def test_taylor_series_matches_python():
    def body(b, x, n):
        def step(b, i, term, total):
            k = b.cast(b.op("arith.addi", i, b.i64(1)), F64)
            total = b.op("arith.addf", total, term)
            return b.op("arith.divf", b.op("arith.mulf", term, x), k), total

        return [for_loop(b, 0, n, 1, [b.f64(1.0), b.f64(0.0)], step)[1]]

    m = single([F64, I64], body)

    def reference(x, n):
        term, total = 1.0, 0.0
        for i in range(n):
            term, total = term * x / (i + 1), total + term
        return total

    for x in (0.0, 0.5, -1.25, 3.0):
        got = run(m, "f", x, 30)
        assert isinstance(got, np.float64)
        assert got == reference(x, 30)
        assert got == pytest.approx(math.exp(x), rel=1e-12)


@pytest.mark.parametrize("lb,ub,step", [(0, 10, 1), (10, 0, -3), (5, 5, 1), (0, 10, 4), (3, 0, 1)])
def test_for_ranges_follow_python(lb, ub, step):
    def body(b, lb, ub, st):
        def step_(b, i, acc, last):
            return b.op("arith.addi", b.op("arith.muli", acc, b.i64(10)), i), i

        return for_loop(b, lb, ub, st, [b.i64(0), b.i64(-1)], step_)

    m = single([I64, I64, I64], body)
    acc, last = 0, -1
    for i in range(lb, ub, step):
        acc, last = acc * 10 + i, i
    assert run(m, "f", lb, ub, step) == (acc, last)


def test_while_loop_collatz():
    def body(b, n):
        def before(b, n, steps):
            return b.op("arith.cmpi", n, b.i64(1), pred="ne"), n, steps

        def after(b, n, steps):
            odd = b.op("arith.cmpi", b.op("arith.modi", n, b.i64(2)), b.i64(1), pred="eq")
            up = b.op("arith.addi", b.op("arith.muli", n, b.i64(3)), b.i64(1))
            down = b.op("arith.floordivi", n, b.i64(2))
            return b.op("arith.select", odd, up, down), b.op("arith.addi", steps, b.i64(1))

        return [while_loop(b, [n, b.i64(0)], before, after)[1]]

    m = single([I64], body)

    def reference(n):
        steps = 0
        while n != 1:
            n, steps = (3 * n + 1 if n % 2 else n // 2), steps + 1
        return steps

    for n in (1, 2, 7, 27, 97):
        assert run(m, "f", n) == reference(n)


def test_nested_ifs():
    def body(b, x):
        neg = b.op("arith.cmpf", x, b.f64(0.0), pred="lt")

        def small(b):
            inner = b.op("arith.cmpf", x, b.f64(1.0), pred="lt")
            return if_(b, inner, [F64], lambda b: [b.f64(1.0)], lambda b: [b.op("math.sqrt", x)])

        return if_(b, neg, [F64], lambda b: [b.op("arith.negf", x)], small)

    m = single([F64], body)
    for x in (-2.5, 0.25, 9.0, 1.0):
        assert run(m, "f", x) == (-x if x < 0 else 1.0 if x < 1 else math.sqrt(x))


def test_call_and_recursive_factorial():
    def fact(b, n):
        small = b.op("arith.cmpi", n, b.i64(1), pred="le")

        def recurse(b):
            sub = b.create(
                "func.call", [b.op("arith.subi", n, b.i64(1))], [I64], {"callee": Symbol("fact")}
            ).result
            return [b.op("arith.muli", n, sub)]

        return if_(b, small, [I64], lambda b: [b.i64(1)], recurse)

    def main(b, n):
        return b.create("func.call", [n], [I64], {"callee": Symbol("fact")}).results

    m = module(func("fact", [I64], fact), func("main", [I64], main))
    for n in (0, 1, 5, 20):
        assert run(m, "main", n) == math.factorial(n)
    # 21! wraps at 64 bits exactly as compiled code does
    assert run(m, "main", 21) == (math.factorial(21) + 2**63) % 2**64 - 2**63


def test_results_none_and_tuple():
    m = module(
        func("none", [F64], lambda b, x: []),
        func("two", [F64], lambda b, x: [x, b.i64(3)]),
    )
    assert run(m, "none", 1.0) is None
    assert run(m, "two", 1.5) == (1.5, 3)
    with pytest.raises(TypeError):
        run(m, "two")


def test_unknown_op_is_named(monkeypatch):
    monkeypatch.delitem(HANDLERS, Sin)
    m = single([F64], lambda b, x: [b.op("math.sin", x)])
    with pytest.raises(NotImplementedError, match="math.sin"):
        run(m, "f", 1.0)


def test_every_registered_op_has_a_rule():
    missing = [c.name for c in OPS.values()
               if c not in HANDLERS and c not in TERMINATORS and c is not Func]
    assert missing == []
    assert set(rt_ops.EXCEPTIONS) <= set(EXCEPTIONS)


# ---------------------------------------------------------------- arrays


def test_store_through_negative_step_subview_reaches_caller():
    def body(b, a):
        n = b.op("array.dim", a, axis=0)
        # a[n-1::-1]: offset n-1, size n, step -1
        last = b.op("arith.subi", n, b.i64(1))
        rev = b.op("array.subview", a, last, n, b.i64(-1), keep=[True], type=A1)

        def step(b, i):
            b.create("array.store", [b.cast(i, F64), rev, i], [])
            return []

        for_loop(b, 0, n, 1, [], step)
        return [b.op("array.stride", rev, axis=0)]

    m = single([C1], body)
    a = np.zeros(5)
    assert run(m, "f", a) == -1
    np.testing.assert_array_equal(a, [4.0, 3.0, 2.0, 1.0, 0.0])


def test_subview_drops_a_dim_and_steps_backward_in_2d():
    def body(b, a):
        # a[1, 4:0:-2] = a row with its columns 4 and 2
        row = b.op(
            "array.subview", a, b.i64(1), b.i64(4), b.i64(2), b.i64(-2), keep=[False, True], type=A1
        )
        b.create("array.store", [b.f64(-7.0), row, b.i64(1)], [])
        return [b.op("array.load", row, b.i64(0)), b.op("array.stride", row, axis=0)]

    m = single([C2], body)
    a = np.arange(15.0).reshape(3, 5)
    expected = a.copy()
    expected[1, 4:0:-2][1] = -7.0
    assert run(m, "f", a) == (9.0, -2)
    np.testing.assert_array_equal(a, expected)


def test_empty_subview():
    def body(b, a):
        v = b.op("array.subview", a, b.i64(3), b.i64(0), b.i64(1), keep=[True], type=A1)
        return [b.op("array.dim", v, axis=0)]

    assert run(single([C1], body), "f", np.zeros(3)) == 0


def test_broadcast_views_with_zero_strides():
    def body(b, v):
        d0, d1 = b.i64(4), b.op("array.dim", v, axis=0)
        w = b.create("array.broadcast", [v, d0, d1], [A2]).result

        def outer(b, i, acc):
            def inner(b, j, acc):
                x = b.op("array.load", w, i, j)
                return [b.op("arith.addf", acc, b.op("arith.mulf", x, b.cast(i, F64)))]

            return for_loop(b, 0, d1, 1, [acc], inner)

        total = for_loop(b, 0, d0, 1, [b.f64(0.0)], outer)[0]
        return [total, b.op("array.stride", w, axis=0), b.op("array.stride", w, axis=1)]

    m = single([C1], body)
    v = np.array([1.0, 2.0, 3.5])
    ref = (np.broadcast_to(v, (4, 3)) * np.arange(4.0)[:, None]).sum()
    assert run(m, "f", v) == (ref, 0, 1)


def test_broadcast_size_one_dim():
    def body(b, a):
        w = b.create("array.broadcast", [a, b.i64(2), b.i64(3)], [A2]).result
        return [b.op("array.load", w, b.i64(1), b.i64(2)), b.op("array.stride", w, axis=1)]

    m = single([C2], body)
    assert run(m, "f", np.array([[1.0, 2.0, 3.0]])) == (3.0, 1)
    assert run(m, "f", np.array([[5.0], [6.0]])) == (6.0, 0)


def test_transpose_is_a_view():
    def body(b, a):
        t = b.op("array.transpose", a, perm=[1, 0])
        b.create("array.store", [b.f64(100.0), t, b.i64(2), b.i64(0)], [])
        s0, s1 = (b.op("array.stride", t, axis=k) for k in (0, 1))
        return [b.op("array.load", t, b.i64(1), b.i64(0)), b.op("array.dim", t, axis=0), s0, s1]

    m = single([C2], body)
    a = np.arange(6.0).reshape(2, 3)
    assert run(m, "f", a) == (1.0, 3, 1, 3)
    assert a[0, 2] == 100.0


def test_alloc_const_and_matmul():
    data = np.array([[1.0, 2.0], [3.0, 4.0]])

    def body(b, x):
        k = b.create("array.const", [], [C2], {"data": data}).result
        out = b.op("array.alloc", b.i64(2), init="none", type=C1)
        b.create("linalg.matmul", [k, x, out], [])
        scratch = b.op("array.alloc", b.i64(3), b.i64(2), init="zero", type=C2)
        b.create("array.free", [scratch], [])
        return [out, b.op("array.load", k, b.i64(1), b.i64(0))]

    m = single([C1], body)
    out, k10 = run(m, "f", np.array([1.0, -1.0]))
    np.testing.assert_array_equal(out, data @ [1.0, -1.0])
    assert k10 == 3.0


def test_array_argument_checks():
    m = single([C1], lambda b, a: [])
    with pytest.raises(TypeError, match="argument 0"):
        run(m, "f", np.zeros(3, np.float32))
    with pytest.raises(TypeError, match="C-contiguous"):
        run(m, "f", np.zeros(6)[::2])
    with pytest.raises(TypeError, match="expected a scalar"):
        run(single([F64], lambda b, x: [x]), "f", np.zeros(2))


# ---------------------------------------------------------------- scalar semantics

FLOATS = [0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 7.0, -7.0, 0.1, 1e300, -1e-300, 3.75, math.inf,
          -math.inf, math.nan]  # fmt: skip


def binary_module(name, t, **attrs):
    return single([t, t], lambda b, x, y: [b.op(name, x, y, **attrs)])


@pytest.mark.parametrize(
    "name,py", [("arith.modf", float.__mod__), ("arith.floordivf", float.__floordiv__)]
)
def test_float_mod_and_floordiv_match_cpython(name, py):
    m = binary_module(name, F64)
    for x in FLOATS:
        for y in FLOATS:
            if y == 0:
                continue
            got, want = run(m, "f", x, y), py(x, y)
            assert (math.isnan(got) and math.isnan(want)) or bits(got) == bits(want), (x, y)


def test_float_mod_and_floordiv_random_operands():
    rng = np.random.default_rng(0)
    xs = rng.standard_normal(300) * 10.0 ** rng.integers(-8, 9, 300)
    ys = rng.standard_normal(300) * 10.0 ** rng.integers(-8, 9, 300)
    mod, div = binary_module("arith.modf", F64), binary_module("arith.floordivf", F64)
    for x, y in zip(xs.tolist(), ys.tolist()):
        assert bits(run(mod, "f", x, y)) == bits(x % y), (x, y)
        assert bits(run(div, "f", x, y)) == bits(x // y), (x, y)


def test_float_mod_and_floordiv_by_zero_are_numpys():
    """As in the LLVM backend: the frontend asserts before the op where Python would raise, and
    what is left follows NumPy: x % 0.0 is NaN, x // 0.0 is x / 0.0 (inf, -inf or NaN)."""
    assert np.isnan(run(binary_module("arith.modf", F64), "f", 1.0, -0.0))
    div = binary_module("arith.floordivf", F64)
    assert run(div, "f", 1.0, 0.0) == np.inf and run(div, "f", -1.0, 0.0) == -np.inf
    assert run(div, "f", 1.0, -0.0) == -np.inf and np.isnan(run(div, "f", 0.0, 0.0))


def test_float32_mod_stays_float32():
    got = run(binary_module("arith.modf", F32), "f", -7.5, 2.0)
    assert isinstance(got, np.float32) and got == (-7.5) % 2.0


def test_ieee_division_never_raises():
    m = binary_module("arith.divf", F64)
    assert run(m, "f", 1.0, 0.0) == math.inf
    assert run(m, "f", -1.0, 0.0) == -math.inf
    assert math.isnan(run(m, "f", 0.0, 0.0))


@pytest.mark.parametrize("x", [7, -7, 0, 13, -13, 2**62])
@pytest.mark.parametrize("y", [2, -2, 3, -3, 1, -1])
def test_int_floordiv_and_mod_follow_python(x, y):
    assert run(binary_module("arith.floordivi", I64), "f", x, y) == x // y
    assert run(binary_module("arith.modi", I64), "f", x, y) == x % y


def test_int_division_by_zero_raises():
    for name in ("arith.floordivi", "arith.modi"):
        with pytest.raises(ZeroDivisionError, match="integer division or modulo by zero"):
            run(binary_module(name, I64), "f", 5, 0)


def wrap(x: int, width: int) -> int:
    return (x + 2 ** (width - 1)) % 2**width - 2 ** (width - 1)


@pytest.mark.parametrize("t,width", [(I64, 64), (I32, 32)])
def test_int_arithmetic_wraps(t, width):
    big = 2 ** (width - 1) - 1
    assert run(binary_module("arith.addi", t), "f", big, 1) == wrap(big + 1, width)
    assert run(binary_module("arith.muli", t), "f", big, 3) == wrap(big * 3, width)
    assert run(binary_module("arith.subi", t), "f", -big, 2) == wrap(-big - 2, width)
    for base, exp in ((3, 41), (-7, 33), (2, width), (5, 0)):
        got = run(binary_module("arith.powi", t), "f", base, exp)
        assert got == wrap(pow(base, exp, 2**width), width)
        assert got.dtype == t.np_dtype
    with pytest.raises(ValueError, match="negative integer power"):
        run(binary_module("arith.powi", t), "f", 2, -1)


def test_int_unary_and_bitwise():
    names = ("arith.maxi", "arith.mini", "arith.andi", "arith.ori", "arith.xori")

    def body(b, x, y):
        return [b.op("arith.negi", x), b.op("arith.absi", x), *(b.op(n, x, y) for n in names)]

    m = single([I64, I64], body)
    for x, y in ((-6, 11), (5, -3), (-(2**63), 1)):
        want = (wrap(-x, 64), wrap(abs(x), 64), max(x, y), min(x, y), x & y, x | y, x ^ y)
        assert run(m, "f", x, y) == want


def test_bool_ops_and_i1_compare():
    def body(b, p, q):
        bitwise = [b.op(n, p, q) for n in ("arith.andi", "arith.ori", "arith.xori")]
        return [*bitwise, b.op("arith.not", p), b.op("arith.cmpi", p, q, pred="gt")]

    m = single([I1, I1], body)
    for p in (False, True):
        for q in (False, True):
            got = run(m, "f", p, q)
            assert all(isinstance(v, np.bool_) for v in got)
            assert got == (p and q, p or q, p != q, not p, p > q)


@pytest.mark.parametrize("pred", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_cmpf_is_ordered_except_ne(pred):
    m = binary_module("arith.cmpf", F64, pred=pred)
    assert run(m, "f", math.nan, 1.0) == (pred == "ne")
    assert run(m, "f", math.nan, math.nan) == (pred == "ne")
    for x, y in ((2.0, 3.0), (3.0, 2.0), (2.0, 2.0), (-0.0, 0.0)):
        assert run(m, "f", x, y) == getattr(operator, pred)(x, y)


def test_maximum_minimum_propagate_nan():
    assert math.isnan(run(binary_module("arith.maximumf", F64), "f", math.nan, 1.0))
    assert math.isnan(run(binary_module("arith.minimumf", F64), "f", 1.0, math.nan))
    assert run(binary_module("arith.maximumf", F64), "f", -1.0, 2.0) == 2.0


CASTS = [
    (F64, I64, 2.9, 2), (F64, I64, -2.9, -2), (F64, I32, -7.99, -7),
    (I64, F64, 2**53 + 1, float(2**53)), (I64, F32, 16777217, 16777216.0),
    (F64, F32, 0.1, float(np.float32(0.1))), (F32, F64, 0.5, 0.5),
    (I64, I32, 2**31, -(2**31)), (I32, I64, -5, -5),
    (F64, I1, 0.0, False), (F64, I1, -0.5, True), (F64, I1, math.nan, True), (I64, I1, 2, True),
    (I1, F64, True, 1.0), (I1, I64, False, 0), (F64, C128, 1.5, 1.5 + 0j), (I64, C64, 3, 3 + 0j),
]  # fmt: skip


@pytest.mark.parametrize("src,dst,x,want", CASTS)
def test_casts(src, dst, x, want):
    got = run(single([src], lambda b, v: [b.op("arith.cast", v, type=dst)]), "f", x)
    assert got.dtype == dst.np_dtype and got == want


def test_float32_accumulation_stays_float32():
    def body(b, x, n):
        return for_loop(
            b,
            b.i64(0),
            n,
            b.i64(1),
            [b.const(0.0, F32)],
            lambda b, i, s: [b.op("arith.addf", s, x)],
        )

    m = single([F32, I64], body)
    ref = np.float32(0.0)
    for _ in range(1000):
        ref = np.float32(ref + np.float32(0.1))
    got = run(m, "f", 0.1, 1000)
    assert isinstance(got, np.float32) and got == ref
    assert got != sum([0.1] * 1000)


def test_select_and_constants():
    def body(b, c):
        return [b.op("arith.select", c, b.const(1.5, F32), b.const(-2, F32)), b.const(2j, C128)]

    m = single([I1], body)
    assert run(m, "f", True) == (1.5, 2j)
    assert run(m, "f", False)[0] == -2.0


def test_assert_raises_the_named_exception():
    def body(b, i, n):
        ok = b.op("arith.cmpi", i, n, pred="lt")
        b.create("rt.assert", [ok], [], {"kind": "IndexError", "msg": "index out of range"})
        return [i]

    m = single([I64, I64], body)
    assert run(m, "f", 2, 3) == 2
    with pytest.raises(IndexError, match="index out of range"):
        run(m, "f", 3, 3)


# ---------------------------------------------------------------- math

NAN = float("nan")
DOMAIN = [  # (op, args, C libm result): never an exception
    ("math.sqrt", (-1.0,), NAN), ("math.log", (0.0,), -math.inf), ("math.log", (-1.0,), NAN),
    ("math.log10", (-0.0,), -math.inf), ("math.log2", (-2.0,), NAN),
    ("math.log1p", (-1.0,), -math.inf), ("math.acos", (2.0,), NAN), ("math.asin", (-1.5,), NAN),
    ("math.acosh", (0.5,), NAN), ("math.atanh", (1.0,), math.inf),
    ("math.exp", (1000.0,), math.inf),
    ("math.cosh", (1000.0,), math.inf), ("math.lgamma", (0.0,), math.inf),
    ("math.lgamma", (-3.0,), math.inf), ("math.tgamma", (0.0,), math.inf),
    ("math.tgamma", (-0.0,), -math.inf), ("math.tgamma", (-2.0,), NAN),
    ("math.tgamma", (200.0,), math.inf), ("math.pow", (0.0, -1.0), math.inf),
    ("math.pow", (-8.0, 1.0 / 3.0), NAN), ("math.fmod", (1.0, 0.0), NAN),
    ("math.fmod", (math.inf, 1.0), NAN), ("math.sin", (math.inf,), NAN),
]  # fmt: skip


@pytest.mark.parametrize("t", [F64, F32])
@pytest.mark.parametrize("name,args,want", DOMAIN)
def test_math_domain_errors_give_nan_or_inf(name, args, want, t):
    m = single([t] * len(args), lambda b, *xs: [b.op(name, *xs)])
    got = run(m, "f", *args)
    assert got.dtype == t.np_dtype
    assert (math.isnan(want) and math.isnan(got)) or got == want


UNARY = [
    ("math.sin", math.sin), ("math.cos", math.cos), ("math.tan", math.tan),
    ("math.exp", math.exp), ("math.expm1", math.expm1), ("math.log1p", math.log1p),
    ("math.tanh", math.tanh), ("math.atan", math.atan), ("math.asinh", math.asinh),
    ("math.erf", math.erf), ("math.erfc", math.erfc), ("math.lgamma", math.lgamma),
    ("math.tgamma", math.gamma), ("math.absf", math.fabs), ("math.floor", math.floor),
    ("math.ceil", math.ceil), ("math.trunc", math.trunc),
]  # fmt: skip


@pytest.mark.parametrize("name,ref", UNARY)
def test_math_matches_python_on_its_domain(name, ref):
    m = single([F64], lambda b, x: [b.op(name, x)])
    m32 = single([F32], lambda b, x: [b.op(name, x)])
    for x in (0.3, 1.7, -0.75, 4.5):
        assert run(m, "f", x) == pytest.approx(ref(x), rel=1e-14, abs=1e-300)
        got = run(m32, "f", x)
        assert isinstance(got, np.float32)
        assert got == pytest.approx(ref(float(np.float32(x))), rel=2e-7, abs=1e-30)


def test_math_rounding_sign_and_predicates():
    names = ("math.roundeven", "math.sign", "math.isnan", "math.isinf", "math.isfinite")
    m = single([F64], lambda b, x: [b.op(n, x) for n in names])
    assert run(m, "f", 2.5) == (2.0, 1.0, False, False, True)
    assert run(m, "f", -3.5) == (-4.0, -1.0, False, False, True)
    assert run(m, "f", -math.inf) == (-math.inf, -1.0, False, True, False)
    assert math.isnan(run(m, "f", math.nan)[1])


def test_math_binary():
    refs = {"math.atan2": math.atan2, "math.hypot": math.hypot, "math.copysign": math.copysign,
            "math.pow": math.pow, "math.fmod": math.fmod}  # fmt: skip
    for name, ref in refs.items():
        m = binary_module(name, F64)
        for x, y in ((1.5, -2.0), (-3.0, 2.0), (2.0, 0.5)):
            assert run(m, "f", x, y) == pytest.approx(ref(x, y), rel=1e-15)


@pytest.mark.parametrize("t", [C128, C64])
def test_complex_ops(t):
    rt = t.real_type

    def body(b, re, im):
        z = b.op("complex.create", re, im)
        w = b.op("arith.mulf", b.op("math.exp", z), b.op("complex.conj", z))
        return [
            w,
            b.op("complex.re", z),
            b.op("complex.im", z),
            b.op("complex.abs", z),
            b.op("math.pow", z, z),
        ]

    m = single([rt, rt], body)
    w, re, im, mag, p = run(m, "f", 0.5, -1.25)
    z = t.np_dtype.type(0.5 - 1.25j)
    assert w.dtype == t.np_dtype and re.dtype == rt.np_dtype
    assert w == pytest.approx(np.exp(z) * np.conj(z), rel=1e-6)
    assert (re, im) == (0.5, -1.25) and mag == pytest.approx(abs(0.5 - 1.25j), rel=1e-7)
    assert p == pytest.approx(z**z, rel=1e-6)


def test_complex_create_keeps_infinite_parts():
    m = single([F64, F64], lambda b, x, y: [b.op("complex.create", x, y)])
    z = run(m, "f", 1.0, math.inf)
    assert z.real == 1.0 and z.imag == math.inf


# ---------------------------------------------------------------- checks and calls with arrays


INDEX_CASES = [  # (wrap, check, i, n, result or the exception)
    (True, True, 2, 5, 2), (True, True, -1, 5, 4), (True, True, -5, 5, 0),
    (True, True, 5, 5, IndexError), (True, True, -6, 5, IndexError),
    (False, True, -1, 5, IndexError), (False, True, 4, 5, 4),
    (True, False, -6, 5, -1), (False, False, 7, 5, 7),
]  # fmt: skip


@pytest.mark.parametrize("wrap_,check,i,n,want", INDEX_CASES)
def test_array_index_wraps_and_checks(wrap_, check, i, n, want):
    m = single([I64, I64], lambda b, i, n: [b.op("array.index", i, n, wrap=wrap_, check=check)])
    if want is IndexError:
        with pytest.raises(IndexError, match=f"index {i} is out of bounds"):
            run(m, "f", i, n)
    else:
        assert run(m, "f", i, n) == want


def test_shape_error_is_a_value_error():
    def body(b, a, n):
        ok = b.op("arith.cmpi", b.op("array.dim", a, axis=0), n, pred="eq")
        b.create("rt.assert", [ok], [], {"kind": "ShapeError", "msg": "shapes differ"})
        return []

    m = single([C1, I64], body)
    run(m, "f", np.zeros(3), 3)
    with pytest.raises(ValueError, match="shapes differ"):
        run(m, "f", np.zeros(3), 4)


def test_callee_writes_reach_the_callers_array():
    def fill(b, a, x):
        v = b.op("array.relayout", a, type=A1)
        n = b.op("array.dim", v, axis=0)

        def store(b, i):
            b.create("array.store", [x, v, i], [])
            return []

        for_loop(b, 0, n, 1, [], store)
        return []

    def main(b, a):
        # fill the odd elements: a[1::2]
        n = b.op("array.dim", a, axis=0)
        size = b.op("arith.floordivi", n, b.i64(2))
        odd = b.op("array.subview", a, b.i64(1), size, b.i64(2), keep=[True], type=A1)
        b.create("func.call", [odd, b.f64(9.0)], [], {"callee": Symbol("fill")})
        return []

    m = module(func("fill", [A1, F64], fill), func("main", [C1], main))
    a = np.zeros(7)
    assert run(m, "main", a) is None
    np.testing.assert_array_equal(a, [0, 9, 0, 9, 0, 9, 0])


def test_printed_ir_runs_the_same_after_parsing():
    parser = pytest.importorskip("zymase.ir.parser")
    from zymase.ir.printer import print_module

    def body(b, x, n):
        return for_loop(
            b,
            b.i64(0),
            n,
            b.i64(1),
            [b.f64(0.0)],
            lambda b, i, s: [b.op("arith.addf", b.op("math.sin", s), x)],
        )

    m = single([F64, I64], body)
    again = parser.parse_module(print_module(m))
    assert run(again, "f", 0.25, 50) == run(m, "f", 0.25, 50)
