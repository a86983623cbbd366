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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..backends.registry import get_backend, register_backend
from ..driver.cache import shared
from ..driver.pipeline import check_disable
from ..driver.request import Request
from ..driver.signature import arg_key, flat_leaves, rebuild_result
from ..errors import DifferentiationError, ZymaseError, ZymaseTypeError, at_caller, caller_loc
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
    check_disable(options.disable, get_backend(options.backend))  # (an unknown backend too)
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


def value_and_grad(fn: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
                   has_aux: bool = False, *, optimize_before_ad: bool = True,
                   **options: Any) -> Callable[..., Any]:
    """The value of a scalar-valued function together with its gradient, by reverse mode.

    Like ``grad``, but the returned function gives ``(value, gradient)``: one compiled
    derivative computes both (the forward sweep computes the value anyway), so this costs no
    more than ``grad``.  ``fn`` is compiled on the first call for each argument-type
    signature and must return a real float scalar (or ``(scalar, aux)`` with
    ``has_aux=True``).  The gradient has the structure of its argument: a float for a Python
    float, an array of the same shape and dtype for an array, the same tuple, list,
    dataclass or namedtuple for a container (``None`` for fields without floats).

    Args:
        fn: The function to differentiate: plain Python and NumPy (or a ``zymase.jit``
            function).  The returned function takes the same arguments, positional or by
            keyword; parameters left out take their defaults (held constant unless
            ``argnums`` names them).
        argnums: The positional argument(s) to differentiate with respect to: an int
            (default 0; negative counts from the end) gives that argument's gradient, a
            tuple of ints a tuple of gradients in the same order.  Each chosen argument must
            hold floats.
        has_aux: If True, ``fn`` returns a pair ``(value, aux)``; only ``value`` is
            differentiated, and the result is ``((value, aux), gradient)``.
        optimize_before_ad: If True (the default), ``fn``'s IR is optimized before it is
            differentiated; False differentiates the unoptimized IR (calls are still
            inlined), an ablation.
        **options: Compilation options, checked when the transform is made (an unknown name
            raises ``TypeError``):

            - ``fastmath`` (bool, default False): float operations may be reassociated and
              contracted, so reductions vectorize (results may differ in the last bits).
            - ``boundscheck`` (bool, default True): out-of-range indices raise
              ``IndexError`` (checks the compiler proves unnecessary are removed).
            - ``disable`` (a set of names, default empty): parts of the compiler to switch
              off, for ablations: optimization passes (``"inline"``, ``"canonicalize"``,
              ``"cse"``, ``"fuse"``, ``"licm"``, ``"boundscheck"``, ``"storefwd"``,
              ``"dce"``), the ``"optimize"`` stage as a whole, reverse mode's ways of not
              storing a value on the tape (``"recompute"``, ``"recompute_expensive"``,
              ``"reload"``, ``"snapshot"``, ``"carried"``, ``"mincut"``),
              ``"parallel_adjoint"`` (reverse ``prange`` loops serially) and
              ``"vector-math"`` (CPU: no vectorized libm).
            - ``memory_limit`` (int bytes or None, default None: unlimited): the most
              memory the reverse-mode tape and the saved loop states may use.  Each outer
              loop that records a tape per iteration is then checkpointed (its states saved
              and its steps recomputed in the adjoint sweep, on the binomial Revolve
              schedule): bit-for-bit the unlimited gradient, for some extra forward steps.
              A limit that cannot hold one saved state and one iteration's tape raises
              ``ZymaseMemoryError`` when called; one that is not a positive int raises
              ``ValueError`` here.
            - ``backend`` (default ``$ZYMASE_BACKEND``, else ``"cpu"``): ``"cpu"``
              (machine code), ``"interp"`` (the IR interpreter), ``"xla"`` (through JAX),
              a name registered with ``zymase.backends.register_backend``, or a
              ``Backend`` instance; an unknown name raises ``ValueError`` here.
            - ``cache`` (bool, default False): keep the machine code on disk across
              processes (``$ZYMASE_CACHE_DIR``, default ``~/.cache/zymase``).
            - ``deterministic`` (bool, default False): ``prange`` loops give
              bit-identical results for any number of threads.
            - ``parallel`` (bool, default False): NumPy array expressions, ufuncs and
              reductions over large arrays run on all threads too.
            - ``in_shardings`` / ``out_shardings`` (``backend="xla"`` only, as in
              ``jax.jit``): a ``jax.sharding.Sharding`` for every array argument
              (result), or a tuple with one (or None) per argument (result).

    Returns:
        A function taking ``fn``'s arguments and returning ``(value, gradient)``, or
        ``((value, aux), gradient)`` with ``has_aux=True``; ``gradient`` is a tuple when
        ``argnums`` is.

    Raises:
        TypeError: An unknown option (when the transform is made).
        ValueError: A bad ``memory_limit`` or an unknown ``backend`` (when it is made).
        DifferentiationError: When called: ``fn`` does not return a real float scalar (use
            ``jacrev`` or ``vjp`` for other outputs), ``has_aux=True`` but ``fn`` does not
            return a pair, an ``argnums`` entry is out of range, or a chosen argument holds
            no floats (ints, bools and None are never differentiated).
        ZymaseMemoryError: ``memory_limit`` cannot hold one saved loop state and one
            iteration's tape.

    Examples:
        >>> import math, zymase
        >>> def f(x, y):
        ...     return x * y + math.sin(x)
        >>> value, g = zymase.value_and_grad(f)(0.0, 2.0)
        >>> value, g
        (0.0, 3.0)
        >>> zymase.value_and_grad(f, argnums=(0, 1))(0.0, 2.0)
        (0.0, (3.0, 0.0))
        >>> def g(x):
        ...     return x * x, 2.0 * x
        >>> zymase.value_and_grad(g, has_aux=True)(3.0)
        ((9.0, 6.0), 6.0)
    """
    comp, plans = shared(fn, options_of(options)), {}
    argnums = tuple(argnums) if isinstance(argnums, list) else argnums  # (as JAX takes it)

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
    scalar_desc = check_scalar_result(fn, desc, has_aux)
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


