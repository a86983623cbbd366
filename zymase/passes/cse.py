"""cse: common-subexpression elimination.

Expects: any verified IR.  Leaves: no op that recomputes what an op dominating it already
computed.  Two region-free ops are equivalent when they have the same name, operands (in either
order for COMMUTATIVE ops), attributes and result types; the later one is replaced when the earlier
dominates it (same block before it, or an enclosing block before the op holding it).  Candidates
are ops without memory effects (PURE, and ops whose only effect is MAY_RAISE: when the first one
did not raise, the second computes the same value and does not raise either).  Within one block,
a load of a location another load read, or a store wrote, with no possibly-aliasing write in
between becomes that value (store-to-load forwarding, as in LLVM's GVN); writes forget only the
locations whose buffers they may alias (allocations never alias arguments or each other).
Mirrors MLIR's ``--cse`` (``mlir/lib/Transforms/CSE.cpp``: a scoped hash table over the dominance
tree, with its simple "no write in between" rule for reads).
"""

from __future__ import annotations

from collections import ChainMap

from ..ir.core import (
    COMMUTATIVE,
    EXPENSIVE,
    MAY_RAISE,
    PURE,
    TERMINATOR,
    VIEW,
    WRITES,
    Block,
    Module,
    Op,
)
from ..ir.ops import AddI, Call, Load, Store, SubI
from .licm import may_alias, written_arrays
from .rewrite import Effects, constant_value, op_key, replace_op

CSE_TRAITS = frozenset({PURE, COMMUTATIVE, MAY_RAISE, VIEW, EXPENSIVE})


def cse(module: Module) -> bool:
    effects = Effects(module)
    changed = False
    for f in module:
        changed |= _cse_block(f.body, ChainMap(), effects, f)
    return changed


def _cse_block(block: Block, scope: ChainMap, effects: Effects, func) -> bool:
    """CSE ``block`` and the blocks nested in it; ``scope`` holds the ops that dominate it."""
    known = scope.new_child()
    memory = Memory(func, effects)
    changed = False
    for op in list(block.ops):
        for r in op.regions:
            changed |= _cse_block(r.block, known, effects, func)
        if is_cse_candidate(op):
            key = op_key(op, op.has_trait(COMMUTATIVE))
            prev = known.get(key)
            if prev is None:
                known[key] = op
            else:
                replace_op(op, prev.results)
                changed = True
        elif isinstance(op, Load):
            value = memory.get(op)
            if value is None:
                memory.remember(op.operands[0], op.operands[1:], op.result)
            else:
                replace_op(op, [value])
                changed = True
        elif WRITES in effects.of(op):
            memory.write(op)
    return changed


class Memory:
    """What is known to be stored where, within one block: (array value, index values) -> value."""

    def __init__(self, func, effects):
        self.func, self.effects = func, effects
        self.known: dict[tuple, tuple] = {}  # key -> (array, value)

    @staticmethod
    def key(array, indices) -> tuple:
        return (array, *indices)

    def get(self, load: Op):
        hit = self.known.get(self.key(load.operands[0], load.operands[1:]))
        return hit[1] if hit is not None else None

    def remember(self, array, indices, value) -> None:
        self.known[self.key(array, indices)] = (array, value)

    def write(self, op: Op) -> None:
        if isinstance(op, Store):
            self._forget(op.operands[1], op.operands[2:])
            self.remember(op.operands[1], op.operands[2:], op.operands[0])
            return
        if op.regions or op.written_operands is not None:  # it says what it writes
            written = written_arrays(op, self.effects) if op.regions else op.written()
            for a in written:
                self._forget(a)
            return
        self.known.clear()  # a call or a tape op: anything may change

    def _forget(self, array, indices=None) -> None:
        for k, (a, _) in list(self.known.items()):
            if not may_alias(a, array, self.func):
                continue
            if indices is not None and a is array and _differs(k[1:], indices):
                continue  # same view, provably another element: a[i] vs a[i + 1]
            del self.known[k]


def _differs(idx_a, idx_b) -> bool:
    """Do two index tuples of one view name different elements for sure?"""
    for x, y in zip(idx_a, idx_b):
        bx, cx = _base_offset(x)
        by, cy = _base_offset(y)
        if bx is by and cx != cy:
            return True
    return False


def _base_offset(v):
    """(base, c) with v == base + c (base None for a constant)."""
    c = constant_value(v)
    if c is not None:
        return None, c
    op = v.op
    if isinstance(op, (AddI, SubI)):
        k = constant_value(op.operands[1])
        if k is not None:
            return op.operands[0], (k if isinstance(op, AddI) else -k)
        if isinstance(op, AddI):
            k = constant_value(op.operands[0])
            if k is not None:
                return op.operands[1], k
    return v, 0


def is_cse_candidate(op: Op) -> bool:
    """A region-free op with results whose value depends only on its operands and attributes."""
    return (
        bool(op.results) and not op.regions and op.traits <= CSE_TRAITS
        and not isinstance(op, Call) and not op.has_trait(TERMINATOR)
    )  # fmt: skip
