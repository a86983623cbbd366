"""Python ``ast`` -> IR for one function specialization: statements and structured control flow.

* ``if`` becomes ``scf.if``; the names bound differently in the two branches become its results.
* Loops are in ``loops.py``: ``scf.for`` and ``scf.while`` carrying the names their body assigns.
* ``break``/``continue``/``return`` set flags (``$brk``, ``$cont``, ``$ret`` and the value ``$rv``);
  the statements after one that may have exited run under ``scf.if(not exited)``.

Expressions are in ``exprs.py``, subscripts in ``indexing.py``, NumPy in ``../numpy/``.
"""

from __future__ import annotations

import ast

import numpy as np

from ...errors import UnsupportedError, ZymaseTypeError, ZymaseValueError
from ...ir.builder import Builder
from ...ir.core import Block, Func, Region, Value
from ...ir.ops import (
    Alloc,
    ArrayConst,
    Assert,
    Broadcast,
    CmpI,
    Constant,
    If,
    Load,
    Not,
    OrI,
    Relayout,
    Reshape,
)
from ...ir.types import ArrayType
from .. import scan
from ..numpy.shape import reshape
from ..syntax import unsupported
from ..typing import (
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
    ir_types,
    rebuild,
    result_type,
    stype,
)
from .exprs import ExprLowerer
from .loops import BOUND, LoopMixin
from .parallel import ParallelMixin

FLAGS = ("$ret", "$brk", "$cont")
# the value an `scf.if` yields, in messages (see lower_if_value)
IFV_WHAT = "the value of this `... if ... else ...` (or `and`/`or`) expression"
IFV_NEED = "for both branches (convert one branch's value to the other's type)"