def grad(fn: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False, *,
         optimize_before_ad: bool = True, **options: Any) -> Callable[..., Any]:
    """The gradient of a scalar-valued function, by reverse mode.

    ``grad(fn)`` returns a function that takes ``fn``'s arguments and returns the derivative
    of ``fn``'s result with respect to the argument(s) chosen by ``argnums``.  ``fn`` is
    compiled on the first call for each argument-type signature (like ``jit``): its IR is
    optimized, differentiated, optimized again and compiled.  The gradient has the structure
    of its argument: a float for a Python float, an array of the same shape and dtype for an
    array, the same tuple, list, dataclass or namedtuple for a container (``None`` for fields
    without floats).

    Args:
        fn: The function to differentiate: plain Python and NumPy (or a ``zymase.jit``
            function).  It must return a real float scalar, or ``(scalar, aux)`` with
            ``has_aux=True``.  The returned function takes the same arguments, positional or
            by keyword; parameters left out take their defaults (held constant unless
            ``argnums`` names them).
        argnums: The positional argument(s) to differentiate with respect to.  An int
            (default 0, the first argument; negative counts from the end) gives that
            argument's gradient; a tuple of ints gives a tuple of gradients, one per entry,
            in the same order.  Each chosen argument must hold floats (ints, bools and None
            are never differentiated).
        has_aux: If True, ``fn`` returns a pair ``(value, aux)``: ``value`` is
            differentiated, ``aux`` is passed through, and the result is
            ``(gradient, aux)``.
        optimize_before_ad: If True (the default), ``fn``'s IR is optimized before it is
            differentiated; False differentiates the unoptimized IR (calls are still
            inlined), an ablation for comparing the generated code.
        **options: Compilation options, checked when the transform is made (an unknown name
            raises ``TypeError``):

            - ``fastmath`` (bool, default False): float operations may be reassociated and
              contracted, so reductions vectorize (results may differ in the last bits).
            - ``boundscheck`` (bool, default True): out-of-range indices raise
              ``IndexError`` (checks the compiler proves unnecessary are removed).
            - ``disable`` (a set of names, default empty): parts of the compiler to switch
              off, for ablations: optimization passes (``"inline"``, ``"canonicalize"``,
              ``"cse"``, ``"fuse"``, ``"licm"``, ``"boundscheck"``, ``"storefwd"``,
              ``"dce"``), the ``"optimize"`` stage as a whole, reverse mode's ways of not
              storing a value on the tape (``"recompute"``, ``"recompute_expensive"``,
              ``"reload"``, ``"snapshot"``, ``"carried"``, ``"mincut"``),
              ``"parallel_adjoint"`` (reverse ``prange`` loops serially) and
              ``"vector-math"`` (CPU: no vectorized libm).
            - ``memory_limit`` (int bytes or None, default None: unlimited): the most
              memory the reverse-mode tape and the saved loop states may use.  Each outer
              loop that records a tape per iteration is then checkpointed (its states saved
              and its steps recomputed in the adjoint sweep, on the binomial Revolve
              schedule): bit-for-bit the unlimited gradient, for some extra forward steps.
              A limit that cannot hold one saved state and one iteration's tape raises
              ``ZymaseMemoryError`` when called; one that is not a positive int raises
              ``ValueError`` here.
            - ``backend`` (default ``$ZYMASE_BACKEND``, else ``"cpu"``): ``"cpu"``
              (machine code), ``"interp"`` (the IR interpreter), ``"xla"`` (through JAX),
              a name registered with ``zymase.backends.register_backend``, or a
              ``Backend`` instance; an unknown name raises ``ValueError`` here.
            - ``cache`` (bool, default False): keep the machine code on disk across
              processes (``$ZYMASE_CACHE_DIR``, default ``~/.cache/zymase``).
            - ``deterministic`` (bool, default False): ``prange`` loops give
              bit-identical results for any number of threads.
            - ``parallel`` (bool, default False): NumPy array expressions, ufuncs and
              reductions over large arrays run on all threads too.
            - ``in_shardings`` / ``out_shardings`` (``backend="xla"`` only, as in
              ``jax.jit``): a ``jax.sharding.Sharding`` for every array argument
              (result), or a tuple with one (or None) per argument (result).

    Returns:
        A function taking ``fn``'s arguments and returning the gradient (a tuple of
        gradients when ``argnums`` is a tuple), or ``(gradient, aux)`` with ``has_aux=True``.

    Raises:
        TypeError: An unknown option (when the transform is made).
        ValueError: A bad ``memory_limit`` or an unknown ``backend`` (when it is made).
        DifferentiationError: When called: ``fn`` does not return a real float scalar (use
            ``jacrev`` or ``vjp`` for other outputs), ``has_aux=True`` but ``fn`` does not
            return a pair, an ``argnums`` entry is out of range, or a chosen argument holds
            no floats.
        ZymaseMemoryError: ``memory_limit`` cannot hold one saved loop state and one
            iteration's tape.
        UnsupportedError: ``fn`` uses Python or NumPy that zymase does not compile (the
            message names the line).

    Examples:
        >>> import math, numpy as np, zymase
        >>> def f(x):
        ...     return (x * x).sum()
        >>> zymase.grad(f)(np.array([1.0, 2.0]))
        array([2., 4.])

        ``argnums`` picks the arguments; a tuple gives a tuple of gradients:

        >>> def g(x, y):
        ...     return x * y + math.sin(x)
        >>> zymase.grad(g, argnums=1)(0.0, 2.0)
        0.0
        >>> zymase.grad(g, argnums=(0, 1))(0.0, 2.0)
        (3.0, 0.0)

        ``has_aux=True`` passes a second result through:

        >>> def loss(w, x):
        ...     r = w * x
        ...     return (r * r).sum(), r
        >>> zymase.grad(loss, has_aux=True)(np.array([1.0, 2.0]), np.array([3.0, 1.0]))
        (array([18.,  4.]), array([3., 2.]))

        ``memory_limit`` bounds the tape by checkpointing the loop (same gradient):

        >>> def h(x, n):
        ...     for i in range(n):
        ...         x = math.sin(x)
        ...     return x
        >>> zymase.grad(h, memory_limit=200)(1.0, 100) == zymase.grad(h)(1.0, 100)
        True
    """
    comp, plans = shared(fn, options_of(options)), {}
    argnums = tuple(argnums) if isinstance(argnums, list) else argnums  # (as JAX takes it)

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


