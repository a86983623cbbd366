"""Python ``ast`` -> IR for one function specialization: statements and structured control flow.

* ``if`` becomes ``scf.if``; the names bound differently in the two branches become its results.
* ``for`` over ``range`` becomes ``scf.for``; ``while`` (and a ``for`` that can ``break`` or
  ``return``) becomes ``scf.while``.  The loop carries every name its body assigns; the body is
  lowered again until the carried types are stable (``s = 0`` then ``s += x[i]`` carries a float).
* ``break``/``continue``/``return`` set flags (``$brk``, ``$cont``, ``$ret`` and the value ``$rv``);
  the statements after one that may have exited run under ``scf.if(not exited)``.

Expressions are in ``exprs.py``, subscripts in ``indexing.py``, NumPy in ``numpy.py``.
"""

from __future__ import annotations

import ast

import numpy as np

from ..checkpointing import checkpoint
from ..errors import UnsupportedError, ZymaseTypeError
from ..ir.builder import Builder
from ..ir.core import Block, Func, Region, Value
from ..ir.types import I1, I64, ArrayType
from . import scan
from .exprs import ExprLowerer
from .typing import (
    UNDEF,
    Array,
    EmptyList,
    FVal,
    ListVal,
    PyObj,
    Scalar,
    Struct,
    Tup,
    flatten,
    rebuild,
    result_type,
    stype,
    type_key,
)

FLAGS = ("$ret", "$brk", "$cont")
# `$def:y`: an i1 that is true where `y` is bound, for a name bound on some paths only (a branch
# that assigns it, a loop that may run no times); reading `y` checks it (UnboundLocalError).
BOUND = "$def:"
MAX_RETYPE = 8


