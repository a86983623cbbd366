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

import dataclasses
import threading

import numpy as np

from .api import arg_key
from .checkpointing import Checkpointed, checkpoint  # noqa: F401  (zymase.checkpoint)
from .derivatives import Request, compile_derivative, flat_leaves
from .errors import DifferentiationError, ZymaseError, caller_loc
from .frontend.args import call_arguments, flatten_arg
from .frontend.source import get_source, python_function
from .frontend.typing import Array, Scalar, TupList
from .options import Options


class _Compiled:
    """Per-transform cache of compiled derivatives, keyed by argument types."""

    def __init__(self, fn, options: Options):
        self.fn = python_function(fn)
        self.options = options
        self.cache: dict = {}
        self.plans: dict = {}  # grad's per-signature call plans (see _GradPlan)
        self.lock = threading.Lock()

    def get(self, args, req: Request):
        key = (tuple(arg_key(a, f"argument {k}") for k, a in enumerate(args)), req)
        d = self.cache.get(key)
        if d is None:
            with self.lock:
                d = self.cache.get(key)
                if d is None:
                    d = compile_derivative(self.fn, args, req, self.options)
                    self.cache[key] = d
        return d


def _options(**kw) -> Options:
    """``disable`` names optimization passes and reverse-mode cache optimizations to switch off
    (see passes/pipeline.py and autodiff/reverse.OPTIMIZATIONS)."""
    unknown = set(kw) - {"fastmath", "boundscheck", "disable", "memory_limit"}
    if unknown:
        raise TypeError(f"unknown options {sorted(unknown)}")
    limit = kw.get("memory_limit")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, (int, np.integer))
                              or limit <= 0):
        raise ValueError(f"memory_limit must be a positive number of bytes, not {limit!r}")
    return Options(fastmath=kw.get("fastmath", False), boundscheck=kw.get("boundscheck", True),
                   disable=frozenset(kw.get("disable", ())),
                   memory_limit=None if limit is None else int(limit))


def _argnums(argnums, nargs, fn):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for k in nums:
        if not -nargs <= k < nargs:
            raise DifferentiationError(f"argnums {k} is out of range for {nargs} arguments of "
                                       f"{fn.__name__}()", caller_loc())
    return tuple(k % nargs for k in nums)


def _check_differentiable(args, nums, fn):
    for k in nums:
        leaves = [leaf for _, leaf in flat_leaves(_template(args[k]))]
        if not any(_inexact(leaf) for leaf in leaves):
            raise DifferentiationError(
                f"cannot differentiate {fn.__name__}() with respect to argument {k}: it is "
                f"{type(args[k]).__name__} {args[k]!r}"[:200] + " (integers and booleans are never "
                "active; pass a float)", caller_loc())


def _template(x):
    from .frontend.args import param_template
    return param_template(x, "argument")


def _inexact(leaf):
    t = leaf.value.type
    return (t.dtype if hasattr(t, "dtype") else t).is_inexact


def _flat_args(d, args):
    return [v for a, t in zip(args, d.templates) for v in flatten_arg(a, t)]


def _flat_values(tpl, x):
    return flatten_arg(x, tpl)


def _rebuild(template, leaf_values: dict, prefix=()):
    """A value shaped like argument ``template`` from {leaf path: value} (None elsewhere)."""
    from .frontend.typing import Struct, Tup
    if isinstance(template, (Scalar, Array)):
        return leaf_values.get(prefix)
    if isinstance(template, Tup):
        items = [_rebuild(t, leaf_values, prefix + (k,)) for k, t in enumerate(template.items)]
        return items if isinstance(template, TupList) else tuple(items)
    if isinstance(template, Struct):
        fields = {k: _rebuild(t, leaf_values, prefix + (k,)) for k, t in template.fields.items()}
        if dataclasses.is_dataclass(template.pytype):
            return template.pytype(**fields)
        return template.pytype(**fields)
    return None


def _scalar_out(value, t):
    """A returned derivative scalar with the type of its primal (float32 in, float32 out)."""
    if t.is_complex:
        return complex(value) if t.bits == 128 else np.complex64(value)
    return float(value) if t.bits == 64 else np.float32(value)


def _return_loc(fn):
    import ast
    src = get_source(fn)
    for node in ast.walk(src.tree):
        if isinstance(node, ast.Return) and node.value is not None:
            return src.loc(node)
    return src.loc(src.tree)


# ---------------------------------------------------------------------- reverse mode





