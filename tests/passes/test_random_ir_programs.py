"""Differential tests: random programs run bit-identically on the interpreter before and after
the whole pipeline (special float values, integer overflow, raising ops, branches and loops with
constant trip counts; loads and stores through arguments that may be one array, loops over
dynamic sizes)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from pass_check import assert_same_behaviour

from zymase.ir import F32, F64, I1, I64, ArrayType, Builder, Func, Module
from zymase.ir.core import Block, Region
from zymase.ir.parser import parse_module
from zymase.ir.printer import print_module
from zymase.ir.verify import verify_module
from zymase.passes import run_pipeline

FLOAT_BINARY = ["arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.maximumf",
                "arith.minimumf", "math.pow", "math.atan2", "math.copysign"]  # fmt: skip
FLOAT_UNARY = ["arith.negf", "math.sin", "math.exp", "math.sqrt", "math.floor", "math.absf",
               "math.tanh", "math.log"]  # fmt: skip
INT_BINARY = ["arith.addi", "arith.subi", "arith.muli", "arith.floordivi", "arith.modi",
              "arith.maxi", "arith.mini", "arith.andi", "arith.ori", "arith.xori",
              "arith.powi"]  # fmt: skip
PREDICATES = ["eq", "ne", "lt", "le", "gt", "ge"]
FLOATS = [0.0, -0.0, 1.0, -1.0, 2.0, 0.5, math.inf, -math.inf, math.nan, 1e308]
INTS = [0, 1, -1, 2, 3, 2**63 - 1, -(2**63), 41]


class ScalarProgram:
    """A random straight-line program with nested ``scf.if``/``scf.for`` over scalar values."""

    def __init__(self, rng: random.Random, ft):
        self.rng, self.ft = rng, ft
        self.func = Func("f", [ft, ft, I64, I64, I1], [ft, I64, I1], entry=True)
        args = self.func.args
        self.pools = {ft: list(args[:2]), I64: list(args[2:4]), I1: [args[4]]}
        b = Builder.at_end(self.func.body)
        for _ in range(40):
            self.emit(b, 0)
        b.create("func.return", [self.pick(ft), self.pick(I64), self.pick(I1)], [])

    def pick(self, t):
        return self.rng.choice(self.pools[t])

    def emit(self, b: Builder, depth: int) -> None:
        rng, ft = self.rng, self.ft
        k, t = rng.random(), rng.choice([ft, ft, I64, I1])
        if k < 0.12:
            v = b.const(rng.choice(FLOATS if t == ft else INTS if t == I64 else [True, False]), t)
        elif k < 0.4 and t == ft:
            v = b.op(rng.choice(FLOAT_BINARY), self.pick(ft), self.pick(ft))
        elif k < 0.5 and t == ft:
            v = b.op(rng.choice(FLOAT_UNARY), self.pick(ft))
        elif k < 0.65 and t == I64:
            v = b.op(rng.choice(INT_BINARY), self.pick(I64), self.pick(I64))
        elif k < 0.7:
            v = b.op("arith.cast", self.pick(rng.choice([ft, I64, I1])), type=t)
        elif k < 0.78 and t == I1:
            s = rng.choice([ft, I64])
            cmp = "arith.cmpf" if s == ft else "arith.cmpi"
            v = b.op(cmp, self.pick(s), self.pick(s), pred=rng.choice(PREDICATES))
        elif k < 0.85:
            v = b.op("arith.select", self.pick(I1), self.pick(t), self.pick(t))
        elif k < 0.92 and depth < 2:
            v = self.branch(b, t, depth)
        elif depth < 2:
            v = self.loop(b, t, depth)
        else:
            return
        self.pools[v.type].append(v)

    def nested(self, b: Builder, block: Block, depth: int, extra=()):
        """Fill ``block`` with a few ops that may use ``extra``; what it can yield."""
        saved = {t: list(vs) for t, vs in self.pools.items()}
        for v in extra:
            self.pools[v.type].append(v)
        with b.at(block):
            for _ in range(self.rng.randint(0, 3)):
                self.emit(b, depth + 1)
        pools, self.pools = self.pools, saved
        return pools

    def branch(self, b: Builder, t, depth: int):
        regions = [Region([Block()]), Region([Block()])]
        op = b.create("scf.if", [self.pick(I1)], [t], regions=regions)
        for r in regions:
            pools = self.nested(b, r.block, depth)
            with b.at(r.block):
                b.yield_(self.rng.choice(pools[t]))
        return op.result

    def loop(self, b: Builder, t, depth: int):
        lb, ub = self.rng.choice([(0, 3), (2, 2), (0, 1), (5, 0)])
        bounds = [b.i64(lb), b.i64(ub), b.i64(self.rng.choice([1, 2, -1]))]
        body = Block([I64, t, t])
        op = b.create("scf.for", [*bounds, self.pick(t), self.pick(t)], [t, t],
                      regions=[Region([body])])  # fmt: skip
        pools = self.nested(b, body, depth, body.args)
        with b.at(body):
            b.yield_(self.rng.choice(pools[t]), self.rng.choice(pools[t]))
        return op.results[self.rng.randint(0, 1)]


def memory_program(rng: random.Random, noalias: bool) -> Module:
    """Loads, stores and loops over two argument arrays and a fresh buffer."""
    arr = ArrayType(F64, 1, "A")
    f = Func("f", [arr, arr, I64, F64], [F64], entry=True, noalias=noalias)
    b = Builder.at_end(f.body)
    a0, a1, n, x = f.args
    d = b.op("array.dim", a0, axis=0)
    buf = b.op("array.relayout", b.op("array.alloc", d, type=arr.with_layout("C"), init="zero"),
               type=arr)  # fmt: skip
    pools = {F64: [x], I64: [n], "arr": [a0, a1, buf]}

    def index(b):
        a = rng.choice(pools["arr"])
        dim = b.op("array.dim", a, axis=0)
        return a, b.op("array.index", rng.choice(pools[I64]), dim, wrap=True, check=True)

    def emit(b, depth):
        k = rng.random()
        if k < 0.1:
            pools[F64].append(b.f64(rng.choice([0.0, 1.0, -0.0, 2.5])))
        elif k < 0.15:
            pools[I64].append(b.i64(rng.choice([0, 1, 2, -1])))
        elif k < 0.35:
            pools[F64].append(b.op("array.load", *index(b)))
        elif k < 0.45:
            b.create("array.store", [rng.choice(pools[F64]), *index(b)], [])
        elif k < 0.65:
            name = rng.choice(["arith.addf", "arith.mulf", "arith.subf", "math.sin"])
            operands = [rng.choice(pools[F64]) for _ in range(1 if name == "math.sin" else 2)]
            pools[F64].append(b.op(name, *operands))
        elif k < 0.8:
            pools[I64].append(b.op("arith.addi", rng.choice(pools[I64]), rng.choice(pools[I64])))
        elif depth < 2:
            ub = rng.choice([n, d, b.i64(rng.choice([0, 1, 3]))])
            body = Block([I64, F64])
            loop = b.create("scf.for", [b.i64(0), ub, b.i64(1), rng.choice(pools[F64])], [F64],
                            regions=[Region([body])])  # fmt: skip
            saved = {t: list(vs) for t, vs in pools.items()}
            pools[I64].append(body.args[0])
            pools[F64].append(body.args[1])
            with b.at(body):
                for _ in range(rng.randint(1, 6)):
                    emit(b, depth + 1)
                b.yield_(rng.choice(pools[F64]))
            pools.update(saved)
            pools[F64].append(loop.result)

    for _ in range(30):
        emit(b, 0)
    first = b.op("array.load", buf, b.op("array.index", b.i64(0), d, wrap=True, check=True))
    b.create("func.return", [b.op("arith.addf", pools[F64][-1], first)], [])
    return Module([f])


def _check(module: Module, argsets) -> None:
    text = print_module(module)
    verify_module(module)
    run_pipeline(module, verify=True)
    for args in argsets:
        assert_same_behaviour(parse_module(text), module, "f", args)


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")  # 1e308 as an f32 argument
@pytest.mark.parametrize("seed", range(24))
def test_scalar_programs(seed):
    rng = random.Random(seed)
    module = Module([ScalarProgram(rng, F32 if seed % 3 == 0 else F64).func])
    floats, ints = FLOATS + [0.3, -2.7], INTS
    argsets = [(rng.choice(floats), rng.choice(floats), rng.choice(ints), rng.choice(ints),
                rng.random() < 0.5) for _ in range(6)]  # fmt: skip
    _check(module, argsets)


@pytest.mark.parametrize("seed", range(24))
def test_memory_programs(seed):
    rng = random.Random(seed)
    noalias = seed % 2 == 0
    module = memory_program(rng, noalias)
    argsets = []
    for _ in range(4):
        size = rng.choice([0, 1, 3])
        a = np.arange(float(size)) + 0.5
        same = not noalias and rng.random() < 0.5  # the same array twice: they alias
        argsets.append((a, a if same else np.arange(float(size)) * 2 - 1, rng.choice([0, 1, -1]),
                        0.75))  # fmt: skip
    _check(module, argsets)
