"""canonicalize: fold constants, apply algebraic identities, simplify structured control flow.

Expects: any verified IR.  Leaves: equivalent IR with no op whose operands are all constants
(unless folding it would raise or has no defined value), no branch on a constant, no loop that
provably runs zero times or once, no loop-invariant or dead loop-carried value of an ``scf.for``
(for ``scf.while``: none that is invariant or unused), no unused ``scf.if`` result, no unused pure
op, one ``arith.constant`` per value per block, no ``dim`` of a buffer or view whose shape is at
hand, and no bounds check on ``array.index`` of a loop's own counter into the size it counts to.
Rules are tables below, each with its algebra in a comment.  A zero ``scf.for`` step is taken to
be excluded (the op requires a non-zero step; the interpreter raises on one), so an empty
``range(n, n, step)`` or an empty loop body goes whatever the step.
Mirrors MLIR's ``--canonicalize`` (``mlir/lib/Transforms/Canonicalizer.cpp``: per-op fold hooks
plus rewrite patterns driven to a fixpoint) and the ``scf`` canonicalization patterns in
``mlir/lib/Dialect/SCF/IR/SCF.cpp`` (``ForOpIterArgsFolder``, ``SimplifyTrivialLoops``,
``ConvertTrivialIfToSelect``, ``WhileUnusedResult``).

Folding evaluates the op with the interpreter's own table (``zymase.ir.interp``), so a folded
constant has exactly the bits the op computes at run time: wraparound at the integer type's width,
float32 rounding, libm for transcendental functions.  An op that would raise is not folded.
"""

from __future__ import annotations

import numpy as np

from ..ir import ops
from ..ir.builder import Builder
from ..ir.core import COMMUTATIVE, Module, Op, Value
from ..ir.interp import COMPARE, ELEMENTWISE
from ..ir.types import ScalarType
from .rewrite import (
    attr_key,
    constant_value,
    erase_if_unused,
    inline_block_before,
    is_defined_outside,
    is_speculatable,
    rebuild,
    replace_op,
    trip_count,
    walk,
)

MAX_SWEEPS = 32


def canonicalize(module: Module) -> bool:
    changed = False
    for f in module:
        for _ in range(MAX_SWEEPS):
            if not _sweep(f):
                break
            changed = True
    return changed


def _sweep(f: Op) -> bool:
    changed = False
    for op in walk(f):
        changed |= RULES.get(type(op), _fold)(op)
    changed |= _dedup_constants(f)
    for op in walk(f, reverse=True):
        changed |= erase_if_unused(op)
    return changed


# ---- constant folding


def _fold(op: Op) -> bool:
    """Replace a one-result op on constants by the constant it computes."""
    if len(op.results) != 1 or not op.operands or op.regions or type(op) not in FOLDERS:
        return False
    values = []
    for v in op.operands:
        if (c := constant_value(v)) is None:
            return False
        values.append(c)
    with np.errstate(all="ignore"):  # IEEE results (inf, NaN), as at run time
        args = [_np_value(x, v.type) for x, v in zip(values, op.operands, strict=True)]
        try:
            out = FOLDERS[type(op)](op, *args)
        except (ArithmeticError, ValueError, TypeError):
            return False
        if out is None:
            return False
        replace_op(op, [_const(op, out, op.result.type)])
    return True


def _np_value(x, t: ScalarType):
    return t.np_dtype.type(x)


def _attr_value(x, t: ScalarType):
    """The Python value an ``arith.constant`` of type ``t`` stores for ``x``."""
    x = t.np_dtype.type(x)
    return {"f": float, "i": int, "b": bool, "c": complex}[t.kind](x)


def _const(anchor: Op, value, t: ScalarType) -> Value:
    """A new ``arith.constant`` just before ``anchor``, with ``anchor``'s location."""
    return Builder.before(anchor).const(_attr_value(value, t), t)


def _cast(op: Op, x):
    src, dst = op.operands[0].type, op.result.type
    if src.is_float and dst.is_int:
        info = np.iinfo(dst.np_dtype)
        if not (np.isfinite(x) and info.min <= int(np.trunc(x)) <= info.max):
            return None  # inf, NaN or out of range: no defined value
    return np.asarray(x).astype(dst.np_dtype)[()]


