"""User values <-> the flat argument and result lists of compiled derivatives, shared by the
transforms of ``api/``: argument checks, tangents and cotangents shaped like the arguments and
results, derivatives rebuilt with the structure of the arguments (floats for Python floats,
arrays of the same shape and dtype for arrays, the same tuple / dataclass / namedtuple for
containers, ``None`` for non-float fields)."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from ..driver.signature import flat_leaves, is_inexact
from ..errors import DifferentiationError, ZymaseError, ZymaseTypeError, at_caller, caller_loc
from ..frontend.args import (
    arg_name,
    flatten_arg,
    foreign_inputs,
    param_template,
    place_like,
    place_with,
    shard_arguments,
)
from ..frontend.captures import REBOUND_RETRIES, Rebound, rebound_error
from ..frontend.typing import Array, Scalar, Struct, Tup, TupList


def retrying(fn, attempt, args, options=None):
    """``attempt(args)`` for a transform of ``fn``, again when another thread rebound a global
    array between finding the compiled code and calling it; errors without zymase's frames.
    ``options``' shardings place the arguments before and the results after."""
    shardings = options is not None and (options.in_shardings is not None or
                                         options.out_shardings is not None)
    if shardings and options.in_shardings is not None:
        args = shard_arguments(args, options.in_shardings)
    for _ in range(REBOUND_RETRIES):
        try:
            out = attempt(args)
            if shardings and options.out_shardings is not None:
                return place_with(out, options.out_shardings)
            return on_inputs_devices(out, args)
        except ZymaseError as e:
            raise at_caller(e) from None
        except Rebound:
            continue
    raise rebound_error(fn).with_traceback(None)


def located(fn):
    """``fn`` whose zymase errors come without zymase's frames, an error with no location of
    its own (about an argument) pointing at the user's call."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except ZymaseError as e:
            raise at_caller(e) from None
    return call


def on_inputs_devices(result, args):
    """``jax.Array`` arguments in, ``jax.Array`` results out, on those arrays' devices."""
    found = foreign_inputs(args)
    return place_like(result, found) if found else result


def normalize_argnums(argnums, nargs, fn):
    ok = isinstance(argnums, int) or (isinstance(argnums, (tuple, list)) and
                                      all(isinstance(k, int) for k in argnums))
    if not ok or isinstance(argnums, bool):
        raise ZymaseTypeError(f"argnums is an int or a tuple of ints (positions of "
                              f"{fn.__name__}()'s arguments), not {argnums!r}", caller_loc())
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    # positions count the positional parameters, as in JAX (keyword-only ones, such as the
    # values a functools.partial binds by name, are never chosen by position)
    nargs = min(nargs, getattr(getattr(fn, "__code__", None), "co_argcount", nargs))
    for k in nums:
        if not -nargs <= k < nargs:
            raise DifferentiationError(f"argnums {k} is out of range for the {nargs} positional "
                                       f"parameters of {fn.__name__}()", caller_loc())
    return tuple(k % nargs for k in nums)


def as_tangent(t, primal, mismatch: str = "the tangent has shape {t} but its primal {p}"):
    """A tangent for ``primal`` (a C copy for arrays); ``mismatch`` is the message when the
    shapes differ (``{t}`` and ``{p}``: the two shapes)."""
    if np.iscomplexobj(t) and not np.iscomplexobj(primal):
        raise DifferentiationError("a complex tangent (or cotangent) for a real value: the "
                                   "derivative of a real input is real; pass its real and "
                                   "imaginary parts as two directions", caller_loc())
    if isinstance(primal, np.ndarray):
        t = np.asarray(t, dtype=primal.dtype)
        if t.shape != primal.shape:
            raise DifferentiationError(mismatch.format(t=t.shape, p=primal.shape), caller_loc())
        # always a copy: the compiled code updates a tangent where ``fn`` writes its primal,
        # and the caller's direction must not change (as in JAX)
        return np.array(t, order="C" if primal.flags.c_contiguous else "K", copy=True)
    return t


def check_differentiable(args, nums, fn):
    for k in nums:
        leaves = [leaf for _, leaf in flat_leaves(arg_template(args[k], arg_name(fn, k)))]
        if not any(is_inexact(leaf) for leaf in leaves):
            what = (f"{type(args[k]).__name__} {args[k]!r}"[:160] if args[k] is None or
                    isinstance(args[k], (int, float, np.ndarray, np.generic, tuple, list,
                                         dict, str)) else f"a {type(args[k]).__qualname__}")
            raise DifferentiationError(
                f"cannot differentiate {fn.__name__}() with respect to "
                f"{arg_name(fn, k).split(' of ')[0]}: it is {what}, which has no float "
                "values (integers, booleans, strings and None are never active; pass a float "
                "or a float array, or choose another argnums)", caller_loc())


def flat_args(d, args):
    return [v for a, t in zip(args, d.templates) for v in flatten_arg(a, t)]


def gather_adjoints(d, nums, shadows, scalar_adjoints) -> dict:
    """{argnum: {leaf path: adjoint}} from a reverse call: array leaves' shadow buffers and the
    scalar adjoints it returned, in ``d.flat_active`` order."""
    adjoints = iter(scalar_adjoints)
    per_arg = {k: {} for k in nums}
    for i in d.flat_active:
        k, path = d.leaf_of[i]
        if i in shadows:
            per_arg[k][path] = shadows[i]
        else:
            leaf = dict(flat_leaves(d.templates[k]))[path]
            per_arg[k][path] = scalar_out(next(adjoints), leaf.type)
    return per_arg


def rebuild(template, leaf_values: dict, prefix=()):
    """A value shaped like argument ``template`` from {leaf path: value} (None elsewhere)."""
    if isinstance(template, (Scalar, Array)):
        return leaf_values.get(prefix)
    if isinstance(template, Tup):
        items = [rebuild(t, leaf_values, prefix + (k,)) for k, t in enumerate(template.items)]
        return items if isinstance(template, TupList) else tuple(items)
    if isinstance(template, Struct):
        fields = {k: rebuild(t, leaf_values, prefix + (k,)) for k, t in template.fields.items()}
        if dataclasses.is_dataclass(template.pytype):
            return template.pytype(**fields)
        return template.pytype(**fields)
    return None


def scalar_out(value, t):
    """A returned derivative scalar with the type of its primal (float32 in, float32 out)."""
    if t.is_complex:
        return complex(value) if t.bits == 128 else np.complex64(value)
    return float(value) if t.bits == 64 else np.float32(value)


def arg_template(x, where: str = "an argument"):
    return param_template(x, where)


def has_float(a, where: str = "an argument") -> bool:
    """Whether argument value ``a`` holds a float or complex (what can be differentiated)."""
    return any(is_inexact(leaf) for _, leaf in flat_leaves(arg_template(a, where)))