class FunctionLowerer(ParallelMixin, LoopMixin, ExprLowerer):
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
        self.prange_vars: list = []  # enclosing prange loops: (index name, fresh arrays)
        self.ifv_words: list = []  # lower_if_value's (what, what to do), innermost last
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
        self.returned: list = []  # the values of the return statements lowered so far

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
            raise UnsupportedError(unsupported(s), self.src.loc(s))
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
            star = next((e for e in target.elts if isinstance(e, ast.Starred)), None)
            if star is not None:
                raise UnsupportedError(
                    f"starred assignment targets (`*{ast.unparse(star.value)}`) are not "
                    "supported in compiled code; index the items instead (`first, rest = "
                    "t[0], t[1:]`)", self.src.loc(star))
            items = self.unpack(value, len(target.elts), target)
            for t, v in zip(target.elts, items):
                self.assign(t, v)
        elif isinstance(target, ast.Subscript):
            self.store_subscript(target, value)
        elif (isinstance(target, ast.Attribute) and target.attr == "shape"
              and isinstance(target.value, ast.Name)):
            self.assign_shape(target.value, value, target)
        else:
            what = {ast.Attribute: f"the attribute `.{getattr(target, 'attr', '')}`",
                    ast.Starred: "a starred name (`*rest`)"}.get(type(target), "this target")
            raise UnsupportedError(f"cannot assign to {what} in compiled code; assign to a "
                                   "name, a tuple of names or an element/slice `a[i]`",
                                   self.src.loc(target))

    def assign_shape(self, name: ast.Name, shape, node) -> None:
        """``a.shape = (n, m)``: ``a`` becomes the reshaped array (a view of a contiguous one,
        as NumPy's in-place reshape).  NumPy changes the object every name for it sees, so this
        is refused while another name holds the same array."""
        cur = self.lookup_name(name.id, name)
        if not isinstance(cur, Array):
            raise ZymaseTypeError(f"`{name.id}.shape = ...` needs {name.id} to be an array, not "
                                  f"{self.describe(cur)}", self.src.loc(node))
        others = [k for k, v in self.symtab.items() if k != name.id and isinstance(v, Array)
                  and v.value is cur.value]
        if others:
            raise UnsupportedError(f"`{name.id}.shape = ...` would reshape `{others[0]}` too (the "
                                   f"same array); write `{name.id} = {name.id}.reshape(...)` to "
                                   "reshape one name", self.src.loc(node))
        if any(cur.value is a for a in self.func.args):
            raise UnsupportedError(f"`{name.id}.shape = ...` would reshape the caller's array "
                                   f"(`{name.id}` is a parameter of {self.src.tree.name}()): "
                                   f"write `{name.id} = {name.id}.reshape(...)`, or reshape it "
                                   "before the call", self.src.loc(node))
        self.symtab[name.id] = reshape(self, cur, shape, node)

    def mark_bound(self, name: str) -> None:
        """``name`` was just assigned: its ``$def:`` flag (if it has one) is now true."""
        if BOUND + name in self.symtab:
            self.symtab[BOUND + name] = self.const_bool(True)

    def unpack(self, value, n, node):
        """The ``n`` items of ``value`` for ``x, y = value`` (and ``for x, y in ...``): a tuple's
        items; an array's first-axis items or a list's elements, after Python's checks of the
        length (ValueError: when compiling where the length is known, else at run time)."""
        if isinstance(value, Tup):
            self.check_unpack_count(len(value.items), n, node)
            return value.items
        if isinstance(value, Array) and value.type.ndim >= 1:
            known = static_dim0(value)
            if known is not None:
                self.check_unpack_count(known, n, node)
            else:
                self.assert_unpack_count(self.dim(value, 0), n, node)
            return [self.index_value(value, [self.const_int(k)], node) for k in range(n)]
        if isinstance(value, ListVal):
            self.assert_unpack_count(value.length, n, node)
            return [Scalar(self.b.op(Load, value.buf, self.b.i64(k)), False) for k in range(n)]
        if isinstance(value, EmptyList):
            self.check_unpack_count(0, n, node)
            return []
        what = "a 0-d array" if isinstance(value, Array) else self.describe(value)
        raise ZymaseTypeError(f"cannot unpack {what}: it is not a sequence",
                              self.src.loc(node))

    def check_unpack_count(self, got: int, n: int, node) -> None:
        """Python's ValueError for unpacking ``got`` items into ``n`` names, when compiling."""
        if got != n:
            raise ZymaseValueError(_unpack_message(got, n).replace("{a}", str(got)),
                                   self.src.loc(node))

    def assert_unpack_count(self, length, n: int, node) -> None:
        """Python's ValueError at run time unless the i64 ``length`` is ``n``."""
        b = self.b
        with b.location(self.src.loc(node)):
            b.create(Assert, [b.op(CmpI, length, b.i64(n), pred="ge"), length], [],
                     {"kind": "ValueError", "msg": _unpack_message(0, n)})
            b.create(Assert, [b.op(CmpI, length, b.i64(n), pred="le"), length], [],
                     {"kind": "ValueError", "msg": _unpack_message(n + 1, n)})

    def visit_Return(self, s):
        if not self.returns_value:
            value = PyObj(None)
        elif s.value is None or (isinstance(s.value, ast.Constant) and s.value.value is None):
            raise UnsupportedError("this function returns a value elsewhere; returning None here "
                                   "is not supported", self.src.loc(s))
        else:
            value = self.expr(s.value)
            self.returned.append(value)
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
        self.b.create(Assert, [self.b.i1(False)], [], {
            "kind": kind, "msg": msg.replace("{", "{{").replace("}", "}}")})
        self.raised = self.terminated = True

    def visit_Assert(self, s):
        ok = self.truth(self.expr(s.test), s.test)
        msg = "assertion failed"
        if isinstance(s.msg, ast.Constant) and isinstance(s.msg.value, str):
            msg = s.msg.value
        self.b.create(Assert, [ok.value], [], {"kind": "AssertionError", "msg": msg})

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
            any_exit = self.b.op(OrI, any_exit, f.value)
        return Scalar(self.b.op(Not, any_exit), True)

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
        op = self.b.create(If, [cond.value], [t for _, tpl in merged for t in ir_types(tpl)],
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

    def lower_if_value(self, cond: Scalar, then_fn, else_fn, node, what=None) -> FVal:
        """An ``scf.if`` producing a value (conditional expressions, ``and``/``or``).  ``what``:
        (the expression, what to do) in the message when the branches' types differ."""
        saved = self.symtab.get("$ifv", UNDEF)

        def branch(fn):
            def run():
                value = fn()  # may lower nested branches, which replace self.symtab
                self.symtab["$ifv"] = value
            return run

        self.ifv_words.append(what or (IFV_WHAT, IFV_NEED))  # (nested ones pop theirs first)
        try:
            self.lower_if(cond, branch(then_fn), branch(else_fn))
        finally:
            self.ifv_words.pop()
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
        need = "per name"
        if name == "$rv":
            what = "the value returned"
        elif name == "$ifv":  # (the value of a conditional expression, `and`, `or`)
            what, need = self.ifv_words[-1] if self.ifv_words else (IFV_WHAT, IFV_NEED)
        else:
            what = f"`{name.lstrip('$')}`"
        raise ZymaseTypeError(
            f"{what} is {self.describe(a)} on one path and {self.describe(b)} "
            f"on another; zymase needs one type {need}", where,
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
            return Array(self.b.op(Relayout, v.value, type=tpl.type))
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
            a = self.b.create(Alloc, zeros, [tpl.type.with_layout("C")],
                              {"init": "zero"}).result
            return self.convert(Array(a), tpl, "")
        if isinstance(tpl, ListVal):
            buf = self.b.create(Alloc, [self.b.i64(0)], [tpl.buf.type],
                                {"init": "zero", "list": True}).result
            return ListVal(buf, self.b.i64(0))
        if isinstance(tpl, Tup):
            return Tup(tuple(self.placeholder(x) for x in tpl.items))
        if isinstance(tpl, Struct):
            return Struct(tpl.pytype, {k: self.placeholder(x) for k, x in tpl.fields.items()})
        raise TypeError(tpl)


def _unpack_message(got: int, n: int) -> str:
    """CPython's message for unpacking ``got`` items into ``n`` names (``{a}``: the count)."""
    if got > n:
        return f"too many values to unpack (expected {n})"
    return f"not enough values to unpack (expected {n}, got {{a}})"


def static_dim0(a: Array):
    """The length of ``a``'s first axis where it is known when compiling (a constant array, an
    allocation or a reshape with a constant size), else None."""
    op = a.value.op
    if isinstance(op, ArrayConst):
        return int(op.attrs["data"].shape[0])
    if isinstance(op, (Alloc, Reshape, Broadcast)):
        dims = op.operands if isinstance(op, Alloc) else op.operands[1:]
        if dims and isinstance(dims[0].op, Constant):
            return int(dims[0].op.attrs["value"])
    return None


def _def_loc(v):
    """Where the IR value behind an FVal was made (None for parameters and composites)."""
    vals = flatten(v) if not isinstance(v, (EmptyList, type(UNDEF))) else []
    if len(vals) == 1 and vals[0].op is not None and vals[0].op.loc.line > 0:
        return vals[0].op.loc
    return None


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
