"""More JAX-style transforms, built on the compiled derivatives of ``grad.py``: ``vjp``,
``jacfwd`` (forward mode, W directions per pass), ``jacrev`` / ``jacobian`` (reverse mode, one
pass per output element), ``hvp`` and ``hessian`` (forward mode over reverse mode).

    >>> H = zymase.hessian(f)(x)            # doctest: +SKIP
    >>> y, pullback = zymase.vjp(f, x)     # doctest: +SKIP
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from ..backends.registry import get_backend
from ..driver.cache import shared
from ..driver.request import Request
from ..driver.signature import rebuild_result
from ..errors import DifferentiationError, ZymaseError, ZymaseTypeError, at_caller, caller_loc
from ..frontend.args import arg_name, call_arguments
from .grad import options_of
from .values import (
    as_tangent,
    check_differentiable,
    flat_args,
    gather_adjoints,
    has_float,
    located,
    normalize_argnums,
    rebuild,
)

MAX_WIDTH = 4  # directions per forward pass in jacfwd / hessian






# ---------------------------------------------------------------------- vjp


@located
def vjp(fn: Callable[..., Any], *primals: Any,
        **options: Any) -> tuple[Any, Callable[[Any], tuple[Any, ...]]]:
    """A function's value and its pullback (vector-Jacobian product), by reverse mode.

    Runs ``fn(*primals)`` once, keeping what the adjoint sweep needs, and returns the output
    with a ``pullback`` function: ``pullback(ct)`` gives, for an output cotangent ``ct``
    (shaped like the output), the cotangent of each primal: ``ct`` times the Jacobian.  It
    uses the split form of reverse mode: ``vjp`` runs the augmented forward function, each
    ``pullback`` only the adjoint sweep (a second ``pullback`` runs the forward part again on
    copies of the arguments as they were, since the adjoint consumes its tape).  With
    ``memory_limit`` each ``pullback`` runs the whole checkpointed gradient instead.

    Args:
        fn: The function to differentiate: plain Python and NumPy (or a ``zymase.jit``
            function) returning floats, float arrays, or tuples of them.
        *primals: The arguments of ``fn`` (positional; parameters after them take their
            defaults and are held constant).
        **options: Compilation options, as for ``grad``: ``fastmath`` (bool: float
            operations may be reassociated), ``boundscheck`` (bool, default True:
            out-of-range indices raise ``IndexError``), ``disable`` (pass, stage and
            reverse-mode optimization names to switch off, for ablations), ``memory_limit``
            (bytes for the reverse-mode tape and saved loop states: loops are checkpointed
            to stay under it; ``ZymaseMemoryError`` when one state and one iteration do not
            fit), ``backend`` (``"cpu"``, ``"interp"``, ``"xla"`` or a registered backend),
            ``cache`` (keep the machine code on disk), ``deterministic`` and ``parallel``
            (how parallel loops and large array expressions run).  An unknown name raises
            ``TypeError``.

    Returns:
        ``(output, pullback)``.  ``pullback(ct)`` takes a cotangent with the structure and
        shapes of ``output`` (a tuple for a tuple output) and returns a tuple with one
        cotangent per primal, shaped like it (``None`` for an argument without floats, such
        as an int).

    Raises:
        DifferentiationError: From ``pullback``: a cotangent whose structure or shapes differ
            from the output's.

    Examples:
        >>> import numpy as np, zymase
        >>> def f(x, a, n):
        ...     return a * x ** n
        >>> y, pullback = zymase.vjp(f, np.array([1.0, 2.0]), 3.0, 2)
        >>> y
        array([ 3., 12.])
        >>> pullback(np.array([1.0, 0.5]))
        (array([6., 6.]), 3.0, None)
    """
    comp = shared(fn, options_of(options))
    return _vjp(comp, call_arguments(comp.fn, primals), len(primals))


def _vjp(comp, primals, given):
    """vjp of ``comp.fn`` at one value per parameter; cotangents for the first ``given`` (the
    rest are defaults, held constant)."""
    nums = tuple(k for k, a in enumerate(primals) if has_float(a, arg_name(comp.fn, k)) and
                 k < given)
    split = comp.options.memory_limit is None and \
        get_backend(comp.options.backend).capabilities.split_tapes
    try:
        results = _float_result_positions(comp, primals)
        d = comp.get(primals, Request("rev-split" if split else "rev", nums, 1, results))
        if split and _keeps_references(d):  # arrays the forward function made and freed
            split = False
            d = comp.get(primals, Request("rev", nums, 1, results))
    except ZymaseError as e:
        raise e.with_traceback(None) from None
    flat = [np.array(x) if isinstance(x, np.ndarray) else x for x in flat_args(d, primals)]
    if not split:
        out = shared(comp.fn, comp.options).primal(primals)(primals)

        def pullback(ct):  # on copies: ``fn`` may write into its arguments
            _checked_cotangent(out, ct)
            copies = [np.array(x) if isinstance(x, np.ndarray) else x for x in flat]
            return _pullback(d, copies, primals, nums, ct)[:given]

        return out, pullback
    state = _Forward(d, flat_args(d, primals))
    out = rebuild_result(d.result, state.results) if d.n_flat_results or \
        d.result[0] == "p" else None

    def pullback(ct):
        nonlocal state
        _checked_cotangent(out, ct)
        if state is None:  # the last pullback used up the tape: run the forward part again
            state = _Forward(d, [np.array(x) if isinstance(x, np.ndarray) else x for x in flat])
        run, state = state, None
        return run.adjoint(primals, nums, ct)[:given]

    return out, pullback


def _checked_cotangent(out, ct) -> None:
    try:
        _check_cotangent(out, ct)
    except ZymaseError as e:
        raise e.with_traceback(None) from None


def _check_cotangent(out, ct, where="the output") -> None:
    """A pullback's cotangent has the structure and shapes of the output (else the compiled
    adjoint would read past it)."""
    if isinstance(out, tuple):
        if not isinstance(ct, tuple) or len(ct) != len(out):
            raise DifferentiationError(f"the cotangent must be a tuple of {len(out)} like "
                                       f"{where}, not {type(ct).__name__}", caller_loc())
        for k, (o, c) in enumerate(zip(out, ct)):
            _check_cotangent(o, c, f"{where}[{k}]")
    elif isinstance(out, (np.ndarray, float, complex, np.inexact)):
        kind = np.asarray(ct).dtype.kind if isinstance(ct, (int, float, complex, list,
                                                             np.ndarray, np.number)) else None
        if kind not in ("i", "u", "f", "c") or isinstance(ct, bool):
            raise DifferentiationError(f"the cotangent of {where} must be a number or an array "
                                       f"of numbers, not {type(ct).__name__}", caller_loc())
        if np.shape(ct) != np.shape(out):
            raise DifferentiationError(f"the cotangent of {where} must have shape "
                                       f"{np.shape(out)}, not {np.shape(ct)}", caller_loc())


def _keeps_references(d) -> bool:
    """Whether a split derivative's tape holds arrays by reference (versions of an array renewed
    in a loop that a matrix product reads): those die with the forward function, before the
    adjoint would read them, so ``vjp`` runs the one-function gradient instead."""
    return d.keeps_refs


class _Forward:
    """One run of a split derivative's forward function: the primal results, the residuals the
    adjoint needs, and the tape buffer (freed by the adjoint, or here if it never runs)."""

    def __init__(self, d, flat):
        self.d = d
        self.shadows = {i: np.zeros_like(flat[i]) for i in d.flat_active
                        if isinstance(flat[i], np.ndarray)}
        d.check_distinct(flat)
        self.outer = d.outer(flat)
        res = d.entry.call(list(flat) + list(self.shadows.values()), self.outer)
        n = d.n_flat_results
        self.results, self.residuals = res[:n], res[n:-2]
        self.buf, self.pos = res[-2], res[-1]
        # the arguments as the forward run left them (the adjoint reads them): the caller may
        # change its arrays before calling the pullback
        self.flat = [np.array(x) if isinstance(x, np.ndarray) else x for x in flat]
        # global arrays too, and residuals that are views of them (the adjoint reads both)
        self.residuals = [np.array(r) if isinstance(r, np.ndarray) and
                          any(np.may_share_memory(r, g) for g in self.outer) else r
                          for r in self.residuals]
        self.outer = [np.array(x) for x in self.outer]

    def adjoint(self, primals, nums, ct):
        d = self.d
        seeds = _seeds(d, ct)
        buf, self.buf = self.buf, 0
        out = d.adjoint.call(self.flat + list(self.shadows.values()) + seeds + self.residuals
                             + [buf, self.pos], self.outer)
        per_arg = gather_adjoints(d, nums, self.shadows, out)
        return tuple(rebuild(d.templates[k], per_arg[k]) if k in per_arg else None
                     for k in range(len(primals)))

    def __del__(self):
        if getattr(self, "buf", 0):
            self.d.entry.free_tape(self.buf)
            self.buf = 0


def _seeds(d, ct) -> list:
    leaves = result_leaves(d.result)
    seeds = []
    for (kind, t), c in zip(leaves, flatten_like(d.result, ct)):
        if not inexact_type(t):
            continue
        if kind == "a":
            seeds.append(np.ascontiguousarray(c, dtype=t.dtype.np_dtype))
        else:
            seeds.append(t.np_dtype.type(c))
    return seeds




def _float_result_positions(comp, primals):
    desc = shared(comp.fn, comp.options).primal(primals).result
    return tuple(k for k, (_, t) in enumerate(result_leaves(desc)) if inexact_type(t))


def _pullback(d, flat, primals, nums, ct):
    shadows = {i: np.zeros_like(flat[i]) for i in d.flat_active if isinstance(flat[i], np.ndarray)}
    d.check_distinct(flat)
    out = d.call(flat + list(shadows.values()) + _seeds(d, ct))
    per_arg = gather_adjoints(d, nums, shadows, out[d.n_flat_results:])
    return tuple(rebuild(d.templates[k], per_arg[k]) if k in per_arg else None
                 for k in range(len(primals)))




# ---------------------------------------------------------------------- Jacobians


def jacfwd(fn: Callable[..., Any], argnums: int = 0, **options: Any) -> Callable[..., Any]:
    """The Jacobian of a function, by forward mode.

    Runs compiled forward mode over the basis directions of one argument, up to 4 directions
    per pass.  For an output of shape ``out.shape`` and an argument of shape ``x.shape``
    the Jacobian has shape ``out.shape + x.shape`` (a float when both are floats).  Better
    than ``jacrev`` when the argument has fewer elements than the output.

    Args:
        fn: The function to differentiate: plain Python and NumPy returning one float or one
            float array (``jacrev`` takes tuple outputs).
        argnums: The position of the argument to differentiate with respect to (one int,
            default 0; negative counts from the end).  It must be a float or a float array.
        **options: Compilation options, as for ``grad``: ``fastmath`` (bool: float
            operations may be reassociated), ``boundscheck`` (bool, default True:
            out-of-range indices raise ``IndexError``), ``disable`` (pass, stage and
            reverse-mode optimization names to switch off, for ablations), ``memory_limit``
            (bytes for the reverse-mode tape and saved loop states: loops are checkpointed
            to stay under it; ``ZymaseMemoryError`` when one state and one iteration do not
            fit), ``backend`` (``"cpu"``, ``"interp"``, ``"xla"`` or a registered backend),
            ``cache`` (keep the machine code on disk), ``deterministic`` and ``parallel``
            (how parallel loops and large array expressions run).  An unknown name raises
            ``TypeError``.

    Returns:
        A function taking ``fn``'s arguments (positional or by keyword) and returning the
        Jacobian, of shape ``out.shape + x.shape``.

    Raises:
        DifferentiationError: When called: ``argnums`` is a tuple, the argument is not a
            float or a float array, or ``fn`` does not return one float or array.

    Examples:
        >>> import numpy as np, zymase
        >>> def f(x):
        ...     return np.array([x[0] * x[1], x[0] + 2.0 * x[1], 3.0 * x[0]])
        >>> zymase.jacfwd(f)(np.array([1.0, 2.0]))
        array([[2., 1.],
               [1., 2.],
               [3., 0.]])
    """
    comp = shared(fn, options_of(options))

    def wrapper(*args, **kwargs):
        args = call_arguments(comp.fn, args, kwargs)
        try:
            return _jacfwd(comp, args, argnums)
        except ZymaseError as e:
            raise at_caller(e) from None

    wrapper.__zymase_transform__ = "zymase.jacfwd"
    wrapper.__wrapped__ = fn  # (the transform keeps fn alive: a lambda has no other owner)
    return wrapper


def _directions(x):
    n = int(np.size(x))
    for start in range(0, n, MAX_WIDTH):
        idx = list(range(start, min(n, start + MAX_WIDTH)))
        yield idx


def _basis(x, j):
    if isinstance(x, np.ndarray):
        e = np.zeros(x.size, dtype=x.dtype)
        e[j] = 1
        return e.reshape(x.shape)
    return 1.0


def _scalar_if_0d(a):
    return a[()] if a.ndim == 0 else a


def _jacfwd(comp, args, argnums):
    if not isinstance(argnums, int):
        raise DifferentiationError("jacfwd takes one argnums (an int; jacrev takes tuples)",
                                   caller_loc())
    k = normalize_argnums(argnums, len(args), comp.fn)[0]
    check_differentiable(args, (k,), comp.fn)
    _float_or_array("jacfwd", args, (k,))
    x = args[k]
    columns = {}
    for idx, run in _chunks(x, args):
        width = len(idx)
        d = comp.get(run, Request("fwd", (k,), width, ()))
        if d.result[0] not in ("s", "a"):
            raise DifferentiationError(f"jacfwd needs {comp.fn.__name__}() to return one float "
                                       "or array (jacrev takes tuple outputs)", caller_loc())
        flat = flat_args(d, run)
        tans = [as_tangent(_basis(x, j), flat[d.flat_active[0]]) for j in idx]
        out = d.call(flat + tans)
        for lane, j in enumerate(idx):
            columns[j] = _lane(d, out, lane, width)
    return _stack_columns([columns[j] for j in range(int(np.size(x)))], x)


def _chunks(x, args):
    """(directions, arguments to run on) per pass of at most MAX_WIDTH directions.  With more
    than one pass each runs on copies of the arguments as given (``fn`` may write them), and
    the caller's arrays get the last run's final contents: written once, as CPython would."""
    chunks = list(_directions(x))
    if len(chunks) <= 1:
        yield from ((idx, args) for idx in chunks)
        return
    for idx in chunks:
        run = copy.deepcopy(args)
        yield idx, run
    _write_back(args, run)


def _write_back(orig, new) -> None:
    if isinstance(orig, np.ndarray):
        if orig.flags.writeable:
            orig[...] = new
    elif isinstance(orig, (tuple, list)):
        for a, b in zip(orig, new):
            _write_back(a, b)
    elif isinstance(orig, dict):
        for key in orig:
            _write_back(orig[key], new[key])
    elif dataclasses.is_dataclass(orig) or hasattr(orig, "_fields"):
        names = orig._fields if hasattr(orig, "_fields") else \
            [f.name for f in dataclasses.fields(orig)]
        for name in names:
            _write_back(getattr(orig, name), getattr(new, name))


def _lane(d, out, lane, width):
    """The tangent result of one lane (single float result supported)."""
    tans = out[d.n_flat_results:]
    return tans[lane]


def _stack_columns(cols, x):
    first = np.asarray(cols[0])
    jac = np.stack([np.asarray(c) for c in cols], axis=-1)
    return jac.reshape(first.shape + np.shape(x)) if isinstance(x, np.ndarray) else jac[..., 0] \
        if first.shape else float(jac[0])


def jacrev(fn: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
           **options: Any) -> Callable[..., Any]:
    """The Jacobian of a function, by reverse mode (``zymase.jacobian`` is the same function).

    Runs ``vjp`` once and its pullback once per output element, so it suits functions with
    fewer outputs than inputs.  For an output of shape ``out.shape`` and an argument of shape
    ``x.shape`` the Jacobian has shape ``out.shape + x.shape``.  As in JAX, a tuple
    ``argnums`` gives a tuple of Jacobians (one per argument) and a tuple output a tuple over
    the outputs (of Jacobians, or of tuples of them).

    Args:
        fn: The function to differentiate: plain Python and NumPy returning a float, a float
            array or a tuple of them.
        argnums: The argument(s) to differentiate with respect to: an int (default 0;
            negative counts from the end) gives one Jacobian per output, a tuple of ints a
            tuple of Jacobians in the same order.  Each must be a float or a float array.
        **options: Compilation options, as for ``grad``: ``fastmath`` (bool: float
            operations may be reassociated), ``boundscheck`` (bool, default True:
            out-of-range indices raise ``IndexError``), ``disable`` (pass, stage and
            reverse-mode optimization names to switch off, for ablations), ``memory_limit``
            (bytes for the reverse-mode tape and saved loop states: loops are checkpointed
            to stay under it; ``ZymaseMemoryError`` when one state and one iteration do not
            fit), ``backend`` (``"cpu"``, ``"interp"``, ``"xla"`` or a registered backend),
            ``cache`` (keep the machine code on disk), ``deterministic`` and ``parallel``
            (how parallel loops and large array expressions run).  An unknown name raises
            ``TypeError`` at the first call.

    Returns:
        A function taking ``fn``'s arguments (positional or by keyword) and returning the
        Jacobian(s), structured as described above.

    Raises:
        DifferentiationError: When called: an argument chosen by ``argnums`` is not a float
            or a float array, or an output is not a float or a float array.

    Examples:
        >>> import numpy as np, zymase
        >>> def f(x, y):
        ...     return x * y
        >>> x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
        >>> zymase.jacrev(f)(x, y)
        array([[3., 0.],
               [0., 4.]])
        >>> jx, jy = zymase.jacobian(f, argnums=(0, 1))(x, y)
        >>> jy
        array([[1., 0.],
               [0., 2.]])
    """

    comp = shared(fn, options_of(options))
    argnums = tuple(argnums) if isinstance(argnums, list) else argnums  # (as JAX takes it)

    def wrapper(*args, **kwargs):
        args = call_arguments(comp.fn, args, kwargs)
        try:
            return _jacrev(comp, args, argnums)
        except ZymaseError as e:
            raise at_caller(e) from None

    wrapper.__zymase_transform__ = "zymase.jacrev"
    wrapper.__wrapped__ = fn  # (the transform keeps fn alive: a lambda has no other owner)
    wrapper.__zymase_jacrev__ = (fn, argnums, options)  # (vmap batches it)
    return wrapper


def _float_or_array(what, args, nums):
    """Jacobians and Hessians are matrices over one float or array argument each."""
    for k in nums:
        if not isinstance(args[k], (float, np.floating, np.ndarray)):
            raise DifferentiationError(
                f"{what} differentiates with respect to floats and arrays; argument {k} is a "
                f"{type(args[k]).__name__} "
                "(pass its arrays as separate arguments; grad and vjp take tuples, dataclasses "
                "and dicts)", caller_loc())


def _jacrev(comp, args, argnums):
    nums = normalize_argnums(argnums, len(args), comp.fn)
    check_differentiable(args, nums, comp.fn)
    _float_or_array("jacrev", args, nums)
    out, pull = _vjp(comp, args, len(args))
    outs = out if isinstance(out, tuple) else (out,)
    for o in outs:
        if not isinstance(o, (float, np.floating, np.ndarray)) or \
                not np.issubdtype(np.asarray(o).dtype, np.inexact):
            raise DifferentiationError("jacrev needs float or float-array outputs; "
                                       f"{comp.fn.__name__}() returns a {type(o).__name__}",
                                       caller_loc())
    per_output = []
    for j, o in enumerate(outs):
        rows = []
        for i in range(np.size(o)):
            cts = [np.zeros(np.shape(x), np.asarray(x).dtype) for x in outs]
            cts[j].flat[i] = 1
            ct = tuple(c if np.ndim(c) else c[()] for c in cts)
            back = pull(ct if isinstance(out, tuple) else ct[0])
            rows.append([np.asarray(back[k]) for k in nums])
        jac = tuple(_scalar_if_0d(np.stack([r[m] for r in rows]).reshape(
            np.shape(o) + np.shape(args[k]))) for m, k in enumerate(nums))
        per_output.append(jac[0] if isinstance(argnums, int) else jac)
    return tuple(per_output) if isinstance(out, tuple) else per_output[0]


jacobian = jacrev
"""``jacrev`` under JAX's other name: the Jacobian by reverse mode (see ``jacrev``)."""


