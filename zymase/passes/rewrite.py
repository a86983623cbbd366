"""Small helpers shared by the passes: walking with safe mutation, replacing and erasing ops,
cloning ops with their regions, and a summary of what an op may do to memory.

Mirrors the parts of MLIR's ``PatternRewriter`` and ``SideEffectInterfaces`` that our passes use:
``replace_op`` is ``replaceOp``, ``Effects`` is ``MemoryEffectOpInterface`` plus
``RecursiveMemoryEffects`` (an op with regions has the effects of the ops inside it) plus the
callee lookup LLVM's ``FunctionAttrs`` does for calls.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from ..ir.core import (
    ALLOCATES,
    MAY_RAISE,
    READS,
    TERMINATOR,
    WRITES,
    Block,
    Func,
    Module,
    Op,
    Region,
    Value,
)
from ..ir.ops import Call, Constant

EFFECTS = frozenset({READS, WRITES, ALLOCATES, MAY_RAISE})


# ---- walking


def is_attached(op: Op, root: Op) -> bool:
    """Whether ``op`` is still nested in ``root`` (an erased op, or one inside it, is not)."""
    while op is not None and op is not root:
        block = op.parent
        if block is None or block.parent is None:
            return False
        op = block.parent.parent
    return op is root


def walk(root: Op, reverse: bool = False) -> Iterator[Op]:
    """The ops nested in ``root`` (not ``root`` itself) in program order, from a snapshot taken up
    front; ``reverse`` visits users before definitions and nested ops before their parents.

    Safe under mutation: an op erased (or moved out of ``root``) before its turn is skipped.
    """
    order = list(root.walk())
    for op in reversed(order) if reverse else order:
        if op is not root and is_attached(op, root):
            yield op


def ancestors(op: Op) -> Iterator[Op]:
    """The ops enclosing ``op``, innermost first."""
    op = op.parent_op
    while op is not None:
        yield op
        op = op.parent_op


def defining_scope(value: Value) -> Op | None:
    """The op whose body defines ``value``'s block: for an op result, that op itself."""
    owner = value.owner
    return owner if isinstance(owner, Op) else owner.parent_op


def is_defined_outside(value: Value, op: Op) -> bool:
    """Whether ``value`` is defined outside ``op`` (neither a result of ``op`` nor of anything
    inside it, nor an argument of one of its blocks)."""
    scope = defining_scope(value)
    while scope is not None:
        if scope is op:
            return False
        scope = scope.parent_op
    return True


def free_values(op: Op) -> list[Value]:
    """The values ``op`` and the ops nested in it use that are defined outside ``op``."""
    seen: dict[Value, None] = {}
    for inner in op.walk():
        for v in inner.operands:
            if v not in seen and (inner is op or is_defined_outside(v, op)):
                seen[v] = None
    return list(seen)


# ---- mutation


def replace_op(op: Op, values: list[Value]) -> None:
    """Replace every use of ``op``'s results by ``values`` and erase ``op``."""
    for r, v in zip(op.results, values, strict=True):
        r.replace_all_uses_with(v)
    op.erase()


def is_unused(op: Op) -> bool:
    return not any(r.uses for r in op.results)


def erase_if_unused(op: Op) -> bool:
    """Erase a PURE op whose results nobody uses; return whether it was erased."""
    if op.is_pure and not op.regions and is_unused(op):
        op.erase()
        return True
    return False


def move_before(op: Op, anchor: Op) -> None:
    """Move ``op`` (with its regions) to just before ``anchor``."""
    op.detach()
    anchor.parent.insert_before(anchor, op)


def inline_block_before(block: Block, anchor: Op, args: list[Value]) -> list[Value]:
    """Move ``block``'s ops before ``anchor`` with its arguments bound to ``args``; erase its
    terminator and return the values the terminator passed on."""
    for a, v in zip(block.args, args, strict=True):
        a.replace_all_uses_with(v)
    term = block.terminator
    out = list(term.operands) if term is not None else []
    for op in list(block.ops):
        if op is term:
            op.erase()
        else:
            move_before(op, anchor)
    return out


def rebuild(op: Op, operands: list[Value], keep: list[int], cls=None, attrs=None) -> Op:
    """Replace ``op`` by an op of its class (or ``cls``, with ``attrs``: an ``scf.for`` made an
    ``scf.parallel`` and back) with new ``operands`` and only the results in ``keep`` (the
    others must be unused); its regions move over unchanged."""
    regions = list(op.regions)
    op.regions = []
    new = (cls or type(op))(operands, [op.results[i].type for i in keep],
                            op.attrs if attrs is None else attrs, regions, op.loc)
    op.parent.insert_before(op, new)
    for k, i in enumerate(keep):
        new.results[k].hint = op.results[i].hint
        op.results[i].replace_all_uses_with(new.results[k])
    assert is_unused(op), f"rebuild dropped a used result of {op.name}"
    op.erase()
    return new


