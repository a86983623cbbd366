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

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..driver.cache import shared
from ..driver.request import Request
from ..driver.signature import flat_leaves, rebuild_result
from ..errors import DifferentiationError, ZymaseError, caller_loc
from ..frontend.args import arg_name, call_arguments
from ..frontend.source import python_function
from .grad import describe_kind, options_of, return_loc
from .values import flat_args, has_float, located, scalar_out


class Mode:
    """A differentiation mode of ``zymase.autodiff``, as in Enzyme.

    The four modes are the constants ``zymase.Forward`` (returns the output tangent),
    ``zymase.ForwardWithPrimal`` (``(tangent, primal)``), ``zymase.Reverse`` (returns
    ``((derivative or None per argument),)``) and ``zymase.ReverseWithPrimal``
    (``((derivatives...), primal)``); pass one as ``autodiff``'s first argument.

    Args:
        name: The mode's name (its ``repr``).
        reverse: True for reverse mode, False for forward mode.
        with_primal: Whether ``autodiff`` also returns the function's result.

    Examples:
        >>> import zymase
        >>> zymase.Reverse, zymase.Reverse.reverse, zymase.Reverse.with_primal
        (Reverse, True, False)
        >>> zymase.ForwardWithPrimal.reverse, zymase.ForwardWithPrimal.with_primal
        (False, True)
    """

    def __init__(self, name: str, reverse: bool, with_primal: bool) -> None:
        self.name, self.reverse, self.with_primal = name, reverse, with_primal

    def __repr__(self):
        return self.name


Forward = Mode("Forward", False, False)
"""Forward mode: ``autodiff`` returns the tangent of the result (a tuple of them with
``BatchDuplicated``)."""
ForwardWithPrimal = Mode("ForwardWithPrimal", False, True)
"""Forward mode: ``autodiff`` returns ``(tangent, result)``."""
Reverse = Mode("Reverse", True, False)
"""Reverse mode: ``autodiff`` returns ``((derivative or None per argument),)``; array adjoints
are added into the shadows of ``Duplicated`` arguments."""
ReverseWithPrimal = Mode("ReverseWithPrimal", True, True)
"""Reverse mode: ``autodiff`` returns ``((derivative or None per argument), result)``."""


@dataclass
class Const:
    """An ``autodiff`` argument held constant (not differentiated).

    Arguments passed without an annotation, and parameters left to their defaults, are
    constants too.

    Args:
        val: The argument's value (any type ``fn`` takes).

    Examples:
        >>> import zymase
        >>> def f(x, a):
        ...     return a * x * x
        >>> zymase.autodiff(zymase.Reverse, f, zymase.Active(3.0), zymase.Const(2.0))
        ((12.0, None),)
    """

    val: Any


@dataclass
class Active:
    """A scalar ``autodiff`` argument whose derivative reverse mode returns.

    Reverse mode only (forward mode takes ``Duplicated(x, dx)`` with a tangent ``dx``);
    arrays take ``Duplicated``.  The derivative appears at the argument's position in the
    tuple ``autodiff`` returns.

    Args:
        val: The argument's value: a float (or a tuple, dataclass or namedtuple of floats).

    Examples:
        >>> import zymase
        >>> def f(x, y):
        ...     return x * x * y
        >>> zymase.autodiff(zymase.Reverse, f, zymase.Active(2.0), zymase.Active(3.0))
        ((12.0, 4.0),)
    """

    val: Any


@dataclass
class Duplicated:
    """An array ``autodiff`` argument with its shadow array, in the style of Enzyme.

    Reverse mode adds the argument's adjoint into the shadow ``dval`` (it accumulates: zero
    it first for a fresh gradient); for a function that returns nothing and writes its result
    into an array, the shadow of that output array holds the seed (it is consumed, left
    zero).  Forward mode reads the argument's tangent from ``dval``, and writes the output
    tangent of an array the function mutates into its shadow.  ``Duplicated(x, dx)`` with
    floats gives a scalar's tangent in forward mode.

    Args:
        val: The argument: a NumPy array (or a float, in forward mode).
        dval: Its shadow: an array of the same shape and dtype (the tangent, or where the
            adjoint is added), or a float tangent for a float ``val``.

    Examples:
        >>> import numpy as np, zymase
        >>> def f(x, a):
        ...     return a * (x * x).sum()
        >>> x, dx = np.array([1.0, 2.0]), np.zeros(2)
        >>> zymase.autodiff(zymase.Reverse, f, zymase.Duplicated(x, dx), zymase.Active(3.0))
        ((None, 5.0),)
        >>> dx                                    # the gradient with respect to x
        array([ 6., 12.])
        >>> def sq(out, x):                       # writes its result into ``out``
        ...     for i in range(x.shape[0]):
        ...         out[i] = x[i] * x[i]
        >>> out, dout, dx = np.zeros(2), np.ones(2), np.zeros(2)
        >>> zymase.autodiff(zymase.Reverse, sq, zymase.Duplicated(out, dout),
        ...                 zymase.Duplicated(x, dx))
        ((None, None),)
        >>> dx, dout                              # the seed in dout was consumed
        (array([2., 4.]), array([0., 0.]))
    """

    val: Any
    dval: Any


