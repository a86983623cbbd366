"""Reverse mode of a ``custom_jvp`` function through its jvp rule, as in JAX.

JAX differentiates a ``custom_jvp`` function in reverse mode by transposing its jvp rule, which
is linear in the tangents.  zymase needs no transposition machinery for that: at the call
``y = f(x)`` it evaluates the rule with the primals stopped (no reverse-mode derivative) and,
as tangents, ``x - stop(x)``: value 0, derivative the identity,

    s, t = stop(x), x - stop(x)
    yp, tp = rule((s,), (t,))
    y = value(x, tp)              # f's body at x; a custom_vjp: its backward rule hands the
                                  # output's cotangent to tp (checking its shape) and none to x

so the output's cotangent reaches ``tp``, and reverse mode, differentiating ``tp`` with respect
to ``x`` through the rule, applies the rule's linear map transposed.  The value is still the
one the function's body computes.  (An argument read from a global or closure array goes to
``value`` as its stopped copy ``s``: reverse mode cannot follow such an array into a call.)

``@f`` itself gets that body (its own moves to ``@f.body``, which the rule's own calls of ``f``
then call), keeping its ``custom_jvp`` attribute: forward mode keeps the call and runs the rule
(``autodiff/forward.py``); the other modes inline it, and in primal mode the probes and the
rule's unused output are dead code (``dce``).  Forward over reverse (``hessian``): ``stop``
passes the outer tangent (its forward rule is its body: the rule's coefficients are
differentiated), and ``value``'s forward function carries a ``custom_jvp`` attribute naming the
rule, so the value's tangent is the rule's too.
"""

from __future__ import annotations

from ..errors import UnsupportedError
from ..ir.builder import Builder
from ..ir.core import VIEW, Func
from ..ir.ops import ArrayConst, Call, Dim, Return
from ..ir.printer import Symbol
from ..ir.types import I64, ArrayType
from ..passes.rewrite import clone_op
from .custom_checks import _inexact, _probe, _tangent_leaves, check_dims, convert
from .typing import flatten, ir_types


def reverse_through_jvp(rules, func: Func) -> None:
    """Give ``func`` (``@f``, whose jvp rule ``rules.jvp()`` lowered) the body above."""
    ml = rules.lw.mod
    mod = ml.module
    leaves = [x for p in rules.params for x in _tangent_leaves(p)]
    callee, loc = rules.callee, rules.return_loc(rules.cf.jvp_rule)
    flat = [v for p in rules.params for v in flatten(p)]
    constant = {k for k, v in enumerate(flat) if _is_constant_array(v)}
    # the body moves to @f.body
    body_name = ml._unique(f"{callee}.body")
    attrs = {k: v for k, v in func.attrs.items() if k not in ("sym_name", "result_types")}
    del mod.funcs[callee]
    func.attrs["sym_name"] = body_name
    for k in ("noinline", "custom_jvp"):
        func.attrs.pop(k, None)
    mod.add(func)
    _redirect(rules, rules.rule_checked, callee, body_name)
    new = Func(callee, func.arg_types, func.result_types, loc=func.loc, **attrs)
    mod.add(new)
    rule = mod[rules.rule_checked]
    n = len(func.result_types)
    b = Builder.at_end(new.body, loc)
    primals, tangents = [], []
    for a, leaf in zip(new.args, leaves):
        if leaf is None:  # (no tangent; a list's buffer: one the rule does not read)
            primals.append(a)
            if _inexact(a.type):
                tangents.append(a)
            continue
        name, res = ml.specialize(_probe, [leaf], loc)
        mod[name].attrs["library"] = True  # (its ops take the user's line)
        s, t = b.create(Call, [a], ir_types(res), {"callee": Symbol(name)}).results
        primals.append(convert(b, s, a.type))
        tangents.append(convert(b, t, a.type))
    r = b.create(Call, primals + tangents, list(rule.result_types),
                 {"callee": Symbol(_copy_of(ml, rule))})
    tp = list(r.results[n:])
    what = rules.rule_name("jvp", rules.cf.jvp_rule)
    value = _value_function(ml, callee, body_name, func, rule, [v.type for v in tp],
                            (f"{what} returns a tangent", f"an output of {rules.fname}"), loc)
    # the body runs on the arguments themselves (in primal mode the probes are dead code), but
    # on the stopped copy of an argument read from a global or closure array: reverse mode
    # cannot follow such an array into a call (activity calls it varied)
    inputs = [p if k in constant else a for k, (a, p) in enumerate(zip(new.args, primals))]
    y = b.create(Call, inputs + tp, list(func.result_types), {"callee": Symbol(value)}).results
    b.create(Return, list(y), [])