def jvp(fn: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any], *,
        optimize_before_ad: bool = True, **options: Any) -> tuple[Any, Any]:
    """A function's value and its directional derivative, by forward mode.

    Computes ``fn(*primals)`` and, in the same compiled pass, its derivative along the
    direction ``tangents`` (the Jacobian-vector product).  ``fn`` is compiled for the
    argument-type signature of ``primals`` (kept for later calls with the same types).

    Args:
        fn: The function to differentiate: plain Python and NumPy (or a ``zymase.jit``
            function) returning floats, arrays, or tuples / dataclasses of them.
        primals: The point: a tuple (or list) with one value per positional argument of
            ``fn``; parameters after them take their defaults and are held constant.
        tangents: The direction: a tuple with one entry per primal, of the same structure
            (an array of the primal's shape for an array, a float for a float, the same
            container for a container), or ``None`` for an argument held constant.  Integer
            arguments must get ``None``.  Tangents are copied (never written).
        optimize_before_ad: If True (the default), ``fn``'s IR is optimized before it is
            differentiated; False differentiates the unoptimized IR, an ablation.
        **options: Compilation options, as for ``grad`` (an unknown name raises
            ``TypeError``): ``fastmath``, ``boundscheck``, ``disable`` (pass and stage
            names to switch off, for ablations), ``memory_limit`` (no effect in forward
            mode), ``backend`` (``"cpu"``, ``"interp"``, ``"xla"`` or a registered one),
            ``cache``, ``deterministic``, ``parallel``.

    Returns:
        ``(primal_out, tangent_out)``: ``fn(*primals)`` and its derivative along
        ``tangents``, with the structure of the output (``None`` for non-float results).

    Raises:
        DifferentiationError: ``tangents`` and ``primals`` differ in length, a tangent's
            shape differs from its primal's, or an argument with a tangent holds no floats.

    Examples:
        >>> import numpy as np, zymase
        >>> def f(x, y):
        ...     return x * x * y
        >>> zymase.jvp(f, (2.0, 3.0), (1.0, 0.0))
        (12.0, 12.0)
        >>> zymase.jvp(f, (np.array([1.0, 2.0]), 3.0), (np.array([1.0, 0.0]), None))
        (array([ 3., 12.]), array([6., 0.]))
    """
    try:
        return _jvp(fn, primals, tangents, optimize_before_ad, options)
    except ZymaseError as e:
        raise at_caller(e) from None