# ---------------------------------------------------------------------- Hessians


def hvp(fn: Callable[..., Any], argnums: int = 0, **options: Any) -> Callable[..., Any]:
    """The Hessian-vector product of a scalar function, by forward mode over reverse mode.

    **Argument order: ``hvp(f)(*args, v)``: the point's arguments first, the vector ``v``
    LAST** (``hvp(f)(x, v)`` for a function of one argument).  Returns ``H(x) @ v``, where
    ``H`` is the Hessian of ``f`` with respect to argument ``argnums``, in one pass, without
    forming ``H``: the gradient's derivative along ``v``.

    Args:
        fn: A function returning a real float scalar (plain Python and NumPy).
        argnums: The position (one int, default 0) among ``fn``'s arguments of the argument
            ``x`` that ``H`` is taken with respect to; it must be a float or a float array,
            and ``v`` has its shape.
        **options: Compilation options, as for ``grad``: ``fastmath`` (bool: float
            operations may be reassociated), ``boundscheck`` (bool, default True:
            out-of-range indices raise ``IndexError``), ``disable`` (pass, stage and
            reverse-mode optimization names to switch off, for ablations), ``memory_limit``
            (bytes for the reverse-mode tape and saved loop states: loops are checkpointed
            to stay under it; ``ZymaseMemoryError`` when one state and one iteration do not
            fit), ``backend`` (``"cpu"``, ``"interp"``, ``"xla"`` or a registered backend),
            ``cache`` (keep the machine code on disk), ``deterministic`` and ``parallel``
            (how parallel loops and large array expressions run).  An unknown name raises
            ``TypeError``.

    Returns:
        A function called as ``hvp(fn)(*args, v)``: ``args`` are ``fn``'s arguments
        (positional, or by keyword after the positional ones) and ``v``, the last positional
        argument, is the vector; it returns ``H(x) @ v``, shaped like ``x`` (a float for a
        float ``x``).

    Raises:
        DifferentiationError: When called: ``v``'s shape differs from the argument's (the
            message reminds of the order), ``argnums`` is a tuple, or ``fn`` does not return
            a float scalar.

    Examples:
        >>> import numpy as np, zymase
        >>> def f(x, c):
        ...     return c * x[0] ** 2 * x[1]
        >>> x, v = np.array([1.0, 2.0]), np.array([1.0, 0.0])
        >>> zymase.hvp(f)(x, 3.0, v)           # the vector last
        array([12.,  6.])
        >>> zymase.hessian(f)(x, 3.0) @ v
        array([12.,  6.])
    """
    comp = shared(fn, options_of(options))

    def wrapper(*args, **kwargs):
        if not args:
            raise at_caller(ZymaseTypeError("hvp(f)(*args, v) takes f's arguments and then the "
                                            "vector v"))
        *primals, v = args
        if not isinstance(v, (float, int, np.ndarray, np.generic, list, tuple)) or \
                isinstance(v, bool):
            raise at_caller(ZymaseTypeError(
                f"hvp(f)(*args, v): the last argument is the vector v, shaped like the "
                f"argument it multiplies; got {type(v).__name__} {v!r}"[:200]))
        try:
            primals = call_arguments(comp.fn, tuple(primals), kwargs)
        except ZymaseTypeError as e:
            raise at_caller(ZymaseTypeError(f"hvp(f)(*args, v) takes f's arguments and then the "
                                            f"vector v: {e.msg}")) from None
        try:
            return _hvp(comp, primals, argnums, [v])[0]
        except ZymaseError as e:
            raise at_caller(e) from None

    wrapper.__zymase_transform__ = "zymase.hvp"
    wrapper.__wrapped__ = fn  # (the transform keeps fn alive: a lambda has no other owner)
    return wrapper


