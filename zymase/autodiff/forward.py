"""Forward mode: ``f`` -> ``f.jvp`` computing the primal and W directional derivatives at once.

Expects optimized IR; leaves a new function in the module:

    f.jvp(args..., [tangents of each active argument, W each]) ->
          (results..., [tangents of each float result, W each])

Every op is cloned; an active op is followed by its tangent, from its rule record (``t_out =
sum(p_i t_i)`` or the record's own ``jvp``), once per lane.  Active buffers have W shadow buffers
read and written alongside the primal ones (a store of an inactive value zeroes the shadow).
Loops, branches and calls carry tangents next to the primal values; a called function gets its
own ``jvp`` for the pattern of active operands.  Width W > 1 is ``jacfwd`` and
``BatchDuplicated``.
"""

from __future__ import annotations

from ..errors import DifferentiationError
from ..ir.core import VIEW, Block, Func, Module, Op, Region, Value
from ..ir.ops import (
    Alloc,
    ArrayConst,
    ArrayGlobal,
    AtomicAdd,
    Call,
    Condition,
    Dim,
    For,
    HostCall,
    If,
    Load,
    Matmul,
    MulI,
    Parallel,
    Relayout,
    Return,
    Select,
    Store,
    TapePop,
    TapePopRef,
    TapePush,
    TapePushRef,
    TapeRead,
    TapeReserve,
    While,
    Yield,
)
from ..ir.printer import Symbol
from ..ir.types import ArrayType
from ..passes.rewrite import clone_op
from .activity import Activity, check_host_call, is_float, is_float_array
from .arrays import fill_zero
from .rules import LINEAR, PARTIALS, ZERO, RuleBuilder


def jvp_function(module: Module, func: Func, active_args, width: int = 1,
                 cache: dict | None = None) -> Func:
    """The forward-mode derivative of ``func`` (added to ``module``); see the module docstring."""
    cache = {} if cache is None else cache
    key = (func.sym_name, tuple(sorted(active_args)), width)
    if key in cache:
        return cache[key]
    return ForwardTransform(module, func, active_args, width, cache).build()


