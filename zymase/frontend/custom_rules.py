"""Lowering the rules of ``custom_jvp`` / ``custom_vjp`` functions next to the function.

For a call ``f(args)`` the callee ``func.func @f`` gets attributes naming its rule functions,
lowered for the same argument types:

* ``custom_jvp = @f_jvp``: ``f_jvp(primals, tangents)`` with the primals' types and tangents of
  the same types for float leaves (``None`` for the rest); it returns ``(out, tangent_out)``.
* ``custom_vjp_fwd = @f_fwd`` returning ``(out, residuals)`` and ``custom_vjp_bwd = @f_bwd``
  taking ``(residuals, cotangent_out)`` and returning one cotangent per argument (or ``None``).
  ``bwd_cts`` lists which arguments get one.

``noinline`` keeps the call until differentiation has used the rules.
"""

from __future__ import annotations

import inspect

from ..errors import DifferentiationError, UnsupportedError
from ..ir.core import Value
from ..ir.printer import Symbol
from .typing import Array, PyObj, Scalar, Struct, Tup


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


def lower_rules(lw, cf, callee: str, params, result, node) -> None:
    func = lw.mod.module[callee]
    if func.attrs.get("noinline"):
        return
    func.attrs["noinline"] = True
    loc = lw.src.loc(node)
    if cf.jvp_rule is not None:
        rule, _ = lw.mod.specialize(cf.jvp_rule, [Tup(tuple(params)),
                                                  Tup(tuple(tangent_template(p) for p in params))],
                                    loc)
        func.attrs["custom_jvp"] = Symbol(rule)
    if cf.vjp_fwd is not None:
        fwd, fres = lw.mod.specialize(cf.vjp_fwd, list(params), loc)
        if not (isinstance(fres, Tup) and len(fres.items) == 2):
            raise UnsupportedError("a custom_vjp forward rule must return (out, residuals)", loc)
        res_t, out_t = fres.items[1], fres.items[0]
        bwd, bres = lw.mod.specialize(cf.vjp_bwd, [res_t, tangent_template(out_t)], loc)
        if not isinstance(bres, Tup) or len(bres.items) != len(params):
            raise UnsupportedError(f"a custom_vjp backward rule must return a tuple of "
                                   f"{len(params)} cotangents (None for none)", loc)
        names = list(inspect.signature(cf.fn).parameters)
        for k, (p, ct) in enumerate(zip(params, bres.items)):
            if isinstance(ct, PyObj) and ct.obj is None:
                continue
            if isinstance(p, Scalar) and isinstance(ct, Array):  # (no sum is implied)
                name = f"`{names[k]}`" if k < len(names) else str(k)
                raise DifferentiationError(
                    f"the backward rule of {getattr(cf.fn, '__name__', 'the function')}() "
                    f"returns {lw.describe(ct)} as the cotangent of {name}, which is "
                    f"{lw.describe(p)}: return one cotangent shaped like each argument "
                    "(summed over the axes the argument was broadcast along)", loc)
        func.attrs["custom_vjp_fwd"] = Symbol(fwd)
        func.attrs["custom_vjp_bwd"] = Symbol(bwd)
        func.attrs["bwd_cts"] = [not isinstance(c, PyObj) for c in bres.items]