def value_and_grad(fn, argnums=0, has_aux: bool = False, *, optimize_before_ad: bool = True,
                   **options):
    """``fn``'s value and its gradient with respect to ``argnums`` (reverse mode).

    ``fn`` must return a float scalar (or ``(scalar, aux)`` with ``has_aux=True``).  Returns
    ``(value, grad)``, or ``((value, aux), grad)``; ``grad`` is a tuple when ``argnums`` is.
    """
    comp = _Compiled(fn, _options(**options))

    def wrapper(*args, **kwargs):
        args = call_arguments(comp.fn, args, kwargs)
        try:
            if not has_aux:
                out = _plain_grad(comp, args, argnums, optimize_before_ad, primal=True)
                if out is not None:
                    return out
            return _value_and_grad(comp, args, argnums, has_aux, optimize_before_ad, True)
        except ZymaseError as e:
            raise e.with_traceback(None) from None

    wrapper.__wrapped__ = fn
    wrapper.__name__ = f"value_and_grad({getattr(fn, '__name__', 'f')})"
    return wrapper


class _GradPlan:
    """What ``grad`` / ``value_and_grad`` of plain float/array arguments do on every call,
    worked out on the first (checks, positions, result types), so later calls only allocate
    shadows and run the compiled code (through the C entry when it returns at most one float)."""

    __slots__ = ("d", "nums", "arrays", "scalars", "seed", "single", "primal", "fast_ok")

    def __init__(self, d, nums, argnums, seed, primal):
        self.d, self.nums, self.seed, self.primal = d, nums, seed, primal
        arrays = {i for i, t in enumerate(d.templates) if isinstance(t, Array)}
        self.arrays = [i for i in d.flat_active if i in arrays]
        self.scalars = [(i, d.templates[i].value.type) for i in d.flat_active
                        if i not in self.arrays]
        self.single = isinstance(argnums, int)
        types = ([d.result[1]] if primal else []) + [t for _, t in self.scalars]
        self.fast_ok = len(types) == 0 or (len(types) == 1 and types[0].bits == 64 and
                                           not types[0].is_complex)

    def __call__(self, args):
        self.d.check_distinct(args)
        shadows = {i: np.zeros_like(args[i]) for i in self.arrays}
        flat = list(args) + list(shadows.values()) + [self.seed]
        if self.fast_ok:
            out = self.d.call_fast(flat)
            out = [] if out is None else [out]
        else:
            out = self.d.call(flat)
        rest = out[1:] if self.primal else out
        shadows.update((i, _scalar_out(v, t)) for (i, t), v in zip(self.scalars, rest))
        if self.single:
            g = shadows[self.d.flat_active[0]] if self.d.flat_active else None
        else:
            g = tuple(shadows.get(k) for k in self.nums)
        return (_scalar_out(out[0], self.d.result[1]), g) if self.primal else g


def _plain_grad(comp, args, argnums, optimize_before_ad, primal=False):
    """``grad`` (or with ``primal``, ``value_and_grad``) through a cached plan, or None when
    this call needs the general path."""
    try:
        key = (tuple(arg_key(a) for a in args), argnums, optimize_before_ad, primal)
    except (ZymaseError, TypeError):
        return None
    plan = comp.plans.get(key)
    if plan is None:
        if not all(type(a) in (float, int, bool, np.ndarray) for a in args):
            return None
        value, g = _value_and_grad(comp, args, argnums, False, optimize_before_ad, primal)
        nums = _argnums(argnums, len(args), comp.fn)
        req = Request("rev", nums, 1, (0,), optimize_before_ad, primal)
        d = comp.get(args, req)
        if d.n_flat_results != int(primal) or len(d.templates) != len(args) or \
                sorted(set(nums)) != sorted(d.leaf_of[i][0] for i in d.flat_active) or \
                len(nums) != len(set(nums)):
            comp.plans[key] = False
            return (value, g) if primal else g
        comp.plans[key] = _GradPlan(d, nums, argnums, _seed(d), primal)
        return (value, g) if primal else g
    if plan is False:
        return None
    return plan(args)


def _seed(d):
    t = d.result[1]
    return 1.0 if t.bits == 64 else t.np_dtype.type(1.0)  # a Python float takes the C entry


def _value_and_grad(comp, args, argnums, has_aux, optimize_before_ad, keep_primal):
    fn = comp.fn
    nums = _argnums(argnums, len(args), fn)
    _check_differentiable(args, nums, fn)
    req = Request("rev", nums, 1, (0,), optimize_before_ad, keep_primal or has_aux)
    d = comp.get(args, req)
    desc = d.result
    scalar_desc = desc[1][0] if has_aux else desc
    if has_aux and desc[0] != "t":
        raise DifferentiationError(f"{fn.__name__}() must return (value, aux) with has_aux=True",
                                   _return_loc(fn))
    if scalar_desc[0] != "s" or not scalar_desc[1].is_inexact or scalar_desc[1].is_complex:
        raise DifferentiationError(
            f"grad needs {fn.__name__}() to return a real float scalar; it returns "
            f"{_describe(scalar_desc)} (use jacrev or vjp for other outputs)", _return_loc(fn))
    flat = _flat_args(d, args)
    shadows = {}
    for i in d.flat_active:
        if isinstance(flat[i], np.ndarray):
            shadows[i] = np.zeros_like(flat[i])
    seed = scalar_desc[1].np_dtype.type(1.0)
    d.check_distinct(flat)
    out = d.call(flat + list(shadows.values()) + [seed])
    from .compiler import rebuild_result
    primal = rebuild_result(desc, out[:d.n_flat_results]) if d.n_flat_results or \
        desc[0] == "p" else None
    per_arg = _gather_adjoints(d, nums, shadows, out[d.n_flat_results:])
    grads = tuple(_rebuild(d.templates[k], per_arg[k]) for k in nums)
    g = grads[0] if isinstance(argnums, int) else grads
    return primal, g