def _fold_index(op: Op, i, n):
    """``array.index``: Python's index ``i`` into a dim of size ``n`` (see ``ir/ops/array.py``)."""
    if op.attrs.get("wrap") and i < 0:
        i = i + n
    if op.attrs.get("check") and not 0 <= i < n:
        return None  # raises IndexError at run time: not folded
    return i


def _without_op(fn):
    return lambda op, *xs: fn(*xs)


# op class -> folder(op, *operand values as NumPy scalars) -> NumPy scalar, or None to keep the op
FOLDERS = {
    **{cls: _without_op(fn) for cls, fn in ELEMENTWISE.items()},
    ops.CmpF: lambda op, a, b: COMPARE[op.attrs["pred"]](a, b),
    ops.CmpI: lambda op, a, b: COMPARE[op.attrs["pred"]](a, b),
    ops.Cast: _cast,
    ops.Index: _fold_index,
}


# ---- algebraic identities


def _x(op: Op, x: Value) -> Value:
    return x


def _zero(op: Op, x: Value) -> Value:
    return _const(op, 0, op.result.type)


def _one(op: Op, x: Value) -> Value:
    return _const(op, 1, op.result.type)


def _all_ones(op: Op, x: Value) -> Value:
    return _const(op, -1 if op.result.type.is_int else True, op.result.type)


# op class -> [(constant operand c, rewrite of `x op c`)].  Integers (and i1, where -1 reads as
# true) take every rule; floats only those exact in IEEE arithmetic for every x (NaN, -0.0, inf):
# NOT x+0.0 -> x (-0.0 + 0.0 == +0.0) and NOT x*0.0 -> 0.0 (inf*0 is NaN).  Complex takes none
# (x*(1+0j) computes b*0, which is NaN for an infinite b).
INT_IDENTITIES = {
    ops.AddI: [(0, _x)],  # x + 0 -> x
    ops.SubI: [(0, _x)],  # x - 0 -> x
    ops.MulI: [(1, _x), (0, _zero)],  # x * 1 -> x,  x * 0 -> 0
    ops.FloorDivI: [(1, _x)],  # x // 1 -> x
    ops.ModI: [(1, _zero)],  # x % 1 -> 0
    ops.PowI: [(1, _x), (0, _one)],  # x ** 1 -> x,  x ** 0 -> 1 (also 0 ** 0)
    ops.AndI: [(0, _zero), (-1, _x)],  # x & 0 -> 0,  x & ~0 -> x
    ops.OrI: [(0, _x), (-1, _all_ones)],  # x | 0 -> x,  x | ~0 -> ~0
    ops.XorI: [(0, _x)],  # x ^ 0 -> x
}
FLOAT_IDENTITIES = {
    ops.MulF: [(1.0, _x)],  # x * 1.0 -> x
    ops.DivF: [(1.0, _x)],  # x / 1.0 -> x
    ops.SubF: [(0.0, _x)],  # x - (+0.0) -> x   (-0.0 - 0.0 == -0.0)
    ops.AddF: [(-0.0, _x)],  # x + (-0.0) -> x  (the IEEE additive identity)
    ops.Pow: [(1.0, _x), (0.0, _one), (-0.0, _one)],  # pow(x, 1) -> x, pow(x, +-0) -> 1
}
# adjoint accumulations (``arith.addf {nsz}``, made by reverse mode) start from zero: the sign
# of a zero derivative means nothing, so x + 0.0 -> x as well (a shadow zeroed by an overwrite
# and read back by the next accumulation turns into `0.0 + x`, one add per element otherwise)
ADJOINT_IDENTITIES = {ops.AddF: [(-0.0, _x), (0.0, _x)]}
# `x op x` -> rewrite (any scalar kind the op accepts; floats only where exact for NaN)
SAME_OPERAND = {
    ops.SubI: _zero,  # x - x -> 0
    ops.XorI: _zero,  # x ^ x -> 0
    ops.AndI: _x,  # x & x -> x
    ops.OrI: _x,  # x | x -> x
    ops.MaxI: _x,  # max(x, x) -> x
    ops.MinI: _x,  # min(x, x) -> x
    ops.MaximumF: _x,  # maximum(x, x) -> x  (NaN stays NaN)
    ops.MinimumF: _x,  # minimum(x, x) -> x
}
# f(f(x)) -> x
INVOLUTIONS = (ops.NegF, ops.NegI, ops.Not, ops.Conj)
# cmpi x, x -> constant, by predicate
CMP_SAME = {"eq": True, "ne": False, "lt": False, "le": True, "gt": False, "ge": True}


