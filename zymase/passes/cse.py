"""cse: common-subexpression elimination.

Expects: any verified IR.  Leaves: no op that recomputes what an op dominating it already
computed.  Two region-free ops are equivalent when they have the same name, operands (in either
order for COMMUTATIVE ops), attributes and result types; the later one is replaced when the earlier
dominates it (same block before it, or an enclosing block before the op holding it).  Candidates
are ops without memory effects (PURE, and ops whose only effect is MAY_RAISE: when the first one
did not raise, the second computes the same value and does not raise either).  ``array.load`` ops
are also merged within one block when nothing that may write memory lies between them.
Mirrors MLIR's ``--cse`` (``mlir/lib/Transforms/CSE.cpp``: a scoped hash table over the dominance
tree, with its simple "no write in between" rule for reads).
"""

from __future__ import annotations

from collections import ChainMap

from ..ir.core import COMMUTATIVE, MAY_RAISE, PURE, TERMINATOR, VIEW, WRITES, Block, Module, Op
from .rewrite import Effects, op_key, replace_op

CSE_TRAITS = frozenset({PURE, COMMUTATIVE, MAY_RAISE, VIEW})


def cse(module: Module) -> bool:
    effects = Effects(module)
    changed = False
    for f in module:
        changed |= _cse_block(f.body, ChainMap(), effects)
    return changed


def _cse_block(block: Block, scope: ChainMap, effects: Effects) -> bool:
    """CSE ``block`` and the blocks nested in it; ``scope`` holds the ops that dominate it."""
    known = scope.new_child()
    loads: dict[tuple, Op] = {}
    changed = False
    for op in list(block.ops):
        for r in op.regions:
            changed |= _cse_block(r.block, known, effects)
        if is_cse_candidate(op):
            table, key = known, op_key(op, op.has_trait(COMMUTATIVE))
        elif op.name == "array.load":
            table, key = loads, op_key(op)
        else:
            if WRITES in effects.of(op):
                loads.clear()  # a write may change what any earlier load read
            continue
        prev = table.get(key)
        if prev is None:
            table[key] = op
        else:
            replace_op(op, prev.results)
            changed = True
    return changed


def is_cse_candidate(op: Op) -> bool:
    """A region-free op with results whose value depends only on its operands and attributes."""
    return (
        bool(op.results) and not op.regions and op.traits <= CSE_TRAITS
        and op.name != "func.call" and not op.has_trait(TERMINATOR)
    )  # fmt: skip
