"""Lowering the rules of ``custom_jvp`` / ``custom_vjp`` functions next to the function.

For a call ``f(args)`` the callee ``func.func @f`` gets attributes naming its rule functions,
lowered for the same argument types, each behind a checked wrapper of this module:

* ``custom_jvp = @f_jvp.checked``: calls the user's ``f_jvp(primals, tangents)`` (the primals'
  types, tangents of the same types for float leaves, ``None`` for the rest) and returns
  ``(out..., tangent_out...)`` with exactly the types of ``f``'s results (the tangents: of its
  float leaves).  The rule's output is checked when compiling (a pair; the primal output shaped
  like what ``f`` returns; each tangent of its output's rank and dtype) and each array
  tangent's shape at run time (``ShapeError``).
* ``custom_vjp_fwd = @f_fwd.checked`` returning ``(out, residuals, the shapes of the array
  arguments that get a cotangent)`` and ``custom_vjp_bwd = @f_bwd.checked`` taking
  ``(residuals, shapes, cotangent_out)`` and returning one cotangent per flat argument that
  gets one (``bwd_cts``: which flat arguments do).  The cotangents are checked when compiling
  (one per argument, each of the argument's structure, rank and dtype: no broadcasting) and
  their shapes at run time against the saved shapes (``ShapeError``).
* A function with a ``jvp`` rule and no ``vjp`` pair also uses its ``jvp`` rule in reverse mode
  (as JAX does, by transposing it): ``custom_lowering.reverse_through_jvp`` gives ``@f`` a body
  that evaluates the rule on stopped primals and tangents that are ``x - stop(x)`` (value 0,
  derivative the identity), so that reverse mode, differentiating the rule's tangent output,
  applies the rule's linear map transposed.  Forward mode still calls the rule directly.

``noinline`` keeps the call until differentiation has used the rules.
"""

from __future__ import annotations

import ast
import inspect

from ..errors import DifferentiationError, ZymaseError
from ..ir.builder import Builder
from ..ir.core import Func, Value
from ..ir.ops import Call, Dim, Return
from ..ir.printer import Symbol
from ..ir.types import ArrayType
from .custom_checks import (_has_float, _inexact, _scalar_converts, _stop, _tangent_leaves,
                            _zeros_like, check_shape, convert, same_kind)
from .custom_lowering import reverse_through_jvp
from .source import get_source
from .typing import Array, ListVal, PyObj, Scalar, Struct, Tup, flatten, ir_types, rebuild


def tangent_template(p):
    """A tangent argument template for primal template ``p`` (float leaves only)."""
    if isinstance(p, Scalar):
        return Scalar(Value(p.type), p.weak) if p.type.is_inexact else PyObj(None)
    if isinstance(p, Array):
        return Array(Value(p.type)) if p.type.dtype.is_inexact else PyObj(None)
    if isinstance(p, Tup):
        return Tup(tuple(tangent_template(x) for x in p.items))
    if isinstance(p, Struct):
        return Struct(p.pytype, {k: tangent_template(x) for k, x in p.fields.items()})
    return PyObj(None)


# ---------------------------------------------------------------------- the entry point


def lower_rules(lw, cf, callee, params, result, node) -> None:
    if callee not in lw.mod.module.funcs:  # (a recursive call inside the function itself:
        return  # the outer call lowers the rules)
    func = lw.mod.module[callee]
    if func.attrs.get("noinline"):
        return
    func.attrs["noinline"] = True
    rules = _Rules(lw, cf, callee, list(params), result, node)
    before = set(lw.mod.module.funcs)
    if cf.jvp_rule is not None:
        func.attrs["custom_jvp"] = Symbol(rules.jvp())
    if cf.vjp_fwd is not None:
        fwd, bwd, cts = rules.vjp()
        func.attrs["custom_vjp_fwd"] = Symbol(fwd)
        func.attrs["custom_vjp_bwd"] = Symbol(bwd)
        func.attrs["bwd_cts"] = cts
    elif cf.jvp_rule is not None and result is not None and flatten(result):
        reverse_through_jvp(rules, func)
    if cf is _stop:  # (zymase's own: its ops take the user's line when inlined)
        for name in set(lw.mod.module.funcs) - before | {callee}:
            lw.mod.module[name].attrs["library"] = True


# ---------------------------------------------------------------------- checks


