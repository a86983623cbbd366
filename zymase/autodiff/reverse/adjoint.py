"""The adjoint sweep, op by op: ``reverse_block(rt, block)`` emits the adjoint of ``block``'s
ops, last first, at ``rt.b`` (``rt``: the ``Adjoint`` under construction, ``values.py``).

A loop becomes a loop running backwards that carries the adjoints of its carried values and of
the outer values it uses; an ``scf.if`` becomes an ``scf.if`` on the same condition; loads add
into shadows, stores move the shadow into the stored value's adjoint and zero it; calls are
``calls.py``'s.  Scalar adjoints follow the rule records (``rules/``).
"""

from __future__ import annotations

from ...errors import DifferentiationError
from ...ir.builder import Builder
from ...ir.core import Block, Region, Value
from ...ir.ops import (
    AddF,
    AddI,
    Alloc,
    ArrayConst,
    ArrayFree,
    Assert,
    AtomicAdd,
    Broadcast,
    Call,
    Condition,
    Dim,
    For,
    HostCall,
    If,
    Index,
    Load,
    Matmul,
    MulI,
    Parallel,
    Relayout,
    Reshape,
    Return,
    Select,
    Store,
    Stride,
    SubI,
    Subview,
    Transpose,
    While,
    Yield,
)
from ...ir.types import I64, ArrayType
from ..activity import check_host_call, free_active, is_float, is_float_array, relevant
from ..arrays import copy, fill_zero, outer_add
from ..plan.flows import is_flow, unused_after
from ..rules import LINEAR, PARTIALS, ZERO
from . import parallel
from .calls import reverse_call
from .tape import trip_count

# ops with no adjoint of their own (shapes, views, allocations, frees, checks; shadows are made
# where they are used)
NO_ADJOINT = (Alloc, ArrayConst, Dim, Stride, Index, Subview, Broadcast, Transpose, Reshape,
              Relayout, ArrayFree, Assert)


def reverse_block(rt, block: Block) -> None:
    for op in reversed(block.ops):
        if isinstance(op, (Yield, Condition, Return)):
            continue
        rt.b.loc = op.loc
        if op.attrs.get("no_adjoint"):  # its effects are undone before anything uses them
            continue
        handler = HANDLERS.get(type(op))
        if handler is not None:
            handler(rt, op)
        elif op.name in PARTIALS or op.name in LINEAR:
            _scalar(rt, op)
        elif op.name in ZERO or isinstance(op, NO_ADJOINT):
            continue
        elif any(rt.act.active(r) for r in op.results):
            raise DifferentiationError(f"no derivative rule for `{op.name}`", op.loc)


# ---------------------------------------------------------------------- scalars


def _primals(rt, op, uses: str):
    xs = []
    for k, v in enumerate(op.operands):
        wanted = ("x" in uses or ("c" in uses and k == 0) or
                  ("y" in uses and rt.act.active(op.operands[1 - k])))
        xs.append(rt.get(v) if wanted else Value(v.type))
    out = rt.get(op.results[0]) if "o" in uses else Value(op.results[0].type)
    return xs, out


def _scalar(rt, op) -> None:
    res = op.results[0]
    c = rt.ct.pop(res, None)
    if c is None:
        return
    if op.name in PARTIALS:
        rule = PARTIALS[op.name]
        xs, out = _primals(rt, op, rule.uses)
        need = [rt.act.active(v) for v in op.operands]
        ps = rule.fn(rt.b, *xs, out=out, need=need)
        for v, p, nd in zip(op.operands, ps, need):
            if nd and p is not None:
                p = rt.b.conj_if_complex(p)
                rt.accumulate(v, rt.b.mul_strong(c, p) if rule.strong else rt.b.mul(c, p))
        return
    rule = LINEAR[op.name]
    xs, out = _primals(rt, op, rule.uses)
    for v, contribution in zip(op.operands, rule.fn[1](rt.b, op.attrs, xs, out, c)):
        if contribution is not None and rt.act.active(v):
            rt.accumulate(v, contribution)


# ---------------------------------------------------------------------- memory