class ForwardTransform:
    def __init__(self, module, func, active_args, width, cache):
        self.module, self.func, self.width, self.cache = module, func, width, cache
        self.active_args = sorted(active_args)
        float_results = [k for k, t in enumerate(func.result_types) if _is_float_type(t)]
        self.act = Activity(func, self.active_args, float_results)
        self.float_results = float_results
        self.map: dict[Value, Value] = {}
        self.tan: dict[Value, list[Value]] = {}
        self.tangent_pairs: set = set()
        self.b = RuleBuilder()

    # ------------------------------------------------------------------ function
    def build(self) -> Func:
        f = self.func
        arg_types = list(f.arg_types)
        for i in self.active_args:
            arg_types += [f.args[i].type] * self.width
        res_types = list(f.result_types)
        for k in self.float_results:
            res_types += [f.result_types[k]] * self.width
        name = f"{f.sym_name}.jvp{self.width if self.width > 1 else ''}"
        new = Func(name, arg_types, res_types, loc=f.loc)
        self.cache[(f.sym_name, tuple(self.active_args), self.width)] = new
        self.module.add(new)
        for old, a in zip(f.args, new.args):
            self.map[old] = a
            a.hint = old.hint
        extra = iter(new.args[len(f.args):])
        for i in self.active_args:
            self.tan[f.args[i]] = [next(extra) for _ in range(self.width)]
        self.b.block, self.b.index = new.body, None
        for i, a in enumerate(f.args):  # an argument the function stores varied values into
            if i not in self.active_args and self.act.active(a):  # gets scratch tangents
                self.tan[a] = [self.zero_like(new.args[i]) for _ in range(self.width)]
        self.block(f.body, new.body)
        return new

    def block(self, old: Block, new: Block) -> list[Value]:
        """Transform ``old``'s ops into ``new``; returns the mapped terminator operands plus the
        tangents the terminator will need (the caller builds the terminator)."""
        saved = (self.b.block, self.b.index)
        self.b.block, self.b.index = new, None
        try:
            for op in old.ops:
                if isinstance(op, (Yield, Condition)):
                    continue  # block_with_yield builds the new terminator
                self.b.loc = op.loc
                self.op(op)
        finally:
            self.b.block, self.b.index = saved
        return []

    # ------------------------------------------------------------------ ops
    def op(self, op: Op) -> None:
        handler = HANDLERS.get(type(op))
        if handler is not None:
            return handler(self, op)
        if op.has_trait(VIEW):
            return self.view(op)
        return self.generic(op)

    def generic(self, op: Op) -> None:
        """An op differentiated by its rule record (or never active)."""
        new = self.clone(op)
        if not any(self.act.active(r) for r in op.results):
            return
        if op.name in PARTIALS:
            self.partials(op, new)
        elif op.name in LINEAR:
            self.linear(op, new)
        elif op.name not in ZERO:
            raise DifferentiationError(f"no derivative rule for `{op.name}`", op.loc)

    def clone(self, op: Op) -> Op:
        new = clone_op(op, self.map)
        self.b.insert(new)
        return new

    def x(self, v: Value) -> Value:
        return self.map.get(v, v)

    def t(self, v: Value, lane: int) -> Value | None:
        ts = self.tan.get(v)
        return ts[lane] if ts is not None else None

    def t_or_zero(self, v: Value, lane: int) -> Value:
        ts = self.tan.get(v)
        return ts[lane] if ts is not None else self.zero_like(self.x(v))

    def zero_like(self, v: Value) -> Value:
        if isinstance(v.type, ArrayType):
            dims = [self.b.op(Dim, v, axis=k) for k in range(v.type.ndim)]
            z = self.b.create(Alloc, dims, [v.type.with_layout("C")], {"init": "zero"})
            if v.type.layout != "C":
                return self.b.op(Relayout, z.result, type=v.type)
            return z.result
        return self.b.const(0, v.type)

    def partials(self, op: Op, new: Op) -> None:
        xs = [self.x(v) for v in op.operands]
        need = [v in self.tan for v in op.operands]
        rule = PARTIALS[op.name]
        ps = rule.fn(self.b, *xs, out=new.result, need=need)
        lanes = []
        for w in range(self.width):
            acc = None
            for v, p in zip(op.operands, ps):
                tv = self.t(v, w)
                if tv is None or p is None:
                    continue
                term = self.b.mul_strong(tv, p) if rule.strong else self.b.mul(p, tv)
                acc = term if acc is None else self.b.add(acc, term)
            lanes.append(acc if acc is not None else self.b.const(0, new.result.type))
        self.tan[op.result] = lanes

    def linear(self, op: Op, new: Op) -> None:
        jvp = LINEAR[op.name].fn[0]
        xs = [self.x(v) for v in op.operands]
        lanes = []
        for w in range(self.width):
            ts = [self.t(v, w) for v in op.operands]
            lanes.append(jvp(self.b, op.attrs, xs, new.result, ts))
        self.tan[op.result] = lanes

    # ------------------------------------------------------------------ memory
    def op_array_load(self, op):
        new = self.clone(op)
        if self.act.active(op.result) and op.operands[0] in self.tan:
            idx = [self.x(v) for v in op.operands[1:]]
            self.tan[op.result] = [self.b.op(Load, s, *idx)
                                   for s in self.tan[op.operands[0]]]
        return new

    def op_array_store(self, op):
        self.clone(op)
        v, a = op.operands[0], op.operands[1]
        if a not in self.tan:
            if v in self.tan:  # never drop a tangent silently
                raise DifferentiationError("forward mode cannot follow the array this value is "
                                           f"stored into (made by `{_maker(a)}`)", op.loc)
            return
        idx = [self.x(i) for i in op.operands[2:]]
        for w, s in enumerate(self.tan[a]):
            tv = self.t(v, w) if is_float(v) else None
            if tv is None:
                tv = self.b.const(0, a.type.dtype)
            self.b.create(Store, [tv, s, *idx], [])

    def op_array_atomic_add(self, op):
        """a[idx] += v atomically: the tangent adds the same way."""
        self.clone(op)
        v, a = op.operands[0], op.operands[1]
        if a not in self.tan:
            if v in self.tan:
                raise DifferentiationError("forward mode cannot follow the array this value is "
                                           f"added into (made by `{_maker(a)}`)", op.loc)
            return
        if not is_float(v) or v not in self.tan:
            return
        idx = [self.x(i) for i in op.operands[2:]]
        for w, s in enumerate(self.tan[a]):
            self.b.create(AtomicAdd, [self.t(v, w), s, *idx], [])

    def op_array_alloc(self, op):
        self.clone(op)
        if self.act.active(op.result):
            self.tan[op.result] = [self.b.create(Alloc, [self.x(d) for d in op.operands],
                                                 [op.result.type], {"init": "zero"}).result
                                   for _ in range(self.width)]

    def op_array_const(self, op):
        """A global or closure array: compiled code never writes it (``constant_writes``), so
        its tangent is zero even where a call's operands make activity call it varied."""
        new = self.clone(op)
        if self.act.active(op.result):
            self.tan[op.result] = [self.zero_like(new.result) for _ in range(self.width)]

    def op_arith_select(self, op):
        if not isinstance(op.result.type, ArrayType):
            return self.generic(op)
        self.clone(op)  # one of two buffers (reverse mode's shadows of swapped arrays)
        if self.act.active(op.result):
            c = self.x(op.operands[0])
            self.tan[op.result] = [
                self.b.op(Select, c, self.t_or_zero(op.operands[1], w),
                          self.t_or_zero(op.operands[2], w)) for w in range(self.width)]

    def op_host_call(self, op):
        check_host_call(self.act, op)
        self.clone(op)

    def op_tape_read(self, op):
        raise DifferentiationError("forward mode cannot follow a snapshot on the tape "
                                   "(internal: snapshots must be off here)", op.loc)

    def view(self, op):
        self.clone(op)
        src = op.operands[0]
        if src in self.tan and self.act.active(op.result):
            rest = [self.x(v) for v in op.operands[1:]]
            self.tan[op.result] = [
                self.b.create(type(op), [s, *rest], [op.result.type], dict(op.attrs)).result
                for s in self.tan[src]]

    def op_linalg_matmul(self, op):
        self.clone(op)
        a, bm, out = op.operands
        if out not in self.tan:
            return
        for w in range(self.width):  # t_out (+)= t_a @ b + a @ t_b
            so = self.tan[out][w]
            acc = bool(op.attrs.get("acc"))
            for x, y in ((self.t(a, w), self.x(bm)), (self.x(a), self.t(bm, w))):
                if x is not None and y is not None:
                    self.b.create(Matmul, [x, y, so], [], {"acc": acc})
                    acc = True
            if not acc:  # overwritten by a product of constants
                fill_zero(self.b, so)

    # ------------------------------------------------------------------ control flow
    def carried_tangents(self, values) -> list[bool]:
        return [self.act.active(v) for v in values]

    def op_scf_if(self, op):
        act = self.carried_tangents(op.results)
        blocks = []
        for r in op.regions:
            blk = Block()
            self.block_with_yield(r.block, blk, op.results, act)
            blocks.append(blk)
        types = [r.type for r in op.results] + [r.type for r, a in zip(op.results, act) if a
                                                for _ in range(self.width)]
        new = self.b.create(If, [self.x(op.operands[0])], types,
                            regions=[Region([b]) for b in blocks])
        self._bind_results(op.results, new.results, act)

    def block_with_yield(self, old: Block, new: Block, carried, act):
        """Transform ``old`` into ``new`` and end it with a yield of the primal values and the
        tangents of the active ``carried`` positions."""
        self.block(old, new)
        term = old.terminator
        with self.b.at(new):
            vals = [self.x(v) for v in term.operands]
            extra = []
            if isinstance(term, Condition):
                pairs = list(zip(term.operands[1:], act))
            else:
                pairs = list(zip(term.operands, act))
            for v, a in pairs:
                if a:
                    extra += [self.t_or_zero(v, w) for w in range(self.width)]
            self.b.create(type(term), vals + extra, [])

    def _bind_results(self, old_results, new_results, act):
        for o, n in zip(old_results, new_results):
            self.map[o] = n
        rest = iter(new_results[len(old_results):])
        for o, a in zip(old_results, act):
            if a:
                self.tan[o] = [next(rest) for _ in range(self.width)]

    def _bind_args(self, old_args, new_block: Block, act):
        for o in old_args:
            self.map[o] = new_block.add_arg(o.type, o.hint)
        for o, a in zip(old_args, act):
            if a:
                self.tan[o] = [new_block.add_arg(o.type, "t") for _ in range(self.width)]

    def _inits(self, values, act) -> list[Value]:
        out = [self.x(v) for v in values]
        for v, a in zip(values, act):
            if a:
                out += [self.t_or_zero(v, w) for w in range(self.width)]
        return out

    def op_scf_for(self, op):
        body = op.regions[0].block
        act = self.carried_tangents(body.args[1:])
        inits = self._inits(op.operands[3:], act)
        blk = Block([op.operands[0].type])
        self.map[body.args[0]] = blk.args[0]
        self._bind_args(body.args[1:], blk, act)
        self.block_with_yield(body, blk, body.args[1:], act)
        lb, ub, st = (self.x(v) for v in op.operands[:3])
        new = self.b.create(type(op), [lb, ub, st, *inits], [v.type for v in inits],
                            regions=[Region([blk])])
        self._bind_results(op.results, new.results, act)

    def op_scf_while(self, op):
        before, after = op.regions[0].block, op.regions[1].block
        act_in = self.carried_tangents(before.args)
        act_out = self.carried_tangents(after.args)
        inits = self._inits(op.operands, act_in)
        pre, post = Block(), Block()
        self._bind_args(before.args, pre, act_in)
        self.block_with_yield(before, pre, before.args, act_out)
        self._bind_args(after.args, post, act_out)
        self.block_with_yield(after, post, after.args, act_in)
        types = [a.type for a in post.args]
        new = self.b.create(While, inits, types, regions=[Region([pre]), Region([post])])
        self._bind_results(op.results, new.results, act_out)

    def op_func_call(self, op):
        active = [k for k, v in enumerate(op.operands)
                  if (is_float(v) and v in self.tan) or (is_float_array(v) and v in self.tan)]
        if not active:
            self.clone(op)
            return
        callee = self.module[op.attrs["callee"]]
        if "custom_jvp" in callee.attrs:
            return self.custom_jvp_call(op, callee)
        jvp = jvp_function(self.module, callee, active, self.width, self.cache)
        args = [self.x(v) for v in op.operands]
        for k in active:
            args += self.tan[op.operands[k]]
        new = self.b.create(Call, args, jvp.result_types, {"callee": Symbol(jvp.sym_name)})
        n = len(op.results)
        for o, r in zip(op.results, new.results[:n]):
            self.map[o] = r
        rest = iter(new.results[n:])
        for k, t in enumerate(callee.result_types):
            if _is_float_type(t):
                lanes = [next(rest) for _ in range(self.width)]
                if self.act.active(op.results[k]):
                    self.tan[op.results[k]] = lanes

    def custom_jvp_call(self, op, callee):
        """Call the user's jvp rule once per lane: (primals, tangents) -> (out, tangent_out)."""
        rule = self.module[callee.attrs["custom_jvp"]]
        n = len(op.results)
        floats = [k for k, r in enumerate(op.results) if _is_float_type(r.type)]
        if len(rule.result_types) != n + len(floats):  # (the frontend checks the rule's output)
            raise DifferentiationError(
                "the jvp rule of this call must return a pair (output, output tangent), the "
                "tangent of the output's shape and dtype", op.loc)
        args = [self.x(v) for v in op.operands]
        lanes_out = []
        for w in range(self.width):
            tans = [self.t_or_zero(v, w) for v in op.operands if is_float(v) or is_float_array(v)]
            call = self.b.create(Call, args + tans, rule.result_types,
                                 {"callee": Symbol(rule.sym_name)})
            if w == 0:
                for o, r in zip(op.results, call.results[:n]):
                    self.map[o] = r
            lanes_out.append(list(call.results[n:]))
        for j, k in enumerate(floats):
            if self.act.active(op.results[k]):
                self.tan[op.results[k]] = [lanes[j] for lanes in lanes_out]

    # ------------------------------------------------------------------ tape (forward over reverse)
    def op_tape_push(self, op):
        """A value pushed (an array by reference: nothing writes it, nor so its tangent, after
        the push) goes with its tangents, popped by the matching ``op_tape_pop``."""
        self.clone(op)
        v = op.operands[1]
        if v in self.tan and "pair" in op.attrs:
            self.tangent_pairs.add(op.attrs["pair"])
            for t in self.tan[v]:
                self.b.create(type(op), [self.x(op.operands[0]), t], [])

    def op_tape_pop(self, op):
        if op.attrs.get("pair") in self.tangent_pairs:
            t = self.x(op.operands[0])
            lanes = [self.b.create(type(op), [t], [op.result.type]).result
                     for _ in range(self.width)][::-1]
            self.clone(op)
            self.tan[op.result] = lanes
        else:
            self.clone(op)

    def op_tape_reserve(self, op):
        t, n = (self.x(v) for v in op.operands)
        scaled = self.b.op(MulI, n, self.b.i64(1 + self.width))
        self.b.create(TapeReserve, [t, scaled], [])

    def op_func_return(self, op):
        vals = [self.x(v) for v in op.operands]
        for k in self.float_results:
            vals += [self.t_or_zero(op.operands[k], w) for w in range(self.width)]
        self.b.create(Return, vals, [])


T = ForwardTransform
# ops with a handler of their own; the others go by their rule record (views: ``view``)
HANDLERS = {Load: T.op_array_load, Store: T.op_array_store, Alloc: T.op_array_alloc,
            ArrayConst: T.op_array_const, ArrayGlobal: T.op_array_const,
            AtomicAdd: T.op_array_atomic_add,
            Select: T.op_arith_select, TapeRead: T.op_tape_read, TapePopRef: T.op_tape_pop,
            TapePushRef: T.op_tape_push,
            Matmul: T.op_linalg_matmul, If: T.op_scf_if, For: T.op_scf_for,
            Parallel: T.op_scf_for, While: T.op_scf_while, Call: T.op_func_call,
            TapePush: T.op_tape_push, TapePop: T.op_tape_pop, TapeReserve: T.op_tape_reserve,
            Return: T.op_func_return, HostCall: T.op_host_call}
del T


def _maker(a: Value) -> str:
    return a.op.name if a.op is not None else "a block argument"


def _is_float_type(t) -> bool:
    t = t.dtype if isinstance(t, ArrayType) else t
    return getattr(t, "kind", None) in ("f", "c")


