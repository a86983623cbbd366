"""Loops, a mixin of FunctionLowerer.

* ``for`` over ``range`` (or anything indexed by a counter) becomes ``scf.for``; ``while`` (and
  a ``for`` that can ``break`` or ``return``) becomes ``scf.while``.
* The loop carries every name its body assigns; the body is lowered again until the carried
  types are stable (``s = 0`` then ``s += x[i]`` carries a float).
* ``for t in zymase.checkpoint(range(...))`` marks the ``scf.for`` for reverse mode.
"""

from __future__ import annotations

import ast

from ...errors import UnsupportedError, ZymaseTypeError
from ...ir.core import Block, Region, Value
from ...ir.ops import (
    AddI,
    AndI,
    Assert,
    CmpI,
    Condition,
    FloorDivI,
    For,
    MaxI,
    MulI,
    NegI,
    Not,
    OrI,
    Select,
    SubI,
    While,
)
from ...ir.types import I64
from ...lang import checkpoint
from .. import scan
from ..numpy.params import static
from ..typing import UNDEF, EmptyList, PyObj, Scalar, flatten, ir_types, rebuild, type_key

# `$def:y`: an i1 that is true where `y` is bound, for a name bound on some paths only (a branch
# that assigns it, a loop that may run no times); reading `y` checks it (UnboundLocalError).
BOUND = "$def:"
MAX_RETYPE = 8