def _load(rt, op) -> None:
    v = op.result
    if not rt.act.active(v):
        return
    c = rt.ct.pop(v, None)
    if c is None:
        return
    sh = rt.shadow(op.operands[0])
    idx = [rt.get(i) for i in op.operands[1:]]
    if rt.par and not rt.par[-1].owns(rt.act.roots.get(op.operands[0], set())):
        rt.b.create(AtomicAdd, [c, sh, *idx], [])  # other iterations update it too
        return
    old = rt.b.op(Load, sh, *idx)
    rt.b.create(Store, [rt.b.op(AddF, old, c, nsz=True), sh, *idx], [])


def _store(rt, op) -> None:
    v, a = op.operands[0], op.operands[1]
    if not rt.act.active(a):
        return
    sh = rt.shadow(a)
    idx = [rt.get(i) for i in op.operands[2:]]
    g = rt.b.op(Load, sh, *idx)
    rt.b.create(Store, [rt.zero(a.type.dtype), sh, *idx], [])
    if is_float(v) and rt.act.active(v):
        rt.accumulate(v, rt.b.cast(g, v.type))


def _atomic_add(rt, op) -> None:
    """a[idx] += v: v's adjoint gains the element's; the element's own adjoint is unchanged."""
    v, a = op.operands[0], op.operands[1]
    if not (rt.act.active(a) and is_float(v) and rt.act.active(v)):
        return
    idx = [rt.get(i) for i in op.operands[2:]]
    rt.accumulate(v, rt.b.cast(rt.b.op(Load, rt.shadow(a), *idx), v.type))


def _matmul(rt, op) -> None:
    """out = a @ b: ct_a += ct_out @ b^H, ct_b += a^H @ ct_out (the transposes when real), then
    the shadow of out is zeroed (the product overwrote it; not when it added to it)."""
    a, bm, out = op.operands
    if not rt.act.active(out):
        return
    so = rt.shadow(out)
    b = rt.b
    ranks = (a.type.ndim, bm.type.ndim)
    for x in (a, bm):  # all first: each promotion out of an if may rebuild it (and the values
        _matmul_operand(rt, x, op)  # had before), then each again from the memo
    pa, pb = (_matmul_operand(rt, x, op) for x in (a, bm))
    if a.type.dtype.is_complex:  # the conjugates, once (the transposes below are views)
        pa = copy(b, pa, conj=True) if rt.act.active(bm) else pa
        pb = copy(b, pb, conj=True) if rt.act.active(a) else pb
    if rt.act.active(a):
        sa = rt.shadow(a)
        if ranks == (2, 1):
            outer_add(b, sa, so, pb)
        elif ranks == (1, 2):
            _matmul_add(rt, pb, so, sa)
        else:
            _matmul_add(rt, so, _matrix_transpose(b, pb), sa)
    if rt.act.active(bm):
        sb = rt.shadow(bm)
        if ranks == (1, 2):
            outer_add(b, sb, pa, so)
        else:
            _matmul_add(rt, _matrix_transpose(b, pa), so, sb)
    if not op.attrs.get("acc"):
        fill_zero(b, so)


def _matmul_operand(rt, x, op):
    """The primal operand as it was at the product: the buffer itself when nothing writes it
    (or nothing after the statement holding the product), else a copy taken in the forward
    sweep right before the product."""
    # nothing writes it after the product (a matrix made before the loop, a version of an array
    # a loop renews, one made earlier in the same iteration): the array itself, kept by
    # reference when made in a loop (forward mode over this keeps its tangent so)
    if rt.plan.policy.read_only(x) or rt.plan.memory.settled_before(x, op) or \
            rt.flows.written_after(x, op) is None:
        return rt.kept_array(x)
    sweep = rt.sweep
    snap = sweep.copy_once(("snapshot", x, op),
                           lambda: copy(Builder.before(sweep.fop[op]), sweep.fmap[x]))
    if op.parent is rt.func.body:
        return snap
    # in a loop: a copy taken at the product each time (a column of a factorization, written
    # by later iterations), kept by reference: nothing writes the copy
    return rt.forward_value(snap, op.parent)


def _matrix_transpose(b, x):
    """The transpose of a matrix, or of each matrix of a stack (a view)."""
    n = x.type.ndim
    return b.op(Transpose, x, perm=[*range(n - 2), n - 1, n - 2])


def _matmul_add(rt, x, y, dst):
    """dst += x @ y."""
    rt.b.create(Matmul, [x, y, dst], [], {"acc": True})


# ---------------------------------------------------------------------- control flow


def _zero_like(rt, v):
    return rt.zero(v.type)


