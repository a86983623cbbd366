"""How the adjoint sweep obtains each primal value it needs: the plan of what is stored on the
tape, recomputed, reloaded from memory or read from a snapshot.  Decides only; builds no IR.

``Plan.how(v, here)`` answers for a scalar ``v`` not defined at the function's top level (those
are used as they are):

* ``"recompute"``: cheap pure ops (``policy.py``), and expensive ones whose operands are at hand
  without anything stored for ``v``'s own block;
* ``"reload"`` / ``"snapshot"`` / ``"carried"``: loads read again from the buffer, or from a copy
  of it taken before a loop (``memory.py``);
* ``"kept"``: loads read again from an array made in a loop that nothing writes afterwards,
  kept by reference once per iteration (``kept_load``; ``flows.py``);
* ``"stored"``: a value stored into an array that keeps it (``memory.stored_at``: an
  activation ``h[i, j] = tanh(...)``), loaded back instead of recomputed or stored;
* ``"induction"``: loop-carried integers that grow by a loop-invariant step (``idx += 1``);
* ``"tape"``: everything else, and the values the min-cut chose to store (``stores``).

``here`` tells what the adjoint sweep already holds at the point of the question (``Here``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ...ir.core import EXPENSIVE, LOOP, PURE, VIEW, Block, Func, Value
from ...ir.ops import AddI, Alloc, For, If, Load, SubI
from ...ir.types import I64, ArrayType
from ...passes.rewrite import constant_value
from ..activity import Activity
from .flows import Flows
from .memory import Memory
from .policy import ALWAYS_RECOMPUTE, Policy


class Here:
    """What the adjoint sweep holds where a value is asked for: ``has(v)``, a value already made
    available (popped, recomputed) in an open reverse region; ``is_open(block)``, a reverse region
    for primal ``block`` is being built around this point (by default every block counts as
    open: the question is asked outside any reverse region, as the min-cut does)."""

    __slots__ = ("has", "is_open")

    def __init__(self, has=lambda v: False, is_open=lambda block: True):
        self.has, self.is_open = has, is_open


@dataclass(frozen=True)
class Plan:
    """The analyses reverse mode decides by, for one function and one activity pattern, and the
    values the min-cut chose to store (``stores``; ``storing`` gives a plan with others)."""

    func: Func
    act: Activity
    policy: Policy
    memory: Memory
    disable: frozenset = frozenset()
    stores: frozenset = field(default=frozenset())

    def storing(self, stores) -> Plan:
        return replace(self, stores=frozenset(stores))

    def how(self, v: Value, here: Here) -> str:
        """"recompute", "reload", "snapshot", "carried", "kept", "stored", "induction" or
        "tape" (see above)."""
        if v in self.stores:
            return "tape"
        op = v.op
        if op is None:
            return self._how_argument(v)
        if isinstance(op, Load):
            return self._how_load(op)
        if any(isinstance(x.type, ArrayType) and not self.array_available(x) for x in op.operands):
            return "tape"  # e.g. the size of an array carried by a loop
        if self.policy.recompute(v):
            return "recompute"
        if "reload" not in self.disable and self._stored(v):
            return "stored"
        if (op.has_trait(EXPENSIVE) and "recompute_expensive" not in self.disable
                and self.tape_free(v, here)):
            return "recompute"
        return "tape"

    def _how_argument(self, v: Value) -> str:
        if "recompute" not in self.disable and self.induction(v) is not None:
            return "induction"
        if not {"carried", "snapshot"} & self.disable and \
                self.memory.carried_load(v) is not None:  # read from the loop's snapshot
            return "carried"
        return "tape"

    def _how_load(self, op) -> str:
        if not self.array_available(op.operands[0]):
            return "kept" if "reload" not in self.disable and self.kept_load(op) else "tape"
        if "reload" not in self.disable and (self.policy.read_only(op.operands[0]) or
                                             self.memory.reload_safe(op)):
            return "reload"
        if "snapshot" not in self.disable and self.memory.snapshot_for(op) is not None:
            return "snapshot"
        return "tape"

    def _stored(self, v: Value) -> bool:
        st = self.memory.stored_at(v)
        return st is not None and self.array_available(st.operands[1])

    def kept_load(self, load) -> bool:
        """Is ``load`` one of a loop's reads of an array made in a block around that loop (a
        version of an array a loop renews, read element by element) that nothing writes
        afterwards?  The array is then kept by reference once per run of its block instead of
        a value per read (``"kept"``).  (A read not in a loop of its own stays on the tape: a
        whole array kept for one element could cost far more.)"""
        a = load.operands[0]
        p, inner = load.parent_op, False
        while p is not None and p is not self.func and (a.op is None or not p.is_ancestor_of(
                a.op)) and p is not a.block.parent_op:
            inner = inner or p.has_trait(LOOP)
            p = p.parent_op
        return inner and not self._small(a) and Flows(self.memory).written_after(a, load) is None

    def _small(self, a: Value) -> bool:
        """Is every buffer ``a`` may be one of at most 16 elements (then its elements cost less
        on the tape than a reference)?"""
        roots = self.memory.roots(a)
        sizes = []
        for r in roots:
            if r.op is None or not isinstance(r.op, Alloc):
                return False
            n = 1
            for d in r.op.operands:
                c = constant_value(d)
                if c is None:
                    return False
                n *= c
            sizes.append(n)
        return bool(sizes) and max(sizes) <= 16

    def tape_free(self, v: Value, here: Here, depth: int = 8, home: Block | None = None) -> bool:
        """Can ``v`` be had in the adjoint sweep without anything on the tape of its own block?

        A value of an enclosing block (a loop around ``v``'s loop, hoisted there by LICM)
        counts as free: it costs at most one slot per trip of that outer block, where storing
        ``v`` would cost one per trip of ``v``'s own."""
        if v.block is self.func.body or here.has(v):
            return True
        if home is None:
            home = v.block
        elif v.block is not home and here.is_open(v.block):
            return True
        op = v.op
        if op is None:
            p = v.block.parent_op
            return p is not None and isinstance(p, For) and v is p.regions[0].block.args[0]
        if depth == 0 or op.regions:
            return False
        if isinstance(op, Load):
            return self.array_available(op.operands[0]) and (
                self.policy.read_only(op.operands[0]) or self.memory.reload_safe(op))
        if not (op.has_trait(PURE) or isinstance(op, ALWAYS_RECOMPUTE)):
            return False
        return all(self.tape_free(x, here, depth - 1, home) for x in op.operands)

    def array_available(self, a: Value) -> bool:
        """Can the adjoint sweep have primal array ``a`` (made at the top level or in
        branches, or a view of such an array)?"""
        if a.block is self.func.body:
            return True
        op = a.op
        if op is not None and op.has_trait(VIEW):
            return self.array_available(op.operands[0])
        p = a.block.parent_op if op is None else op.parent_op
        if op is None:
            return False  # carried by a loop or a block argument
        while p is not self.func:
            if not isinstance(p, If):
                return False
            p = p.parent_op
        return True

    def induction(self, v: Value):
        """(loop, init, step_value, AddI or SubI) when loop-carried ``v`` grows by a
        loop-invariant amount each iteration (``idx += 1``); it is then init + t * step at
        iteration t."""
        loop = v.block.parent_op
        if loop is None or not isinstance(loop, For) or v.index == 0 or not v.type.is_int:
            return None
        body = loop.regions[0].block
        y = body.terminator.operands[v.index - 1]
        op = y.op
        if op is None or not isinstance(op, (AddI, SubI)):
            return None
        a, b = op.operands
        if a is v and _outside(b, loop):
            return loop, loop.operands[3 + v.index - 1], b, type(op)
        if isinstance(op, AddI) and b is v and _outside(a, loop):
            return loop, loop.operands[3 + v.index - 1], a, type(op)
        return None

    def invertible(self, v: Value):
        """For an integer ``v`` carried by an ``scf.for`` whose next value is ``v`` plus an
        amount that does not depend on ``v`` (not a loop-invariant one: that is an induction),
        how to compute that amount: ``("trips", inner_loop, step)`` (an inner loop's induction
        started at ``v`` advances it by trips x step: gmm's ``idx``) or ``("add", x)``; else
        None.  The reverse loop then recovers ``v`` from the next iteration's value by
        subtracting the amount, instead of popping it."""
        loop = v.block.parent_op
        if loop is None or not isinstance(loop, For) or v.index == 0 or v.type != I64 or \
                self.induction(v) is not None:  # (i64 only: trip counts are i64)
            return None
        body = loop.regions[0].block
        y = body.terminator.operands[v.index - 1]
        op = y.op
        if op is None or op.parent is not body:
            return None
        if isinstance(op, For):  # y = an inner loop's induction started at v
            j = op.results.index(y)
            ind = self.induction(op.regions[0].block.args[1 + j])
            if op.operands[3 + j] is not v or ind is None or ind[3] is not AddI:
                return None
            return "trips", op, ind[2]
        if isinstance(op, AddI) and v in op.operands:
            x = op.operands[1] if op.operands[0] is v else op.operands[0]
            if x is v or _depends_on(x, v, body):
                return None
            return "add", x
        return None


def make_plan(func: Func, active_args, active_results, disable=frozenset()) -> Plan:
    """The plan for differentiating ``func`` (before any IR is built; stores none yet)."""
    act = Activity(func, sorted(active_args), list(active_results))
    return Plan(func, act, Policy(func, act, frozenset(disable)), Memory(func, act),
                frozenset(disable))


def _depends_on(x: Value, v: Value, body: Block) -> bool:
    """Whether ``x`` (defined in ``body`` or outside) is computed from ``v`` inside ``body``."""
    todo, seen = [x], set()
    while todo:
        u = todo.pop()
        if u is v:
            return True
        if u in seen or u.op is None or not body.parent_op.is_ancestor_of(u.op):
            continue
        seen.add(u)
        for inner in u.op.walk():
            todo.extend(inner.operands)
    return False


def _outside(v: Value, loop) -> bool:
    owner = v.op if v.op is not None else v.block.parent_op
    return owner is None or not loop.is_ancestor_of(owner)
