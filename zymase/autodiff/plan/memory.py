"""Where the adjoint sweep finds the values loads read in the forward sweep (mod/ref analysis
over buffers, by alias roots as in ``activity.py``).

* ``reload_safe(load)``: nothing writes the load's buffer after it (later in its block, in
  enclosing blocks, or in later iterations of an enclosing loop), so the adjoint sweep loads the
  same value again from the buffer.
* ``snapshot_for(load)``: otherwise, the outermost loop ``X`` around the load such that nothing
  inside ``X`` writes a location of the buffer before the load reads it: either nothing in ``X``
  writes the buffer (``nbody``'s force loops read positions the drift loop writes later), or
  ``X`` is the load's own loop and writes it only at the loop index plus a constant that the
  load has already passed (``heat1d``'s ``u[i] = f(u[i], u[i+1])``).  One copy of the buffer is
  pushed on the tape before each run of ``X`` and the load reads it back: one state per time
  step instead of one value per load.
* ``carried_load(arg)``: a loop-carried value that is the previous iteration's load (``prev =
  cur`` in ``heat1d``) is read back from the same copy, shifted by one step.
"""

from __future__ import annotations

from ...ir.core import LOOP, VIEW, Op, Value
from ...ir.ops import AddI, Alloc, Call, For, Func, If, Load, Store, SubI
from ...ir.roots import call_writes
from ...ir.types import ArrayType
from ...passes.rewrite import constant_value


def written_roots(op: Op, roots: dict) -> set:
    """Alias roots of the buffers ``op`` itself may write (a call: the arrays its callee may
    write, ``call_writes``)."""
    written = call_writes(op) if isinstance(op, Call) else op.written()
    return set().union(*(roots.get(v, set()) for v in written))


class Memory:
    """Mod/ref queries over ``func``'s buffers (see the module docstring)."""

    def __init__(self, func, act):
        self.func, self.act = func, act
        self.writes: list[tuple[Op, set]] = []
        for op in func.walk():
            roots = written_roots(op, act.roots)
            if roots:
                self.writes.append((op, roots))
        self._snap_cache: dict = {}

    def roots(self, array: Value) -> set:
        return self.act.roots.get(array, set())

    def settled_before(self, array: Value, op: Op) -> bool:
        """Is ``array``'s content final before the top-level statement that holds ``op`` runs
        (its buffers written only by earlier statements)?  Then the adjoint of ``op``, wherever
        it runs, reads the buffer as ``op`` did (a matrix made before a loop that multiplies
        by it)."""
        roots = self.roots(array)
        if not roots:
            return False
        top = _top_index(self.func, op)
        return all(_top_index(self.func, w) < top for w, rs in self.writes if rs & roots)

    def writes_in(self, op: Op, roots: set) -> list[Op]:
        """Write ops inside ``op`` (itself included) that may write ``roots``."""
        return [w for w, r in self.writes if r & roots and op.is_ancestor_of(w)]

    # ------------------------------------------------------------------ reload
    def reload_safe(self, load: Op) -> bool:
        roots = self.roots(load.operands[0])
        if not roots:
            return False
        x = load
        while x.parent_op is not self.func:
            parent = x.parent_op
            if parent.has_trait(LOOP) and self.writes_in(parent, roots):
                return False  # a later iteration may overwrite it
            if self._written_after(x, roots):
                return False
            x = parent
        return not self._written_after(x, roots)

    def _written_after(self, x: Op, roots: set) -> bool:
        ops = x.parent.ops
        return any(self.writes_in(op, roots) for op in ops[ops.index(x) + 1:])

    def stored_at(self, v: Value):
        """The store of ``v`` into an array (in ``v``'s block) whose location nothing writes
        afterwards, when there is one: the adjoint sweep then loads ``v`` back rather than
        storing or recomputing it (``tanh``'s output, which the activations hold).  Each loop
        between the store and the array's block must index one dimension of it by its own
        counter, so that its iterations write different locations."""
        for st, k in v.uses:
            if k != 0 or not isinstance(st, Store) or st.parent is not v.block:
                continue
            arr = st.operands[1]
            roots = self.roots(arr)
            chain = _chain_in(st, _owner_block(arr))
            if not roots or chain is None:
                continue
            loops = [p for p in chain[:-1] if p.has_trait(LOOP)]
            if any(w is not st and r & roots and chain[0].is_ancestor_of(w)
                   for w, r in self.writes):
                continue  # (another write in the nest, or in the store's statement)
            if _distinct_locations(st, loops) and not self._written_after(chain[0], roots):
                return st
        return None

    # ------------------------------------------------------------------ snapshots
    def snapshot_for(self, load: Op):
        """(loop X, root buffer) when ``load`` can be served by a copy taken before ``X``."""
        if load in self._snap_cache:
            return self._snap_cache[load]
        self._snap_cache[load] = result = self._snapshot_for(load)
        return result

    def _snapshot_for(self, load: Op):
        roots = self.roots(load.operands[0])
        if len(roots) != 1:
            return None
        (root,) = roots
        if not self._snapshottable(root):
            return None
        loops = _enclosing_loops(load)
        if not loops or not isinstance(loops[0], For) or \
                not self._valid_innermost(loops[0], load, roots):
            return None
        best = loops[0]
        for outer in loops[1:]:
            if not isinstance(outer, For) or self.writes_in(outer, roots):
                break
            best = outer
        return best, root

    def _snapshottable(self, root) -> bool:
        t = root.type
        if not isinstance(t, ArrayType) or t.layout != "C" or not t.dtype.is_inexact:
            return False
        if root.op is None:
            return root.block is self.func.body  # an argument
        return isinstance(root.op, Alloc) and root.op.parent is self.func.body

    def _valid_innermost(self, loop: Op, load: Op, roots: set) -> bool:
        writes = self.writes_in(loop, roots)
        if not writes:
            return True
        step = constant_value(loop.operands[2])
        body = loop.regions[0].block
        iv = body.args[0]
        if not step or load.parent is not body:
            return False
        shape_l = _affine_index(load.operands[1:], iv, loop)
        for w in writes:
            if not isinstance(w, Store) or w.parent is not body or w.operands[1] is not \
                    load.operands[0]:
                return False
            shape_w = _affine_index(w.operands[2:], iv, loop)
            if shape_l is None or shape_w is None or shape_l[0] != shape_w[0]:
                return False
            gap = (shape_l[1] - shape_w[1]) * step  # > 0: the write is behind the load
            after = body.ops.index(w) > body.ops.index(load)
            if gap < 0 or (gap == 0 and not after):
                return False
        return True

    # ------------------------------------------------------------------ carried loads
    def carried_load(self, arg: Value):
        """(load, shift) when loop-carried ``arg`` equals the load ``load`` of the previous
        iteration (``arg`` at iteration iv is ``load``'s location at iv - step), served by the
        same snapshot; else None."""
        loop = arg.block.parent_op
        if loop is None or not isinstance(loop, For) or arg.index == 0:
            return None
        step, lb = constant_value(loop.operands[2]), constant_value(loop.operands[0])
        body = loop.regions[0].block
        k = arg.index - 1
        y = body.terminator.operands[k]
        init = loop.operands[3 + k]
        ly, l0 = y.op, init.op
        if ly is None or l0 is None or not isinstance(ly, Load) or not isinstance(l0, Load):
            return None
        if ly.parent is not body or l0.operands[0] is not ly.operands[0]:
            return None
        snap = self.snapshot_for(ly)
        if snap is None or snap[0] is not loop or step is None or lb is None:
            return None
        form = _affine_index(ly.operands[1:], body.args[0], loop)
        if form is None:
            return None
        dim, d = form
        idx0 = l0.operands[1:]
        for j, (a, b) in enumerate(zip(idx0, ly.operands[1:])):
            if j != dim and a is not b:
                return None
        if constant_value(idx0[dim]) != lb - step + d:
            return None
        if self._written_between(l0, loop, self.roots(ly.operands[0])):
            return None
        return ly, dim, -step

    def _written_between(self, first: Op, last: Op, roots: set) -> bool:
        """Might ``roots`` be written after ``first`` and before ``last`` starts?  ``first``
        must be in a block enclosing ``last`` through ``scf.if`` ops only (else: True)."""
        x = last
        while x.parent is not first.parent:
            ops = x.parent.ops
            if any(self.writes_in(op, roots) for op in ops[:ops.index(x)]):
                return True
            x = x.parent_op
            if x is None or not isinstance(x, If):
                return True
        ops = first.parent.ops
        return any(self.writes_in(op, roots) for op in ops[ops.index(first) + 1:ops.index(x)])


