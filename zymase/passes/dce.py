"""dce: dead-code elimination.

Expects: any verified IR.  Leaves: no op whose results nobody uses and whose removal nobody could
observe, and no buffer that is written but never read.  Removable when unused:

* PURE ops, ``array.load`` and allocations;
* region ops (``scf.for``/``scf.if``/``scf.while``) whose nested ops neither write memory nor raise
  (like MLIR, a side-effect-free loop goes even if it might not terminate);
* ``func.call`` of a callee that neither writes memory nor raises (looked up in the module).

Never removed: terminators, ops that may raise, ops that write memory that is read later.  A
dead buffer is an ``array.alloc`` whose only uses are stores into it, views of it and its
``array.free``: all of them go.  Runs to a fixpoint.
Mirrors MLIR's dead-op removal (``isOpTriviallyDead`` with ``RecursiveMemoryEffects``) and LLVM's
``ADCE`` plus the dead-store part of ``DSE`` for allocations nobody reads.
"""

from __future__ import annotations

from ..ir.core import VIEW, Module, Op
from ..ir.ops import Alloc, ArrayFree, Store
from .rewrite import Effects, is_attached, is_unused, walk


def dce(module: Module) -> bool:
    effects = Effects(module)
    changed = False
    for f in module:
        while _sweep(f, effects):
            changed = True
    return changed


def _sweep(f: Op, effects: Effects) -> bool:
    """One pass over ``f`` from its last op to its first (users before definitions)."""
    changed = False
    for op in walk(f, reverse=True):
        if is_unused(op) and effects.is_removable(op):
            op.erase()
            changed = True
        elif isinstance(op, Alloc) and (users := dead_buffer_users(op)) is not None:
            for user in reversed(users):  # a view's users before the view
                if is_attached(user, f):
                    user.erase()
            op.erase()
            changed = True
    return changed


def dead_buffer_users(alloc: Op) -> list[Op] | None:
    """When the buffer of ``alloc`` is only ever written (stored into, through views too) or
    freed, those ops in discovery order (each view before its own users); else None."""
    users: list[Op] = []
    work = [alloc.result]
    while work:
        for user, pos in work.pop().uses:
            if isinstance(user, Store) and pos == 1 or isinstance(user, ArrayFree):
                users.append(user)
            elif user.has_trait(VIEW) and pos == 0:
                users.append(user)
                work.extend(user.results)
            else:
                return None
    return users