def _hvp(comp, primals, argnums, vs):
    """H v for each direction in ``vs`` (one forward-over-reverse pass of width len(vs))."""
    if not isinstance(argnums, int):
        raise DifferentiationError("hessian and hvp take one argnums (an int)", caller_loc())
    k = normalize_argnums(argnums, len(primals), comp.fn)[0]
    check_differentiable(primals, (k,), comp.fn)
    _float_or_array("hessian/hvp", primals, (k,))
    d = comp.get(primals, Request("fwd-rev", (k,), len(vs), (0,)))
    if d.result[0] != "s":
        raise DifferentiationError("hessian needs a function returning a float scalar",
                                   caller_loc())
    flat = flat_args(d, primals)
    x_i = d.flat_active[0]
    x = flat[x_i]
    is_array = isinstance(x, np.ndarray)
    shadow = [np.zeros_like(x)] if is_array else []
    seed = [d.result[1].np_dtype.type(1.0)]
    order = (f"hvp(f)(*args, v): the vector v, the last argument, has shape {{t}} but "
             f"{arg_name(comp.fn, k).split(' of ')[0]} of {comp.fn.__name__}() has shape {{p}} "
             "(pass the point first and the vector last: hvp(f)(x, v))")
    tans = [as_tangent(v, x, order) for v in vs]
    shadow_tans = [np.zeros_like(x) for _ in vs] if is_array else []
    d.check_distinct(flat)
    out = d.call(flat + shadow + seed + tans + shadow_tans)
    if is_array:
        return shadow_tans
    lanes = out[len(out) - len(vs):]
    return [float(t) for t in lanes]