class LoopMixin:
    """Mixin of FunctionLowerer: ``for`` and ``while`` loops."""

    def visit_While(self, s):
        names = scan.assigned_names(s.body)
        has_brk = scan.has_loop_exit(s.body, (ast.Break,))

        def cond_fn():
            def user():
                return self.truth(self.expr(s.test), s.test)
            if not has_brk and not scan.has_return(s.body):
                return user()
            stop = self.any_flag(("$brk", "$ret"))
            return self.lower_if_value(stop, lambda: self.const_bool(False), user, s)

        self.lower_while(names, has_brk, cond_fn, lambda: self.loop_body(s.body), s)

    def any_flag(self, flags) -> Scalar:
        vals = [self.symtab[f].value for f in flags if f in self.symtab]
        out = vals[0]
        for v in vals[1:]:
            out = self.b.op(OrI, out, v)
        return Scalar(out, True)

    def loop_body(self, stmts, pre=None, post=None):
        """Lower a loop body with fresh ``continue`` state; ``pre``/``post`` run around it."""
        saved = (self.in_loop, self.terminated)
        self.in_loop, self.terminated = True, False
        self.symtab["$cont"] = self.const_bool(False)
        if pre is not None:
            pre()
        self.lower_stmts(stmts)
        self.terminated = False
        self.symtab.pop("$cont", None)
        if post is not None:
            post()
        self.in_loop, self.terminated = saved

    def flag_loop_locals(self, names) -> list:
        """``names`` (those a loop assigns) and the ``$def:`` flags it carries: a name first
        bound in the loop is unbound after it when the body never runs (or never assigns it)."""
        out = list(names)
        for n in names:
            if n not in self.maybe_unbound:
                continue
            key = BOUND + n
            if self.symtab.get(n, UNDEF) is UNDEF and key not in self.symtab:
                self.symtab[key] = self.const_bool(False)
            if key in self.symtab and self.constant_of(self.symtab[key]) is not True:
                out.append(key)  # (a flag already true stays the constant: nothing to carry)
        return out

    def _carried(self, before, names):
        return {n: before[n] for n in names if before.get(n, UNDEF) is not UNDEF}

    def _fixpoint(self, before, names, attempt, node):
        """Run ``attempt(templates)`` until the carried names' types stop changing.

        ``attempt`` lowers the loop for the given templates and returns (end_env, finish, discard);
        ``finish(templates, extra)`` completes the op: ``extra`` are names first bound inside the
        body, carried from then on without re-lowering (the body never reads their old value).
        """
        templates = self._carried(before, names)
        for _ in range(MAX_RETYPE):
            end_env, finish, discard = attempt(templates)
            new = {n: self.unify(t, end_env.get(n, UNDEF), n) for n, t in templates.items()}
            if any(type_key(new[n]) != type_key(templates[n]) for n in new):
                discard()
                templates = new
                continue
            extra, partial = {}, {}
            for n in names:
                end = end_env.get(n, UNDEF)
                if n not in templates and end is not UNDEF and not isinstance(end, EmptyList):
                    extra[n] = self.unify(UNDEF, end, n)
                    flag = end_env.get(BOUND + n)
                    if flag is not None and self.constant_of(flag) is not True and \
                            scan.carried_value_read(self.src.tree, node, n):
                        partial[n] = extra[n]
            if partial:
                # bound on some paths through the body only, and read where an earlier
                # iteration's value shows: the other paths keep that value, so the body must see
                # it (lower again, carrying it)
                discard()
                templates = {**templates, **partial}
                continue
            return {**templates, **extra}, finish(templates, extra)
        raise ZymaseTypeError("the types of the names carried by this loop do not settle",
                              self.b.loc)

    def _yield_values(self, end, templates):
        return [x for n, t in templates.items() for x in flatten(self.convert(end[n], t, n))]

    def lower_for_range(self, s, lb, ub, step, bind_target, loop_class=For):
        """``for`` over a range (or anything indexed by one) without break/return: ``scf.for``
        (or ``loop_class``).  Returns the op and the name of each value it carries."""
        self.guard_counter_overflow(lb, ub, step)
        names = self.flag_loop_locals(scan.assigned_names([s]))
        before = dict(self.symtab)

        def attempt(templates):
            body = Block([I64] + [t for tpl in templates.values() for t in ir_types(tpl)])
            flat = list(body.args[1:])
            self.symtab = dict(before)
            for n, tpl in templates.items():
                self.symtab[n] = rebuild(tpl, flat)
            with self.b.at(body):
                self.loop_body(s.body, pre=lambda: bind_target(Scalar(body.args[0], True)))
            end = self.symtab

            def finish(tpls, extra):
                for t in (t for tpl in extra.values() for t in ir_types(tpl)):
                    body.add_arg(t)
                with self.b.at(body):
                    self.b.yield_(*self._yield_values(end, {**tpls, **extra}))
                return body

            return end, finish, lambda: _clear(body)

        templates, body = self._fixpoint(before, names, attempt, s)
        self.symtab = before
        inits = [x for n, t in templates.items()
                 for x in flatten(self.convert(before.get(n, UNDEF), t, n))]
        op = self.b.create(loop_class, [lb, ub, step, *inits], [v.type for v in inits],
                           regions=[Region([body])])
        results = list(op.results)
        for n, t in templates.items():
            self.symtab[n] = rebuild(t, results)
        return op, [n for n, t in templates.items() for _ in ir_types(t)]

    def guard_counter_overflow(self, lb, ub, step) -> None:
        """Raise OverflowError where an ``scf.for`` counter could step past the int64 range (it
        would wrap and the loop never end): a non-empty range whose bound lies within one step
        of the limit.  Steps of +-1 never can (nor can ranges with such bounds known small)."""
        k = self.constant_of(Scalar(step))
        if k in (1, -1):
            return
        b = self.b
        one = b.i64(1)
        # every counter value i < ub has i + step <= ub - 1 + step: fine while ub <= MAX - step + 1
        up = b.op(CmpI, ub, b.op(SubI, b.i64(2**63 - 1),
                                         b.op(SubI, step, one)), pred="le")
        down = b.op(CmpI, ub, b.op(AddI, b.i64(-(2**63)),
                                           b.op(SubI, b.op(NegI, step), one)),
                    pred="ge")
        pos = b.op(CmpI, step, b.i64(0), pred="gt")
        empty = b.op(Select, pos, b.op(CmpI, lb, ub, pred="ge"),
                     b.op(CmpI, lb, ub, pred="le"))
        ok = b.op(OrI, empty, b.op(Select, pos, up, down))
        b.create(Assert, [ok], [], {
            "kind": "OverflowError",
            "msg": "range(): the loop counter would step past the 64-bit integer limit (bounds "
                   "within one step of it are not supported)"})

    def lower_while(self, names, has_brk, cond_fn, body_fn, node):
        """``scf.while``: ``cond_fn`` runs in the before-region, ``body_fn`` in the after-region."""
        names = self.flag_loop_locals(names)
        before = dict(self.symtab)
        if has_brk:
            before["$brk"] = self.const_bool(False)
            names = [*names, "$brk"]
        if scan.has_return(getattr(node, "body", [])):
            names = [*names, "$ret", "$rv"]
        outer_brk = self.symtab.get("$brk")

        def attempt(templates):
            types = [t for tpl in templates.values() for t in ir_types(tpl)]
            pre, post = Block(types), Block(types)
            self.symtab = dict(before)
            pre_flat = list(pre.args)
            for n, tpl in templates.items():
                self.symtab[n] = rebuild(tpl, pre_flat)
            with self.b.at(pre):
                c = cond_fn()
                self.b.create(Condition, [c.value, *pre.args], [])
            self.symtab = dict(before)
            post_flat = list(post.args)
            for n, tpl in templates.items():
                self.symtab[n] = rebuild(tpl, post_flat)
            with self.b.at(post):
                body_fn()
            end = self.symtab

            def finish(tpls, extra):
                cond = pre.terminator
                for t in (t for tpl in extra.values() for t in ir_types(tpl)):
                    cond._add_operand(pre.add_arg(t))
                    post.add_arg(t)
                with self.b.at(post):
                    self.b.yield_(*self._yield_values(end, {**tpls, **extra}))
                return pre, post

            return end, finish, lambda: (_clear(pre), _clear(post))

        templates, (pre, post) = self._fixpoint(before, names, attempt, node)
        self.symtab = before
        inits = [x for n, t in templates.items()
                 for x in flatten(self.convert(before.get(n, UNDEF), t, n))]
        op = self.b.create(While, inits, [v.type for v in inits],
                           regions=[Region([pre]), Region([post])])
        results = list(op.results)
        for n, t in templates.items():
            self.symtab[n] = rebuild(t, results)
        if outer_brk is None:
            self.symtab.pop("$brk", None)
        else:
            self.symtab["$brk"] = outer_brk

    def visit_For(self, s):
        iter_node, snaps = self.checkpoint_marker(s)
        if snaps is None and self.prange_call(iter_node):
            return self.lower_prange(s, iter_node)
        it = self.iteration(iter_node)
        if it is None and snaps is not None:
            raise self.err(UnsupportedError, "zymase.checkpoint needs a loop over a range, an "
                           "array or a list", s.iter)
        if it is None:  # a compile-time tuple: unrolled
            for item in self.expr(s.iter).items:
                self.assign(s.target, item)
                self.lower_stmts(s.body)
            return
        lb, ub, step, bind = it

        def bind_target(iv):
            self.assign(s.target, bind(iv))

        if scan.has_loop_exit(s.body, (ast.Break,)) or scan.has_return(s.body):
            self.lower_for_as_while(s, lb, ub, step, bind_target)
        else:
            block, n = self.b.block, len(self.b.block.ops)
            self.lower_for_range(s, lb, ub, step, bind_target)
            if snaps is not None:  # marked for reverse mode (autodiff/reverse/checkpoint.py)
                loop = next(op for op in reversed(block.ops[n:]) if isinstance(op, For))
                loop.attrs["checkpoint"] = snaps

    def checkpoint_marker(self, s):
        """``for t in zymase.checkpoint(range(...), snaps=k)``: (the inner iterable's node,
        k, 0 when not given); (s.iter, None) for other loops."""
        node = s.iter
        if not isinstance(node, ast.Call):
            return node, None
        f = self.expr(node.func)
        if not (isinstance(f, PyObj) and f.obj is checkpoint):
            return node, None
        if len(node.args) != 1 or any(k.arg != "snaps" for k in node.keywords):
            raise self.err(ZymaseTypeError, "zymase.checkpoint takes one iterable and an "
                           "optional snaps=", node)
        snaps = 0
        for k in node.keywords:
            snaps = static(self, self.expr(k.value))
            if isinstance(snaps, bool) or not isinstance(snaps, int) or snaps < 1:
                raise self.err(ZymaseTypeError, "zymase.checkpoint: snaps must be a positive "
                               "integer known at compile time", k.value)
        if scan.has_loop_exit(s.body, (ast.Break,)) or scan.has_return(s.body):
            raise self.err(UnsupportedError, "zymase.checkpoint needs a loop without `break` "
                           "or `return`", s)
        return node.args[0], snaps

    def lower_for_as_while(self, s, lb, ub, step, bind_target):
        trip = self.range_trip(lb, ub, step)
        self.symtab["$k"] = Scalar(self.b.i64(0), False)
        names = ["$k", *scan.assigned_names([s])]
        has_brk = scan.has_loop_exit(s.body, (ast.Break,))

        def cond_fn():
            more = self.b.op(CmpI, self.symtab["$k"].value, trip, pred="lt")
            stop = self.any_flag(("$brk", "$ret"))
            return Scalar(self.b.op(AndI, more, self.b.op(Not, stop.value)), True)

        def body_fn():
            k = self.symtab["$k"].value

            def pre():
                iv = self.b.op(AddI, lb, self.b.op(MulI, k, step))
                bind_target(Scalar(iv, True))

            def post():
                self.symtab["$k"] = Scalar(self.b.op(AddI, k, self.b.i64(1)), False)

            self.loop_body(s.body, pre=pre, post=post)

        self.lower_while(names, has_brk, cond_fn, body_fn, s)
        self.symtab.pop("$k", None)

    def range_trip(self, lb: Value, ub: Value, step: Value) -> Value:
        """``len(range(lb, ub, step))`` as IR (step is non-zero)."""
        b = self.b
        zero, one = b.i64(0), b.i64(1)
        pos = b.op(CmpI, step, zero, pred="gt")
        span = b.op(Select, pos, b.op(SubI, ub, lb), b.op(SubI, lb, ub))
        # a span past 2**63 - 1 wraps negative and would read as an empty range
        wide = b.op(AndI, b.op(CmpI, span, zero, pred="lt"),
                    b.op(Select, pos, b.op(CmpI, ub, lb, pred="gt"),
                         b.op(CmpI, lb, ub, pred="gt")))
        b.create(Assert, [b.op(Not, wide)], [], {
            "kind": "OverflowError",
            "msg": "range(): the distance between the bounds does not fit in 64 bits"})
        mag = b.op(Select, pos, step, b.op(NegI, step))
        n = b.op(FloorDivI, b.op(AddI, span, b.op(SubI, mag, one)), mag)
        return b.op(MaxI, n, zero)


def _clear(block: Block):
    for op in reversed(list(block.ops)):
        op.erase()
    for a in block.args:
        a.uses.clear()
