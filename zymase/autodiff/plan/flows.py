"""Arrays passed on by control flow (carried by loops, chosen by branches): where each comes
from, and whether reverse mode may give it a shadow of its own.

A *flow value* is an array that control flow passes on: a loop's carried block argument or
result, an ``scf.while``'s arguments and results, an ``scf.if``'s result, an ``arith.select``
of arrays.  Reverse mode gives it a zeroed shadow of its own (``reverse/values.py``) and, where
the adjoint sweep reaches the point that passed it on, gives that shadow to the array that came
in (``edges``):

* **handed over** when the source dies there: a fresh buffer, or a flow value, of the block
  that passes it on (``y = y5`` at the end of a step, ``p = r + beta * p``): its shadow *is* the
  flow value's, and the buffer may be written afterwards (it has one name left);
* **added** into the source's shadow otherwise (the version a rejected step keeps, a loop's
  initial array, one of two arrays a branch picks).  Two names then hold one buffer with two
  shadows, which is exact only while nothing writes that buffer: ``written_after`` finds a
  write that may run after the hand-over (by buffer, and per instance: a buffer made in a loop's
  body is a new one each iteration), and reverse mode refuses there.  A loop's initial array
  that nothing uses after the loop (``consumed``) is exempt: the loop's name is its only one.

``written_after`` also tells when the adjoint of a matrix product may read an operand by
reference (nothing writes it after the product).
"""

from __future__ import annotations

from ...ir.core import LOOP, TERMINATOR, VIEW, Block, Op, Value
from ...ir.ops import Alloc, Call, For, If, Select, While
from ...ir.roots import call_writes
from ...ir.types import ArrayType
from .memory import Memory


def is_flow(v: Value) -> bool:
    """Is array ``v`` passed on by control flow (see the module docstring)?"""
    if not isinstance(v.type, ArrayType):
        return False
    if v.op is not None:
        return isinstance(v.op, (If, For, While, Select))
    owner = v.block.parent_op
    return isinstance(owner, While) or (isinstance(owner, For) and v.index > 0)


def edges(v: Value) -> list[tuple[Value, Op, Block | None]]:
    """(source, where, block) for each array that flow value ``v`` may receive: ``where`` is
    the terminator passing it in ``block`` (which it ends), or the loop or select taking it
    from outside (block None)."""
    op, out = v.op, []
    if op is None:
        owner = v.block.parent_op
        if isinstance(owner, For):
            body = owner.regions[0].block
            k = v.index - 1
            out.append((owner.operands[3 + k], owner, None))
            out.append((body.terminator.operands[k], body.terminator, body))
        elif v.block is owner.regions[0].block:  # a while loop's "before" argument
            after = owner.regions[1].block
            out.append((owner.operands[v.index], owner, None))
            out.append((after.terminator.operands[v.index], after.terminator, after))
        else:  # its "after" argument
            before = owner.regions[0].block
            out.append((before.terminator.operands[1 + v.index], before.terminator, before))
        return out
    k = op.results.index(v)
    if isinstance(op, For):
        body = op.regions[0].block
        return [(body.terminator.operands[k], body.terminator, body)]
    if isinstance(op, While):
        before = op.regions[0].block
        return [(before.terminator.operands[1 + k], before.terminator, before)]
    if isinstance(op, If):
        return [(r.block.terminator.operands[k], r.block.terminator, r.block)
                for r in op.regions]
    return [(op.operands[1], op, None), (op.operands[2], op, None)]  # a select


def handed_over(src: Value, where: Op, block: Block | None) -> bool:
    """Does ``src`` die where it is passed on, its shadow becoming the flow value's?"""
    if block is None or src.block is not block or \
            sum(x is src for x in where.operands) != 1:
        return False
    if src.op is None:
        return True  # the block's own argument
    return isinstance(src.op, Alloc) or is_flow(src) or fresh_call_result(src)


def fresh_call_result(v: Value) -> bool:
    """Is ``v`` an array a call returns that its callee always allocates (``summarize_calls``)?"""
    op = v.op
    return op is not None and isinstance(op, Call) and isinstance(v.type, ArrayType) and \
        bool((op.attrs.get("fresh") or [False] * len(op.results))[op.results.index(v)])