class FunctionLowerer(ExprLowerer):
    """Lowers one Python function, specialized to its parameters' types, into ``func``."""

    def __init__(self, mod, src, func: Func, params: list[FVal], options):
        self.mod = mod
        self.src = src
        self.func = func
        self.options = options
        self.b = Builder.at_end(func.body, src.loc(src.tree))
        self.symtab: dict[str, object] = {}
        self.terminated = False
        self.raised = False  # the current path ended in a `raise`
        self.in_loop = False
        self.returns_value = scan.returns_value(src.tree)
        self.maybe_unbound = scan.maybe_unbound(src.tree)  # the names that get `$def:` flags
        self._bind_params(params)

    # ------------------------------------------------------------------ entry points
    def _bind_params(self, params):
        args = self.src.tree.args
        if args.vararg or args.kwarg:
            raise UnsupportedError("*args and **kwargs parameters are not supported",
                                   self.src.loc(self.src.tree))
        flat = list(self.func.args)
        for a, p in zip(args.posonlyargs + args.args + args.kwonlyargs, params):
            fv = rebuild(p, flat)
            for v in flatten(fv):
                v.hint = a.arg
            self.symtab[a.arg] = fv
        self.symtab["$ret"] = self.const_bool(False)
        self.symtab["$rv"] = UNDEF

    def lower_body(self):
        """Lower the function body; returns the FVal it returns (None for no value)."""
        body = self.src.tree.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # docstring
        self.lower_stmts(body)
        if not self.returns_value:
            return None
        if self.raised:  # every path raises: the value is never seen (a float stands in)
            rv = self.symtab.get("$rv", UNDEF)
            return rv if rv is not UNDEF and not isinstance(rv, EmptyList) else \
                Scalar(self.b.f64(0.0), True)
        if not scan.always_returns(body):
            raise UnsupportedError(
                f"function `{self.src.tree.name}` returns a value on some paths and reaches its "
                "end (returning None) on others", self.src.loc(self.src.tree))
        return self.symtab["$rv"]

    # ------------------------------------------------------------------ statements
    def lower_stmts(self, stmts):
        for k, s in enumerate(stmts):
            if self.terminated:
                return
            with self.b.location(self.src.loc(s)):
                self.lower_stmt(s)
            rest = stmts[k + 1:]
            if rest and not self.terminated and scan.may_exit(s, self.in_loop):
                with self.b.location(self.src.loc(rest[0])):
                    go = self.not_exited()
                    if self.constant_of(go) is True:
                        self.lower_stmts(rest)
                    else:
                        self.lower_if(go, lambda: self.lower_stmts(rest), None)
                return

    def lower_stmt(self, s):
        visit = getattr(self, "visit_" + type(s).__name__, None)
        if visit is None:
            raise UnsupportedError(f"`{type(s).__name__}` statements are not supported",
                                   self.src.loc(s))
        visit(s)

    def visit_Expr(self, s):
        if isinstance(s.value, ast.Constant):
            return  # a string used as a comment
        self.expr(s.value)

    def visit_Pass(self, s):
        pass

    def visit_Assign(self, s):
        value = self.expr(s.value)
        for t in s.targets:
            self.assign(t, value)

    def visit_AnnAssign(self, s):
        if s.value is not None:
            self.assign(s.target, self.expr(s.value))

    def visit_AugAssign(self, s):
        t = s.target
        if isinstance(t, ast.Name):
            cur = self.lookup_name(t.id, t)
            if isinstance(cur, Array):
                self.inplace_binop(s.op, cur, self.expr(s.value), s)
            else:
                self.symtab[t.id] = self.binop(s.op, cur, self.expr(s.value), s)
                self.mark_bound(t.id)
        elif isinstance(t, ast.Subscript):
            self.aug_subscript(t, s.op, s.value, s)
        else:
            raise UnsupportedError("augmented assignment to this target is not supported",
                                   self.src.loc(t))

    def assign(self, target, value):
        if isinstance(target, ast.Name):
            if isinstance(value, (Scalar, Array)) and not value.value.hint:
                value.value.hint = target.id  # names in explain() and tape_report()
            self.symtab[target.id] = value
            self.mark_bound(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = self.unpack(value, len(target.elts), target)
            for t, v in zip(target.elts, items):
                self.assign(t, v)
        elif isinstance(target, ast.Subscript):
            self.store_subscript(target, value)
        else:
            raise UnsupportedError(f"cannot assign to a `{type(target).__name__}`",
                                   self.src.loc(target))

    def mark_bound(self, name: str) -> None:
        """``name`` was just assigned: its ``$def:`` flag (if it has one) is now true."""
        if BOUND + name in self.symtab:
            self.symtab[BOUND + name] = self.const_bool(True)

    def unpack(self, value, n, node):
        if isinstance(value, Tup):
            if len(value.items) != n:
                raise ZymaseTypeError(f"cannot unpack {len(value.items)} values into {n} names",
                                      self.src.loc(node))
            return value.items
        if isinstance(value, Array) and value.type.ndim >= 1:
            return [self.index_value(value, [self.const_int(k)], node) for k in range(n)]
        raise ZymaseTypeError(f"cannot unpack {self.describe(value)}", self.src.loc(node))

    def visit_Return(self, s):
        if not self.returns_value:
            value = PyObj(None)
        elif s.value is None or (isinstance(s.value, ast.Constant) and s.value.value is None):
            raise UnsupportedError("this function returns a value elsewhere; returning None here "
                                   "is not supported", self.src.loc(s))
        else:
            value = self.expr(s.value)
        self.symtab["$rv"] = value
        self.symtab["$ret"] = self.const_bool(True)
        self.terminated = True

    def visit_Break(self, s):
        self.symtab["$brk"] = self.const_bool(True)
        self.terminated = True

    def visit_Continue(self, s):
        self.symtab["$cont"] = self.const_bool(True)
        self.terminated = True

    def visit_Raise(self, s):
        """``raise E`` / ``raise E("message")`` of a builtin exception (or NumPy's
        LinAlgError): the path ends with the exception at this line.  The message is the string
        given, or the text of an f-string (its ``{...}`` parts as written)."""
        if s.exc is None:
            raise UnsupportedError("a bare `raise` (re-raising) is not supported in compiled code",
                                   self.src.loc(s))
        if s.cause is not None and not (isinstance(s.cause, ast.Constant) and
                                        s.cause.value is None):
            raise UnsupportedError("`raise ... from <exception>` is not supported (`from None` "
                                   "is)", self.src.loc(s))
        call = s.exc if isinstance(s.exc, ast.Call) else None
        cls = self.expr(call.func if call is not None else s.exc)
        kind = RAISABLE.get(cls.obj) if isinstance(cls, PyObj) and isinstance(cls.obj, type) \
            else None
        if kind is None:
            raise UnsupportedError("raising this is not supported in compiled code (builtin "
                                   f"exceptions can be raised: {', '.join(RAISABLE.values())})",
                                   self.src.loc(s))
        msg = ""
        if call is not None:
            if call.keywords or len(call.args) > 1:
                raise UnsupportedError("an exception raised in compiled code takes one message "
                                       "argument", self.src.loc(call))
            if call.args:
                msg = _message_text(call.args[0])
                if isinstance(call.args[0], ast.Name):  # a string known when compiling
                    v = self.expr(call.args[0])
                    if isinstance(v, PyObj) and isinstance(v.obj, str):
                        msg = v.obj
        self.b.create("rt.assert", [self.b.i1(False)], [], {
            "kind": kind, "msg": msg.replace("{", "{{").replace("}", "}}")})
        self.raised = self.terminated = True

    def visit_Assert(self, s):
        ok = self.truth(self.expr(s.test), s.test)
        msg = "assertion failed"
        if isinstance(s.msg, ast.Constant) and isinstance(s.msg.value, str):
            msg = s.msg.value
        self.b.create("rt.assert", [ok.value], [], {"kind": "AssertionError", "msg": msg})

    def visit_If(self, s):
        cond = self.truth(self.expr(s.test), s.test)
        static = self.constant_of(cond)
        if static is not None:
            self.lower_stmts(s.body if static else s.orelse)
            return
        self.lower_if(cond, lambda: self.lower_stmts(s.body),
                      (lambda: self.lower_stmts(s.orelse)) if s.orelse else None)

    def not_exited(self) -> Scalar:
        flags = [self.symtab[f] for f in FLAGS if f in self.symtab]
        if all(self.constant_of(f) is False for f in flags):
            return self.const_bool(True)  # (no exit was compiled: a branch folded away)
        any_exit = flags[0].value
        for f in flags[1:]:
            any_exit = self.b.op("arith.ori", any_exit, f.value)
        return Scalar(self.b.op("arith.not", any_exit), True)

    # ------------------------------------------------------------------ if / merge
    def lower_if(self, cond: Scalar, then_fn, else_fn) -> None:
        """Emit ``scf.if``; names bound differently by the branches become its results."""
        before, term0, raised0 = dict(self.symtab), self.terminated, self.raised
        envs, blocks, terms, raised = [], [], [], []
        for fn in (then_fn, else_fn):
            block = Block()
            self.symtab, self.terminated, self.raised = dict(before), term0, False
            with self.b.at(block):
                if fn is not None:
                    fn()
            envs.append(self.symtab)
            blocks.append(block)
            terms.append(self.terminated)
            raised.append(self.raised)
        for k in range(2):  # a branch that raised goes nowhere: the other branch's names win
            if raised[k] and not raised[1 - k]:
                with self.b.at(blocks[k]):
                    envs[k] = {n: v if v is before.get(n, UNDEF) else self.placeholder(v)
                               for n, v in envs[1 - k].items()}
        self.raised = raised0 or all(raised)
        merged, same = self._merge_envs(before, envs, blocks)
        op = self.b.create("scf.if", [cond.value], [t for _, tpl in merged for t in _types(tpl)],
                           regions=[Region([blk]) for blk in blocks])
        results = list(op.results)
        self.symtab = dict(before)
        self.symtab.update(same)
        for name, tpl in merged:
            self.symtab[name] = rebuild(tpl, results)
        self.terminated = all(terms)

    def _merge_envs(self, before, envs, blocks):
        """(names merged through the op's results, names both branches bound to one value
        from outside them)."""
        merged, same = [], {}
        self._flag_partly_bound(envs, blocks)
        names = list(dict.fromkeys([*envs[0], *envs[1]]))
        yields = [[], []]
        for name in names:
            vals = [env.get(name, UNDEF) for env in envs]
            if vals[0] is vals[1]:
                if vals[0] is not before.get(name, UNDEF):
                    same[name] = vals[0]  # e.g. `t = x` on both paths
                continue
            tpl = self.unify(vals[0], vals[1], name)
            if not flatten(tpl) and not isinstance(tpl, (Tup, Struct)):
                continue
            merged.append((name, tpl))
            for k in range(2):
                with self.b.at(blocks[k]):
                    yields[k].extend(flatten(self.convert(vals[k], tpl, name)))
        for k in range(2):
            with self.b.at(blocks[k]):
                self.b.yield_(*yields[k])
        return merged, same

    def _flag_partly_bound(self, envs, blocks) -> None:
        """Give a name bound on one path only (or flagged on one) a ``$def:`` flag on both, so
        that the merge carries whether it is bound (see BOUND)."""
        names = {n for env in envs for n in env if n in self.maybe_unbound}
        for name in sorted(names):
            key = BOUND + name
            vals = [env.get(name, UNDEF) for env in envs]
            if all(v is UNDEF for v in vals):
                continue
            if not any(v is UNDEF for v in vals) and not any(key in env for env in envs):
                continue
            for env, block, v in zip(envs, blocks, vals):
                if v is UNDEF or key not in env:
                    with self.b.at(block):
                        env[key] = self.const_bool(v is not UNDEF)
            if all(self.constant_of(env[key]) is True for env in envs):
                bound = self.const_bool(True)  # before the op: merged as one value, no result
                for env in envs:
                    env[key] = bound

    def lower_if_value(self, cond: Scalar, then_fn, else_fn, node) -> FVal:
        """An ``scf.if`` producing a value (conditional expressions, ``and``/``or``)."""
        saved = self.symtab.get("$ifv", UNDEF)

        def branch(fn):
            def run():
                value = fn()  # may lower nested branches, which replace self.symtab
                self.symtab["$ifv"] = value
            return run

        self.lower_if(cond, branch(then_fn), branch(else_fn))
        out = self.symtab.pop("$ifv")
        if saved is not UNDEF:
            self.symtab["$ifv"] = saved
        return out

    # ------------------------------------------------------------------ unify / convert
    def unify(self, a, b, name):
        """A template FVal whose types hold both ``a`` and ``b`` (see typing.result_type)."""
        if a is UNDEF or isinstance(a, EmptyList):
            return b if not (b is UNDEF and isinstance(a, EmptyList)) else a
        if b is UNDEF or isinstance(b, EmptyList):
            return a
        if isinstance(a, Scalar) and isinstance(b, Scalar):
            st = result_type(stype(a), stype(b))
            return Scalar(Value(st.type), st.weak)
        if isinstance(a, Array) and isinstance(b, Array):
            ta, tb = a.type, b.type
            if ta.dtype == tb.dtype and ta.ndim == tb.ndim:
                layout = "C" if ta.layout == tb.layout == "C" else "A"
                return Array(Value(ArrayType(ta.dtype, ta.ndim, layout)))
        if isinstance(a, Tup) and isinstance(b, Tup) and len(a.items) == len(b.items):
            return Tup(tuple(self.unify(x, y, name) for x, y in zip(a.items, b.items)))
        if isinstance(a, ListVal) and isinstance(b, ListVal) and a.dtype == b.dtype:
            return a
        if isinstance(a, Struct) and isinstance(b, Struct) and a.pytype is b.pytype and \
                a.fields.keys() == b.fields.keys():
            return Struct(a.pytype, {k: self.unify(a.fields[k], b.fields[k], name)
                                     for k in a.fields})
        if isinstance(a, PyObj) and isinstance(b, PyObj) and a.obj is b.obj:
            return a
        where = max((loc for loc in (_def_loc(a), _def_loc(b)) if loc is not None),
                    key=lambda loc: loc.line, default=self.b.loc)
        raise ZymaseTypeError(
            f"`{name.lstrip('$')}` is {self.describe(a)} on one path and {self.describe(b)} "
            "on another; zymase needs one type per name", where,
            note=f"(the paths meet at {self.b.loc})")

    def convert(self, v, tpl, name):
        """``v`` as an FVal with exactly the types of template ``tpl`` (emits casts)."""
        if v is UNDEF or isinstance(v, EmptyList):
            return self.placeholder(tpl)
        if isinstance(tpl, Scalar):
            return Scalar(self.b.cast(v.value, tpl.type), tpl.weak)
        if isinstance(tpl, Array):
            if v.type == tpl.type:
                return v
            return Array(self.b.op("array.relayout", v.value, type=tpl.type))
        if isinstance(tpl, Tup):
            return Tup(tuple(self.convert(x, t, name) for x, t in zip(v.items, tpl.items)))
        if isinstance(tpl, Struct):
            return Struct(tpl.pytype, {k: self.convert(v.fields[k], t, name)
                                       for k, t in tpl.fields.items()})
        return v

    def placeholder(self, tpl):
        """Zero values shaped like ``tpl`` (for a name unbound on some path)."""
        if tpl is UNDEF or isinstance(tpl, (EmptyList, PyObj)):
            return tpl
        if isinstance(tpl, Scalar):
            return Scalar(self.b.const(0, tpl.type), tpl.weak)
        if isinstance(tpl, Array):
            zeros = [self.b.i64(0)] * tpl.type.ndim
            a = self.b.create("array.alloc", zeros, [tpl.type.with_layout("C")],
                              {"init": "zero"}).result
            return self.convert(Array(a), tpl, "")
        if isinstance(tpl, ListVal):
            buf = self.b.create("array.alloc", [self.b.i64(0)], [tpl.buf.type],
                                {"init": "zero", "list": True}).result
            return ListVal(buf, self.b.i64(0))
        if isinstance(tpl, Tup):
            return Tup(tuple(self.placeholder(x) for x in tpl.items))
        if isinstance(tpl, Struct):
            return Struct(tpl.pytype, {k: self.placeholder(x) for k, x in tpl.fields.items()})
        raise TypeError(tpl)

    # ------------------------------------------------------------------ loops
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
            out = self.b.op("arith.ori", out, v)
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

    def lower_for_range(self, s, lb, ub, step, bind_target):
        """``for`` over a range (or anything indexed by one) without break/return: ``scf.for``."""
        self.guard_counter_overflow(lb, ub, step)
        names = self.flag_loop_locals(scan.assigned_names([s]))
        before = dict(self.symtab)

        def attempt(templates):
            body = Block([I64] + [t for tpl in templates.values() for t in _types(tpl)])
            flat = list(body.args[1:])
            self.symtab = dict(before)
            for n, tpl in templates.items():
                self.symtab[n] = rebuild(tpl, flat)
            with self.b.at(body):
                self.loop_body(s.body, pre=lambda: bind_target(Scalar(body.args[0], True)))
            end = self.symtab

            def finish(tpls, extra):
                for t in (t for tpl in extra.values() for t in _types(tpl)):
                    body.add_arg(t)
                with self.b.at(body):
                    self.b.yield_(*self._yield_values(end, {**tpls, **extra}))
                return body

            return end, finish, lambda: _clear(body)

        templates, body = self._fixpoint(before, names, attempt, s)
        self.symtab = before
        inits = [x for n, t in templates.items()
                 for x in flatten(self.convert(before.get(n, UNDEF), t, n))]
        op = self.b.create("scf.for", [lb, ub, step, *inits], [v.type for v in inits],
                           regions=[Region([body])])
        results = list(op.results)
        for n, t in templates.items():
            self.symtab[n] = rebuild(t, results)

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
        up = b.op("arith.cmpi", ub, b.op("arith.subi", b.i64(2**63 - 1),
                                         b.op("arith.subi", step, one)), pred="le")
        down = b.op("arith.cmpi", ub, b.op("arith.addi", b.i64(-(2**63)),
                                           b.op("arith.subi", b.op("arith.negi", step), one)),
                    pred="ge")
        pos = b.op("arith.cmpi", step, b.i64(0), pred="gt")
        empty = b.op("arith.select", pos, b.op("arith.cmpi", lb, ub, pred="ge"),
                     b.op("arith.cmpi", lb, ub, pred="le"))
        ok = b.op("arith.ori", empty, b.op("arith.select", pos, up, down))
        b.create("rt.assert", [ok], [], {
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
            types = [t for tpl in templates.values() for t in _types(tpl)]
            pre, post = Block(types), Block(types)
            self.symtab = dict(before)
            pre_flat = list(pre.args)
            for n, tpl in templates.items():
                self.symtab[n] = rebuild(tpl, pre_flat)
            with self.b.at(pre):
                c = cond_fn()
                self.b.create("scf.condition", [c.value, *pre.args], [])
            self.symtab = dict(before)
            post_flat = list(post.args)
            for n, tpl in templates.items():
                self.symtab[n] = rebuild(tpl, post_flat)
            with self.b.at(post):
                body_fn()
            end = self.symtab

            def finish(tpls, extra):
                cond = pre.terminator
                for t in (t for tpl in extra.values() for t in _types(tpl)):
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
        op = self.b.create("scf.while", inits, [v.type for v in inits],
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
            if snaps is not None:  # marked for reverse mode (autodiff/checkpoint.py)
                loop = next(op for op in reversed(block.ops[n:]) if op.name == "scf.for")
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
            from .numpy_extra import static
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
            more = self.b.op("arith.cmpi", self.symtab["$k"].value, trip, pred="lt")
            stop = self.any_flag(("$brk", "$ret"))
            return Scalar(self.b.op("arith.andi", more, self.b.op("arith.not", stop.value)), True)

        def body_fn():
            k = self.symtab["$k"].value

            def pre():
                iv = self.b.op("arith.addi", lb, self.b.op("arith.muli", k, step))
                bind_target(Scalar(iv, True))

            def post():
                self.symtab["$k"] = Scalar(self.b.op("arith.addi", k, self.b.i64(1)), False)

            self.loop_body(s.body, pre=pre, post=post)

        self.lower_while(names, has_brk, cond_fn, body_fn, s)
        self.symtab.pop("$k", None)

    def range_trip(self, lb: Value, ub: Value, step: Value) -> Value:
        """``len(range(lb, ub, step))`` as IR (step is non-zero)."""
        b = self.b
        zero, one = b.i64(0), b.i64(1)
        pos = b.op("arith.cmpi", step, zero, pred="gt")
        span = b.op("arith.select", pos, b.op("arith.subi", ub, lb), b.op("arith.subi", lb, ub))
        # a span past 2**63 - 1 wraps negative and would read as an empty range
        wide = b.op("arith.andi", b.op("arith.cmpi", span, zero, pred="lt"),
                    b.op("arith.select", pos, b.op("arith.cmpi", ub, lb, pred="gt"),
                         b.op("arith.cmpi", lb, ub, pred="gt")))
        b.create("rt.assert", [b.op("arith.not", wide)], [], {
            "kind": "OverflowError",
            "msg": "range(): the distance between the bounds does not fit in 64 bits"})
        mag = b.op("arith.select", pos, step, b.op("arith.negi", step))
        n = b.op("arith.floordivi", b.op("arith.addi", span, b.op("arith.subi", mag, one)), mag)
        return b.op("arith.maxi", n, zero)


def _def_loc(v):
    """Where the IR value behind an FVal was made (None for parameters and composites)."""
    vals = flatten(v) if not isinstance(v, (EmptyList, type(UNDEF))) else []
    if len(vals) == 1 and vals[0].op is not None and vals[0].op.loc.line > 0:
        return vals[0].op.loc
    return None


def _types(tpl):
    return [v.type for v in flatten(tpl)]


def _clear(block: Block):
    for op in reversed(list(block.ops)):
        op.erase()
    for a in block.args:
        a.uses.clear()


_ = (I1, Func)


# exceptions compiled code can raise (``raise E(...)``) -> rt.assert kind
RAISABLE = {ValueError: "ValueError", IndexError: "IndexError",
            ZeroDivisionError: "ZeroDivisionError", OverflowError: "OverflowError",
            AssertionError: "AssertionError", MemoryError: "MemoryError", TypeError: "TypeError",
            RuntimeError: "RuntimeError", NotImplementedError: "NotImplementedError",
            ArithmeticError: "ArithmeticError", FloatingPointError: "FloatingPointError",
            np.linalg.LinAlgError: "LinAlgError"}


def _message_text(node) -> str:
    """The text of an exception's message: a string, or an f-string as written."""
    if isinstance(node, ast.Constant):
        return str(node.value)
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else
                       "{" + ast.unparse(v.value) + "}" for v in node.values)
    return ast.unparse(node)
