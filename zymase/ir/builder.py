"""Builder: creates ops at an insertion point, inferring result types from the op class.

    b = Builder.at_end(func.body)
    y = b.op(MulF, x, x)                    # one result: returns the Value
    loop = b.create(For, [lb, ub, st, s0], [F64], regions=[Region([Block([I64, F64])])])

Ops are named by their class (``zymase.ir.ops``); a text name (``"arith.mulf"``) is accepted
too, for the parser and tests.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any

from .core import OPS, UNKNOWN_LOC, Block, Loc, Op, Region, Value
from .ops import Cast, Constant, For, Yield
from .types import F64, I1, I64, ScalarType, Type


class Builder:
    """Inserts ops into ``block`` before position ``index`` (at the end when ``index`` is None)."""

    def __init__(self, block: Block | None = None, index: int | None = None,
                 loc: Loc = UNKNOWN_LOC):
        self.block = block
        self.index = index
        self.loc = loc

    @classmethod
    def at_end(cls, block: Block, loc: Loc = UNKNOWN_LOC) -> Builder:
        return cls(block, None, loc)

    @classmethod
    def before(cls, op: Op, loc: Loc | None = None) -> Builder:
        return cls(op.parent, op.parent.ops.index(op), loc or op.loc)

    def insert(self, op: Op) -> Op:
        if self.index is None:
            self.block.append(op)
        else:
            self.block.insert(self.index, op)
            self.index += 1
        return op

    @contextmanager
    def at(self, block: Block, index: int | None = None):
        """Temporarily build into ``block`` (at its end by default)."""
        saved = (self.block, self.index)
        self.block, self.index = block, index
        try:
            yield self
        finally:
            self.block, self.index = saved

    @contextmanager
    def location(self, loc: Loc):
        saved, self.loc = self.loc, loc
        try:
            yield self
        finally:
            self.loc = saved

    def create(
        self,
        kind: type[Op] | str,
        operands: list[Value] = (),
        result_types: list[Type] | None = None,
        attrs: dict[str, Any] | None = None,
        regions: list[Region] = (),
        loc: Loc | None = None,
    ) -> Op:
        cls = OPS[kind] if isinstance(kind, str) else kind
        if result_types is None:
            result_types = cls.infer([v.type for v in operands], attrs or {})
        return self.insert(cls(list(operands), result_types, attrs, regions, loc or self.loc))

    def op(self, kind: type[Op] | str, *operands: Value, type: Type | None = None,
           **attrs) -> Value:
        """Create a one-result op and return its result."""
        return self.create(kind, operands, None if type is None else [type], attrs).result

    # ---- common shorthands
    def const(self, value, type: ScalarType) -> Value:
        if type.is_float:
            value = float(value)
        elif type.is_int:
            value = int(value)
        elif type == I1:
            value = bool(value)
        else:
            value = complex(value)
        return self.create(Constant, [], [type], {"value": value}).result

    def f64(self, value: float) -> Value:
        return self.const(value, F64)

    def i64(self, value: int) -> Value:
        return self.const(value, I64)

    def i1(self, value: bool) -> Value:
        return self.const(value, I1)

    def cast(self, v: Value, type: Type) -> Value:
        return v if v.type == type else self.op(Cast, v, type=type)

    def nest(self, shape: list[Value], body) -> None:
        """Nested ``scf.for`` loops over ``shape`` (i64 sizes); ``body(indices)`` emits the
        innermost ops."""
        def level(k, idx):
            if k == len(shape):
                body(idx)
                return
            blk = Block([I64])
            with self.at(blk):
                level(k + 1, idx + [blk.args[0]])
                self.yield_()
            self.create(For, [self.i64(0), shape[k], self.i64(1)], [],
                        regions=[Region([blk])])
        level(0, [])

    def yield_(self, *values: Value, kind: type[Op] | str = Yield) -> Op:
        """A terminator passing ``values`` on: ``scf.yield``, or ``kind`` (``Condition``)."""
        return self.create(kind, values, [])