def _for(rt, op) -> None:
    body = op.regions[0].block
    carried = body.args[1:]
    yields = body.terminator.operands
    act_c = [k for k, c in enumerate(carried) if is_float(c) and rt.act.active(c)]
    if not act_c and not relevant(op, rt.act):
        return
    par = parallel.plan(rt, op)  # reversed as a parallel loop (parallel.py)
    # carried arrays with shadows of their own (``plan/flows.py``): carried backwards
    renew = [k for k, c in enumerate(carried) if is_float_array(c) and rt.act.active(c)
             and rt.owns(c)]
    free = free_active(op, rt.act)
    b = rt.b
    lb, ub, st = (rt.get(v) for v in op.operands[:3])
    trip = trip_count(b, lb, ub, st)
    init = [rt.ct.pop(op.results[k], None) or _zero_like(rt, op.results[k]) for k in act_c]
    init += [rt.ct.get(f) or _zero_like(rt, f) for f in free]
    init += [rt.shadow(op.results[k]) for k in renew]
    # integers recovered from the next iteration's value rather than popped (a parallel loop's
    # carried values are reductions, whose values its adjoint does not read)
    inv = [] if par else [(k, amount) for k, c in enumerate(carried)
                          if (amount := rt.invertible(c))]
    init += [rt.get(op.results[k]) for k, _ in inv]
    blk = Block([I64] + [v.type for v in init])
    saved = (b.block, b.index)
    n_s = 1 + len(act_c) + len(free)
    tapes = parallel.IterationTapes(rt, op, blk) if par else None
    if par:
        par.before(rt, trip)
    scope = rt.enter(body, blk, free, blk.args[1 + len(act_c):n_s])
    if par:
        tapes.enter(scope)
        par.enter(rt, scope)
        rt.par.append(par)
    for j, k in enumerate(renew):
        rt.pass_shadow(yields[k], blk.args[n_s + j], body.terminator, body)
    kk = blk.args[0]
    scope.env[body.args[0]] = b.op(AddI, lb, b.op(MulI, kk, st))
    recovered = []
    for j, (k, amount) in enumerate(inv):
        v = b.op(SubI, blk.args[n_s + len(renew) + j], amount())
        scope.env[carried[k]] = scope.head_env[carried[k]] = v
        recovered.append(v)
    for j, k in enumerate(act_c):
        rt.accumulate(yields[k], blk.args[1 + j])
    reverse_block(rt, body)
    outs = [rt.ct.get(carried[k]) or _zero_like(rt, carried[k]) for k in act_c]
    outs += [rt.ct.get(f) or _zero_like(rt, f) for f in free]
    outs += [rt.shadow(carried[k]) for k in renew]
    outs += recovered
    b.yield_(*outs)
    if par:
        rt.par.pop()
    rt.leave(saved)
    if par:  # iterations in any order, on the thread pool
        loop = b.create(Parallel, [b.i64(0), trip, b.i64(1), *init], [v.type for v in init],
                        regions=[Region([blk])])
        tapes.finish(trip)
        par.after(rt)
    else:  # the last iteration first
        start = b.op(SubI, trip, b.i64(1))
        loop = b.create(For, [start, b.i64(-1), b.i64(-1), *init], [v.type for v in init],
                        regions=[Region([blk])])
        parallel.serial_forward(rt, op)
    rt.rloops[op] = loop
    res = loop.results
    rt.drop_snapshots(op)
    # the free values first: their loop results already hold the adjoints they had before it,
    # and a free value can also be an initial value (`r = x; for ...: r = r + x`), whose
    # adjoint from the loop's first iteration is added next (not overwritten)
    for i, f in enumerate(free):
        rt.ct[f] = res[len(act_c) + i]
    for j, k in enumerate(act_c):
        rt.accumulate(op.operands[3 + k], res[j])
    for j, k in enumerate(renew):  # the first version's shadow is the initial array's
        rt.pass_shadow(op.operands[3 + k], res[len(act_c) + len(free) + j], op, None)


