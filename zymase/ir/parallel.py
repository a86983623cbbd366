"""What an ``scf.parallel`` loop may carry from one iteration to the next: reductions.

A carried value is a reduction when the body only combines it with values that do not depend on
it, through one associative operation, and yields the result::

    s' = s + a[i]                   add (also ``s - x``, integers, complex)
    s' = s * x                      mul
    m' = select(x > m, x, m)        max (Python's ``max(m, x)``; ``min`` likewise)
    m' = maximumf(m, x)             maximumf (``np.maximum``; ``minimumf``)
    s' = if c: s + x else: s        any of these under branches

Then each thread can start from the operation's identity, run its block of iterations, and the
partial results combine with the initial value in any grouping.  Two more forms are not
reductions but need nothing from other iterations: a value yielded unchanged (``same``), and one
the body never reads (``private``: its last value is not defined after a parallel loop, so the
loop's result must be unused).

``reductions(loop)`` returns one ``Reduction`` per carried value, or None when some carried value
is none of these (a loop-carried dependence: the loop must run in order).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .core import TERMINATOR, Block, Op, Value
from .ops import (
    AddF,
    AddI,
    AndI,
    CmpF,
    CmpI,
    For,
    If,
    MaxI,
    MaximumF,
    MinI,
    MinimumF,
    MulF,
    MulI,
    OrI,
    Select,
    SubF,
    SubI,
    XorI,
)

_ASSOCIATIVE = {AddF: "add", AddI: "add", MulF: "mul", MulI: "mul", MaxI: "max", MinI: "min",
                MaximumF: "maximumf", MinimumF: "minimumf", AndI: "and", OrI: "or", XorI: "xor"}
_SUBTRACT = (SubF, SubI)  # s - x == s + (-x): an add reduction when s is the left operand
_FLIP = {"gt": "lt", "ge": "le", "lt": "gt", "le": "ge"}
_NEGATE = {"gt": "le", "ge": "lt", "lt": "ge", "le": "gt"}


@dataclass(frozen=True)
class Reduction:
    """``kind``: add, mul, max, min, maximumf, minimumf, and, or, xor, same or private.  For
    max/min written as a select, ``pred`` says when the new value is taken: ``x pred m``."""

    kind: str
    pred: str | None = None

    @property
    def combines(self) -> bool:
        return self.kind not in ("same", "private")


def reductions(loop: Op) -> list[Reduction] | None:
    out = []
    for k in range(len(loop.regions[0].block.args) - 1):
        r = reduction(loop, k)
        if r is None:
            return None
        out.append(r)
    return out


def reduction(loop: Op, k: int) -> Reduction | None:
    """The reduction the ``k``-th carried value of ``loop`` (an ``scf.for`` body) is, or None."""
    body = loop.regions[0].block
    arg, out = body.args[1 + k], body.terminator.operands[k]
    if out is arg:
        return Reduction("same")
    if not arg.uses:
        return Reduction("private")
    return _Chain(arg).follow(body, k)


class _Chain:
    """The values that carry the accumulator (it and every partial combination of it), found
    in program order; each use of one must be a step of the reduction or pass it on."""

    def __init__(self, arg: Value):
        self.values = {arg}
        self.kind = self.pred = None
        self.taken: set[Op] = set()  # ops accepted as using a chain value

    def follow(self, body: Block, k: int) -> Reduction | None:
        if not self._walk(body):
            return None
        term = body.terminator
        if [i for i, v in enumerate(term.operands) if v in self.values] != [k]:
            return None
        self.taken.add(term)
        if any(op not in self.taken for v in self.values for op, _ in v.uses):
            return None  # read by something else: the order of iterations would show
        return Reduction(self.kind, self.pred) if self.kind else None

    def _walk(self, block: Block) -> bool:
        for op in block.ops:
            if op.has_trait(TERMINATOR) or op in self.taken:
                continue
            if isinstance(op, If):
                if op.operands[0] in self.values or not (
                        self._walk(op.then_block) and self._walk(op.else_block)):
                    return False
                if not self._merge(op):
                    return False
                continue
            if isinstance(op, For):
                if not self._inner_loop(op):
                    return False
                continue
            if op.regions:
                continue  # a chain value used inside is caught by the final use check
            uses = [i for i, v in enumerate(op.operands) if v in self.values]
            if uses and not self._step(op, uses):
                return False
        return True

    def _inner_loop(self, op: Op) -> bool:
        """An inner ``scf.for`` that carries the accumulator (``for j: s += a[i, j]``) is one
        step when its own carried value is the same reduction."""
        for q, v in enumerate(op.operands[3:]):
            if v not in self.values:
                continue
            r = reduction(op, q)
            if r is None or not (r.kind == "same" or self._take(op, r.kind, r.pred, q)):
                return False
        return True

    def _merge(self, op: If) -> bool:
        ends = (op.then_block.terminator, op.else_block.terminator)
        for j, r in enumerate(op.results):
            inside = [t.operands[j] in self.values for t in ends]
            if all(inside):
                self.values.add(r)
                self.taken.update(ends)
            elif any(inside):
                return False  # one branch resets the accumulator
        return True

    def _step(self, op: Op, uses: list[int]) -> bool:
        if len(uses) != 1:
            return False
        cls = type(op)
        if cls in _ASSOCIATIVE:
            kind = _ASSOCIATIVE[cls]
        elif isinstance(op, _SUBTRACT) and uses == [0]:
            kind = "add"
        elif isinstance(op, (CmpF, CmpI)):
            return self._select_step(op, uses[0])
        else:
            return False
        return self._take(op, kind, None)

    def _select_step(self, cmp: Op, i: int) -> bool:
        """``select(cmp(x, m), x, m)`` and its mirror images: a max or a min."""
        pred = cmp.attrs.get("pred")
        if pred not in _FLIP or len(cmp.result.uses) != 1:
            return False
        sel, pos = cmp.result.uses[0]
        if not isinstance(sel, Select) or pos != 0:
            return False
        m, x = cmp.operands[i], cmp.operands[1 - i]
        if i == 0:  # cmp(m, x): x flipped-pred m
            pred = _FLIP[pred]
        if sel.operands[1:] == [x, m]:
            pass
        elif sel.operands[1:] == [m, x]:
            pred = _NEGATE[pred]  # x is taken when the comparison is false
        else:
            return False
        self.taken.add(cmp)
        return self._take(sel, "max" if pred in ("gt", "ge") else "min", pred)

    def _take(self, op: Op, kind: str, pred: str | None, result: int = 0) -> bool:
        if self.kind is not None and kind != self.kind:
            return False
        self.kind, self.pred = kind, self.pred or pred
        self.taken.add(op)
        self.values.add(op.results[result])
        return True


def identity(r: Reduction, t) -> object:
    """The value each thread's partial starts from, for scalar type ``t``."""
    if t.is_float or t.is_complex:
        lo, hi, zero = -math.inf, math.inf, -0.0
    else:
        lo, hi, zero = -(2**63), 2**63 - 1, 0
    ones = True if t.bits == 1 else -1
    return {"add": zero, "mul": 1, "max": lo, "min": hi, "maximumf": -math.inf,
            "minimumf": math.inf, "and": ones, "or": 0, "xor": 0}[r.kind]