def _owner_block(arr: Value):
    """The block that defines array ``arr`` (a view: its base's)."""
    while arr.op is not None and arr.op.has_trait(VIEW):
        arr = arr.op.operands[0]
    return arr.block


def _chain_in(op: Op, home):
    """``op``'s ancestors from the one directly in block ``home`` down to ``op`` (None if
    ``op`` is not inside ``home``)."""
    out = [op]
    while op.parent is not home:
        op = op.parent_op
        if op is None or isinstance(op, Func):
            return None
        out.append(op)
    return out[::-1]


def _distinct_locations(st: Op, loops) -> bool:
    """Does each of ``loops`` (around store ``st``) index its own dimension by its counter?"""
    dims = set()
    for p in loops:
        if not isinstance(p, For):
            return False
        iv = p.regions[0].block.args[0]
        d = [k for k, e in enumerate(st.operands[2:]) if _offset_of(e, iv) is not None]
        if len(d) != 1 or d[0] in dims:
            return False
        dims.add(d[0])
    return True


def _enclosing_loops(op: Op) -> list[Op]:
    out = []
    p = op.parent_op
    while p is not None and not isinstance(p, Func):
        if p.has_trait(LOOP):
            out.append(p)
        p = p.parent_op
    return out


def _affine_index(indices, iv: Value, loop: Op):
    """(dim, c) when exactly one index is ``iv + c`` and the others are defined outside the
    loop; None otherwise."""
    found = None
    for dim, e in enumerate(indices):
        c = _offset_of(e, iv)
        if c is not None:
            if found is not None:
                return None
            found = (dim, c)
        elif not _outside(e, loop):
            return None
    return found


def _offset_of(e: Value, iv: Value):
    if e is iv:
        return 0
    op = e.op
    if op is None or not isinstance(op, (AddI, SubI)):
        return None
    x, y = op.operands
    k = constant_value(y)
    if x is iv and k is not None:
        return k if isinstance(op, AddI) else -k
    if isinstance(op, AddI) and y is iv and constant_value(x) is not None:
        return constant_value(x)
    return None


def _outside(v: Value, loop: Op) -> bool:
    owner = v.op if v.op is not None else v.block.parent_op
    return owner is None or not loop.is_ancestor_of(owner)


def _top_index(func, op: Op) -> int:
    """The position in ``func``'s body of the top-level statement holding ``op``."""
    while op.parent is not func.body:
        op = op.parent_op
    return func.body.ops.index(op)
