"""Parser tests: print -> parse -> print roundtrips of Builder-made IR, hand-written text, every
attribute kind, and parse errors with their line:col."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from zymase.ir import C64, C128, F32, F64, I1, I32, I64
from zymase.ir.builder import Builder
from zymase.ir.core import Block, Func, Loc, Module, Region
from zymase.ir.parser import ParseError, parse_func, parse_module, parse_op
from zymase.ir.printer import Symbol, format_attr, print_func, print_module
from zymase.ir.types import ArrayType, Type, scalar_from_dtype
from zymase.ir.verify import verify_module

A2 = ArrayType(F64, 2, "A")
SYMBOLS_PRINT_AS_STRINGS = format_attr(Symbol("g")) != "@g"  # see test_symbol_attribute_roundtrip


# ---- IR made with the Builder
def _func(name, arg_types, result_types, hints, loc_file="t.py", **attrs):
    f = Func(name, arg_types, result_types, loc=Loc(loc_file, 1, 0), **attrs)
    for a, h in zip(f.args, hints):
        a.hint = h
    return f, Builder.at_end(f.body, Loc(loc_file, 2, 4))


def taylor() -> Func:
    """exp(x) by its Taylor series: an scf.for carrying two f64 values."""
    f, b = _func("taylor", [F64, I64], [F64], ["x", "n"], arg_names=["x", "n"], entry=True)
    x, n = f.args
    one = b.i64(1)
    stop = b.op("arith.addi", n, one)
    body = Block([I64, F64, F64])
    with b.location(Loc("t.py", 3, 4)):
        loop = b.create(
            "scf.for",
            [one, stop, one, b.f64(1.0), b.f64(1.0)],
            [F64, F64],
            regions=[Region([body])],
        )
    i, term, total = body.args
    i.hint, term.hint, total.hint = "i", "term", "total"
    with b.at(body), b.location(Loc("t.py", 4, 8)):
        term2 = b.op("arith.divf", b.op("arith.mulf", term, x), b.cast(i, F64))
        term2.hint = "term"
        b.yield_(term2, b.op("arith.addf", total, term2))
    b.create("func.return", [loop.results[1]], [])
    return f


def nested_if() -> Func:
    """clip(x, lo, hi) as two nested scf.if ops with results."""
    f, b = _func("clip", [F64, F64, F64], [F64], ["x", "lo", "hi"])
    x, lo, hi = f.args
    outer = b.create(
        "scf.if", [b.op("arith.cmpf", x, lo, pred="lt")], [F64], regions=[Region(), Region()]
    )
    with b.at(outer.regions[0].block):
        b.yield_(lo)
    with b.at(outer.regions[1].block):
        inner = b.create(
            "scf.if", [b.op("arith.cmpf", x, hi, pred="gt")], [F64], regions=[Region(), Region()]
        )
        with b.at(inner.regions[0].block):
            b.yield_(hi)
        with b.at(inner.regions[1].block):
            b.yield_(b.op("math.sin", x))
        b.yield_(inner.result)
    b.create("func.return", [outer.result], [])
    return f


def collatz() -> Func:
    """Steps of n -> n // 2 until n <= 1: an scf.while with before and after regions."""
    f, b = _func("steps", [I64], [I64], ["n"])
    zero, one, two = b.i64(0), b.i64(1), b.i64(2)
    before, after = Block([I64, I64]), Block([I64, I64])
    loop = b.create(
        "scf.while", [f.args[0], zero], [I64, I64], regions=[Region([before]), Region([after])]
    )
    with b.at(before):
        v, k = before.args
        b.create("scf.condition", [b.op("arith.cmpi", v, one, pred="gt"), v, k], [])
    with b.at(after):
        v, k = after.args
        b.yield_(b.op("arith.floordivi", v, two), b.op("arith.addi", k, one))
    b.create("func.return", [loop.results[1]], [])
    return f