def hessian(fn: Callable[..., Any], argnums: int = 0, **options: Any) -> Callable[..., Any]:
    """The Hessian of a scalar function, by forward mode over reverse mode.

    Computes the matrix of second derivatives with respect to one argument, as Hessian-vector
    products (``hvp``) along the basis directions, up to 4 per compiled pass.  For an
    argument of shape ``x.shape`` the Hessian has shape ``x.shape + x.shape`` (a float for a
    float argument).

    Args:
        fn: A function returning a real float scalar (plain Python and NumPy).
        argnums: The position of the argument to differentiate with respect to (one int,
            default 0; negative counts from the end); a float or a float array.
        **options: Compilation options, as for ``grad``: ``fastmath`` (bool: float
            operations may be reassociated), ``boundscheck`` (bool, default True:
            out-of-range indices raise ``IndexError``), ``disable`` (pass, stage and
            reverse-mode optimization names to switch off, for ablations), ``memory_limit``
            (bytes for the reverse-mode tape and saved loop states: loops are checkpointed
            to stay under it; ``ZymaseMemoryError`` when one state and one iteration do not
            fit), ``backend`` (``"cpu"``, ``"interp"``, ``"xla"`` or a registered backend),
            ``cache`` (keep the machine code on disk), ``deterministic`` and ``parallel``
            (how parallel loops and large array expressions run).  An unknown name raises
            ``TypeError``.

    Returns:
        A function taking ``fn``'s arguments (positional or by keyword) and returning the
        Hessian, of shape ``x.shape + x.shape``.

    Raises:
        DifferentiationError: When called: ``argnums`` is a tuple, the argument is not a
            float or a float array, or ``fn`` does not return a float scalar.

    Examples:
        >>> import numpy as np, zymase
        >>> def f(x):
        ...     return (x ** 3).sum() + x[0] * x[1]
        >>> zymase.hessian(f)(np.array([1.0, 2.0]))
        array([[ 6.,  1.],
               [ 1., 12.]])
    """
    comp = shared(fn, options_of(options))

    def wrapper(*args, **kwargs):
        args = call_arguments(comp.fn, args, kwargs)
        try:
            if not isinstance(argnums, int):
                raise DifferentiationError("hessian and hvp take one argnums (an int)",
                                           caller_loc())
            k = normalize_argnums(argnums, len(args), comp.fn)[0]
            check_differentiable(args, (k,), comp.fn)
            _float_or_array("hessian", args, (k,))
            x = args[k]
            cols = []
            for idx, run in _chunks(x, args):
                cols += _hvp(comp, run, k, [_basis(x, j) for j in idx])
            n = int(np.size(x))
            if not isinstance(x, np.ndarray):
                return cols[0]
            h = np.stack([np.asarray(c).reshape(-1) for c in cols], axis=1)
            return h.reshape(np.shape(x) + np.shape(x)).swapaxes(0, 0) if n else h
        except ZymaseError as e:
            raise at_caller(e) from None

    wrapper.__zymase_transform__ = "zymase.hessian"
    wrapper.__wrapped__ = fn  # (the transform keeps fn alive: a lambda has no other owner)
    return wrapper


def flatten_like(desc, x):
    if desc[0] in ("s", "a"):
        return [x]
    if desc[0] == "t":
        return [v for sub, item in zip(desc[1], x) for v in flatten_like(sub, item)]
    if desc[0] == "r":
        return [v for k, sub in desc[2].items() for v in flatten_like(sub, getattr(x, k))]
    return []


def inexact_type(t):
    return (t.dtype if hasattr(t, "dtype") else t).is_inexact


def result_leaves(desc, out=None):
    """Flat (kind, type) of a result description (kind "s" scalar, "a" array)."""
    if out is None:
        out = []
    if desc[0] == "s":
        out.append(("s", desc[1]))
    elif desc[0] == "a":
        out.append(("a", desc[1]))
    elif desc[0] == "t":
        for x in desc[1]:
            result_leaves(x, out)
    elif desc[0] == "r":
        for x in desc[2].values():
            result_leaves(x, out)
    return out
