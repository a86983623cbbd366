"""The shapes of a function's results, from the shapes of its arguments, without running it.

    shapes = result_shapes(module, "f", [(8,), (8,), None, 3])   # one entry per IR argument
    # -> [(8,), (), (6,)]: a tuple per result (() for scalars); None for a dim not known

Each IR argument is given as a shape tuple (arrays) or a value (scalars; ``None`` when it is not
known).  Values are worked out on demand from the results backwards, as far as they follow from
what is given: integer arithmetic, ``array.dim``, the shapes of allocations and views, calls,
and control flow:

* ``scf.if``: the branch its condition picks when that is known, else the dims both branches
  agree on; where that leaves a result unknown, the function's top-level branch conditions are
  assumed true and false in turn (an early ``return`` is a flag a later branch tests), and
  the dims every case agrees on are kept;
* loops: a carried array keeps its initial shape when the body, started from that shape, yields
  the same one again (a dim that changes is not known); the loop's index and carried scalars
  are not known (their value changes from one iteration to the next).

What depends on array contents (loads) is not known.  Interop uses it to declare output shapes
to PyTorch and XLA before running anything (``zymase/interop``); the compiled call checks them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import ops
from .core import Block, Func, Module, Value
from .interp import HANDLERS
from .types import ArrayType

MAX_DEPTH = 16  # nested calls followed (recursion gives unknown shapes beyond it)
SPLITS = 6  # branch conditions assumed true and false in turn (at most 2**SPLITS cases)


def result_shapes(module: Module, func_name: str, args: list, global_shapes=()) -> list:
    """One entry per result of ``func_name``: a shape tuple (entries int or None), ``()`` for a
    scalar.  ``global_shapes``: the shapes of the arrays ``array.global`` reads, by slot (not
    known when not given)."""
    return _cases(module, func_name, args, list(global_shapes), {}, SPLITS)


def _cases(module, func_name, args, global_shapes, assume: dict, budget: int) -> list:
    """Result shapes under the assumed values of some branch conditions; where a result is
    not known, the first branch condition of the function's body still unknown is assumed
    true, then false, and the shapes both cases agree on are kept (an early ``return`` sets a
    flag that a later branch tests: each case follows one path)."""
    top = _Activation(module, 0, global_shapes, assume)
    shapes = [_as_shape(t, v) for t, v in
              zip(module[func_name].result_types, top.call(func_name, args))]
    if budget == 0 or not top.unknown_conditions or \
            all(d is not None for s in shapes for d in s):
        return shapes
    c = top.unknown_conditions[0]
    both = [_cases(module, func_name, args, global_shapes, {**assume, c: np.bool_(b)},
                   budget - 1) for b in (True, False)]
    return [_agree([a, b]) if a else () for a, b in zip(*both)]


def _as_shape(t, v):
    if isinstance(t, ArrayType):
        return v if v is not None else (None,) * t.ndim
    return ()


class _Activation:
    """Known values of one function call: arrays as shape tuples, scalars as NumPy scalars,
    ``None`` where unknown."""

    def __init__(self, module: Module, depth: int, global_shapes: list, assume=None):
        self.module = module
        self.depth = depth
        self.global_shapes = global_shapes
        self.env: dict[Value, Any] = dict(assume or {})
        self.unknown_conditions: list[Value] = []  # of branches in the function's body

    def call(self, func_name: str, args: list) -> list:
        func = self.module[func_name]
        for a, v in zip(func.args, args):
            if a not in self.env:  # (an assumed value stays)
                self.env[a] = _input(a.type, v)
        ret = func.body.terminator
        return [self.value(v) for v in ret.operands]

    # -- values

    def value(self, v: Value):
        if v in self.env:
            return self.env[v]
        self.env[v] = None  # a cycle through a loop's carried values stays unknown
        owner = v.owner
        out = self._block_arg(v, owner) if isinstance(owner, Block) else self._result(v, owner)
        self.env[v] = out
        return out

    def _block_arg(self, v: Value, block: Block):
        op = block.parent_op
        if isinstance(op, ops.For):  # Parallel too
            if v.index == 0 or not isinstance(v.type, ArrayType):
                return None
            return self.value(op.inits[v.index - 1])
        if isinstance(op, ops.While):
            if block is op.regions[0].block:
                return self.value(op.operands[v.index]) if isinstance(v.type, ArrayType) \
                    else None
            cond = op.regions[0].block.terminator
            return self.value(cond.operands[1 + v.index])
        return None

    def _result(self, v: Value, op):
        t = v.type
        if isinstance(op, (ops.For, ops.While)):
            return self._loop_result(v, op)
        if isinstance(op, ops.If):
            return self._if_result(v, op)
        if isinstance(op, ops.Call):
            if self.depth >= MAX_DEPTH:
                return None
            inner = _Activation(self.module, self.depth + 1, self.global_shapes)
            args = [self.value(x) for x in op.operands]
            return inner.call(str(op.callee), args)[v.index]
        if isinstance(t, ArrayType):
            return self._array(op)
        return self._scalar(op)

    # -- arrays: shapes

    def _array(self, op):
        known = self._ints
        if isinstance(op, ops.Alloc):
            return known(op.operands)
        if isinstance(op, ops.ArrayGlobal):
            slot = op.attrs.get("slot")
            known = self.global_shapes
            return tuple(known[slot]) if slot is not None and slot < len(known) else None
        if isinstance(op, ops.ArrayConst):
            return tuple(np.shape(op.attrs["data"]))
        if isinstance(op, ops.Subview):
            src = op.operands[0].type.ndim
            return known(op.operands[1 + src::2])
        if isinstance(op, (ops.Broadcast, ops.Reshape)):
            return known(op.operands[1:])
        if isinstance(op, ops.Transpose):
            s = self.value(op.operands[0])
            return None if s is None else tuple(s[p] for p in op.attrs["perm"])
        if isinstance(op, ops.Relayout):
            return self.value(op.operands[0])
        return None

    def _ints(self, values) -> tuple:
        out = []
        for x in values:
            k = self.value(x)
            out.append(None if k is None else int(k))
        return tuple(out)

    # -- scalars: values

    def _scalar(self, op):
        if isinstance(op, ops.Constant):
            return op.results[0].type.np_dtype.type(op.attrs["value"])
        if isinstance(op, ops.Dim):
            s = self.value(op.operands[0])
            d = None if s is None else s[op.attrs["axis"]]
            return None if d is None else np.int64(d)
        handler = HANDLERS.get(type(op))
        if handler is None or op.regions or len(op.results) != 1 or \
                any(isinstance(x.type, ArrayType) for x in op.operands):
            return None
        args = [self.value(x) for x in op.operands]
        if any(a is None for a in args):
            return None
        try:
            with np.errstate(all="ignore"):
                return handler(None, op, args)[0]
        except Exception:  # a division by zero, say: the run raises there; nothing to know
            return None

    # -- control flow

    def _if_result(self, v: Value, op):
        cond = self.value(op.operands[0])
        if cond is None and self.depth == 0 and isinstance(op.parent.parent_op, Func) and \
                op.operands[0] not in self.unknown_conditions:
            self.unknown_conditions.append(op.operands[0])
        branches = [op.regions[0].block, op.regions[1].block]
        if cond is not None:
            branches = [branches[0] if cond else branches[1]]
        values = [self.value(b.terminator.operands[v.index]) for b in branches]
        if not isinstance(v.type, ArrayType):
            return values[0] if all(x is not None and x == values[0] for x in values) \
                else None
        return _agree(values)

    def _loop_result(self, v: Value, op):
        """A carried array's shape, when every carried array, started from its initial
        shape, comes back with the same shape after one trip (then, by induction, after any
        number of trips)."""
        if not isinstance(v.type, ArrayType):
            return None
        if isinstance(op, ops.For):
            carried, back = op.carried, op.body.terminator.operands
            out = self.value(back[v.index])
        else:
            carried, back = op.regions[0].block.args, op.regions[1].block.terminator.operands
            out = self.value(op.regions[0].block.terminator.operands[1 + v.index])
        for a, y in zip(carried, back):
            if isinstance(a.type, ArrayType) and self.value(y) != self.value(a):
                return _agree([out, None])
        return out


def _input(t, v):
    if isinstance(t, ArrayType):
        return tuple(int(d) for d in v)
    if v is None:
        return None
    return t.np_dtype.type(v)


def _agree(shapes: list):
    """The dims every shape in ``shapes`` has (None where they differ or one is unknown)."""
    if any(s is None for s in shapes):
        if all(s is None for s in shapes):
            return None
        n = len(next(s for s in shapes if s is not None))
        return (None,) * n
    first = shapes[0]
    return tuple(d if all(s[k] == d for s in shapes) else None for k, d in enumerate(first))
