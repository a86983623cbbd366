"""Calls in the adjoint sweep.  After inlining, only recursive calls and calls to helpers
marked with ``zymase.checkpoint`` remain.

At ``r = g(args)`` the forward sweep first snapshots every array argument (the callee and the
caller may overwrite them later).  The adjoint sweep calls ``g.grad`` on the snapshots: it
re-runs ``g`` from the state it saw, then its own adjoint sweep, turning the caller's shadows
(adjoints of the arrays after the call) into adjoints of the arrays before it and returning the
adjoints of active scalar arguments.  Recursion therefore recomputes each level's forward pass
once more (Enzyme's default for calls it does not split).
"""

from __future__ import annotations

from ..errors import DifferentiationError
from ..ir.builder import Builder
from ..ir.printer import Symbol
from .activity import is_float, is_float_array
from .arrays import copy


def reverse_call(rt, op) -> None:
    acts = [k for k, v in enumerate(op.operands) if rt.act.active(v)]
    res = [k for k, r in enumerate(op.results) if rt.act.active(r)]
    if not acts and not res:
        return
    if op in rt.residuals:
        return _custom_vjp(rt, op)
    parent = op.parent_op
    while parent is not rt.func:
        if parent.name != "scf.if":
            raise DifferentiationError(
                f"reverse mode through the call to `{op.attrs['callee']}` inside a loop (a "
                "recursive call, or a helper marked with zymase.checkpoint) is not supported "
                "yet", op.loc)
        parent = parent.parent_op
    if any(not is_float(op.results[k]) for k in res):
        raise DifferentiationError("reverse mode through a call returning an array (a recursive "
                                   "call, or a helper marked with zymase.checkpoint) is not "
                                   "supported yet", op.loc)
    from .reverse import grad_function
    callee = rt.module[op.attrs["callee"]]
    g = grad_function(rt.module, callee, acts, res, rt.registry)
    arrays = [k for k, v in enumerate(op.operands) if hasattr(v.type, "ndim")]
    for k in arrays:  # all first: each promotion may rebuild the enclosing ifs
        _snapshot(rt, op, k)
    args = [rt.fshadow[("snapshot-call", op, k)] if k in arrays else rt.get(v)
            for k, v in enumerate(op.operands)]
    args += [rt.shadow(op.operands[k]) for k in acts if is_float_array(op.operands[k])]
    for k in res:
        c = rt.ct.pop(op.results[k], None)
        args.append(c if c is not None else rt.zero(op.results[k].type))
    call = rt.b.create("func.call", args, g.result_types, {"callee": Symbol(g.sym_name)})
    adjoints = iter(call.results[len(callee.result_types):])
    for k in acts:
        if is_float(op.operands[k]):
            rt.accumulate(op.operands[k], next(adjoints))


def _snapshot(rt, op, k):
    key = ("snapshot-call", op, k)
    if key not in rt.fshadow:
        fop = rt.fop[op]
        snap = copy(Builder.before(fop), rt.fmap[op.operands[k]])
        rt.fshadow[key] = rt.promote(snap, fop.parent)
    return rt.fshadow[key]


def _custom_vjp(rt, op) -> None:
    """The user's backward rule: (residuals, cotangents of the outputs) -> one cotangent per
    argument, added to the arguments' adjoints (arrays: into their shadows)."""
    from .arrays import add_into
    callee = rt.module[op.attrs["callee"]]
    bwd = rt.module[callee.attrs["custom_vjp_bwd"]]
    residuals = [rt.forward_value(r, op.parent) if not hasattr(r.type, "ndim")
                 else _array_residual(rt, r, op) for r in rt.residuals[op]]
    cts = []
    for r in op.results:
        if is_float(r):
            c = rt.ct.pop(r, None)
            cts.append(c if c is not None else rt.zero(r.type))
        elif is_float_array(r):
            raise DifferentiationError("custom_vjp functions returning arrays are not supported "
                                       "in reverse mode yet", op.loc)
    call = rt.b.create("func.call", residuals + cts, bwd.result_types,
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
    if r.block is not rt.new.body:
        raise DifferentiationError("a custom_vjp forward rule returning array residuals must be "
                                   "called outside loops and branches in reverse mode", op.loc)
    return r
