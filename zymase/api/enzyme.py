"""Enzyme-style differentiation for code that mutates: ``autodiff(mode, f, *annotated_args)``.

    >>> def f(out, x):                         # writes its result into ``out``
    ...     for i in range(x.shape[0]):
    ...         out[i] = x[i] * x[i]
    >>> dout = np.ones(3); dx = np.zeros(3)
    >>> zymase.autodiff(zymase.Reverse, f,                      # doctest: +SKIP
    ...                 Duplicated(out, dout), Duplicated(x, dx))
    ((None, None),)                            # dx now holds 2 x: the seed went into dout

Annotations: ``Const(x)`` (not differentiated), ``Active(x)`` (a scalar, reverse mode: its
derivative is returned), ``Duplicated(a, da)`` (an array and its shadow: reverse mode adds the
adjoint into ``da``; forward mode reads the tangent from ``da`` and writes output tangents of
arrays the function mutates into it), ``DuplicatedNoNeed`` (the same; the primal result is not
returned), ``BatchDuplicated(a, (da1, ..., daW))`` (forward mode, W directions in one pass).

Modes: ``Forward`` returns the output tangent; ``ForwardWithPrimal`` (tangent, primal);
``Reverse`` returns ``((derivative or None per argument),)``, seeding a float result with 1.0
(functions returning None take their seeds from the shadows of their output arrays);
``ReverseWithPrimal`` returns ``((derivatives...), primal)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..driver.cache import shared
from ..driver.request import Request
from ..driver.signature import flat_leaves, rebuild_result
from ..errors import DifferentiationError, ZymaseError, caller_loc
from ..frontend.args import call_arguments
from ..frontend.source import python_function
from .grad import options_of
from .values import flat_args, scalar_out


class Mode:
    def __init__(self, name: str, reverse: bool, with_primal: bool):
        self.name, self.reverse, self.with_primal = name, reverse, with_primal

    def __repr__(self):
        return self.name


Forward = Mode("Forward", False, False)
ForwardWithPrimal = Mode("ForwardWithPrimal", False, True)
Reverse = Mode("Reverse", True, False)
ReverseWithPrimal = Mode("ReverseWithPrimal", True, True)


@dataclass
class Const:
    val: Any


@dataclass
class Active:
    val: Any


@dataclass
class Duplicated:
    val: Any
    dval: Any


@dataclass
class DuplicatedNoNeed(Duplicated):
    pass


@dataclass
class BatchDuplicated:
    val: Any
    dvals: tuple




def autodiff(mode: Mode, fn, *args, **options):
    """Differentiate ``fn`` called with annotated arguments (see the module docstring)."""
    try:
        given, args = len(args), _with_defaults(fn, args)
        if mode.reverse:
            return _reverse(mode, fn, args, options, given)
        return _forward(mode, fn, args, options)
    except ZymaseError as e:
        raise e.with_traceback(None) from None


def _with_defaults(fn, args):
    """``args`` and, as ``Const``, the defaults of the parameters they leave out."""
    full = call_arguments(python_function(fn), tuple(_plain(a) for a in args))
    return tuple(args) + tuple(Const(v) for v in full[len(args):])


def _compiled(fn, options):
    return shared(fn, options_of(options))


def _plain(a):
    if isinstance(a, (Const, Active, Duplicated, BatchDuplicated)):
        return a.val
    return a


def _check_shadow(a, shadow, what):
    if not isinstance(a, np.ndarray):
        if isinstance(a, (tuple, list, dict)) or hasattr(a, "__dataclass_fields__"):
            raise DifferentiationError(f"Duplicated takes an array ({what} is a "
                                       f"{type(a).__name__}): pass its arrays as separate "
                                       "Duplicated arguments", caller_loc())
        return
    if not isinstance(shadow, np.ndarray) or shadow.shape != a.shape or shadow.dtype != a.dtype:
        raise DifferentiationError(f"the shadow of {what} must be an array of shape {a.shape} and "
                                   f"dtype {a.dtype}", caller_loc())


def _reverse(mode, fn, args, options, given):
    primals = tuple(_plain(a) for a in args)
    nums = tuple(k for k, a in enumerate(args) if isinstance(a, (Active, Duplicated)))
    for k, a in enumerate(args):
        if isinstance(a, BatchDuplicated):
            raise DifferentiationError("BatchDuplicated is for forward mode", caller_loc())
        if isinstance(a, Active) and isinstance(a.val, np.ndarray):
            raise DifferentiationError(f"argument {k} is an array: use Duplicated(a, da) for "
                                       "arrays (Active is for scalars)", caller_loc())
        if isinstance(a, Duplicated):
            _check_shadow(a.val, a.dval, f"argument {k}")
    comp = _compiled(fn, options)
    desc = comp.primal(primals).result
    scalar_result = desc[0] == "s" and desc[1].is_inexact
    results = (0,) if scalar_result else ()
    d = comp.get(primals, Request("rev", nums, 1, results))
    flat = flat_args(d, primals)
    shadows, copies = [], []
    for i in d.flat_active:
        if isinstance(flat[i], np.ndarray):
            k, _ = d.leaf_of[i]
            sh = args[k].dval
            if flat[i].flags.c_contiguous and not sh.flags.c_contiguous:
                copies.append((sh, np.ascontiguousarray(sh)))
                sh = copies[-1][1]
            shadows.append(sh)
    seeds = [desc[1].np_dtype.type(1.0)] if scalar_result else []
    d.check_distinct(flat, dict(zip((i for i in d.flat_active if isinstance(flat[i], np.ndarray)),
                                    shadows)))
    out = d.call(flat + shadows + seeds)
    for user, tmp in copies:
        user[...] = tmp
    adjoints = iter(out[d.n_flat_results:])
    derivs = [None] * given  # one per argument passed (defaults are constants)
    for i in d.flat_active:
        k, path = d.leaf_of[i]
        if isinstance(args[k], Active):
            leaf = dict(flat_leaves(d.templates[k]))[path]
            derivs[k] = scalar_out(next(adjoints), leaf.type)
    result = (tuple(derivs),)
    if mode.with_primal:
        return (tuple(derivs), rebuild_result(d.result, out[:d.n_flat_results]))
    return result


def _forward(mode, fn, args, options):
    primals = tuple(_plain(a) for a in args)
    width = {len(a.dvals) for a in args if isinstance(a, BatchDuplicated)}
    if len(width) > 1:
        raise DifferentiationError("every BatchDuplicated needs the same number of shadows",
                                   caller_loc())
    w = width.pop() if width else 1
    nums = tuple(k for k, a in enumerate(args) if isinstance(a, (Duplicated, BatchDuplicated)))
    for k, a in enumerate(args):
        if isinstance(a, Active):
            raise DifferentiationError(f"argument {k}: Active is for reverse mode; in forward "
                                       "mode pass Duplicated(x, dx) with the tangent dx",
                                       caller_loc())
    comp = _compiled(fn, options)
    d = comp.get(primals, Request("fwd", nums, w, ()))
    flat = flat_args(d, primals)
    tans, copies = [], []
    for i in d.flat_active:
        k, path = d.leaf_of[i]
        a = args[k]
        lanes = a.dvals if isinstance(a, BatchDuplicated) else (a.dval,)
        for lane in lanes:
            if isinstance(flat[i], np.ndarray):
                _check_shadow(flat[i], lane, f"argument {k}")
                if flat[i].flags.c_contiguous and not lane.flags.c_contiguous:
                    copies.append((lane, np.ascontiguousarray(lane)))
                    lane = copies[-1][1]
                tans.append(lane)
            else:
                tans.append(float(lane))
    out = d.call(flat + tans)
    for user, tmp in copies:
        user[...] = tmp
    primal = rebuild_result(d.result, out[:d.n_flat_results])
    tangent_vals = out[d.n_flat_results:]
    tangent = (tuple(tangent_vals[:w]) if w > 1 else tangent_vals[0]) if tangent_vals else None
    return (tangent, primal) if mode.with_primal else tangent