@dataclass
class DuplicatedNoNeed(Duplicated):
    """``Duplicated``, under Enzyme's name for an argument whose primal value is not needed.

    Accepted for Enzyme compatibility: zymase treats it exactly as ``Duplicated``.

    Args:
        val: The argument: a NumPy array (or a float, in forward mode).
        dval: Its shadow, as for ``Duplicated``.

    Examples:
        >>> import numpy as np, zymase
        >>> def f(x):
        ...     return (x * x).sum()
        >>> x, dx = np.array([1.0, 2.0]), np.zeros(2)
        >>> zymase.autodiff(zymase.Reverse, f, zymase.DuplicatedNoNeed(x, dx))
        ((None,),)
        >>> dx
        array([2., 4.])
    """


@dataclass
class BatchDuplicated:
    """A forward-mode ``autodiff`` argument with several tangents, computed in one pass.

    ``BatchDuplicated(x, (dx1, ..., dxW))`` gives ``W`` directions; ``autodiff`` then returns
    a tuple of ``W`` output tangents.  Every ``BatchDuplicated`` argument of a call needs the
    same number of tangents.  Forward mode only.

    Args:
        val: The argument: a NumPy array or a float.
        dvals: A tuple of its tangents, each shaped like ``val`` (arrays of the same shape
            and dtype, or floats).

    Examples:
        >>> import numpy as np, zymase
        >>> def scale(x, a):
        ...     return a * x
        >>> x = np.array([1.0, 2.0])
        >>> e0, e1 = np.array([1.0, 0.0]), np.array([0.0, 1.0])
        >>> zymase.autodiff(zymase.Forward, scale, zymase.BatchDuplicated(x, (e0, e1)), 3.0)
        (array([3., 0.]), array([0., 3.]))
    """

    val: Any
    dvals: tuple[Any, ...]


