"""Calls in the adjoint sweep.  After inlining, only recursive calls and calls to helpers
marked with ``zymase.checkpoint`` remain.

Recursive calls are split (``split.py``): the forward sweep calls the callee's forward function,
which returns the primal results and its tape (residuals included); the adjoint sweep hands
that tape to the callee's adjoint function.  Nothing is recomputed, and since the tape is two
integers kept like any forward value, the call may sit inside a loop.  The adjoint function
reads the array arguments as the call left them: one written again later is copied after the
call (inside a loop that is refused).

Helpers marked with ``zymase.checkpoint`` (recomputation is what they ask for), calls under
``memory_limit`` and calls under forward-over-reverse take the recomputing path: at
``r = g(args)`` the forward sweep first snapshots every array argument, and the adjoint sweep
calls ``g.grad`` on the snapshots: it re-runs ``g`` from the state it saw, then its own adjoint
sweep, turning the caller's shadows (adjoints of the arrays after the call) into adjoints of the
arrays before it and returning the adjoints of active scalar arguments.
"""

from __future__ import annotations

from ...errors import DifferentiationError
from ...ir.builder import Builder
from ...ir.core import LOOP, WRITES
from ...ir.ops import Alloc, Call, Dim, If
from ...ir.printer import Symbol
from ..activity import is_float, is_float_array
from ..arrays import add_into, copy


def reverse_call(rt, op) -> None:
    acts = [k for k, v in enumerate(op.operands) if rt.act.active(v)]
    res = [k for k, r in enumerate(op.results) if rt.act.active(r)]
    if not acts and not res:
        return
    if op in rt.sweep.residuals:
        return _custom_vjp(rt, op)
    if op in rt.sweep.split_calls:
        return _split_adjoint(rt, op, acts, res)
    parent = op.parent_op
    while parent is not rt.func:
        if not isinstance(parent, If):
            why = "" if rt.settings.split_calls else (
                " under hessian/hvp or memory_limit, which re-run the call in the adjoint "
                "sweep (grad and vjp take it through the split form)")
            raise DifferentiationError(
                f"reverse mode through the call to `{op.attrs['callee']}` inside a loop (a "
                f"recursive call, or a helper marked with zymase.checkpoint) is not supported"
                f"{why}: move the call out of the loop", op.loc)
        parent = parent.parent_op
    if any(not is_float(op.results[k]) for k in res):
        raise DifferentiationError("reverse mode through a call returning an array (a recursive "
                                   "call, or a helper marked with zymase.checkpoint) is not "
                                   "supported: return floats from it, or let it be inlined", op.loc)
    callee = rt.sweep.module[op.attrs["callee"]]
    g = rt.callee_grad(callee, acts, res)
    arrays = [k for k, v in enumerate(op.operands) if hasattr(v.type, "ndim")]
    for k in arrays:  # all first: each promotion may rebuild the enclosing ifs
        _snapshot(rt, op, k)
    args = [rt.sweep.copies[("snapshot-call", op, k)] if k in arrays else rt.get(v)
            for k, v in enumerate(op.operands)]
    args += [rt.shadow(op.operands[k]) for k in acts if is_float_array(op.operands[k])]
    for k in res:
        c = rt.ct.pop(op.results[k], None)
        args.append(c if c is not None else rt.zero(op.results[k].type))
    call = rt.b.create(Call, args, g.result_types, {"callee": Symbol(g.sym_name)})
    adjoints = iter(call.results[len(callee.result_types):])
    for k in acts:
        if is_float(op.operands[k]):
            rt.accumulate(op.operands[k], next(adjoints))


def _split_adjoint(rt, op, acts, res) -> None:
    """Call the callee's split adjoint function with the tape its forward function returned.
    It reads the array arguments as the call left them: a buffer written again after the call
    is copied right after it."""
    adj_name, (buf, pos) = rt.sweep.split_calls[op]
    types = [op.operands[k].type for k in acts if is_float(op.operands[k])]  # (may not exist yet)

    def array_arg(k, v):
        if _written_after(rt, op, v):
            return _copy_after(rt, op, k)
        return rt.get(v)  # (memoized: a second promotion would rebuild the ifs again)

    arrays = [(k, v) for k, v in enumerate(op.operands) if hasattr(v.type, "ndim")]
    for k, v in arrays:  # all first: each promotion may rebuild the enclosing ifs
        array_arg(k, v)
    args = [array_arg(k, v) if hasattr(v.type, "ndim") else rt.get(v)
            for k, v in enumerate(op.operands)]
    args += [rt.shadow(op.operands[k]) for k in acts if is_float_array(op.operands[k])]
    for k in res:
        r = op.results[k]
        if is_float_array(r):  # (a new array: its shadow is its own, ``values.py``)
            args.append(rt.shadow(r))
            continue
        c = rt.ct.pop(r, None)
        args.append(c if c is not None else rt.zero(r.type))
    args += [rt.forward_value(buf, op.parent), rt.forward_value(pos, op.parent)]
    call = rt.b.create(Call, args, types, {"callee": Symbol(adj_name)})
    adjoints = iter(call.results)
    for k in acts:
        if is_float(op.operands[k]):
            rt.accumulate(op.operands[k], next(adjoints))