def _if(rt, op) -> None:
    act_r = [k for k, r in enumerate(op.results) if is_float(r) and rt.act.active(r)]
    # chosen arrays with shadows of their own, passed to the array each branch gives
    arr = [(k, rt.shadow(r)) for k, r in enumerate(op.results) if r in rt.own]
    if not act_r and not arr and not relevant(op, rt.act):
        return
    free = free_active(op, rt.act)
    b = rt.b
    cond = rt.get(op.operands[0])
    cts = [rt.ct.pop(op.results[k], None) or _zero_like(rt, op.results[k]) for k in act_r]
    cur = [rt.ct.get(f) or _zero_like(rt, f) for f in free]
    # arrays from before the if that one branch passes on and nothing uses after it (a list's
    # buffer when no append grows it): on that branch their shadow is the result's, on the
    # other a zeroed one; the reverse if gives the one taken
    handed = _handed_on_one_branch(rt, op, arr)
    zeros = [rt.zeroed_at_head(src) for src, _, _ in handed]
    blocks = []
    for i, region in enumerate(op.regions):
        blk = Block()
        saved = (b.block, b.index)
        scope = rt.enter(region.block, blk, free, cur)
        term = region.block.terminator
        for (src, branch, sh), z in zip(handed, zeros):
            scope.shadows[src] = sh if branch == i else z
        for k, sh in arr:
            if not any(term.operands[k] is src and branch == i for src, branch, _ in handed):
                rt.pass_shadow(term.operands[k], sh, term, region.block)
        for j, k in enumerate(act_r):
            rt.accumulate(term.operands[k], cts[j])
        reverse_block(rt, region.block)
        b.yield_(*[rt.ct.get(f) or _zero_like(rt, f) for f in free],
                 *[scope.shadows[src] for src, _, _ in handed])
        rt.leave(saved)
        blocks.append(blk)
    guard = {k: v for k, v in op.attrs.items() if k == "bounds_guard"}  # its else: cold
    new = b.create(If, [cond], [f.type for f in free] + [z.type for z in zeros], guard,
                   regions=[Region([blk]) for blk in blocks])
    for f, r in zip(free, new.results):
        rt.ct[f] = r
    for (src, _, _), r in zip(handed, new.results[len(free):]):
        rt.scopes[-1].shadows[src] = r
        if is_flow(src):
            rt.own.add(src)


def _handed_on_one_branch(rt, op, arr) -> list:
    """(array, branch, shadow) for the arrays of ``op``'s block, without a shadow yet, that one
    branch of ``op`` passes on as exactly one result with a shadow of its own (``arr``: (k,
    shadow)), and that nothing uses after ``op``."""
    out = []
    for k, sh in arr:
        passing = [(i, r.block.terminator) for i, r in enumerate(op.regions)
                   if op.results[k] is not None]
        for i, term in passing:
            src = term.operands[k]
            if src.block is not op.parent or not is_float_array(src) or \
                    not rt.act.active(src) or rt.has_shadow(src) or not rt.owns_if_flow(src) or \
                    sum(x is src for r in op.regions for x in r.block.terminator.operands) != 1 \
                    or not unused_after(src, op, inside=True) or any(s is src for s, _, _ in out):
                continue
            out.append((src, i, rt.as_type(sh, src.type)))
    return out


def _region(rt, pblock: Block, seeds, free, free_in, outs, passes=(), shadows=()):
    """Reverse one execution of ``pblock`` in a region of its own (``scf.if true``), seeding
    the adjoints of ``seeds`` (value, adjoint) pairs and passing on the flow shadows ``passes``
    (value, shadow, terminator); returns (adjoints of ``outs``, the shadows of ``shadows``
    (value, a shadow of its type to stand in on the branch never taken), free)."""
    b = rt.b
    blk, other = Block(), Block()
    saved = (b.block, b.index)
    rt.enter(pblock, blk, free, free_in)
    for v, sh, term in passes:
        rt.pass_shadow(v, sh, term, pblock)
    for v, c in seeds:
        rt.accumulate(v, c)
    reverse_block(rt, pblock)
    results = [rt.ct.get(o) or _zero_like(rt, o) for o in outs]
    results += [rt.as_type(rt.shadow(v), v.type) for v, _ in shadows]
    results += [rt.ct.get(f) or _zero_like(rt, f) for f in free]
    b.yield_(*results)
    rt.leave(saved)
    with b.at(other):
        b.yield_(*[_zero_like(rt, o) for o in outs],
                 *[rt.as_type(sh, v.type) for v, sh in shadows], *free_in)
    new = b.create(If, [b.i1(True)], [v.type for v in results],
                   regions=[Region([blk]), Region([other])])
    r = list(new.results)
    n, m = len(outs), len(outs) + len(shadows)
    return r[:n], r[n:m], r[m:]