@located
def autodiff(mode: Mode, fn: Callable[..., Any], *args: Any, **options: Any) -> Any:
    """Differentiate a call of ``fn`` with annotated arguments, in the style of Enzyme.

    For code that writes into arrays: each argument is annotated with its activity (``Const``,
    ``Active``, ``Duplicated``, ``DuplicatedNoNeed``, ``BatchDuplicated``; a plain value is
    ``Const``), and array derivatives go into the shadow arrays the caller passes.  In
    reverse mode a float result is seeded with 1.0; a function returning None takes its
    seeds from the shadows of its output arrays.  ``fn`` is compiled for the argument types
    (and kept for later calls).

    Args:
        mode: ``zymase.Forward``, ``zymase.ForwardWithPrimal``, ``zymase.Reverse`` or
            ``zymase.ReverseWithPrimal``.
        fn: The function: plain Python and NumPy (or a ``zymase.jit`` function).
        *args: ``fn``'s positional arguments, each annotated (``Active`` for reverse-mode
            scalars, ``Duplicated(a, da)`` for arrays and forward-mode tangents,
            ``BatchDuplicated`` for several forward-mode tangents, ``Const`` or a plain value
            for constants); parameters left out take their defaults, as constants.
        **options: Compilation options, as for ``zymase.grad``: ``fastmath``,
            ``boundscheck``, ``disable``, ``memory_limit`` (bytes for the reverse-mode tape:
            loops are checkpointed to stay under it), ``backend``, ``cache``,
            ``deterministic``, ``parallel``.

    Returns:
        ``Reverse``: ``((d0, d1, ...),)``, one entry per argument passed: the derivative for
        an ``Active`` argument, None for the others (array adjoints are in the shadows).
        ``ReverseWithPrimal``: ``((d0, d1, ...), result)``.  ``Forward``: the tangent of
        ``fn``'s result (a tuple of them with ``BatchDuplicated``; None when it returns no
        floats).  ``ForwardWithPrimal``: ``(tangent, result)``.

    Raises:
        DifferentiationError: ``Active`` in forward mode or on an array,
            ``BatchDuplicated`` in reverse mode or with different numbers of tangents, or
            a shadow whose shape or dtype differs from its array's.

    Examples:
        >>> import numpy as np, zymase
        >>> from zymase import Active, Const, Duplicated
        >>> def f(x, a, n):
        ...     s = 0.0
        ...     for i in range(n):
        ...         s += a * x[i] * x[i]
        ...     return s
        >>> x, dx = np.array([1.0, 2.0]), np.zeros(2)
        >>> zymase.autodiff(zymase.Reverse, f, Duplicated(x, dx), Active(3.0), Const(2))
        ((None, 5.0, None),)
        >>> dx
        array([ 6., 12.])
        >>> zymase.autodiff(zymase.Forward, f, Duplicated(x, np.array([1.0, 0.0])), 3.0, 2)
        6.0
        >>> tangent, value = zymase.autodiff(zymase.ForwardWithPrimal, f,
        ...                                  Duplicated(x, np.array([0.0, 1.0])), 3.0, 2)
        >>> tangent, float(value)
        (12.0, 15.0)
    """
    if not isinstance(mode, Mode):
        raise DifferentiationError(
            f"autodiff's first argument is a mode (zymase.Forward, zymase.ForwardWithPrimal, "
            f"zymase.Reverse or zymase.ReverseWithPrimal), not {type(mode).__name__} "
            f"{mode!r}"[:300], caller_loc())
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
    py = python_function(fn)
    for k, a in enumerate(args):
        name = arg_name(py, k).split(" of ")[0]
        if isinstance(a, BatchDuplicated):
            raise DifferentiationError("BatchDuplicated is for forward mode", caller_loc())
        if isinstance(a, Active) and isinstance(a.val, np.ndarray):
            raise DifferentiationError(f"{name} is an array: use Duplicated(a, da) for "
                                       "arrays (Active is for scalars)", caller_loc())
        if isinstance(a, (Active, Duplicated)) and not has_float(a.val, arg_name(py, k)):
            raise DifferentiationError(
                f"{name} of {py.__name__}() is marked {type(a).__name__} but holds no "
                f"floats ({type(a.val).__name__}): pass it plain or as Const(...)",
                caller_loc())
        if isinstance(a, Duplicated) and not isinstance(a.val, np.ndarray) and \
                isinstance(a.val, (float, complex, np.inexact)):
            raise DifferentiationError(
                f"{name} of {py.__name__}() is a scalar marked Duplicated: in reverse mode a "
                "scalar's derivative is returned, not written into a shadow: pass "
                f"Active({a.val!r})", caller_loc())
        if isinstance(a, Duplicated):
            _check_shadow(a.val, a.dval, name)
    comp = _compiled(fn, options)
    desc = comp.primal(primals).result
    scalar_result = desc[0] == "s" and desc[1].is_inexact
    if not scalar_result and _holds_floats(desc):
        raise DifferentiationError(
            f"autodiff(Reverse) seeds the result of {py.__name__}() only when it is a float "
            f"scalar; it returns {describe_kind(desc)}: write the result into an output array "
            "passed as Duplicated(out, dout) with the seed in dout, or use zymase.vjp with a "
            "cotangent", return_loc(py))
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


def _holds_floats(desc) -> bool:
    """Whether a described result carries floats (which reverse mode would need a seed for)."""
    kind = desc[0]
    if kind == "s":
        return desc[1].is_inexact
    if kind == "a":
        return desc[1].dtype.is_inexact
    if kind == "t":
        return any(_holds_floats(x) for x in desc[1])
    if kind == "r":
        return any(_holds_floats(x) for x in desc[2].values())
    return False


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
            raise DifferentiationError(f"{arg_name(python_function(fn), k)}: Active is for "
                                       "reverse mode; in forward "
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
                _check_shadow(flat[i], lane, arg_name(python_function(fn), k).split(" of ")[0])
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