def arrays() -> Func:
    """array.alloc/dim/stride/subview/load/store/transpose/const/free."""
    f, b = _func("arrays", [A2, I64], [F64], ["a", "m"], noalias=True)
    a, m = f.args
    zero, one = b.i64(0), b.i64(1)
    d0, d1 = b.op("array.dim", a, axis=0), b.op("array.dim", a, axis=1)
    buf = b.create("array.alloc", [d0, d1], [ArrayType(F64, 2, "C")], {"init": "zero"}).result
    b.op("array.stride", a, axis=1)
    row = b.op(
        "array.subview", a, m, zero, d1, one, type=ArrayType(F64, 1, "A"), keep=[False, True]
    )
    v = b.op("array.load", row, zero)
    b.create("array.store", [v, buf, zero, one], [])
    bt = b.op("array.transpose", buf)
    k = b.op("array.const", type=ArrayType(F64, 2, "C"), data=np.arange(6.0).reshape(2, 3))
    w = b.op("arith.addf", b.op("array.load", k, one, one), b.op("array.load", bt, one, zero))
    b.create("array.free", [buf], [])
    b.create("func.return", [b.op("arith.addf", v, w)], [])
    return f


def calls() -> Module:
    """Two functions, one calling the other."""
    sq, b = _func("sq", [F64], [F64], ["x"])
    b.create("func.return", [b.op("arith.mulf", sq.args[0], sq.args[0])], [])
    main, b = _func("main", [F64], [F64, F64], ["x"], entry=True)
    call = b.create("func.call", [main.args[0]], [F64], {"callee": Symbol("sq")})
    b.create("func.return", [call.result, main.args[0]], [])
    return Module([sq, main])


ATTRS = {
    "i": 7,
    "neg": -3,
    "big": 2**70,
    "f": 1.5,
    "tiny": 5e-324,
    "huge": -1.5e300,
    "zero": -0.0,
    "nan": math.nan,
    "inf": math.inf,
    "minf": -math.inf,
    "s": 'quote " slash \\ tab \t é',
    "empty": "",
    "t": True,
    "no": False,
    "z": complex(1.5, -math.inf),
    "zn": complex(math.nan, 0),
    "ty": F64,
    "arr": ArrayType(C64, 3, "C"),
    "l": [1, [2.0, "x", [I1, True]], []],
    "dense": np.array([[1.0, math.nan], [math.inf, -0.0]]),
}


def every_attribute() -> Func:
    """A function with attributes of every kind, and constants of every scalar type."""
    f, b = _func("attrs", [], [], [], **ATTRS)
    for value, t in [
        (1.5, F64),
        (0.1, F32),
        (-(2**62), I64),
        (3, I32),
        (True, I1),
        (complex(1, 2), C128),
        (complex(0.1, -0.2), C64),
        (math.nan, F64),
    ]:
        b.const(value, t)
    for arr in DENSE_ARRAYS:
        t = ArrayType(scalar_from_dtype(arr.dtype), arr.ndim, "C")
        b.op("array.const", type=t, data=arr)
    b.create("func.return", [], [])
    return f


DENSE_ARRAYS = [
    np.arange(6.0).reshape(2, 3) / 7,
    np.array([0.1, -2.5e-8, math.nan], dtype=np.float32),
    np.array([[1, -(2**63)], [2**63 - 1, 0]], dtype=np.int64),
    np.array([1, 2, 3], dtype=np.int32).reshape(3, 1),
    np.array(True),
    np.array([[True, False]]),
    np.array([1 + 2j, complex(math.inf, -0.0)]),
    np.array([0.1 + 0.2j], dtype=np.complex64),
    np.zeros((0, 3)),
    np.array(2.5),
]


def _module(*funcs) -> Module:
    return Module(list(funcs))


MODULES = {
    "taylor": lambda: _module(taylor()),
    "nested_if": lambda: _module(nested_if()),
    "while": lambda: _module(collatz()),
    "arrays": lambda: _module(arrays()),
    "calls": calls,
    "attributes": lambda: _module(every_attribute()),
    "all": lambda: Module([taylor(), nested_if(), collatz(), arrays(), *calls()]),
}


