"""``scf``: structured control flow.  Regions hold one block; values defined outside a region may be
used inside it, but values leave a region only through its terminator (``scf.yield`` /
``scf.condition``).

* ``scf.for %lb, %ub, %step, %init... : T...`` iterates ``iv`` over ``range(lb, ub, step)``
  (Python's semantics, any sign of a non-zero step).  The body's arguments are ``(iv, carried...)``
  and it yields the next carried values; the results are the final ones.
* ``scf.parallel %lb, %ub, %step, %init... : T...`` is an ``scf.for`` whose iterations are
  independent (``zymase.prange``): it has the same operands, body and meaning when run in order,
  so every pass that handles ``scf.for`` handles it, and a pass that rebuilds it as an
  ``scf.for`` only loses the parallelism.  Its carried values must be reductions
  (``ir/parallel.py``); the backends run it in parallel when they still are.
* ``%n = scf.thread_count %elements, %work : i64`` bounds the threads a parallel loop making
  ``work`` updates run after it may use, each with accumulators of ``elements`` numbers;
  ``%t = scf.thread_slot %n : i64`` in a parallel loop's body is the running thread's number,
  ``0 <= t < n`` (0 when the loop runs serially): reverse mode's per-thread accumulators.
* ``scf.while %init... : T...`` has a *before* region ``^(args)`` ending in
  ``scf.condition %c, %fwd...`` and an *after* region ``^(fwd...)`` ending in
  ``scf.yield %next...``;
  the results are the values forwarded when ``%c`` is false.
* ``scf.if %c : T... {then} {else}``: both regions yield the results.
"""

from __future__ import annotations

from ..core import LOOP, READS, TERMINATOR, WRITES
from ..types import I1, I64
from .base import SimpleOp, VerifyError


class For(SimpleOp):
    name = "scf.for"
    traits = frozenset({LOOP})
    n_operands = None
    n_results = None
    n_regions = 1
    __slots__ = ()

    @property
    def lb(self):
        return self.operands[0]

    @property
    def ub(self):
        return self.operands[1]

    @property
    def step(self):
        return self.operands[2]

    @property
    def inits(self):
        return self.operands[3:]

    @property
    def body(self):
        return self.regions[0].block

    @property
    def iv(self):
        return self.body.args[0]

    @property
    def carried(self):
        return self.body.args[1:]

    def verify(self):
        super().verify()
        if len(self.operands) < 3 or any(v.type != I64 for v in self.operands[:3]):
            raise VerifyError("scf.for needs i64 lb, ub, step")
        want = [v.type for v in self.inits]
        if [r.type for r in self.results] != want:
            raise VerifyError("scf.for result types differ from its initial values")
        if [a.type for a in self.body.args] != [I64, *want]:
            raise VerifyError("scf.for body arguments must be (i64, carried types...)")
        _check_yield(self.body, want, "scf.yield")


class Parallel(For):
    name = "scf.parallel"
    __slots__ = ()


class ThreadCount(SimpleOp):
    name = "scf.thread_count"
    n_operands = 2
    traits = frozenset({READS, WRITES})  # (the pool's size when it runs: never moved)
    __slots__ = ()

    @classmethod
    def infer(cls, operand_types, attrs):
        return [I64]


class ThreadSlot(SimpleOp):
    name = "scf.thread_slot"
    n_operands = 1
    traits = frozenset({READS, WRITES})  # differs by thread: never hoisted out of its loop
    __slots__ = ()

    @classmethod
    def infer(cls, operand_types, attrs):
        return [I64]


class While(SimpleOp):
    name = "scf.while"
    traits = frozenset({LOOP})
    n_operands = None
    n_results = None
    n_regions = 2
    __slots__ = ()

    @property
    def before(self):
        return self.regions[0].block

    @property
    def after(self):
        return self.regions[1].block

    def verify(self):
        super().verify()
        inits = [v.type for v in self.operands]
        if [a.type for a in self.before.args] != inits:
            raise VerifyError("scf.while before-region arguments must match the initial values")
        fwd = [r.type for r in self.results]
        if [a.type for a in self.after.args] != fwd:
            raise VerifyError("scf.while after-region arguments must match its results")
        cond = self.before.terminator
        if cond is None or cond.name != "scf.condition":
            raise VerifyError("scf.while before-region must end in scf.condition")
        if [v.type for v in cond.operands] != [I1, *fwd]:
            raise VerifyError("scf.condition operands must be (i1, results...)")
        _check_yield(self.after, inits, "scf.yield")


class If(SimpleOp):
    name = "scf.if"
    n_operands = 1
    n_results = None
    n_regions = 2
    __slots__ = ()

    @property
    def cond(self):
        return self.operands[0]

    @property
    def then_block(self):
        return self.regions[0].block

    @property
    def else_block(self):
        return self.regions[1].block

    def verify(self):
        super().verify()
        if self.cond.type != I1:
            raise VerifyError("scf.if condition must be i1")
        want = [r.type for r in self.results]
        for b in (self.then_block, self.else_block):
            if b.args:
                raise VerifyError("scf.if regions take no arguments")
            _check_yield(b, want, "scf.yield")


class Yield(SimpleOp):
    name = "scf.yield"
    n_results = 0
    traits = frozenset({TERMINATOR})
    __slots__ = ()


class Condition(SimpleOp):
    name = "scf.condition"
    n_results = 0
    traits = frozenset({TERMINATOR})
    __slots__ = ()


def _check_yield(block, want, name):
    term = block.terminator
    if term is None or term.name != name:
        raise VerifyError(f"region must end in {name}")
    got = [v.type for v in term.operands]
    if got != list(want):
        raise VerifyError(f"{name} types {[str(t) for t in got]} != {[str(t) for t in want]}")
