"""IR building blocks shared by the lowering of statements, expressions and NumPy calls: loop
nests over buffers, allocation, element loads and stores, run-time checks, typed arithmetic and
Python's checked float -> int conversion.  Imports nothing of the frontend but ``typing``."""

from __future__ import annotations

import json

from ..ir.core import Block, Region
from ..ir.ops import (
    AddF,
    AddI,
    Alloc,
    AndI,
    Assert,
    CmpF,
    For,
    HostCall,
    Load,
    MaxI,
    MaximumF,
    MinI,
    MinimumF,
    MulF,
    MulI,
    OrI,
    Parallel,
    Store,
    SubF,
    SubI,
    XorI,
)
from ..ir.parallel import reductions
from ..ir.types import I64, ArrayType, ScalarType
from ..passes.rewrite import rebuild
from .typing import Array, Scalar

# ---------------------------------------------------------------------- loop nests and buffers


def nest(lw, dims, body, carried=(), parallel: bool = False):
    """Emit nested ``scf.for`` over ``dims``; ``body(idx, acc) -> new acc`` (lists of Values).
    Returns the final carried values.  ``parallel``: the iterations of the outer loop are
    independent and ``acc`` holds reductions (an elementwise result, a sum): under
    ``jit(parallel=True)`` it is an ``scf.parallel`` (``parallel_loop``)."""
    b = lw.b
    if not dims:
        return list(body([], list(carried)) or [])
    parallel = parallel and lw.options.parallel

    def level(k, acc):
        blk = Block([I64, *[v.type for v in acc]])
        with b.at(blk):
            iv, cur = blk.args[0], list(blk.args[1:])
            idx_stack.append(iv)
            if k + 1 == len(dims):
                out = body(list(idx_stack), cur) or []
            else:
                out = level(k + 1, cur)
            idx_stack.pop()
            b.yield_(*out)
        op = b.create(For, [b.i64(0), dims[k], b.i64(1), *acc], [v.type for v in acc],
                      regions=[Region([blk])])
        if parallel and k == 0:
            op = parallel_loop(op)
        return list(op.results)

    idx_stack: list = []
    return level(0, list(carried))


GRAIN = 1 << 14  # elements below which a NumPy loop of jit(parallel=True) runs on one thread


def parallel_loop(op):
    """``scf.for`` ``op`` rebuilt as an ``scf.parallel`` marked with a grain (the backend runs
    it on one thread when it covers fewer elements), unless a carried value is not a
    reduction."""
    keep = list(range(len(op.results)))
    loop = rebuild(op, list(op.operands), keep, Parallel, {**op.attrs, "grain": GRAIN})
    if loop.results and reductions(loop) is None:
        return rebuild(loop, list(loop.operands), keep, For, dict(op.attrs))
    return loop


def alloc(lw, dtype: ScalarType, dims, init="none") -> Array:
    t = ArrayType(dtype, len(dims), "C")
    return Array(lw.b.create(Alloc, list(dims), [t], {"init": init}).result)


def load(lw, a: Array, idx):
    return lw.b.op(Load, a.value, *idx)


def store(lw, v, a: Array, idx):
    lw.b.create(Store, [v, a.value, *idx])


def size_of(lw, dims):
    n = lw.b.i64(1)
    for d in dims:
        n = lw.b.op(MulI, n, d)
    return n


def check(lw, ok, kind, msg):
    lw.b.create(Assert, [ok], [], {"kind": kind, "msg": msg})


def host_call(lw, fn: str, operands, writes=(), state: bool = False, **kw) -> None:
    """``host.call`` of the Python function ``fn`` of ``ir/host.py`` on the Values ``operands``
    (writing the arrays at ``writes``), with the JSON keywords ``kw``; ``state``: it draws from
    a random generator (reverse mode must not run it again)."""
    attrs = {"fn": fn, "writes": list(writes), "kw": json.dumps(kw)}
    if state:
        attrs["state"] = True
    lw.b.create(HostCall, list(operands), [], attrs)


# typed arithmetic on Values already of type t: (float/complex op, int op, bool op)
ARITH = {
    "add": (AddF, AddI, OrI),
    "sub": (SubF, SubI, XorI),
    "mul": (MulF, MulI, AndI),
    "max": (MaximumF, MaxI, OrI),
    "min": (MinimumF, MinI, AndI),
}


def arith(lw, kind, x, y):
    t = x.type
    return lw.b.op(ARITH[kind][0 if t.is_inexact else 1 if t.is_int else 2], x, y)


def finite_to_int(lw, x: Scalar, t=I64):
    """``int(x)`` of a float: NaN raises ValueError and infinity OverflowError, as in Python;
    so does a float past the integer's range (Python's ints grow, ours are 64-bit: a saturated
    or wrapped value would be silently wrong)."""
    v = x.value
    lw.b.create(Assert, [lw.b.op(CmpF, v, v, pred="eq")], [],
                {"kind": "ValueError", "msg": "cannot convert float NaN to integer"})
    limit = float(2 ** (t.bits - 1))  # exact in f32 and f64
    fits = lw.b.op(AndI, lw.b.op(CmpF, v, lw.b.const(-limit, v.type), pred="ge"),
                   lw.b.op(CmpF, v, lw.b.const(limit, v.type), pred="lt"))
    lw.b.create(Assert, [fits], [], {
        "kind": "OverflowError",
        "msg": f"cannot convert a float this large to an integer (zymase's ints are {t.bits}-bit)"})
    return lw.b.cast(v, t)
