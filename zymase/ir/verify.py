"""Verifier: checks that IR functions and modules keep the invariants every pass relies on.

``verify_func(f)`` and ``verify_module(m)`` raise ``VerifyError`` on the first broken invariant,
with a message that starts with the op's name and location (``scf.for at f.py:3:4 in @f: ...``).
Checks, in this order:

1. structure: ``op.parent``/``region.parent``/``block.parent`` back-links agree with the nesting, no
   op appears twice, result and block-argument ``owner``/``index`` fields are right, every region
   holds exactly one block, each region of ``func.func``/``scf.*`` ends in the right terminator
   (``_TERMINATORS``), any other region ends in some terminator, and terminators come only last;
2. dominance: every operand is defined earlier in the same block, or is an argument of that block,
   or is defined (before the op that holds the use) in an enclosing block.  Regions are not isolated
   from above, as in MLIR's scf; a value of a sibling region or of a later op is an error;
3. use lists: each value's ``uses`` holds exactly the (op, operand index) pairs that use it;
4. every op's own ``verify()`` hook (arity and types, see ``zymase.ir.ops``);
5. with a module: ``func.call`` names a function of the module, with matching types.
"""

from __future__ import annotations

from typing import NoReturn

from .core import TERMINATOR, Block, Func, Module, Op, Value
from .ops import Call, Condition, For, If, Parallel, Return, While, Yield
from .ops.base import VerifyError
from .types import Type

# The terminator that ends each region of an op, region by region (looked up by ``type(op)``).
_TERMINATORS: dict[type[Op], tuple[type[Op], ...]] = {
    Func: (Return,),
    For: (Yield,),
    Parallel: (Yield,),
    If: (Yield, Yield),
    While: (Condition, Yield),
}


def verify_module(m: Module) -> None:
    """Verify every function of ``m``, including the calls between them."""
    for name, f in m.funcs.items():
        if f.sym_name != name:
            raise VerifyError(_message(f, f, f"is registered in the module as @{name}"))
    for f in m:
        verify_func(f, m)


def verify_func(f: Func, module: Module | None = None) -> None:
    """Verify one function; calls are checked against ``module`` when it is given."""
    try:
        ops = _check_structure(f)
        _check_dominance(f)
        _check_uses(ops)
        for op in ops:
            _run_hook(op)
        if module is not None:
            _check_calls(ops, module)
    except _Failure as e:
        raise VerifyError(_message(e.op, f, e.msg)) from None


# ---- messages
class _Failure(Exception):
    """Raised by the checks; ``verify_func`` turns it into a VerifyError naming the function."""

    def __init__(self, op: Op | None, msg: str):
        super().__init__(msg)
        self.op = op
        self.msg = msg


def _fail(op: Op | None, msg: str) -> NoReturn:
    raise _Failure(op, msg)


def _message(op: Op | None, f: Func, msg: str) -> str:
    """``<op> at <loc> in @<func>: <msg>`` (``func.func @f at <loc>: <msg>`` for ``f`` itself)."""
    if op is f:
        return f"func.func @{f.sym_name} at {f.loc}: {msg}"
    if op is None:
        return f"in @{f.sym_name}: {msg}"
    return f"{op.name} at {op.loc} in @{f.sym_name}: {msg}"


def _describe(v: Value) -> str:
    owner = v.owner
    if isinstance(owner, Op):
        return f"result #{v.index} of {owner.name} at {owner.loc}"
    if isinstance(owner, Block):
        op = owner.parent_op
        return f"argument #{v.index} of a block of {op.name if op else 'no op'}"
    return "a value with no defining op or block"


def _types(types: list[Type]) -> str:
    return "(" + ", ".join(str(t) for t in types) + ")"


# ---- 1. structure
def _check_structure(f: Func) -> list[Op]:
    """Check back-links, blocks and terminators; return every op of ``f`` in program order."""
    ops: list[Op] = []
    seen: set[Op] = set()
    if not isinstance(f.attrs.get("result_types"), list):
        _fail(f, "needs a list of result types")
    _check_op_structure(f, f.parent, ops, seen)
    return ops


def _check_op_structure(op: Op, block: Block | None, ops: list[Op], seen: set[Op]) -> None:
    if op in seen:
        _fail(op, "appears twice in the IR")
    seen.add(op)
    ops.append(op)
    if op.parent is not block:
        _fail(op, "op.parent is not the block that holds the op")
    for i, r in enumerate(op.results):
        if r.owner is not op or r.index != i:
            _fail(op, f"result #{i} has a wrong owner or index")
    wanted = _TERMINATORS.get(type(op))
    if wanted is not None and len(op.regions) != len(wanted):
        _fail(op, f"expects {len(wanted)} regions, has {len(op.regions)}")
    for k, region in enumerate(op.regions):
        if region.parent is not op:
            _fail(op, f"region #{k}.parent is not the op")
        if len(region.blocks) != 1:
            _fail(op, f"region #{k} has {len(region.blocks)} blocks; a region holds exactly one")
        b = region.blocks[0]
        if b.parent is not region:
            _fail(op, f"the block of region #{k} has a wrong parent")
        for j, a in enumerate(b.args):
            if a.owner is not b or a.index != j:
                _fail(op, f"argument #{j} of region #{k} has a wrong owner or index")
        _check_terminator(op, k, b, wanted[k] if wanted else None)
        for child in b.ops:
            _check_op_structure(child, b, ops, seen)


