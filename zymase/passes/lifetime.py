"""Buffer lifetimes ("lifetime"): decide where each ``array.alloc`` is released.

Expects optimized IR; leaves the same IR with ``array.free`` ops and ``escapes`` marks.  A buffer
whose value (or any view of it, any loop-carried or branch-merged copy of it) never leaves the
block that allocates it is freed at the end of that block.  A buffer that leaves its block (it is
yielded out, returned, or carried to the next iteration) is marked ``escapes``: the backend
registers it in the per-call arena, which frees it when the call returns unless it is returned.
Calls returning arrays are assumed to return views of their array arguments.  A buffer pushed on
a tape by reference (``tape.push_ref``: a split forward function's residual) escapes.
"""

from __future__ import annotations

from ..ir.builder import Builder
from ..ir.core import VIEW, Module, Value

FLOW_OUT = ("scf.yield", "scf.condition", "func.return")


def lifetime(module: Module) -> bool:
    changed = False
    for f in module:
        for op in list(f.walk()):
            if op.name == "array.alloc" and "escapes" not in op.attrs:
                changed = True
                if _escapes(op):
                    op.attrs["escapes"] = True
                else:
                    op.attrs["escapes"] = False
                    block = op.parent
                    term = block.terminator
                    b = Builder(block, block.ops.index(term) if term else None, op.loc)
                    b.create("array.free", [op.result], [])
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
            if use.has_trait(VIEW) or use.name == "func.call":
                todo.extend(r for r in use.results if _is_array(r))
            elif use.name == "scf.for" and idx >= 3:
                todo += [use.results[idx - 3], use.body.args[idx - 2]]
            elif use.name == "scf.while":
                todo.append(use.before.args[idx])
            elif use.name == "tape.push_ref":  # popped later, maybe by another call
                return True
            elif use.name in FLOW_OUT:
                if use.parent is home or use.name == "func.return":
                    return True
                todo.extend(_flow_targets(use, idx))
    return False


def _is_array(v: Value) -> bool:
    return hasattr(v.type, "ndim")


def _flow_targets(term, idx):
    """The values that receive operand ``idx`` of terminator ``term``."""
    block = term.parent
    op = block.parent_op
    if op.name == "scf.if":
        return [op.results[idx]]
    if op.name == "scf.for":
        return [op.results[idx], op.body.args[idx + 1]]
    if op.name == "scf.while":
        if term.name == "scf.condition":
            return [] if idx == 0 else [op.results[idx - 1], op.after.args[idx - 1]]
        return [op.before.args[idx]]
    return []