# ---- structural comparison
def attr_eq(a, b) -> bool:
    """Equal values of the same Python type (NaN equals NaN; -0.0 differs from 0.0)."""
    if SYMBOLS_PRINT_AS_STRINGS and isinstance(a, Symbol):
        return isinstance(b, str) and str(a) == str(b)
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        nan_ok = a.dtype.kind in "fc"
        return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=nan_ok)
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and repr(a) == repr(b))
    if isinstance(a, complex):
        return attr_eq(a.real, b.real) and attr_eq(a.imag, b.imag)
    if isinstance(a, list):
        return len(a) == len(b) and all(attr_eq(x, y) for x, y in zip(a, b))
    return a == b


def assert_same_ir(f: Func, g: Func, locs: bool) -> None:
    ops_f, ops_g = list(f.walk()), list(g.walk())
    assert [op.name for op in ops_f] == [op.name for op in ops_g]
    for p, q in zip(ops_f, ops_g):
        assert p.attrs.keys() == q.attrs.keys()
        for key in p.attrs:
            assert attr_eq(p.attrs[key], q.attrs[key]), (p.name, key, p.attrs[key], q.attrs[key])
        assert [r.type for r in p.results] == [r.type for r in q.results]
        assert [r.hint for r in p.results] == [r.hint for r in q.results]
        assert [len(v.uses) for v in p.results] == [len(v.uses) for v in q.results]
        if locs and p.loc.line:
            assert (p.loc.file, p.loc.line, p.loc.col) == (q.loc.file, q.loc.line, q.loc.col)


# ---- roundtrips
@pytest.mark.parametrize("locs", [False, True], ids=["plain", "locs"])
@pytest.mark.parametrize("name", sorted(MODULES))
def test_builder_roundtrip(name, locs):
    m = MODULES[name]()
    verify_module(m)
    text = print_module(m, locs=locs)
    m2 = parse_module(text)
    verify_module(m2)
    assert print_module(m2, locs=locs) == text
    assert list(m.funcs) == list(m2.funcs)
    for f in m:
        assert_same_ir(f, m2[f.sym_name], locs)


def test_parse_func_roundtrip_and_locations():
    f = taylor()
    text = print_func(f, locs=True)
    g = parse_func(text, filename="taylor.zir")
    assert print_func(g, locs=True) == text
    assert g.loc == Loc("t.py", 1, 0)
    loop = next(op for op in g.walk() if op.name == "scf.for")
    assert loop.loc == Loc("t.py", 3, 4)
    assert loop.regions[0].block.ops[0].loc == Loc("t.py", 4, 8)
    assert print_func(g) == print_func(f)  # and without locations


def test_hints_come_back():
    f = taylor()
    g = parse_func(print_func(f))
    assert [a.hint for a in g.args] == ["x", "n"]
    loop = next(op for op in g.walk() if op.name == "scf.for")
    assert [a.hint for a in loop.regions[0].block.args] == ["i", "term", "total"]


@pytest.mark.parametrize("arr", DENSE_ARRAYS, ids=lambda a: f"{a.dtype}{list(a.shape)}")
def test_dense_attribute(arr):
    text = f"func.func @f() -> () {{data = {format_attr(arr)}}} {{\n  func.return\n}}\n"
    got = parse_func(text).attrs["data"]
    assert attr_eq(arr, got)
    assert format_attr(got) == format_attr(arr)


def test_every_attribute_kind_parses_to_the_right_python_value():
    f = parse_func(print_func(every_attribute()))
    for key, value in ATTRS.items():
        assert attr_eq(value, f.attrs[key]), key
    assert isinstance(f.attrs["ty"], Type) and isinstance(f.attrs["arr"], ArrayType)
    consts = [op.attrs["value"] for op in f.walk() if op.name == "arith.constant"]
    assert [type(c) for c in consts] == [float, float, int, int, bool, complex, complex, float]


def test_symbol_attribute_roundtrip():
    text = "func.func @f() -> () {callee = @g, l = [@h]} {\n  func.return\n}\n"
    f = parse_func(text)
    assert type(f.attrs["callee"]) is Symbol and f.attrs["callee"] == "g"
    assert type(f.attrs["l"][0]) is Symbol
    assert print_func(f) == text


