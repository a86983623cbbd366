"""The split form of reverse mode: ``f.grad`` cut into an augmented forward function and an
adjoint function that takes what the forward one left (Enzyme's augmented primal + reverse).

    f.grad.fwd(args..., shadows...) -> (results..., residuals..., tape buffer, tape position)
    f.grad.adj(args..., shadows..., seeds..., residuals..., tape buffer, tape position)
        -> (adjoint of each active scalar argument)

``grad_function`` builds one function whose body is the forward sweep followed by the adjoint
sweep, all at its top level; the cut goes between the two.  The residuals are the forward
sweep's top-level values that the adjoint sweep uses (scalars, and arrays: intermediate buffers,
shadows of buffers made in the function, views); the tape travels as its buffer's address and
position (``tape.export`` / ``tape.adopt``).  The adjoint function frees the tape, so the pair
runs once per forward call (``vjp`` runs the forward function again for a second pullback).
Arrays the forward function returns become NumPy arrays that own their memory, and go back to
the adjoint function as arguments.
"""

from __future__ import annotations

from ..errors import DifferentiationError
from ..ir.builder import Builder
from ..ir.core import Func, Module, Value
from ..ir.ops import (
    Return,
    TapeAdopt,
    TapeExport,
    TapeNew,
    TapePop,
    TapePopRef,
    TapePush,
    TapePushRef,
    TapeReserve,
)
from ..ir.types import I64, TAPE, ArrayType


def split_function(module: Module, g: Func, last_forward, n_primal: int, n_seeds: int,
                   n_shadows: int, residuals: str = "results",
                   names: tuple[str, str] | None = None) -> tuple[Func, Func]:
    """Cut ``g`` (a ``grad_function`` result with its primal results) after ``last_forward``,
    the last op of its forward sweep.  ``n_seeds`` trailing arguments are the seeds; before
    them ``n_shadows`` shadows.  Removes ``g`` from ``module``; returns (forward, adjoint).

    ``residuals="results"``: the forward function takes the shadows too and returns the
    residuals (for ``vjp``: NumPy arrays keep them alive between the two calls).
    ``residuals="tape"``: the residuals are pushed on the tape (arrays by reference) and the
    forward function takes the primal arguments only, so the signatures depend on nothing but
    the primal's: a recursive function's forward function can call itself.  Buffers pushed by
    reference live until the outermost call returns (``lifetime.py``), so this form is for calls
    inside one derivative."""
    ops = list(g.body.ops)
    cut = ops.index(last_forward)
    fwd_ops, rev_ops = ops[:cut], ops[cut + 1:]
    last_forward.erase()
    ret = rev_ops[-1]
    assert isinstance(ret, Return)
    outs = list(ret.operands)
    primal_outs, adjoint_outs = outs[:n_primal], outs[n_primal:]
    n_args = len(g.args) - n_seeds
    n_primal_args = n_args - n_shadows
    seeds = g.args[n_args:]
    if residuals == "tape":  # views of shadows move to the adjoint function
        shadows = set(g.args[n_primal_args:n_args])
        moved: list = []
        for op in fwd_ops:
            if any(v in shadows for inner in op.walk() for v in inner.operands):
                if not op.is_pure or op.regions:
                    raise DifferentiationError("the forward sweep writes a shadow", op.loc)
                moved.append(op)
                shadows.update(op.results)
        fwd_ops = [op for op in fwd_ops if op not in moved]
        rev_ops = moved + rev_ops
    defined = {r: None for op in fwd_ops for r in op.results}
    tape = next(op.result for op in fwd_ops if isinstance(op, TapeNew))
    used: dict[Value, None] = {}
    for op in rev_ops:
        for inner in op.walk():
            if inner is ret:
                continue
            for v in inner.operands:
                if v in defined and v is not tape:
                    used[v] = None
    for op in fwd_ops:
        for inner in op.walk():
            if any(v in seeds for v in inner.operands):
                raise DifferentiationError("the forward sweep reads a seed", g.loc)
    for v in adjoint_outs:
        if v in defined and v is not tape:
            used[v] = None
    live = [v for v in used if v.type != TAPE]
    if len(live) != len(used):
        raise DifferentiationError("a tape other than the function's crosses the split", g.loc)

    f_name, a_name = names or (f"{g.sym_name}.fwd", f"{g.sym_name}.adj")
    by_tape = residuals == "tape"
    fwd_args = g.arg_types[:n_primal_args if by_tape else n_args]
    fwd = Func(f_name, fwd_args,
               [v.type for v in primal_outs] + ([] if by_tape else [v.type for v in live])
               + [I64, I64], loc=g.loc)
    adj = Func(a_name, g.arg_types + ([] if by_tape else [v.type for v in live]) + [I64, I64],
               [v.type for v in adjoint_outs], loc=g.loc)
    fmap = dict(zip(g.args[:len(fwd_args)], fwd.args))
    for op in fwd_ops:
        op.detach()
        fwd.body.append(op)
        _remap(op, fmap)
    b = Builder.at_end(fwd.body, g.loc)
    if by_tape and live:
        b.create(TapeReserve, [tape, b.i64(sum(_slots(v.type) for v in live))], [])
        for v in live:
            b.create(TapePushRef if isinstance(v.type, ArrayType) else TapePush,
                     [tape, v], [])
    buf, pos = b.create(TapeExport, [tape], [I64, I64]).results
    b.create(Return, [fmap.get(v, v) for v in primal_outs]
             + ([] if by_tape else live) + [buf, pos], [])

    amap = dict(zip(g.args, adj.args))
    b = Builder.at_end(adj.body, g.loc)
    new_tape = b.create(TapeAdopt, list(adj.args[-2:]), [TAPE]).result
    amap[tape] = new_tape
    if by_tape:
        for v in reversed(live):
            pop = TapePopRef if isinstance(v.type, ArrayType) else TapePop
            amap[v] = b.create(pop, [new_tape], [v.type]).result
    else:
        amap.update(zip(live, adj.args[len(g.args):]))
    for op in rev_ops[:-1]:
        op.detach()
        adj.body.append(op)
        _remap(op, amap)
    b.create(Return, [amap.get(v, v) for v in adjoint_outs], [])
    ret.erase()
    del module.funcs[g.sym_name]
    module.add(fwd)
    module.add(adj)
    return fwd, adj


def _slots(t) -> int:
    if isinstance(t, ArrayType):
        return 2 + 2 * t.ndim
    return 2 if t.is_complex else 1


def _remap(op, mapping: dict) -> None:
    for inner in op.walk():
        for i, v in enumerate(inner.operands):
            if v in mapping:
                inner.set_operand(i, mapping[v])