def _identity(op: Op) -> bool:
    if _fold(op):
        return True
    t = op.result.type
    kind = type(op)
    if len(op.operands) == 2 and op.operands[0] is op.operands[1] and kind in SAME_OPERAND:
        replace_op(op, [SAME_OPERAND[kind](op, op.operands[0])])
        return True
    if kind in INVOLUTIONS:
        inner = op.operands[0].op
        if inner is not None and type(inner) is kind:
            replace_op(op, [inner.operands[0]])
            return True
        return False
    table = FLOAT_IDENTITIES if t.kind == "f" else INT_IDENTITIES if t.kind in "ib" else {}
    if op.attrs.get("nsz") and t.kind == "f":
        table = ADJOINT_IDENTITIES
    rules = table.get(kind, ())
    positions = (1, 0) if op.has_trait(COMMUTATIVE) else (1,)
    for pos in positions:
        c = constant_value(op.operands[pos])
        if c is None:
            continue
        key = attr_key(-1 if c is True else 0 if c is False else c)
        for const, rewrite in rules:
            if attr_key(const) == key:
                replace_op(op, [rewrite(op, op.operands[1 - pos])])
                return True
    return False


# cmpi x, c with x >= 0 known (a dim, a counting-up loop index) -> constant, by predicate:
# pred -> (c at or below which it is decided, the answer)
CMP_NONNEG = {
    "ge": (0, True),  # x >= c for c <= 0
    "gt": (-1, True),  # x > c for c < 0
    "lt": (0, False),  # x < c for c <= 0
    "le": (-1, False),  # x <= c for c < 0
    "eq": (-1, False),  # x == c for c < 0
    "ne": (-1, True),  # x != c for c < 0
}
SWAPPED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}


def _cmpi(op: Op) -> bool:
    if _fold(op):
        return True
    a, b = op.operands
    pred = op.attrs["pred"]
    if a is b:
        answer = CMP_SAME[pred]
    elif is_nonnegative(a) and isinstance(c := constant_value(b), int):
        answer = _nonneg_answer(pred, c)
    elif is_nonnegative(b) and isinstance(c := constant_value(a), int):
        answer = _nonneg_answer(SWAPPED[pred], c)
    else:
        return False
    if answer is None:
        return False
    replace_op(op, [_const(op, answer, op.result.type)])
    return True


def _nonneg_answer(pred: str, c: int) -> bool | None:
    limit, answer = CMP_NONNEG[pred]
    return answer if c <= limit else None


def is_nonnegative(v: Value) -> bool:
    """``array.dim`` results and induction variables of loops counting up from ``lb >= 0``."""
    if v.op is not None:
        return isinstance(v.op, ops.Dim)
    loop = v.block.parent_op if v.index == 0 else None
    if not isinstance(loop, ops.For):
        return False
    lb, step = constant_value(loop.operands[0]), constant_value(loop.operands[2])
    return lb is not None and step is not None and lb >= 0 and step > 0


def _select(op: Op) -> bool:
    cond, a, b = op.operands
    c = constant_value(cond)
    if c is not None or a is b:
        replace_op(op, [a if (a is b or c) else b])
        return True
    return False


# (source, destination) scalar kinds or types whose cast is exact (every source value is
# representable), so that cast(cast(y : A -> B) -> C) == cast(y : A -> C)
LOSSLESS = {
    ("b", "i"), ("b", "f"), ("b", "c"), ("i32", "i64"), ("i32", "f64"), ("i32", "c128"),
    ("f32", "f64"), ("f32", "c64"), ("f32", "c128"), ("f64", "c128"), ("c64", "c128"),
}  # fmt: skip