def _while(rt, op) -> None:
    """A ``scf.while`` becomes a loop over its trip count, counted in the forward sweep: the
    last test reversed, then each trip's body and test, last first.  Carried arrays with
    shadows of their own carry them backwards (``plan/flows.py``)."""
    before, after = op.regions[0].block, op.regions[1].block
    act_b = [k for k, a in enumerate(before.args) if is_float(a) and rt.act.active(a)]
    act_a = [k for k, a in enumerate(after.args) if is_float(a) and rt.act.active(a)]
    arr = [k for k, a in enumerate(before.args) if is_float_array(a) and rt.act.active(a)
           and rt.owns(a)]
    if not act_a and not act_b and not arr and not relevant(op, rt.act):
        return
    b = rt.b
    free = free_active(op, rt.act)
    fwd, counter = rt.sweep.fwhile[op]
    count = rt.forward_value(counter, op.parent)
    test, step = before.terminator, after.terminator
    cond_vals, after_yields = test.operands[1:], step.operands
    ct_res = [rt.ct.pop(op.results[k], None) or _zero_like(rt, op.results[k]) for k in act_a]
    sh_res = [rt.shadow(op.results[k]) for k in arr]
    cur = [rt.ct.get(f) or _zero_like(rt, f) for f in free]

    def reverse_test(cts, shs, free_in):
        return _region(rt, before, [(cond_vals[k], cts[j]) for j, k in enumerate(act_a)],
                       free, free_in, [before.args[k] for k in act_b],
                       [(cond_vals[k], shs[j], test) for j, k in enumerate(arr)],
                       [(before.args[k], shs[j]) for j, k in enumerate(arr)])

    ct_b, sh_b, cur = reverse_test(ct_res, sh_res, cur)  # the last test
    init = ct_b + sh_b + cur
    blk = Block([I64] + [v.type for v in init])
    saved = (b.block, b.index)
    b.block, b.index = blk, None
    n_b, n_s = len(act_b), len(act_b) + len(arr)
    carried_b, carried_s = list(blk.args[1:1 + n_b]), list(blk.args[1 + n_b:1 + n_s])
    ct_a, sh_a, fr = _region(
        rt, after, [(after_yields[k], carried_b[j]) for j, k in enumerate(act_b)], free,
        list(blk.args[1 + n_s:]), [after.args[k] for k in act_a],
        [(after_yields[k], carried_s[j], step) for j, k in enumerate(arr)],
        [(after.args[k], carried_s[j]) for j, k in enumerate(arr)])
    ct_b2, sh_b2, fr2 = reverse_test(ct_a, sh_a, fr)
    b.yield_(*ct_b2, *sh_b2, *fr2)
    b.block, b.index = saved
    start = b.op(SubI, count, b.i64(1))
    loop = b.create(For, [start, b.i64(-1), b.i64(-1), *init], [v.type for v in init],
                    regions=[Region([blk])])
    res = loop.results
    for i, f in enumerate(free):  # first, as in _for
        rt.ct[f] = res[n_s + i]
    for j, k in enumerate(act_b):
        rt.accumulate(op.operands[k], res[j])
    for j, k in enumerate(arr):  # the first version's shadow is the initial array's
        rt.pass_shadow(op.operands[k], res[n_b + j], op, None)


def _select(rt, op) -> None:
    """An array chosen by ``arith.select`` with a shadow of its own: added into the shadow of
    the one chosen (scalars follow the rule records)."""
    r = op.result
    if not isinstance(r.type, ArrayType):
        _scalar(rt, op)
        return
    if r not in rt.own:
        return
    b = rt.b
    sh = rt.shadow(r)
    for src in op.operands[1:]:  # (made here, not in the branches below)
        if rt.act.active(src):
            rt.shadow(src)
    branches = []
    for src in op.operands[1:]:
        blk = Block()
        with b.at(blk):
            rt.pass_shadow(src, sh, op, None)
            b.yield_()
        branches.append(blk)
    b.create(If, [rt.get(op.operands[0])], [], regions=[Region([x]) for x in branches])


def _host_call(rt, op) -> None:  # no adjoint: it touches no value that carries one
    check_host_call(rt.act, op)


HANDLERS = {Load: _load, Store: _store, AtomicAdd: _atomic_add, Matmul: _matmul, For: _for,
            Parallel: _for, If: _if, While: _while, Call: reverse_call, Select: _select,
            HostCall: _host_call}
