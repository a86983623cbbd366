"""JAX-style derivative transforms on plain Python functions.

    >>> import zymase
    >>> def f(x, n):
    ...     s = 0.0
    ...     for i in range(1, n + 1):
    ...         s += x ** i / i
    ...     return s
    >>> zymase.grad(f)(0.5, 30)              # doctest: +SKIP
    1.9999999981373549

Every transform compiles one derivative function per argument signature (like ``jit``): the
primal is lowered, optimized, differentiated on the optimized IR, optimized again and compiled.
Derivatives have the structure of the arguments they are taken with respect to: floats for
Python floats, arrays of the same shape and dtype for arrays, the same tuple / dataclass /
namedtuple for containers (``None`` for non-float fields).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import numpy as np

from ..backends.registry import get_backend, register_backend
from ..driver.cache import shared
from ..driver.request import Request
from ..driver.signature import arg_key, flat_leaves, rebuild_result
from ..errors import DifferentiationError, ZymaseError, caller_loc
from ..frontend.args import call_arguments, flatten_arg, with_arguments
from ..frontend.source import get_source, python_function
from ..frontend.typing import Array
from ..options import transform_options
from .values import (
    as_tangent,
    check_differentiable,
    flat_args,
    gather_adjoints,
    normalize_argnums,
    rebuild,
    retrying,
    scalar_out,
)


def options_of(kw: dict):
    """The ``Options`` of a transform's keyword arguments; a ``Backend`` instance given as
    ``backend=`` is registered under its name."""
    backend = kw.get("backend")
    if backend is not None and not isinstance(backend, str):
        register_backend(backend)
    options = transform_options(**kw)
    get_backend(options.backend)  # an unknown name fails when the transform is made
    return options


# ---------------------------------------------------------------------- reverse mode


@dataclass(frozen=True)
class GradSpec:
    """What a ``grad``/``value_and_grad`` wrapper was made from (``vmap`` batches it)."""

    fn: object
    argnums: object
    has_aux: bool
    optimize_before_ad: bool
    options: dict
    with_value: bool


def value_and_grad(fn, argnums=0, has_aux: bool = False, *, optimize_before_ad: bool = True,
                   **options):
    """``fn``'s value and its gradient with respect to ``argnums`` (reverse mode).

    ``fn`` must return a float scalar (or ``(scalar, aux)`` with ``has_aux=True``).  Returns
    ``(value, grad)``, or ``((value, aux), grad)``; ``grad`` is a tuple when ``argnums`` is.
    """
    comp, plans = shared(fn, options_of(options)), {}

    def attempt(args):
        if not has_aux:
            out = _plain_grad(comp, plans, args, argnums, optimize_before_ad, primal=True)
            if out is not None:
                return out
        return _value_and_grad(comp, args, argnums, has_aux, optimize_before_ad)

    def wrapper(*args, **kwargs):
        return with_arguments(comp.fn, args, kwargs,
                              lambda a: retrying(comp.fn, attempt, a, comp.options))

    wrapper.__wrapped__ = fn
    wrapper.__name__ = f"value_and_grad({getattr(fn, '__name__', 'f')})"
    wrapper.__zymase_transform__ = "zymase.value_and_grad"
    wrapper.__zymase_grad__ = GradSpec(fn, argnums, has_aux, optimize_before_ad, options, True)
    return wrapper


class _GradPlan:
    """What ``grad`` / ``value_and_grad`` of plain float/array arguments do on every call,
    worked out on the first (checks, positions, result types), so later calls only allocate
    shadows and run the compiled code (through the C entry when its results are 64-bit floats
    and ints)."""

    __slots__ = ("d", "nums", "arrays", "scalars", "seed", "single", "primal", "fast_ok")

    def __init__(self, d, nums, argnums, seed, primal):
        self.d, self.nums, self.seed, self.primal = d, nums, seed, primal
        arrays = {i for i, t in enumerate(d.templates) if isinstance(t, Array)}
        self.arrays = [i for i in d.flat_active if i in arrays]
        self.scalars = [(i, d.templates[i].value.type) for i in d.flat_active
                        if i not in self.arrays]
        self.single = isinstance(argnums, int)
        types = [d.result[1]] + [t for _, t in self.scalars]
        self.fast_ok = all(t.bits == 64 and not t.is_complex for t in types)

    def __call__(self, args):
        self.d.check_distinct(args)
        shadows = {i: np.zeros_like(args[i]) for i in self.arrays}
        flat = list(args) + list(shadows.values()) + [self.seed]
        if self.fast_ok:
            out = self.d.call_fast(flat)
            out = [] if out is None else list(out) if type(out) is tuple else [out]
        else:
            out = self.d.call(flat)
        rest = out[1:]
        shadows.update((i, scalar_out(v, t)) for (i, t), v in zip(self.scalars, rest))
        if self.single:
            g = shadows[self.d.flat_active[0]] if self.d.flat_active else None
        else:
            g = tuple(shadows.get(k) for k in self.nums)
        return (scalar_out(out[0], self.d.result[1]), g) if self.primal else g


def _plain_grad(comp, plans, args, argnums, optimize_before_ad, primal=False):
    """``grad`` (or with ``primal``, ``value_and_grad``) through a plan kept in ``plans`` (one
    per signature, per transform object), or None when this call needs the general path."""
    try:
        key = (tuple(arg_key(a) for a in args), argnums, optimize_before_ad, primal)
    except (ZymaseError, TypeError):
        return None
    plan = plans.get(key)
    if plan is None:
        if not all(type(a) in (float, int, bool, np.ndarray) for a in args):
            return None
        value, g = _value_and_grad(comp, args, argnums, False, optimize_before_ad)
        nums = normalize_argnums(argnums, len(args), comp.fn)
        d = comp.get(args, _request(nums, optimize_before_ad))
        if d.n_flat_results != 1 or len(d.templates) != len(args) or \
                sorted(set(nums)) != sorted(d.leaf_of[i][0] for i in d.flat_active) or \
                len(nums) != len(set(nums)):
            plans[key] = False
            return (value, g) if primal else g
        plans[key] = _GradPlan(d, nums, argnums, _seed(d), primal)
        return (value, g) if primal else g
    if plan is False:
        return None
    if not plan.d.holds():  # a name the code read was rebound: look the derivative up again
        del plans[key]
        return _plain_grad(comp, plans, args, argnums, optimize_before_ad, primal)
    return plan(args)


def _seed(d):
    t = d.result[1]
    return 1.0 if t.bits == 64 else t.np_dtype.type(1.0)  # a Python float takes the C entry


def _request(nums, optimize_before_ad) -> Request:
    """What ``grad`` and ``value_and_grad`` compile: one derivative that returns the value too
    (computing it costs the forward sweep nothing), so the two share it."""
    return Request("rev", nums, 1, (0,), optimize_before_ad, True)


def _value_and_grad(comp, args, argnums, has_aux, optimize_before_ad):
    fn = comp.fn
    nums = normalize_argnums(argnums, len(args), fn)
    check_differentiable(args, nums, fn)
    d = comp.get(args, _request(nums, optimize_before_ad))
    desc = d.result
    scalar_desc = desc[1][0] if has_aux else desc
    if has_aux and desc[0] != "t":
        raise DifferentiationError(f"{fn.__name__}() must return (value, aux) with has_aux=True",
                                   return_loc(fn))
    if scalar_desc[0] != "s" or not scalar_desc[1].is_inexact or scalar_desc[1].is_complex:
        raise DifferentiationError(
            f"grad needs {fn.__name__}() to return a real float scalar; it returns "
            f"{describe_kind(scalar_desc)} (use jacrev or vjp for other outputs)", return_loc(fn))
    flat = flat_args(d, args)
    shadows = {}
    for i in d.flat_active:
        if isinstance(flat[i], np.ndarray):
            shadows[i] = np.zeros_like(flat[i])
    seed = scalar_desc[1].np_dtype.type(1.0)
    d.check_distinct(flat)
    out = d.call(flat + list(shadows.values()) + [seed])
    primal = rebuild_result(desc, out[:d.n_flat_results]) if d.n_flat_results or \
        desc[0] == "p" else None
    per_arg = gather_adjoints(d, nums, shadows, out[d.n_flat_results:])
    grads = tuple(rebuild(d.templates[k], per_arg[k]) for k in nums)
    g = grads[0] if isinstance(argnums, int) else grads
    return primal, g


def grad(fn, argnums=0, has_aux: bool = False, *, optimize_before_ad: bool = True, **options):
    """The gradient of scalar-valued ``fn`` with respect to ``argnums`` (reverse mode).

        >>> import math, zymase
        >>> def f(x, y):
        ...     return x * y + math.sin(x)
        >>> zymase.grad(f)(1.0, 2.0) == 2.0 + math.cos(1.0)
        True
        >>> zymase.grad(f, argnums=(0, 1))(1.0, 2.0)[1]
        1.0

    ``has_aux=True``: ``fn`` returns ``(value, aux)`` and ``grad`` returns ``(gradient, aux)``.
    ``options`` (every transform takes them): ``fastmath``, ``boundscheck``, ``disable`` (pass
    and stage names, for ablations), ``memory_limit`` (bytes of tape: checkpointing),
    ``backend`` (``"cpu"``, the default, or ``"interp"``; see ``zymase.backends``).
    """
    comp, plans = shared(fn, options_of(options)), {}

    def attempt(args):
        if not has_aux:
            g = _plain_grad(comp, plans, args, argnums, optimize_before_ad)
            if g is not None:
                return g
        value, g = _value_and_grad(comp, args, argnums, has_aux, optimize_before_ad)
        return (g, value[1]) if has_aux else g

    def wrapper(*args, **kwargs):
        return with_arguments(comp.fn, args, kwargs,
                              lambda a: retrying(comp.fn, attempt, a, comp.options))

    wrapper.__wrapped__ = fn
    wrapper.__name__ = f"grad({getattr(fn, '__name__', 'f')})"
    wrapper.__zymase_transform__ = "zymase.grad"
    wrapper.__zymase_grad__ = GradSpec(fn, argnums, has_aux, optimize_before_ad, options, False)
    return wrapper


# ---------------------------------------------------------------------- forward mode


def jvp(fn, primals, tangents, *, optimize_before_ad: bool = True, **options):
    """(``fn(*primals)``, its directional derivative along ``tangents``) in forward mode.

    ``tangents`` has the structure of ``primals``; ``None`` marks an argument held constant
    (integers must be ``None``).  The output tangent has the structure of the output.
    """
    try:
        return _jvp(fn, tuple(primals), tuple(tangents), optimize_before_ad, options)
    except ZymaseError as e:
        raise e.with_traceback(None) from None


def _jvp(fn, primals, tangents, optimize_before_ad, options):
    if len(primals) != len(tangents):
        raise DifferentiationError("jvp needs one tangent per primal (None for constants)",
                                   caller_loc())
    primals = call_arguments(python_function(fn), primals)  # defaults: constants
    tangents += (None,) * (len(primals) - len(tangents))
    nums = tuple(k for k, t in enumerate(tangents) if t is not None)
    check_differentiable(primals, nums, python_function(fn))
    comp = shared(fn, options_of(options))
    d = comp.get(primals, Request("fwd", nums, 1, (), optimize_before_ad))
    flat = flat_args(d, primals)
    tans = []
    for i in d.flat_active:
        k, path = d.leaf_of[i]
        leaf_t = dict(zip([p for p, _ in flat_leaves(d.templates[k])],
                          flat_values(d.templates[k], tangents[k])))[path]
        tans.append(as_tangent(leaf_t, flat[i]))
    out = d.call(flat + tans)
    primal = rebuild_result(d.result, out[:d.n_flat_results])
    tan_vals = out[d.n_flat_results:]
    return primal, tangent_result(d, tan_vals)


def describe_kind(desc) -> str:
    kind = desc[0]
    if kind == "s":
        return f"a {desc[1].np_dtype.name} scalar"
    if kind == "a":
        return "an array"
    if kind == "t":
        return "a tuple"
    return "None" if desc[1] is None else repr(desc[1])


def flat_values(tpl, x):
    return flatten_arg(x, tpl)


def return_loc(fn):
    src = get_source(fn)
    for node in ast.walk(src.tree):
        if isinstance(node, ast.Return) and node.value is not None:
            return src.loc(node)
    return src.loc(src.tree)


def tangent_result(d, tan_vals):
    """Tangents shaped like the result (floats only; other leaves get None)."""
    vals = iter(tan_vals)

    def build(desc):
        kind = desc[0]
        if kind == "s":
            return scalar_out(next(vals), desc[1]) if desc[1].is_inexact else None
        if kind == "a":
            return next(vals) if desc[1].dtype.is_inexact else None
        if kind == "t":
            return tuple(build(x) for x in desc[1])
        if kind == "r":
            return desc[1](**{k: build(x) for k, x in desc[2].items()})
        return None

    return build(d.result)