def is_lossless(src: ScalarType, dst: ScalarType) -> bool:
    return src == dst or (src.kind, dst.kind) in LOSSLESS or (str(src), str(dst)) in LOSSLESS


def _cast_rule(op: Op) -> bool:
    x = op.operands[0]
    if x.type == op.result.type:  # cast x : T where x : T -> x
        replace_op(op, [x])
        return True
    if _fold(op):
        return True
    inner = x.op
    if (
        inner is not None
        and isinstance(inner, ops.Cast)
        and is_lossless(inner.operands[0].type, x.type)
    ):
        # cast(cast(y : A -> B) -> C) -> cast(y : A -> C) when A -> B is exact
        op.set_operand(0, inner.operands[0])
        return True
    return False


def _assert(op: Op) -> bool:
    if constant_value(op.operands[0]) is True:  # rt.assert true -> nothing
        op.erase()
        return True
    return False


def _broadcast(op: Op) -> bool:
    """``broadcast(a, dim(a, 0), ..., dim(a, n-1))`` -> ``a`` (as a view of the result's layout):
    broadcasting to the shape an array has is no view at all, and reading it through its own
    strides lets loads be contiguous (vectorized) again."""
    a, dims = op.operands[0], op.operands[1:]
    if len(dims) != a.type.ndim or not all(
            isinstance(d.op, ops.Dim) and d.op.operands[0] is a and d.op.attrs["axis"] == k
            for k, d in enumerate(dims)):
        return False
    if a.type == op.result.type:
        replace_op(op, [a])
    else:
        b = Builder.before(op)
        replace_op(op, [b.op(ops.Relayout, a, type=op.result.type)])
    return True


def _dim(op: Op) -> bool:
    """The size of a dim of a buffer or view whose shape is at hand."""
    src, k = op.operands[0].op, op.attrs["axis"]
    if src is None:
        return False
    if isinstance(src, ops.Alloc):  # dim(alloc(d...), k) -> d[k]
        replace_op(op, [src.operands[k]])
    elif isinstance(src, (ops.Broadcast, ops.Reshape)):  # dim(broadcast(a, d...), k) -> d[k]
        replace_op(op, [src.operands[1 + k]])
    elif isinstance(src, ops.Subview):  # dim(subview(a, .., (size, step)...), k) -> size[k]
        replace_op(op, [src.parts()[1][k][0]])
    elif isinstance(src, ops.ArrayConst) and not isinstance(src, ops.ArrayGlobal):
        # dim of a constant array -> its size (a global's shape is known at call time only)
        replace_op(op, [_const(op, np.shape(src.attrs["data"])[k], op.result.type)])
    elif isinstance(src, ops.Relayout):  # dim(relayout(a), k) -> dim(a, k)
        op.set_operand(0, src.operands[0])
    elif isinstance(src, ops.Transpose):  # dim(transpose(a, perm), k) -> dim(a, perm[k])
        op.set_operand(0, src.operands[0])
        op.attrs["axis"] = src.attrs["perm"][k]
    else:
        return False
    return True


def _stride(op: Op) -> bool:
    """Element strides of C-contiguous arrays follow from the shape."""
    a, k = op.operands[0], op.attrs["axis"]
    if a.type.layout != "C":
        return False
    b = Builder.before(op)
    stride = b.i64(1)  # stride(a, last) = 1; stride(a, k) = prod(dim(a, j) for j > k)
    for j in range(a.type.ndim - 1, k, -1):
        stride = b.op(ops.MulI, stride, b.op(ops.Dim, a, axis=j))
    replace_op(op, [stride])
    return True


def _offset(op: Op) -> bool:
    """offset(a, a) = 0."""
    if op.operands[0] is op.operands[1]:
        replace_op(op, [_const(op, 0, op.result.type)])
        return True
    return False


def _index(op: Op) -> bool:
    if _fold(op):
        return True
    i, n = op.operands
    if not (op.attrs.get("wrap") or op.attrs.get("check")) or in_loop_range(i, n):
        replace_op(op, [i])  # index i into [0, n) with nothing to do -> i
        return True
    return False