class Flows:
    """The questions above for one function (its writes and alias roots: ``Memory``)."""

    def __init__(self, memory: Memory):
        self.memory, self.func = memory, memory.func

    def written_after(self, x: Value, at: Op):
        """A write to a buffer of array ``x`` that may run after ``at`` (or inside it), else
        None."""
        roots = self.memory.roots(x)
        for w, rs in self.memory.writes:
            for root in rs & roots:
                home = _home(root, self.func)
                if home is self.func.body:  # one buffer per call
                    if may_run_after(w, at, home):
                        return w
                    continue
                # a buffer made in a block: a new one each time the block runs
                seen = self._instances(x, root)
                wrote = set().union(*(self._instances(y, root) for y in _written(w)
                                      if root in self.memory.roots(y)))
                if (seen == {"old"} and wrote <= {"new", "last"}) or \
                        (seen == {"last"} and wrote == {"new"}):
                    continue  # never the same buffer (see ``_instances``)
                if wrote & {"old", "last"} or may_run_after(w, at, home):
                    return w  # (a later run of the block may write an older one)
        return None

    def _instances(self, v: Value, root: Value) -> set:
        """Which buffers made by ``root`` (an allocation in a block) array ``v`` may be:
        "new", the one made by the run of that block holding ``v``; "old", one made by an
        earlier run (carried in by a loop, or from outside the block); "last", the one the last
        run made, as the loop or branch around the block passes it out (its result)."""
        home = root.block
        out, todo, seen = set(), [v], set()
        while todo:
            u = todo.pop()
            if u in seen or root not in self.memory.roots(u):
                continue
            seen.add(u)
            owner = u.op if u.op is not None else u.block.parent_op
            if u is root:
                out.add("new")
            elif owner is not None and owner is home.parent_op and u.op is owner:
                out.add("last")  # the loop's or branch's result
            elif (u.op is None and u.block is home) or owner is None or \
                    _chain(owner, home) is None:
                out.add("old")  # the block's argument, or made outside it
            elif is_flow(u):
                todo.extend(src for src, _, _ in edges(u))
            elif u.op is not None and u.op.has_trait(VIEW):
                todo.append(u.op.operands[0])
            elif u.op is not None and isinstance(u.op, Call):
                todo.extend(x for x in u.op.operands if isinstance(x.type, ArrayType))
            else:
                out |= {"old", "new"}
        return out

    def consumed(self, src: Value, loop: Op) -> bool:
        """Is ``src`` a fresh buffer that nothing uses after ``loop`` takes it as its initial
        value (its views and what calls return from it included)?"""
        if src.op is None or not isinstance(src.op, Alloc):
            return False
        around = _chain(loop, src.block)
        if around is None or any(p.has_trait(LOOP) for p in around[:-1]):
            return False  # (taken again by the loop's next run)
        return unused_after(src, loop)


def unused_after(v: Value, op: Op, inside: bool = False) -> bool:
    """Is nothing done with array ``v`` (its views and what calls return from it included) that
    may run after ``op``, which takes it, in ``v``'s block?  (Uses in another branch of an
    ``scf.if`` than ``op`` never run with it; with ``inside``, uses inside ``op`` (a branch
    passing it on) run before it is passed on.)"""
    todo, seen = [v], set()
    while todo:
        u = todo.pop()
        if u in seen:
            continue
        seen.add(u)
        for user, _ in u.uses:
            if user is op or _exclusive(user, op, v.block) or (inside and
                                                                op.is_ancestor_of(user)):
                continue
            if may_run_after(user, op, v.block):
                return False
            if user.has_trait(VIEW) or isinstance(user, Call):
                todo.extend(r for r in user.results if isinstance(r.type, ArrayType))
            elif user.regions or user.has_trait(TERMINATOR) or isinstance(user, Select):
                return False  # passed on under another name
    return True


def _written(w: Op) -> list[Value]:
    """The arrays ``w`` may write through."""
    return call_writes(w) if isinstance(w, Call) else w.written()


def _home(root: Value, func) -> Block:
    """The block each execution of which makes a new instance of buffer ``root``."""
    return root.block if root.op is not None else func.body


def may_run_after(w: Op, t: Op, home: Block) -> bool:
    """May ``w`` run after ``t`` (or inside it) within one execution of ``home``, which holds
    both?  Later in a common block, or earlier in a loop around both inside ``home``."""
    cw, ct = _chain(w, home), _chain(t, home)
    if cw is None or ct is None:
        return True  # (not both inside ``home``: assume the worst)
    for a, b in zip(cw, ct):
        if a is b:
            continue
        if a.parent is b.parent and a.parent.ops.index(a) > a.parent.ops.index(b):
            return True
        # earlier in the same block, or in another branch of an ``scf.if``: only a loop
        # between here and ``home`` brings it round again
        return any(p.has_trait(LOOP) for p in cw[:cw.index(a)])
    return True  # one holds the other


def _exclusive(a: Op, b: Op, home: Block) -> bool:
    """Are ``a`` and ``b`` in different branches of one ``scf.if`` (never both run in one
    execution of ``home``)?"""
    ca, cb = _chain(a, home), _chain(b, home)
    if ca is None or cb is None:
        return False
    for x, y in zip(ca, cb):
        if x is not y:
            return x.parent is not y.parent and isinstance(x.parent_op, If) and \
                x.parent_op is y.parent_op
    return False


def _chain(op: Op, home: Block):
    """``op``'s ancestors from the one directly in ``home`` down to ``op`` (None if ``op`` is
    not inside ``home``)."""
    out = [op]
    while op.parent is not home:
        op = op.parent_op
        if op is None:
            return None
        out.append(op)
    return out[::-1]