def test_symbol_attribute_parses_to_symbol():
    f = parse_func('func.func @f() -> () {callee = @g.h, s = "g"} {\n  func.return\n}\n')
    assert type(f.attrs["callee"]) is Symbol and f.attrs["callee"] == "g.h"
    assert type(f.attrs["s"]) is str


def test_large_function_roundtrip():
    f = Func("big", [F64, F64], [F64])
    b = Builder.at_end(f.body)
    vals = list(f.args)
    names = ["arith.addf", "arith.mulf", "math.sin", "arith.subf"]
    for k in range(4999):
        name = names[k % 4]
        with b.location(Loc("big.py", k // 3 + 1, k % 7)):
            v = b.op(name, vals[-1]) if name == "math.sin" else b.op(name, vals[-1], vals[-2])
        v.hint = "t" if k % 5 == 0 else ""
        vals.append(v)
    b.create("func.return", [vals[-1]], [])
    for locs in (False, True):
        text = print_func(f, locs=locs)
        start = time.perf_counter()
        g = parse_func(text)
        seconds = time.perf_counter() - start
        print(f"parsed 5,000 ops (locs={locs}, {len(text)} chars) in {seconds * 1e3:.1f} ms")
        assert len(g.body.ops) == 5000
        assert print_func(g, locs=locs) == text


# ---- hand-written text
HAND_WRITTEN = """
// Horner's rule with hand-picked names, comments and an outer value used in a nested region.
func.func @poly(%x: f64, %n: i64) -> (f64) {entry = true} {
  %zero = arith.constant {value = 0} : i64   // loop bounds
  %one = arith.constant {value = 1} : i64
  %acc0 = arith.constant {value = 0.0} : f64
  %r = scf.for %zero, %n, %one, %acc0 : f64 {
  ^(%i: i64, %acc: f64):
    %t = arith.mulf %acc, %x : f64 loc("poly.py" : 4 : 9)
    %c = arith.cast %i : f64
    %s = arith.addf %t, %c : f64
    scf.yield %s
  } loc("poly.py":3:5)
  func.return %r
} loc("poly.py":1:1)
"""


def test_hand_written_text():
    m = parse_module(HAND_WRITTEN, filename="poly.zir")
    verify_module(m)
    f = m["poly"]
    assert f.attrs["entry"] is True and f.loc == Loc("poly.py", 1, 1)
    x = f.args[0]
    loop = f.body.ops[3]
    mul = loop.regions[0].block.ops[0]
    assert mul.operands[1] is x and (mul, 1) in x.uses
    assert mul.loc == Loc("poly.py", 4, 9)
    assert [v.hint for v in (x, loop.result, mul.result)] == ["x", "r", "t"]
    again = print_module(parse_module(print_module(m, locs=True)), locs=True)
    assert again == print_module(m, locs=True)


def test_headerless_region_and_multiple_results():
    text = """func.func @f(%c: i1, %a: f64) -> (f64, f64) {
      %p, %q = scf.if %c : f64, f64 { scf.yield %a, %a } { scf.yield %a, %a }
      func.return %p, %q
    }"""
    f = parse_func(text)
    verify_module(Module([f]))
    op = f.body.ops[0]
    assert len(op.results) == 2 and op.results[1].hint == "q"


def test_forward_reference_is_resolved():
    # The parser accepts a use before the definition; the verifier is the one to reject it.
    f = parse_func(
        "func.func @f(%a: f64) -> (f64) {\n  %b = math.sin %c : f64\n"
        "  %c = math.cos %a : f64\n  func.return %b\n}\n"
    )
    sin, cos = f.body.ops[:2]
    assert sin.operands[0] is cos.result and cos.result.uses == [(sin, 0)]


def test_parse_op_with_outer_values():
    f = parse_func("func.func @f(%a: f64) -> (f64) {\n  func.return %a\n}\n")
    a = f.args[0]
    op = parse_op('%y = arith.mulf %a, %a : f64 loc("f.py":2:3)', {"a": a})
    assert op.parent is None and op.operands == [a, a] and op.result.type == F64
    assert op.loc == Loc("f.py", 2, 3) and len(a.uses) == 3


def test_nested_regions_share_outer_names():
    text = """func.func @f(%a: f64, %c: i1) -> (f64) {
      %r = scf.if %c : f64 {
      ^():
        %s = scf.if %c : f64 {
        ^():
          %t = arith.addf %a, %a : f64
          scf.yield %t
        } {
        ^():
          scf.yield %a
        }
        scf.yield %s
      } {
      ^():
        scf.yield %a
      }
      func.return %r
    }"""
    f = parse_func(text)
    verify_module(Module([f]))
    assert len(f.args[0].uses) == 4


# ---- errors
ERRORS = [
    ("func.func @f() -> () {\n  foo.bar\n  func.return\n}", "<ir>:2:3: unknown op 'foo.bar'"),
    ("func.func @f() -> () {\n  %0 = arith.constant {value = 1} : f65\n}", "2:37: expected a type"),
    ("func.func @f() -> () {\n  func.return %nope\n}", "2:15: use of undefined value %nope"),
    (
        "func.func @f(%a: f64) -> () {\n  %a = math.sin %a : f64\n}",
        "2:3: value %a is defined twice",
    ),
    ("func.func @f(%a: f64) -> () {\n  %b = math.sin %a\n}", "2:8: math.sin names 1 results"),
    ("func.func @f(%a: f64) -> () {\n  func.return\n", "3:1: unexpected end of input"),
    ('func.func @f() -> () {s = "abc} {\n}', "1:27: unterminated string"),
    ("func.func @f() -> () {v = } {\n}", "1:27: expected an attribute value"),
    ("func.func @f() -> () {\n  # nope\n}", "2:3: unknown op '#'"),
    ('func.func @f() -> () {d = dense<"int64", [2], [1]>} {\n}', "1:27: dense:"),
    ('func.func @f() -> () {d = dense<"nope", [1], [1]>} {\n}', "1:27: dense:"),
    ("func.func @f() -> () {\n}\nfunc.func @f() -> () {\n}", "3:1: function @f is defined twice"),
    ("func.func f() -> () {\n}", "1:11: expected a function name"),
    ("%x = math.sin %y : f64", "1:1: expected 'func.func'"),
    ("func.func @f() -> (array<f64,two,C>) {\n}", "1:20: expected a type"),
    ("func.func @f() -> () {a = 1, a = 2} {\n}", "1:30: attribute 'a' is given twice"),
    ('func.func @f() -> () {sym_name = "g"} {\n}', "1:22: attribute 'sym_name' belongs"),
    ('func.func @f(%a: f64) -> () {\n  func.return %a loc("f.py":x:1)\n}', "2:29: expected a line"),
    ("func.func @f() -> () {z = complex(1.0, x)} {\n}", "1:40: expected a number"),
]


@pytest.mark.parametrize("text, message", ERRORS, ids=[m.split(": ", 1)[-1] for _, m in ERRORS])
def test_parse_errors(text, message):
    with pytest.raises(ParseError) as info:
        parse_module(text)
    assert message in str(info.value)
    assert str(info.value).startswith(f"<ir>:{info.value.line}:{info.value.col}: ")


def test_parse_error_names_the_file():
    with pytest.raises(ParseError, match=r"^bad\.zir:2:3: unknown op 'arith.nope'"):
        parse_module("func.func @f() -> () {\n  arith.nope\n}\n", filename="bad.zir")


def test_parse_func_needs_one_function():
    with pytest.raises(ParseError, match="exactly one function"):
        parse_func("func.func @f() -> () {\n}\nfunc.func @g() -> () {\n}\n")


def test_parse_op_rejects_trailing_text():
    with pytest.raises(ParseError, match="expected end of input"):
        parse_op("%a = arith.constant {value = 1.0} : f64 )")