def _value_function(ml, callee, body_name, body: Func, rule: Func, tp_types, words,
                    rule_loc) -> str:
    """``value(x..., tp...)``: ``f``'s body at ``x``.  Its reverse-mode rule hands the output's
    cotangents to ``tp`` (checked at run time to be of ``tp``'s shapes, which its forward
    function keeps); forward mode of its forward function runs the jvp rule."""
    mod, loc = ml.module, body.loc
    args, results = list(body.arg_types), list(body.result_types)
    nx = len(args)

    def tangent_shapes(b, f):
        """The shapes of the array tangents ``tp`` (``f``'s arguments after the x's)."""
        return [b.op(Dim, t, axis=k) for t in f.args[nx:nx + len(tp_types)]
                if isinstance(t.type, ArrayType) for k in range(t.type.ndim)]

    ndims = sum(t.ndim for t in tp_types if isinstance(t, ArrayType))
    # forward mode of the forward function (hessian: forward over reverse): the rule
    x_tangents = [t for t in args if _inexact(t)]
    n = len(results)
    jvp = Func(ml._unique(f"{callee}.value.fwd.jvp"), args + tp_types + x_tangents + tp_types,
               results + [I64] * ndims + list(rule.result_types[n:]), loc=loc)
    b = Builder.at_end(jvp.body, loc)
    t0 = nx + len(tp_types)
    out = b.create(Call, list(jvp.args[:nx]) + list(jvp.args[t0:t0 + len(x_tangents)]),
                   list(rule.result_types), {"callee": Symbol(_copy_of(ml, rule))}).results
    b.create(Return, list(out[:n]) + tangent_shapes(b, jvp) + list(out[n:]), [])
    mod.add(jvp)
    # the forward function: the body's value, and the tangents' shapes as residuals
    fwd = Func(ml._unique(f"{callee}.value.fwd"), args + tp_types, results + [I64] * ndims,
               loc=loc, custom_jvp=Symbol(jvp.sym_name))
    b = Builder.at_end(fwd.body, loc)
    out = b.create(Call, list(fwd.args[:nx]), results, {"callee": Symbol(body_name)}).results
    b.create(Return, list(out) + tangent_shapes(b, fwd), [])
    mod.add(fwd)
    # the backward rule: (the shapes, the output's cotangents) -> tp's cotangents
    bwd = Func(ml._unique(f"{callee}.value.bwd"), [I64] * ndims + tp_types, tp_types, loc=loc)
    b = Builder.at_end(bwd.body, rule_loc)
    saved = iter(bwd.args[:ndims])
    cts = list(bwd.args[ndims:])
    for c in cts:
        if isinstance(c.type, ArrayType):
            check_dims(b, [next(saved) for _ in range(c.type.ndim)],
                       [b.op(Dim, c, axis=k) for k in range(c.type.ndim)], *words,
                       ": the tangent must have the output's shape")
    b.create(Return, cts, [])
    mod.add(bwd)
    # the function itself (primal mode: inlined, the body)
    value = Func(ml._unique(f"{callee}.value"), args + tp_types, results, loc=loc,
                 noinline=True, custom_vjp_fwd=Symbol(fwd.sym_name),
                 custom_vjp_bwd=Symbol(bwd.sym_name),
                 bwd_cts=[False] * nx + [True] * len(tp_types))
    b = Builder.at_end(value.body, loc)
    out = b.create(Call, list(value.args[:nx]), results, {"callee": Symbol(body_name)}).results
    b.create(Return, list(out), [])
    mod.add(value)
    return value.sym_name


def _is_constant_array(v) -> bool:
    """Whether ``v`` (an argument at the call that lowered the rules) views a global or closure
    array."""
    op = v.op
    while op is not None and op.has_trait(VIEW):
        op = op.operands[0].op
    return isinstance(op, ArrayConst)


def _redirect(rules, start: str, old: str, new: str) -> None:
    """Calls of ``old`` made by ``start`` and what it calls go to ``new`` instead: ``start``
    changes in place, a function on the way is cloned (others may call it and mean ``old``)."""
    ml = rules.lw.mod
    mod = ml.module
    pending = {state[0] for state in ml.in_progress.values()}
    memo: dict[str, bool] = {}

    def reaches(name: str, seen: set) -> bool:
        if name == old:
            return True
        if name in memo:
            return memo[name]
        if name not in mod.funcs:
            if name in pending:
                raise UnsupportedError(
                    f"{rules.rule_name('jvp', rules.cf.jvp_rule)} calls `{name}`, which is "
                    f"still being compiled (it calls {rules.fname}, directly or not): a jvp "
                    "rule may call the function itself, not the functions calling it",
                    rules.loc)
            return False
        if name in seen:
            return False
        seen.add(name)
        memo[name] = any(reaches(c, seen) for c in _callees(mod[name]))
        return memo[name]

    done: dict[str, str] = {}

    def fix(name: str) -> str:
        if name in done:
            return done[name]
        f = mod[name]
        g = f if name == start else mod.add(_clone(f, ml._unique(f"{name}.in_rule")))
        done[name] = g.sym_name
        for op in g.walk():
            if isinstance(op, Call):
                c = str(op.attrs["callee"])
                if c == old:
                    op.attrs["callee"] = Symbol(new)
                elif reaches(c, set()):
                    op.attrs["callee"] = Symbol(fix(c))
        return g.sym_name

    fix(start)


def _copy_of(ml, f: Func) -> str:
    """A copy of ``f`` to call: a function an attribute names (the checked rule) must not be
    called, else ``inline`` removes it once it has inlined every call."""
    return ml.module.add(_clone(f, ml._unique(f"{f.sym_name}.call"))).sym_name


def _callees(f: Func):
    return [str(op.attrs["callee"]) for op in f.walk() if isinstance(op, Call)]


def _clone(f: Func, name: str) -> Func:
    attrs = {k: (list(v) if isinstance(v, list) else v) for k, v in f.attrs.items()
             if k not in ("sym_name", "result_types", "entry")}
    g = Func(name, f.arg_types, f.result_types, loc=f.loc, **attrs)
    mapping = {}
    for a, c in zip(f.args, g.args):
        mapping[a] = c
        c.hint = a.hint
    for op in f.body.ops:
        g.body.append(clone_op(op, mapping))
    return g