def _check_terminator(op: Op, k: int, b: Block, wanted: type[Op] | None) -> None:
    for child in b.ops[:-1]:
        if child.has_trait(TERMINATOR):
            _fail(child, "a terminator must be the last op of its block")
    last = b.ops[-1] if b.ops else None
    found = f"found {last.name}" if last is not None else "found an empty block"
    if wanted is not None and type(last) is not wanted:
        _fail(op, f"region #{k} must end in {wanted.name}, {found}")
    if wanted is None and (last is None or not last.has_trait(TERMINATOR)):
        _fail(op, f"region #{k} must end in a terminator, {found}")


# ---- 2. dominance
def _check_dominance(f: Func) -> None:
    _visit_block(f.body, set())


def _visit_block(b: Block, visible: set[Value]) -> None:
    """Check the uses in ``b``; ``visible`` holds the values defined above it (restored on exit)."""
    added = list(b.args)
    visible.update(added)
    for op in b.ops:
        for i, v in enumerate(op.operands):
            if v not in visible:
                _fail(op, f"operand #{i} does not dominate its use: {_why_not(v, op)}")
        for region in op.regions:
            for inner in region.blocks:
                _visit_block(inner, visible)
        visible.update(op.results)
        added.extend(op.results)
    visible.difference_update(added)


def _why_not(v: Value, use: Op) -> str:
    """Why ``v`` is not visible at ``use`` (only computed for the error message)."""
    what = _describe(v)
    block = v.block
    if v.owner is None:
        return f"it is {what} (a placeholder?)"
    if block is None:
        return f"it is {what}, which is in no block (erased or detached?)"
    enclosing: dict[Block, Op] = {}  # each block around the use -> the op of it that holds the use
    op = use
    while op is not None and op.parent is not None:
        enclosing[op.parent] = op
        op = op.parent_op
    if block in enclosing and enclosing[block] is v.owner:
        return f"it is {what}, the op whose region uses it"
    if block in enclosing:
        return f"it is {what}, defined after its use"
    if op is not _func_of(v):
        return f"it is {what}, in another function"
    return f"it is {what}, in a region that does not enclose the use"


def _func_of(v: Value) -> Op | None:
    op = v.owner if isinstance(v.owner, Op) else v.owner.parent_op
    while op is not None and op.parent is not None:
        op = op.parent_op
    return op


# ---- 3. use lists
def _check_uses(ops: list[Op]) -> None:
    """Each value's ``uses`` must be exactly the operand slots that hold it (after dominance)."""
    members = set(ops)
    recorded = 0
    for op in ops:
        recorded += _check_recorded_uses(op.results, members)
        for region in op.regions:
            for b in region.blocks:
                recorded += _check_recorded_uses(b.args, members)
    if recorded == sum(len(op.operands) for op in ops):
        return
    for op in ops:
        for i, v in enumerate(op.operands):
            if (op, i) not in v.uses:
                _fail(op, f"operand #{i} ({_describe(v)}) is missing from that value's use list")


def _check_recorded_uses(values: list[Value], members: set[Op]) -> int:
    """Check that every recorded use of ``values`` is real; return how many there are."""
    n = 0
    for v in values:
        uses = v.uses
        if len(uses) > 1 and len(set(uses)) != len(uses):
            _fail_value(v, "has the same use recorded twice")
        for op, i in uses:
            if op not in members:
                _fail_value(
                    v, f"has a stale use by {op.name} at {op.loc}, which is not in this function"
                )
            if i >= len(op.operands) or op.operands[i] is not v:
                _fail_value(v, f"has a stale use as operand #{i} of {op.name} at {op.loc}")
        n += len(uses)
    return n


def _fail_value(v: Value, msg: str) -> NoReturn:
    owner = v.owner if isinstance(v.owner, Op) else v.owner.parent_op
    _fail(owner, f"{_describe(v)} {msg}")


# ---- 4. op hooks
_HOOK_CRASHES = (AttributeError, TypeError, IndexError, KeyError, ValueError)


def _run_hook(op: Op) -> None:
    hook = getattr(op, "verify", None)
    if hook is None:
        return
    try:
        hook()
    except VerifyError as e:
        _fail(op, str(e))
    except _HOOK_CRASHES as e:  # a hook that trips over malformed IR still gives a VerifyError
        _fail(op, f"malformed op ({type(e).__name__} in its verify hook: {e})")


# ---- 5. calls
def _check_calls(ops: list[Op], m: Module) -> None:
    for op in ops:
        if not isinstance(op, Call):
            continue
        callee = op.attrs.get("callee")
        if not isinstance(callee, str):
            _fail(op, "needs a callee attribute (@name)")
        g = m.funcs.get(str(callee))
        if g is None:
            _fail(op, f"calls @{callee}, which is not in the module")
        args = [v.type for v in op.operands]
        if args != g.arg_types:
            _fail(
                op, f"argument types {_types(args)} != @{callee} parameters {_types(g.arg_types)}"
            )
        results = [r.type for r in op.results]
        if results != list(g.result_types):
            msg = f"result types {_types(results)} != @{callee} results {_types(g.result_types)}"
            _fail(op, msg)