class _Rules:
    """The rules of one custom function at one signature: lowering, checks and wrappers."""

    def __init__(self, lw, cf, callee, params, result, node):
        self.lw, self.cf, self.callee = lw, cf, callee
        self.params, self.result = params, result
        self.loc = lw.src.loc(node)
        fn = cf.fn
        self.fname = f"{getattr(fn, '__name__', 'the function')}()"
        try:
            names = list(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            names = []
        self.names = [f"`{names[k]}`" if k < len(names) else f"argument {k}"
                      for k in range(len(params))]
        self.rule_checked = None  # the checked jvp rule's name (jvp())
        self.rule_user = None  # the user's jvp rule's name

    # ---- naming
    def rule_name(self, kind: str, fn) -> str:
        name = getattr(fn, "__name__", "")
        own = f" `{name}`" if name.isidentifier() else ""
        return f"the {kind} rule{own} of {self.fname}"

    def describe(self, v) -> str:
        if v is None or (isinstance(v, PyObj) and v.obj is None):
            return "None"
        return self.lw.describe(v)

    def return_loc(self, fn):
        """Where ``fn`` (a rule) returns: the place to fix what it returns."""
        try:
            src = get_source(fn)
        except ZymaseError:
            return self.loc
        node = next((n for n in ast.walk(src.tree) if isinstance(n, ast.Return) and n.value),
                    None)
        return src.loc(node) if node is not None else self.loc

    def def_loc(self, fn):
        """Where ``fn`` (a rule) is defined."""
        try:
            src = get_source(fn)
        except ZymaseError:
            return self.loc
        return src.loc(src.tree)

    def specialize(self, fn, args, what: str, convention: str):
        """``fn`` lowered for ``args``; an error inside it says how zymase calls it."""
        try:
            inspect.signature(fn).bind(*args)
        except TypeError:
            try:
                sig = str(inspect.signature(fn))
            except (TypeError, ValueError):
                sig = "(...)"
            raise DifferentiationError(
                f"{what} takes {sig}, but zymase calls it as {convention}",
                self.def_loc(fn)) from None
        except ValueError:
            pass
        try:
            return self.lw.mod.specialize(fn, args, self.loc)
        except ZymaseError as e:
            note = f"(while compiling {what}, which zymase calls as {convention})"
            if note not in e.note:
                e.note = f"{e.note}\n{note}" if e.note else note
                e.args = (e.render(),)
            raise

    # ---- forward mode
    def jvp(self) -> str:
        """Lower the jvp rule; returns the name of its checked wrapper."""
        rule = self.cf.jvp_rule
        tangents = [tangent_template(p) for p in self.params]
        conv = (f"rule(primals, tangents): `primals` the tuple of {self.fname}'s arguments, "
                "`tangents` the tuple of their tangents (unpack them: `(x,), (t,) = primals, "
                "tangents`); it returns the pair (output, output tangent)")
        what = self.rule_name("jvp", rule)
        name, res = self.specialize(rule, [Tup(tuple(self.params)), Tup(tuple(tangents))],
                                    what, conv)
        loc = self.return_loc(rule)
        if not isinstance(res, Tup) or len(res.items) != 2:
            raise DifferentiationError(
                f"{what} returns {self.describe(res)}: it must return a pair (output, output "
                f"tangent), the output being what {self.fname} returns (e.g. `return "
                f"{getattr(self.cf.fn, '__name__', 'f')}(x), t * ...`)", loc)
        # the wrapper takes a tangent for every float value among the flat arguments (forward
        # mode's convention: a list's buffer too) and hands the rule those it takes
        primal_types = ir_types(Tup(tuple(self.params)))
        ruled = [t is not None for t in _tangent_leaves(Tup(tuple(self.params)))]
        taken = [k for k, t in enumerate(primal_types) if _inexact(t)]
        arg_types = primal_types + [primal_types[k] for k in taken]
        out_types = ir_types(self.result) if self.result is not None else []
        tan_types = [t for t in out_types if _inexact(t)]
        wrapper = Func(self.lw.mod._unique(f"{name}.checked"), arg_types, out_types + tan_types,
                       loc=loc)
        b = Builder.at_end(wrapper.body, loc)
        n = len(primal_types)
        given = [a for k, a in zip(taken, wrapper.args[n:]) if ruled[k]]
        call = b.create(Call, list(wrapper.args[:n]) + given, ir_types(res),
                        {"callee": Symbol(name)})
        out, tan = rebuild(res, list(call.results)).items
        outs = self.match_output(out, self.result, what, loc)
        tans = self.match_tangent(tan, self.result, what, loc)
        vals = [convert(b, v, t) for v, t in zip(outs, out_types)]
        float_outs = [v for v in vals if _inexact(v.type)]
        tvals = []
        for y, t, ty in zip(float_outs, tans, tan_types, strict=True):
            t = _zeros_like(b, y) if t is None else convert(b, t, ty)
            if isinstance(ty, ArrayType):
                check_shape(b, t, [b.op(Dim, y, axis=k) for k in range(ty.ndim)],
                            f"{what} returns a tangent", f"an output of {self.fname}",
                            ": the tangent must have the output's shape")
            tvals.append(t)
        b.create(Return, vals + tvals, [])
        self.lw.mod.module.add(wrapper)
        self.rule_checked = wrapper.sym_name
        self.rule_user = name
        return wrapper.sym_name

    def match_output(self, out, want, what, loc, where="the output") -> list:
        """The leaves of ``out`` (a rule's primal output), one per flat value of ``want`` (what
        the function returns); refuses a different structure, rank or dtype."""
        def bad(extra=""):
            return DifferentiationError(
                f"{what} returns {self.describe(out)} as {where}, but {self.fname} returns "
                f"{self.describe(want)}{extra}: the rule's output must be what the function "
                "returns", loc)
        if want is None or isinstance(want, PyObj):
            return []
        if isinstance(want, Scalar):
            if not isinstance(out, Scalar) or not _scalar_converts(out.type, want.type):
                raise bad()
            return [out.value]
        if isinstance(want, Array):
            if not isinstance(out, Array) or out.type.ndim != want.type.ndim or \
                    not same_kind(out.type.dtype, want.type.dtype):
                raise bad()
            return [out.value]
        if isinstance(want, Tup):
            if not isinstance(out, Tup) or len(out.items) != len(want.items):
                raise bad()
            return [v for k, (o, w) in enumerate(zip(out.items, want.items))
                    for v in self.match_output(o, w, what, loc, f"item {k} of {where}")]
        if isinstance(want, Struct):
            if not isinstance(out, Struct) or out.pytype is not want.pytype:
                raise bad()
            return [v for k in want.fields
                    for v in self.match_output(out.fields[k], want.fields[k], what, loc,
                                               f"field `{k}` of {where}")]
        if isinstance(want, ListVal):
            if not isinstance(out, ListVal) or out.dtype != want.dtype:
                raise bad()
            return [out.buf, out.length]
        return flatten(out)

    def match_tangent(self, tan, want, what, loc, where="the output") -> list:
        """The leaves of ``tan`` (a rule's tangent output), one per float value of ``want``
        (None: zero, for a list's buffer, which gets no tangent)."""
        kind = "tangent"

        def bad(hint=""):
            return DifferentiationError(
                f"{what} returns {self.describe(tan)} as the {kind} of {where}, which is "
                f"{self.describe(want)}: the tangent must have the output's shape and dtype"
                f"{hint}", loc)
        if want is None or isinstance(want, PyObj):
            return []
        if isinstance(want, ListVal):
            return [None] if want.dtype.is_inexact else []
        if isinstance(want, Scalar):
            if not want.type.is_inexact:
                return []  # (an integer output has no tangent: whatever the rule says)
            if isinstance(tan, Scalar) and _scalar_converts(tan.type, want.type):
                return [tan.value]
            if tan is None or (isinstance(tan, PyObj) and tan.obj is None):
                raise bad(" (return 0.0 for a zero tangent)")
            raise bad()
        if isinstance(want, Array):
            if not want.type.dtype.is_inexact:
                return []
            if isinstance(tan, Array) and tan.type.ndim == want.type.ndim and \
                    same_kind(tan.type.dtype, want.type.dtype):
                return [tan.value]
            if isinstance(tan, Scalar):
                raise bad(" (it is not broadcast: return an array, e.g. `t * np.ones_like(y)`)")
            if isinstance(tan, PyObj) and tan.obj is None:
                raise bad(" (return np.zeros_like(y) for a zero tangent)")
            raise bad()
        if not _has_float(want):
            return [None for v in flatten(want) if _inexact(v.type)]
        if isinstance(want, Tup):
            if not isinstance(tan, Tup) or len(tan.items) != len(want.items):
                raise bad()
            return [v for k, (t, w) in enumerate(zip(tan.items, want.items))
                    for v in self.match_tangent(t, w, what, loc, f"item {k} of {where}")]
        if isinstance(want, Struct):
            if not isinstance(tan, Struct) or tan.pytype is not want.pytype:
                raise bad()
            return [v for k in want.fields
                    for v in self.match_tangent(tan.fields[k], want.fields[k], what, loc,
                                                f"field `{k}` of {where}")]
        return []

    # ---- reverse mode
    def vjp(self):
        """Lower the vjp pair; returns (checked fwd, checked bwd, bwd_cts)."""
        cf, params = self.cf, self.params
        fwhat = self.rule_name("forward", cf.vjp_fwd)
        fname, fres = self.specialize(
            cf.vjp_fwd, list(params), fwhat,
            f"fwd(*args) with {self.fname}'s arguments; it returns (output, residuals)")
        floc = self.return_loc(cf.vjp_fwd)
        if not (isinstance(fres, Tup) and len(fres.items) == 2):
            raise DifferentiationError(f"a custom_vjp forward rule must return (out, residuals): "
                                   f"{fwhat} returns {self.describe(fres)}", floc)
        out_t, res_t = fres.items
        ct_t = tangent_template(self.result) if self.result is not None else PyObj(None)
        bwhat = self.rule_name("backward", cf.vjp_bwd)
        n = len(params)
        conv = (f"bwd(residuals, ct) with the forward rule's residuals and the output's "
                f"cotangent; it returns a tuple of {n} cotangent{'s' if n != 1 else ''}, one "
                f"per argument of {self.fname} (None for none)")
        bname, bres = self.specialize(cf.vjp_bwd, [res_t, ct_t], bwhat, conv)
        bloc = self.return_loc(cf.vjp_bwd)
        if not isinstance(bres, Tup) or len(bres.items) != n:
            got = (f"{len(bres.items)} cotangent{'s' if len(bres.items) != 1 else ''}"
                   if isinstance(bres, Tup) else self.describe(bres))
            one = ": `return (ct_x,)`, a tuple of one" if n == 1 else ""
            raise DifferentiationError(
                f"{bwhat} returns {got} for the {n} argument{'s' if n != 1 else ''} of "
                f"{self.fname}: it must return a tuple with one cotangent per argument (None "
                f"for none){one}", bloc)
        # which flat argument each cotangent leaf goes to (leaves named by distinct values)
        probe = rebuild(bres, [Value(t) for t in ir_types(bres)])
        index = {id(v): k for k, v in enumerate(flatten(probe))}
        per_arg: list = []  # per flat argument: (index in the bwd results, what) or None
        for p, ct, name in zip(params, probe.items, self.names):
            per_arg += self.match_cotangent(p, ct, name, bwhat, bloc)
        per_arg = [None if m is None else (index[id(m[0])], m[1]) for m in per_arg]
        flat_params = [v for p in params for v in flatten(p)]
        arg_types = [v.type for v in flat_params]
        out_types = ir_types(self.result) if self.result is not None else []
        # the forward wrapper: the rule's output as the function's types, its residuals, and
        # the shapes of the array arguments that get a cotangent
        fw = Func(self.lw.mod._unique(f"{fname}.checked"), arg_types, [], loc=floc)
        b = Builder.at_end(fw.body, floc)
        call = b.create(Call, list(fw.args), ir_types(fres), {"callee": Symbol(fname)})
        out, res = rebuild(fres, list(call.results)).items
        outs = [convert(b, v, t) for v, t in
                zip(self.match_output(out, self.result, fwhat, floc), out_types)]
        shapes = []
        for a, m in zip(fw.args, per_arg):
            if m is not None and isinstance(a.type, ArrayType):
                shapes += [b.op(Dim, a, axis=k) for k in range(a.type.ndim)]
        res_vals = flatten(res)
        b.create(Return, outs + res_vals + shapes, [])
        fw.attrs["result_types"] = [v.type for v in outs + res_vals + shapes]
        # the backward wrapper: (residuals, shapes, cotangents of the float outputs) -> one
        # cotangent per flat argument that gets one, with the argument's type and shape
        # (reverse mode hands a cotangent for every float output value, a list's buffer too;
        # the rule gets those of its float outputs)
        out_floats = [t for t in out_types if _inexact(t)]
        ruled = [t is not None for t in _tangent_leaves(self.result)
                 ] if self.result is not None else []
        ruled = [r for r, t in zip(ruled, out_types) if _inexact(t)]
        bw_args = [v.type for v in res_vals] + [s.type for s in shapes] + out_floats
        bw = Func(self.lw.mod._unique(f"{bname}.checked"), bw_args, [], loc=bloc)
        b = Builder.at_end(bw.body, bloc)
        nres = len(res_vals)
        saved = iter(bw.args[nres:nres + len(shapes)])
        cts_in = [c for c, r in zip(bw.args[nres + len(shapes):], ruled) if r]
        call = b.create(Call, list(bw.args[:nres]) + cts_in, ir_types(bres),
                        {"callee": Symbol(bname)})
        got = list(call.results)
        outs = []
        for a, m in zip(flat_params, per_arg):
            if m is None:
                continue
            k, what = m
            c = got[k]
            if isinstance(a.type, ArrayType):
                want = [next(saved) for _ in range(a.type.ndim)]
                check_shape(b, c, want, f"{bwhat} returns a cotangent", what,
                            ": return one cotangent shaped like each argument")
                if c.type.dtype != a.type.dtype:
                    c = convert(b, c, ArrayType(a.type.dtype, c.type.ndim, "C"))
            else:
                c = b.cast(c, a.type)
            outs.append(c)
        b.create(Return, outs, [])
        bw.attrs["result_types"] = [v.type for v in outs]
        self.lw.mod.module.add(fw)
        self.lw.mod.module.add(bw)
        return fw.sym_name, bw.sym_name, [m is not None for m in per_arg]

    def match_cotangent(self, p, ct, name, what, loc) -> list:
        """Per flat value of argument template ``p``: ``(ct leaf, description)`` or None."""
        def bad(hint=""):
            return DifferentiationError(
                f"{what} returns {self.describe(ct)} as the cotangent of {name}, which is "
                f"{self.describe(p)}: return one cotangent shaped like each argument{hint}", loc)
        none = ct is None or (isinstance(ct, PyObj) and ct.obj is None)
        if isinstance(p, Scalar):
            if none or not p.type.is_inexact:
                return [None]
            if isinstance(ct, Array):  # (no sum is implied)
                raise bad(" (summed over the axes the argument was broadcast along)")
            if not isinstance(ct, Scalar) or (ct.type.is_complex and not p.type.is_complex):
                raise bad()
            return [(ct.value, name)]
        if isinstance(p, Array):
            if none or not p.type.dtype.is_inexact:
                return [None]
            if isinstance(ct, Scalar):
                raise bad(" (a scalar is not broadcast: return an array of the argument's "
                          "shape, e.g. `c * np.ones_like(x)`)")
            if not isinstance(ct, Array) or ct.type.ndim != p.type.ndim:
                raise bad()
            if not same_kind(ct.type.dtype, p.type.dtype):
                raise bad(f" and dtype (`.astype(np.{p.type.dtype.np_dtype.name})`)")
            return [(ct.value, name)]
        n = len(flatten(p))
        if isinstance(p, Tup):
            if none:
                return [None] * n
            if not isinstance(ct, Tup) or len(ct.items) != len(p.items):
                raise bad()
            return [m for k, (q, c) in enumerate(zip(p.items, ct.items))
                    for m in self.match_cotangent(q, c, f"item {k} of {name}", what, loc)]
        if isinstance(p, Struct):
            if none:
                return [None] * n
            if isinstance(ct, Tup) and len(ct.items) == len(p.fields):  # (fields in order:
                items = dict(zip(p.fields, ct.items))  # compiled code cannot make a dataclass)
            elif isinstance(ct, Struct) and ct.pytype is p.pytype:
                items = ct.fields
            else:
                raise bad(f" (a {p.pytype.__name__}, or a tuple of one cotangent per field)")
            return [m for k in p.fields
                    for m in self.match_cotangent(p.fields[k], items[k],
                                                  f"field `{k}` of {name}", what, loc)]
        return [None] * n  # (lists, compile-time objects: no cotangent)