def _gather_adjoints(d, nums, shadows, scalar_adjoints) -> dict:
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
            per_arg[k][path] = _scalar_out(next(adjoints), leaf.type)
    return per_arg


def _describe(desc) -> str:
    kind = desc[0]
    if kind == "s":
        return f"a {desc[1].np_dtype.name} scalar"
    if kind == "a":
        return "an array"
    if kind == "t":
        return "a tuple"
    return "None" if desc[1] is None else repr(desc[1])


def grad(fn, argnums=0, has_aux: bool = False, *, optimize_before_ad: bool = True, **options):
    """The gradient of scalar-valued ``fn`` with respect to ``argnums`` (reverse mode).

        >>> zymase.grad(lambda_free_f)(x)        # doctest: +SKIP
    """
    comp = _Compiled(fn, _options(**options))

    def wrapper(*args, **kwargs):
        args = call_arguments(comp.fn, args, kwargs)
        try:
            if not has_aux:
                g = _plain_grad(comp, args, argnums, optimize_before_ad)
                if g is not None:
                    return g
            value, g = _value_and_grad(comp, args, argnums, has_aux, optimize_before_ad, False)
        except ZymaseError as e:
            raise e.with_traceback(None) from None
        return (g, value[1]) if has_aux else g

    wrapper.__wrapped__ = fn
    wrapper.__name__ = f"grad({getattr(fn, '__name__', 'f')})"
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


_JVP_CACHE: dict = {}


def _jvp(fn, primals, tangents, optimize_before_ad, options):
    if len(primals) != len(tangents):
        raise DifferentiationError("jvp needs one tangent per primal (None for constants)",
                                   caller_loc())
    primals = call_arguments(python_function(fn), primals)  # defaults: constants
    tangents += (None,) * (len(primals) - len(tangents))
    nums = tuple(k for k, t in enumerate(tangents) if t is not None)
    _check_differentiable(primals, nums, python_function(fn))
    key = (python_function(fn), tuple(sorted(options.items())))
    comp = _JVP_CACHE.get(key)
    if comp is None:
        comp = _JVP_CACHE[key] = _Compiled(fn, _options(**options))
    d = comp.get(primals, Request("fwd", nums, 1, (), optimize_before_ad))
    flat = _flat_args(d, primals)
    tans = []
    for i in d.flat_active:
        k, path = d.leaf_of[i]
        leaf_t = dict(zip([p for p, _ in flat_leaves(d.templates[k])],
                          _flat_values(d.templates[k], tangents[k])))[path]
        tans.append(_as_tangent(leaf_t, flat[i]))
    out = d.call(flat + tans)
    from .compiler import rebuild_result
    primal = rebuild_result(d.result, out[:d.n_flat_results])
    tan_vals = out[d.n_flat_results:]
    return primal, _tangent_result(d, tan_vals)


def _as_tangent(t, primal):
    if isinstance(primal, np.ndarray):
        t = np.asarray(t, dtype=primal.dtype)
        if t.shape != primal.shape:
            raise DifferentiationError(f"tangent shape {t.shape} != primal shape {primal.shape}",
                                       caller_loc())
        # always a copy: the compiled code updates a tangent where ``fn`` writes its primal,
        # and the caller's direction must not change (as in JAX)
        return np.array(t, order="C" if primal.flags.c_contiguous else "K", copy=True)
    return t


def _tangent_result(d, tan_vals):
    """Tangents shaped like the result (floats only; other leaves get None)."""
    vals = iter(tan_vals)

    def build(desc):
        kind = desc[0]
        if kind == "s":
            return _scalar_out(next(vals), desc[1]) if desc[1].is_inexact else None
        if kind == "a":
            return next(vals) if desc[1].dtype.is_inexact else None
        if kind == "t":
            return tuple(build(x) for x in desc[1])
        if kind == "r":
            return desc[1](**{k: build(x) for k, x in desc[2].items()})
        return None

    return build(d.result)