def clone_op(op: Op, mapping: dict[Value, Value]) -> Op:
    """A deep copy of ``op`` (regions included) whose operands are looked up in ``mapping``
    (values not in it are kept); the copy's results and block arguments are added to it."""
    regions = [_clone_region(r, mapping) for r in op.regions]
    attrs = {k: list(v) if isinstance(v, list) else v for k, v in op.attrs.items()}
    operands = [mapping.get(v, v) for v in op.operands]
    new = type(op)(operands, [r.type for r in op.results], attrs, regions, op.loc)
    for old, r in zip(op.results, new.results, strict=True):
        r.hint = old.hint
        mapping[old] = r
    return new


def _clone_region(region: Region, mapping: dict[Value, Value]) -> Region:
    blocks = []
    for b in region.blocks:
        nb = Block()
        for a in b.args:
            mapping[a] = nb.add_arg(a.type, a.hint)
        for op in b.ops:
            nb.append(clone_op(op, mapping))
        blocks.append(nb)
    return Region(blocks)


# ---- constants and attribute keys


def constant_value(v: Value):
    """The Python value of ``v`` when it is an ``arith.constant``, else None."""
    op = v.op
    return op.attrs["value"] if isinstance(op, Constant) else None


def attr_key(a):
    """A hashable key equal exactly when two attributes are the same bits (``0.0`` and ``-0.0``
    differ, so do NaNs of different sign; a NaN equals itself; ``True`` differs from ``1``)."""
    if isinstance(a, float):
        return ("f", struct.pack("<d", a))
    if isinstance(a, complex):
        return ("c", attr_key(a.real), attr_key(a.imag))
    if isinstance(a, (list, tuple)):
        return ("l", *(attr_key(x) for x in a))
    if hasattr(a, "tobytes"):
        return ("a", str(a.dtype), a.shape, a.tobytes())
    return (type(a).__name__, a)


def op_key(op: Op, commutative: bool = False) -> tuple:
    """Everything that makes two region-free ops compute the same thing."""
    operands = tuple(id(v) for v in op.operands)
    if commutative:
        operands = tuple(sorted(operands))
    attrs = tuple(sorted((k, attr_key(v)) for k, v in op.attrs.items()))
    return (op.name, operands, attrs, tuple(r.type for r in op.results))


def trip_count(loop: Op) -> int | None:
    """The number of iterations of an ``scf.for`` when it is known at compile time."""
    lb, ub, step = (constant_value(v) for v in loop.operands[:3])
    if loop.operands[0] is loop.operands[1]:
        return 0
    if lb is None or ub is None or not step:
        return None
    return len(range(lb, ub, step))


# ---- effects


class Effects:
    """What ops may do: a subset of READS, WRITES, ALLOCATES and MAY_RAISE, looking through
    regions and into callees.  Cached per function; make a fresh one per pass run."""

    def __init__(self, module: Module | None):
        self.module = module
        self._funcs: dict[str, frozenset[str]] = {}

    def of(self, op: Op) -> frozenset[str]:
        if isinstance(op, Call):
            return self.of_func(str(op.attrs["callee"]))
        eff = op.traits & EFFECTS
        for r in op.regions:
            for b in r.blocks:
                for inner in b.ops:
                    eff |= self.of(inner)
        return eff

    def of_func(self, name: str) -> frozenset[str]:
        if name not in self._funcs:
            if self.module is None or name not in self.module.funcs:
                return EFFECTS
            self._funcs[name] = EFFECTS  # a recursive call sees the worst case
            body = self.module.funcs[name].body.ops
            self._funcs[name] = frozenset().union(*(self.of(op) for op in body))
        return self._funcs[name]

    def is_removable(self, op: Op) -> bool:
        """Whether erasing ``op`` (its results unused) changes nothing observable."""
        if op.has_trait(TERMINATOR):
            return False
        return not (self.of(op) & {WRITES, MAY_RAISE}) and not isinstance(op, Func)


def is_speculatable(op: Op) -> bool:
    """Whether ``op`` may run where it did not before: pure, region-free, cannot raise."""
    return op.is_pure and not op.regions and not op.has_trait(MAY_RAISE)