def in_loop_range(i: Value, n: Value) -> bool:
    """Whether ``i`` is the induction variable of an ``scf.for`` over ``range(lb, n, step)`` with
    constants ``lb >= 0`` and ``step > 0``, so that ``0 <= i < n``."""
    return is_nonnegative(i) and i.op is None and same_value(i.block.parent_op.operands[1], n)


def same_value(a: Value, b: Value) -> bool:
    """``a is b``, or both are the same ``array.dim`` of the same array."""
    if a is b:
        return True
    da, db = a.op, b.op
    return (
        isinstance(da, ops.Dim) and isinstance(db, ops.Dim)
        and da.operands[0] is db.operands[0] and da.attrs["axis"] == db.attrs["axis"]
    )  # fmt: skip


# ---- constant dedup


def _dedup_constants(f: Op) -> bool:
    """Within each block keep the first ``arith.constant`` of each (type, value)."""
    changed = False
    blocks = [f.body] + [r.block for op in f.walk() for r in op.regions if op is not f]
    for b in blocks:
        first: dict = {}
        for op in list(b.ops):
            if not isinstance(op, ops.Constant):
                continue
            key = (op.result.type, attr_key(op.attrs["value"]))
            if key in first:
                replace_op(op, [first[key]])
                changed = True
            else:
                first[key] = op.result
    return changed


# ---- structured control flow


def _if(op: Op) -> bool:
    c = constant_value(op.operands[0])
    if c is not None:  # scf.if true {a} {b} -> a;  scf.if false {a} {b} -> b
        taken = op.regions[0 if c else 1].block
        replace_op(op, inline_block_before(taken, op, []))
        return True
    then_y, else_y = (r.block.terminator for r in op.regions)
    changed = False
    for r, a, b in zip(op.results, then_y.operands, else_y.operands, strict=True):
        if a is b and r.uses:  # both branches yield the same outside value v -> v
            r.replace_all_uses_with(a)
            changed = True
    empty = all(len(r.block.ops) == 1 for r in op.regions)
    if empty and op.results and all(isinstance(r.type, ScalarType) for r in op.results):
        # scf.if c {yield a} {yield b} -> select c, a, b
        b = Builder.before(op)
        pairs = zip(then_y.operands, else_y.operands, strict=True)
        replace_op(op, [b.op(ops.Select, op.operands[0], x, y) for x, y in pairs])
        return True
    return _drop_unused_if_results(op) or changed


def _drop_unused_if_results(op: Op) -> bool:
    """Results nobody uses leave both yields; an if with nothing left to do goes."""
    keep = [i for i, r in enumerate(op.results) if r.uses]
    if not keep and all(len(r.block.ops) == 1 for r in op.regions):
        op.erase()
        return True
    if len(keep) == len(op.results):
        return False
    for r in op.regions:
        y = r.block.terminator
        y.set_operands([y.operands[i] for i in keep])
    rebuild(op, list(op.operands), keep)
    return True


def _for(op: Op) -> bool:
    trips = trip_count(op)
    if trips == 0:  # for i in range(0) -> its initial values
        replace_op(op, list(op.operands[3:]))
        return True
    body = op.regions[0].block
    if trips == 1:  # one iteration -> the body with i = lb
        replace_op(op, inline_block_before(body, op, [op.operands[0], *op.operands[3:]]))
        return True
    if not op.results and len(body.ops) == 1:  # a loop that does nothing -> nothing
        op.erase()
        return True
    changed = _forward_invariant_carried(op)
    dead = {i: s for i in range(len(op.results)) if (s := _dead_carried(op, i)) is not None}
    if dead:
        _drop_carried(op, dead)
        return True
    return changed


def _forward_invariant_carried(op: Op) -> bool:
    """A carried value the body yields back unchanged (or as its initial value) is that initial
    value throughout: its block argument and result become the initial value."""
    body = op.regions[0].block
    y = body.terminator
    changed = False
    for k, init in enumerate(op.operands[3:]):
        arg, nxt, res = body.args[1 + k], y.operands[k], op.results[k]
        used = res.uses or any(user is not y for user, _ in arg.uses)
        if used and (nxt is arg or nxt is init):
            arg.replace_all_uses_with(init)
            res.replace_all_uses_with(init)
            changed = True
    return changed