def _jvp(fn, primals, tangents, optimize_before_ad, options):
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise ZymaseTypeError("jvp(f, primals, tangents) takes tuples, one entry per argument: "
                              "jvp(f, (x,), (v,)), not jvp(f, x, v)", caller_loc())
    primals, tangents = tuple(primals), tuple(tangents)
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


def check_scalar_result(fn, desc, has_aux=False, who="grad"):
    """The description of the value ``fn`` returns for ``grad``-like transforms to
    differentiate (the first of the pair with ``has_aux``), checked to be a real float scalar."""
    if has_aux:
        if desc[0] != "t" or len(desc[1]) != 2:
            raise DifferentiationError(
                f"{fn.__name__}() must return a pair (value, aux) with has_aux=True; it returns "
                f"{describe_kind(desc)}", return_loc(fn))
        desc = desc[1][0]
    if desc[0] != "s" or not desc[1].is_inexact or desc[1].is_complex:
        raise DifferentiationError(
            f"{who} needs {fn.__name__}() to return a real float scalar; it returns "
            f"{describe_kind(desc)} (use jacrev or vjp for other outputs)", return_loc(fn))
    return desc


def describe_kind(desc) -> str:
    kind = desc[0]
    if kind == "s":
        return f"a {desc[1].np_dtype.name} scalar"
    if kind == "a":
        return "an array"
    if kind == "t":
        return f"a tuple of {len(desc[1])}"
    if kind == "r":
        return f"a {desc[1].__name__}"
    if desc[1] is None:
        return "None"
    return f"a constant {type(desc[1]).__name__}"


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
