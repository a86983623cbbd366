"""Scoped-noalias metadata: which buffers zymase knows apart, told to LLVM.

LLVM sees arrays as pointers loaded from descriptors, so before vectorizing a loop that stores to
one array and loads from another it versions the loop on a run-time overlap check.  LLVM >= 18
hoists such checks to the outer loop and gives up (always "overlap", the scalar copy runs) when
an address moves backwards with the outer loop, which every reverse-mode adjoint does:
``dc[i] += g[i] * tape[t, i]`` under ``for t`` running down took 0.49 ns an element instead of
0.23.  What the compiler knows makes most checks unnecessary.  Each load and store through an
array gets one scope, by the buffer its array was made from (``passes.licm.root``):

* ``tape``: the reverse-mode tape, reached only by ``tape.*`` ops: apart from every array;
* an ``array.alloc`` (each op its own class) or an ``array.const``: fresh or private memory,
  apart from every other class but the arrays of unknown origin;
* the arguments: one class, or one class each in a ``noalias`` specialization (the caller checked
  that no two arrays it passes share memory, ``compiler.arrays_disjoint``);
* anything else (an array carried by a loop, picked by a select, returned by a call, read from a
  list or a tape): unknown, apart from the tape only.

Two accesses are apart when one's class is in the other's ``!noalias`` list.  Classes are only
ever made coarser than the truth (two views of one buffer are one class), so the metadata claims
nothing the program can break.
"""

from __future__ import annotations

from ...ir.core import Func
from ...ir.ops import (
    Load,
    Store,
    TapePop,
    TapePopRef,
    TapePush,
    TapePushArray,
    TapePushRef,
    TapeRead,
)
from ...passes.licm import root, root_kind

TAPE_OPS = (TapePush, TapePop, TapeRead, TapePushRef, TapePopRef,
            TapePushArray)


class AliasScopes:
    """The scope classes of one function's memory accesses, as LLVM metadata."""

    def __init__(self, mod, func: Func):
        self.func = func
        self.distinct_args = bool(func.attrs.get("noalias", False))
        classes: dict = {}
        for op in func.walk():
            if isinstance(op, Load):
                classes.setdefault(self.class_of(op.operands[0]), None)
            elif isinstance(op, Store):
                classes.setdefault(self.class_of(op.operands[1]), None)
            elif isinstance(op, TAPE_OPS):
                classes.setdefault("tape", None)
        self.md: dict = {}
        if len(classes) < 2:
            return  # nothing to tell apart
        domain = mod.metadata(f'distinct !{{!"zymase.{func.sym_name}"}}')
        scope = {c: mod.metadata(f'distinct !{{!"{_name(c)}", !{domain}}}') for c in classes}
        for c in classes:
            apart = [scope[d] for d in classes if d != c and _apart(c, d)]
            own = mod.metadata(f"!{{!{scope[c]}}}")
            if apart:
                others = mod.metadata("!{" + ", ".join(f"!{s}" for s in apart) + "}")
                self.md[c] = f", !alias.scope !{own}, !noalias !{others}"

    def class_of(self, array):
        r = root(array)
        kind = root_kind(r, self.func)
        if kind == "arg":
            return ("arg", self.func.args.index(r)) if self.distinct_args else ("args",)
        if kind in ("alloc", "const"):
            return (kind, id(r.op))
        return ("unknown",)

    def of_array(self, array) -> str:
        """Metadata suffix for a load or store through ``array`` ('' when it says nothing)."""
        return self.md.get(self.class_of(array), "") if self.md else ""

    def of_tape(self) -> str:
        return self.md.get("tape", "")


def _apart(a, b) -> bool:
    if "tape" in (a, b):
        return True
    if ("unknown",) in (a, b):
        return False
    if a[0] == b[0] == "args":
        return False
    return True  # two allocations, an allocation and an argument, two checked-apart arguments


def _name(c) -> str:
    return "tape" if c == "tape" else ".".join(str(x) for x in c)
