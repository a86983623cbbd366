"""Raising loops to array operations: an ``scf.for``/``scf.parallel`` whose iterations are
independent runs once, on the vector of all its indices, instead of as a ``fori_loop``.

A loop is raised when (an IR check, ``raisable``, kept per loop):

* it carries no values, and its body has no nested regions, calls or tape operations: only
  scalar arithmetic and math, constants, ``array.dim``/``array.index``, loads, stores,
  ``array.atomic_add`` and run-time checks;
* every array it stores into is defined outside it, stored at the loop's index in one
  dimension and loop-invariant indices in the others, by one store (the same index each
  iteration writes its own element); loads from a stored array read that same element;
* arrays it adds into (``atomic_add``, reverse mode's accumulation) are not read in it;

and, when the function is traced, the stored views' strides along the indexed dimension are not
zero (distinct iterations reach distinct elements).  Then loads are gathers, stores scatters,
atomic adds scatter-adds (duplicates add up), arithmetic elementwise on vectors, and a failed
check reports the first failing iteration.
"""

from __future__ import annotations

from ...ir import ops
from ...ir.types import ArrayType

SCALAR = (ops.Constant, ops.Dim, ops.Index, ops.Load, ops.Store, ops.AtomicAdd, ops.Assert,
          ops.Relayout, ops.Select, ops.Cast, ops.CmpF, ops.CmpI)


def raisable(op, cache: dict) -> bool:
    """Whether ``op``'s iterations are independent in the sense above (the IR part)."""
    got = cache.get(op)
    if got is None:
        got = cache[op] = _independent(op)
    return got


def _independent(op) -> bool:
    if op.results:
        return False
    body = op.body
    iv = op.iv
    stores, loads, adds = {}, [], set()
    for inner in body.ops:
        if isinstance(inner, ops.Yield):
            continue
        if inner.regions or isinstance(inner, ops.Call):
            return False
        if not (isinstance(inner, SCALAR) or _pure_scalar(inner)):
            return False
        if isinstance(inner, ops.Store):
            array, idx = inner.operands[1], inner.operands[2:]
            if _inside(op, array) or array in stores or not _at_iv(op, idx, iv):
                return False
            stores[array] = list(idx)
        elif isinstance(inner, ops.AtomicAdd):
            if _inside(op, inner.operands[1]):
                return False
            adds.add(inner.operands[1])
        elif isinstance(inner, ops.Load):
            loads.append(inner)
    for ld in loads:
        array, idx = ld.operands[0], list(ld.operands[1:])
        if array in adds:
            return False
        if array in stores and stores[array] != idx:
            return False
    return True


def _pure_scalar(inner) -> bool:
    """Arithmetic, math and complex ops on scalars (no arrays, no effects)."""
    name = inner.name.split(".", 1)[0]
    return name in ("arith", "math", "complex") and \
        not any(isinstance(v.type, ArrayType) for v in list(inner.operands) + inner.results)


def _inside(op, value) -> bool:
    owner = value.owner
    o = owner.parent_op if hasattr(owner, "parent_op") else None
    while o is not None:
        if o is op:
            return True
        o = o.parent_op
    return False


def _is_iv(op, v, iv) -> bool:
    """``v`` is the loop index (or an ``array.index`` of it)."""
    if v is iv:
        return True
    owner = v.owner
    return isinstance(owner, ops.Index) and owner.operands[0] is iv and \
        not _inside(op, owner.operands[1])


def _at_iv(op, idx, iv) -> bool:
    """One index is the loop's, the others are loop-invariant."""
    at = [k for k, v in enumerate(idx) if _is_iv(op, v, iv)]
    return len(at) == 1 and all(not _inside(op, v) for k, v in enumerate(idx) if k != at[0])


def distinct_elements(op, env) -> bool:
    """(When tracing) the stored views' strides along their indexed dimension are not zero."""
    iv = op.iv
    for inner in op.body.ops:
        if isinstance(inner, ops.Store):
            view = env[inner.operands[1]]
            for v, s in zip(inner.operands[2:], view.strides):
                if _is_iv(op, v, iv) and s == 0:
                    return False
    return True


def run_raised(lo, op, env, lb, step, n) -> None:
    """Run the loop's body once on the vector of its ``n`` indices."""
    jnp = lo.jnp
    ivs = jnp.asarray(lb, jnp.int64) + jnp.asarray(step, jnp.int64) * jnp.arange(n,
                                                                                 dtype=jnp.int64)
    env2 = dict(env)
    env2[op.iv] = ivs
    lo.vector = True
    try:
        lo.block(op.body, env2)
    finally:
        lo.vector = False