def _dead_carried(op: Op, i: int) -> list[Op] | None:
    """When carried value ``i`` of an ``scf.for`` only feeds itself (its result unused, its
    argument used only by speculatable body ops that lead back to its own yield slot), the ops
    that compute it; else None."""
    if op.results[i].uses:
        return None
    body = op.regions[0].block
    y = body.terminator
    ops: dict[Op, None] = {}
    work = [body.args[1 + i]]
    while work:
        for user, pos in work.pop().uses:
            if user is y:
                if pos != i:
                    return None
            elif user.parent is not body or not is_speculatable(user):
                return None
            elif user not in ops:
                ops[user] = None
                work.extend(user.results)
    return list(ops)


def _drop_carried(op: Op, dead: dict[int, list[Op]]) -> None:
    body = op.regions[0].block
    y = body.terminator
    y.set_operands([v for k, v in enumerate(y.operands) if k not in dead])
    doomed = {o for ops in dead.values() for o in ops}
    for o in sorted(doomed, key=body.ops.index, reverse=True):
        o.erase()
    for i in sorted(dead, reverse=True):
        body.erase_arg(1 + i)
    inits = [v for k, v in enumerate(op.operands[3:]) if k not in dead]
    rebuild(op, [*op.operands[:3], *inits], [k for k in range(len(op.results)) if k not in dead])


def _while(op: Op) -> bool:
    before, after = (r.block for r in op.regions)
    cond, y = before.terminator, after.terminator
    changed = False
    for arg, init, nxt in zip(before.args, op.operands, y.operands, strict=True):
        passed_back = nxt.owner is after and cond.operands[1 + nxt.index] is arg
        if arg.uses and (nxt is init or passed_back):  # arg stays its initial value
            arg.replace_all_uses_with(init)
            changed = True
    for fwd, arg, res in zip(cond.operands[1:], after.args, op.results, strict=True):
        if is_defined_outside(fwd, op) and (arg.uses or res.uses):  # forwards an outside value
            arg.replace_all_uses_with(fwd)
            res.replace_all_uses_with(fwd)
            changed = True
    dead_in = [j for j, a in enumerate(before.args) if not a.uses]
    dead_out = [
        k
        for k, (a, r) in enumerate(zip(after.args, op.results, strict=True))
        if not (a.uses or r.uses)
    ]
    if dead_in or dead_out:
        _shrink_while(op, dead_in, dead_out)
        return True
    return changed


def _shrink_while(op: Op, dead_in: list[int], dead_out: list[int]) -> None:
    """Drop unused before-region arguments (with their initial and next values) and forwarded
    values nobody reads (with their after-region arguments and results)."""
    before, after = (r.block for r in op.regions)
    cond, y = before.terminator, after.terminator
    y.set_operands([v for j, v in enumerate(y.operands) if j not in dead_in])
    for j in reversed(dead_in):
        before.erase_arg(j)
    fwd = [v for k, v in enumerate(cond.operands[1:]) if k not in dead_out]
    cond.set_operands([cond.operands[0], *fwd])
    for k in reversed(dead_out):
        after.erase_arg(k)
    inits = [v for j, v in enumerate(op.operands) if j not in dead_in]
    rebuild(op, inits, [k for k in range(len(op.results)) if k not in dead_out])


# op class -> rule(op) -> whether it changed anything (``_fold`` for the others)
RULES = {
    **{kind: _identity for kind in {*INT_IDENTITIES, *FLOAT_IDENTITIES, *SAME_OPERAND}},
    **{kind: _identity for kind in INVOLUTIONS},
    ops.CmpI: _cmpi,
    ops.Select: _select,
    ops.Cast: _cast_rule,
    ops.Assert: _assert,
    ops.Dim: _dim,
    ops.Broadcast: _broadcast,
    ops.Stride: _stride,
    ops.Offset: _offset,
    ops.Index: _index,
    ops.If: _if,
    ops.For: _for,
    ops.Parallel: _for,
    ops.While: _while,
}