def _written_after(rt, op, array) -> bool:
    """May ``array``'s buffer be written after ``op`` (later in its block, in enclosing blocks,
    or by any op of an enclosing loop, the call itself included)?"""
    roots = rt.plan.memory.roots(array)
    if not roots:
        return True
    writers = _writing_functions(rt.sweep.module)

    def writes(o):
        return any(not isinstance(w, Call) or writers.get(str(w.attrs["callee"]), True)
                   for w in rt.plan.memory.writes_in(o, roots))

    x = op
    while x is not rt.func:
        parent = x.parent_op
        if parent.has_trait(LOOP) and writes(parent):
            return True
        ops = x.parent.ops
        if any(writes(o) for o in ops[ops.index(x) + 1:]):
            return True
        x = parent
    return False


def _writing_functions(module) -> dict:
    """Function name -> may it write an array?  (A least fixed point, so that a recursive
    function that only reads counts as reading; ``Effects`` assumes the worst for recursion.)"""
    writes = {name: False for name in module.funcs}
    changed = True
    while changed:
        changed = False
        for name, f in module.funcs.items():
            if writes[name]:
                continue
            for op in f.walk():
                if isinstance(op, Call):
                    hit = writes.get(str(op.attrs["callee"]), True)
                else:
                    hit = WRITES in op.traits and not isinstance(op, Alloc)
                if hit:
                    writes[name] = changed = True
                    break
    return writes


def _copy_after(rt, op, k):
    """A copy of array argument ``k`` of call ``op`` taken right after the call."""
    def make():
        if any(p.has_trait(LOOP) for p in _ancestors(op, rt.func)):
            raise DifferentiationError(
                f"reverse mode through the call to `{op.attrs['callee']}` inside a loop, when "
                "an array it is given is written again after it, is not supported (the "
                "adjoint would need a copy of that array per iteration)", op.loc)
        fop = rt.sweep.fop[op]
        parent = fop.parent
        b = Builder(parent, parent.ops.index(fop) + 1, op.loc)
        snap = copy(b, rt.sweep.fmap[op.operands[k]])
        return rt.promote(snap, parent)
    return rt.sweep.copy_once(("copy-after-call", op, k), make)


def _ancestors(op, func):
    p = op.parent_op
    while p is not None and p is not func:
        yield p
        p = p.parent_op


def _snapshot(rt, op, k):
    """A copy of array argument ``k`` of call ``op`` taken right before the call."""
    def make():
        fop = rt.sweep.fop[op]
        snap = copy(Builder.before(fop), rt.sweep.fmap[op.operands[k]])
        return rt.promote(snap, fop.parent)
    return rt.sweep.copy_once(("snapshot-call", op, k), make)


def _custom_vjp(rt, op) -> None:
    """The user's backward rule: (residuals, cotangents of the outputs) -> one cotangent per
    argument, added to the arguments' adjoints (arrays: into their shadows)."""
    callee = rt.sweep.module[op.attrs["callee"]]
    bwd = rt.sweep.module[callee.attrs["custom_vjp_bwd"]]
    residuals = [rt.forward_value(r, op.parent) if not hasattr(r.type, "ndim")
                 else _array_residual(rt, r, op) for r in rt.sweep.residuals[op]]
    cts = []
    for r in op.results:
        if is_float(r):
            c = rt.ct.pop(r, None)
            cts.append(c if c is not None else rt.zero(r.type))
        elif is_float_array(r):
            if rt.act.active(r):
                cts.append(rt.shadow(r))
            else:  # no adjoint reaches it: zeros
                fr = rt.get(r)
                dims = [rt.b.op(Dim, fr, axis=k) for k in range(r.type.ndim)]
                cts.append(rt.b.create(Alloc, dims, [r.type.with_layout("C")],
                                       {"init": "zero"}).result)
    call = rt.b.create(Call, residuals + cts, bwd.result_types,
                       {"callee": Symbol(bwd.sym_name)})
    outs = iter(call.results)
    for k, has in enumerate(callee.attrs["bwd_cts"]):
        if not has:
            continue
        c = next(outs)
        v = op.operands[k]
        if is_float_array(v) and rt.act.active(v):
            add_into(rt.b, rt.shadow(v), c)
        elif is_float(v):
            rt.accumulate(v, rt.b.cast(c, v.type))


def _array_residual(rt, r, op):
    """An array residual of a ``custom_vjp`` call: the forward sweep's copy of it, taken right
    after the call (``sweep.py``), which nothing writes; in a loop or branch kept by
    reference."""
    if r.block is rt.sweep.new.body:
        return r
    return rt.forward_value(r, op.parent)
