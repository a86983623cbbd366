"""Buffer lifetimes ("lifetime"): decide where each ``array.alloc`` is released.

Expects optimized IR; leaves the same IR with ``array.free`` ops and ``escapes`` marks.  A buffer
whose value (or any view of it, any loop-carried or branch-merged copy of it) never leaves the
block that allocates it is freed at the end of that block.  A buffer that leaves its block (it is
yielded out, returned, or carried to the next iteration) is marked ``escapes``: the backend
registers it in the per-call arena, which frees it when the call returns unless it is returned.
A call that raises frees both kinds (the backend's ``fail`` path: ``backends/llvm/emit.py``).
Calls returning arrays are assumed to return views of their array arguments.  A buffer pushed on
a tape by reference (``tape.push_ref``: a split forward function's residual) escapes.
"""

from __future__ import annotations

from ..ir.builder import Builder
from ..ir.core import VIEW, Module, Value
from ..ir.ops import Alloc, ArrayFree, Call, Condition, For, If, Return, TapePushRef, While, Yield

FLOW_OUT = (Yield, Condition, Return)  # terminators that pass their operands on


def lifetime(module: Module) -> bool:
    changed = False
    for f in module:
        for op in list(f.walk()):
            if isinstance(op, Alloc) and "escapes" not in op.attrs:
                changed = True
                if _escapes(op):
                    op.attrs["escapes"] = True
                else:
                    op.attrs["escapes"] = False
                    block = op.parent
                    term = block.terminator
                    b = Builder(block, block.ops.index(term) if term else None, op.loc)
                    b.create(ArrayFree, [op.result], [])
    return changed


def _escapes(alloc) -> bool:
    home = alloc.parent
    seen: set[Value] = set()
    todo = [alloc.result]
    while todo:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        for use, idx in v.uses:
            if use.has_trait(VIEW) or isinstance(use, Call):
                todo.extend(r for r in use.results if _is_array(r))
            elif isinstance(use, For) and idx >= 3:
                todo += [use.results[idx - 3], use.body.args[idx - 2]]
            elif isinstance(use, While):
                todo.append(use.before.args[idx])
            elif isinstance(use, TapePushRef):  # popped later, maybe by another call
                return True
            elif isinstance(use, FLOW_OUT):
                if use.parent is home or isinstance(use, Return):
                    return True
                todo.extend(_flow_targets(use, idx))
    return False


def _is_array(v: Value) -> bool:
    return hasattr(v.type, "ndim")


def _flow_targets(term, idx):
    """The values that receive operand ``idx`` of terminator ``term``."""
    block = term.parent
    op = block.parent_op
    if isinstance(op, If):
        return [op.results[idx]]
    if isinstance(op, For):
        return [op.results[idx], op.body.args[idx + 1]]
    if isinstance(op, While):
        if isinstance(term, Condition):
            return [] if idx == 0 else [op.results[idx - 1], op.after.args[idx - 1]]
        return [op.before.args[idx]]
    return []
