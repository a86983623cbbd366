"""``vmap``: JAX's vmap for plain Python functions, compiled as a parallel loop over the batch.

``vmap(f, in_axes, out_axes)(*args)`` writes (for each structure of ``f``'s result, found by
compiling ``f`` for one example) a function that runs ``f`` on every example in a ``prange``
loop and stores each result in its row of the output, and compiles that with ``jit``::

    def batched(a0, a1):                    # in_axes=(0, None)
        out = np.empty((n,) + shape_of_one_result)
        for b in prange(n):
            out[b] = f(a0[b], a1)
        return out

So the examples run on all cores, and ``f`` is compiled once, inlined into the loop.
"""

from __future__ import annotations

import inspect
import itertools
import linecache
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import ZymaseTypeError, ZymaseValueError, caller_loc
from ..frontend.args import arg_name, call_arguments
from ..frontend.source import python_function
from ..lang import prange
from .grad import grad
from .jacobians import jacrev
from .jit import jit
from .values import located

_COUNTER = itertools.count()


def vmap(fn: Callable[..., Any], in_axes: int | None | Sequence[int | None] = 0,
         out_axes: int = 0, **options: Any) -> Callable[..., Any]:
    """Map a function over an axis of its arguments, the examples running in parallel.

    ``vmap(fn)(*args)`` runs ``fn`` on every example (every index along the mapped axis of
    the mapped arguments) and stacks the results along a new batch axis.  ``fn`` is compiled
    once for one example and inlined into a ``prange`` loop over the examples, compiled with
    ``jit``, so the examples run on all threads (``zymase.set_num_threads``).

    ``fn`` may also be ``zymase.grad(f, argnums)`` or ``zymase.value_and_grad(f, argnums)``:
    per-example gradients, each example's gradient with respect to the shared arguments too
    (one reverse pass over the gradient of ``sum_b f(example b)``, its loop over the examples
    parallel, every differentiated shared argument copied once per example); or
    ``zymase.jacrev(f, argnums)``: per-example Jacobians (``f`` returns a number or a 1-D
    array).  Other transforms (``hessian``, ``hvp``, ...) cannot be batched yet.

    Args:
        fn: A plain Python function (or a ``jit`` one) returning a number, an array or a tuple
            of them; or ``zymase.grad``, ``zymase.value_and_grad`` or ``zymase.jacrev`` of
            one (``has_aux=True`` is not supported).
        in_axes: For each positional argument, the axis that holds the batch, or None for an
            argument every example shares; one int (or None) applies to every argument.  The
            mapped axes must have the same length, and at least one argument is mapped
            (mapped arguments are arrays).
        out_axes: Where the batch axis goes in each result (0, the default: first; -1:
            last).  For ``vmap(grad(...))`` it applies to every gradient.
        **options: ``jit``'s options for the batched function: ``fastmath``,
            ``boundscheck``, ``cache``, ``disable``, ``backend``, ``deterministic``,
            ``parallel``; for a batched ``grad`` / ``jacrev`` they are added to the
            transform's own options (``memory_limit`` too).

    Returns:
        A function taking the arguments of ``fn`` (positional) with the batch along
        ``in_axes`` and returning the stacked results: an array with the batch along
        ``out_axes`` (a tuple of them for a tuple result; for ``value_and_grad``,
        ``(values, gradients)``).

    Raises:
        ZymaseTypeError: ``fn`` is not a function or is another transform, an ``in_axes``
            entry is not an int or None, or ``fn`` returns something other than numbers,
            arrays and tuples of them.
        ZymaseValueError: ``in_axes`` has the wrong length, names an axis an argument lacks,
            maps nothing or axes of different lengths, or ``out_axes`` is not an axis of a
            result (a ``ValueError``, from ``zymase.errors``).

    Examples:
        >>> import numpy as np, zymase
        >>> def scale(a, x):
        ...     return a * x
        >>> xs = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        >>> zymase.vmap(scale, in_axes=(None, 0))(2.0, xs)
        array([[ 2.,  4.],
               [ 6.,  8.],
               [10., 12.]])
        >>> zymase.vmap(scale, in_axes=(None, 0), out_axes=1)(2.0, xs)
        array([[ 2.,  6., 10.],
               [ 4.,  8., 12.]])

        Per-example gradients:

        >>> def loss(w, x):
        ...     return (w * x).sum() ** 2
        >>> zymase.vmap(zymase.grad(loss), in_axes=(None, 0))(np.array([1.0, -1.0]), xs)
        array([[ -2.,  -4.],
               [ -6.,  -8.],
               [-10., -12.]])
    """
    spec = getattr(fn, "__zymase_grad__", None)
    if spec is not None:
        return _vmap_grad(fn, spec, in_axes, out_axes, options)
    jac = getattr(fn, "__zymase_jacrev__", None)
    if jac is not None:
        return _vmap_jacrev(fn, jac, in_axes, out_axes, options)
    transform = getattr(fn, "__zymase_transform__", None)
    if transform is not None:
        raise ZymaseTypeError(f"zymase.vmap of what `{transform}` returned is not supported: "
                              "vmap takes a plain Python function, `zymase.grad`, "
                              "`zymase.value_and_grad` or `zymase.jacrev` of one (for two "
                              "batch axes, vmap a function that loops over the inner one)",
                              caller_loc())
    if not callable(fn):
        raise ZymaseTypeError(f"zymase.vmap takes a function, not {type(fn).__name__} "
                              f"{fn!r}"[:200], caller_loc())
    py = python_function(fn)
    compiled: dict = {}

    @located
    def batched(*args):
        args, axes = _bound(py, args, in_axes)
        one = jit(py, **options).specialization(*_example(args, axes))
        key = (axes, _structure(one.result), out_axes)
        g = compiled.get(key)
        if g is None:
            g = compiled[key] = jit(_write(py, len(args), axes, key[1], out_axes), **options)
        return g(*args)

    batched.__name__ = f"vmap({getattr(fn, '__name__', 'f')})"
    batched.__wrapped__ = fn
    batched.__zymase_transform__ = "zymase.vmap"
    return batched


def batched_function(py, axes, result_desc):
    """The plain Python function that ``vmap`` compiles: ``py`` on every example of the
    arguments with an axis in ``axes`` (None: shared), results stacked along axis 0;
    ``result_desc``: ``py``'s result (``Specialization.result``)."""
    return _write(py, len(axes), tuple(axes), _structure(result_desc), 0)


def _bound(py, args, in_axes):
    """One argument per parameter of ``py`` (defaults filled in, as constants: no axis) and
    the axis each is mapped over."""
    axes = _axes(in_axes, args, py)
    full = call_arguments(python_function(py), args)
    return full, axes + (None,) * (len(full) - len(args))


def _axes(in_axes, args, py) -> tuple:
    axes = tuple(in_axes) if isinstance(in_axes, (tuple, list)) else (in_axes,) * len(args)
    if len(axes) != len(args):
        raise ZymaseValueError(f"vmap: in_axes has {len(axes)} entries for {len(args)} "
                               "arguments")
    sizes = set()
    for k, (a, ax) in enumerate(zip(args, axes)):
        if ax is None:
            continue
        if isinstance(ax, bool) or not isinstance(ax, int):
            raise ZymaseTypeError(f"vmap: in_axes entries are ints or None, not {ax!r}")
        if not isinstance(a, np.ndarray) or not -a.ndim <= ax < a.ndim:
            what = (f"has shape {a.shape}" if isinstance(a, np.ndarray) else
                    f"is a {type(a).__name__}, not an array")
            raise ZymaseValueError(f"vmap: {arg_name(python_function(py), k)} {what}: "
                                   f"it has no axis {ax} to map over (in_axes)")
        sizes.add(a.shape[ax])
    if not sizes:
        raise ZymaseValueError("vmap: in_axes maps no argument")
    if len(sizes) > 1:
        raise ZymaseValueError(f"vmap: the mapped axes have different sizes {sorted(sizes)}")
    return tuple(None if ax is None else ax % a.ndim for a, ax in zip(args, axes))


def _example(args, axes):
    return [a if ax is None else np.take(a, 0, axis=ax) for a, ax in zip(args, axes)]


def _structure(result):
    """('s', dtype) for a number, ('a', ndim) for an array, ('t', parts) for a tuple of them."""
    kind = result[0]
    if kind == "a":
        return ("a", result[1].ndim)
    if kind == "s":
        return ("s", result[1].np_dtype.name)
    if kind == "t" and all(p[0] in ("a", "s") for p in result[1]):
        return ("t", tuple(_structure(p) for p in result[1]))
    raise ZymaseTypeError("vmap: the function must return a number, an array or a tuple of them")


def _call_text(py, items: list[str]) -> str:
    """``_f(items...)``, the keyword-only parameters of ``py`` passed by name."""
    fn = python_function(py)
    names = list(inspect.signature(fn).parameters)
    positional = fn.__code__.co_argcount
    args = [it if k < positional else f"{names[k]}={it}" for k, it in enumerate(items)]
    return f"_f({', '.join(args)})"


def _write(py, nargs: int, axes, structure, out_axes):
    """The batched function's source, registered with linecache so that it compiles."""
    params = [f"a{k}" for k in range(nargs)]
    lead = next(k for k, ax in enumerate(axes) if ax is not None)

    def call(b):
        items = [p if ax is None else f"{p}[{':, ' * ax}{b}]" for p, ax in zip(params, axes)]
        return _call_text(py, items)

    parts = structure[1] if structure[0] == "t" else (structure,)
    outs = [f"out{j}" for j in range(len(parts))]
    lines = [f"def batched({', '.join(params)}):",
             f"    n = a{lead}.shape[{axes[lead]}]",
             f"    first = {call(0)}"]
    first = [f"first[{j}]" for j in range(len(parts))] if structure[0] == "t" else ["first"]
    for o, f0, p in zip(outs, first, parts):
        if p[0] == "a":
            lines.append(f"    {o} = np.empty((n,) + {f0}.shape, dtype={f0}.dtype)")
        else:
            lines.append(f"    {o} = np.empty(n, dtype=np.{p[1]})")
        lines.append(f"    {o}[0] = {f0}")
    lines.append("    for b in prange(1, n):")
    if structure[0] == "t":
        lines.append(f"        r = {call('b')}")
        lines += [f"        {o}[b] = r[{j}]" for j, o in enumerate(outs)]
    else:
        lines.append(f"        {outs[0]}[b] = {call('b')}")
    moved = [_move(o, p, out_axes) for o, p in zip(outs, parts)]
    lines.append("    return " + (f"({', '.join(moved)},)" if structure[0] == "t" else moved[0]))
    text = "\n".join(lines) + "\n"
    name = f"<zymase.vmap-{next(_COUNTER)}>"
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    namespace = {"_f": py, "np": np, "prange": prange}
    exec(compile(text, name, "exec"), namespace)
    return namespace["batched"]


def _move(out: str, part, out_axes) -> str:
    ndim = 1 + (part[1] if part[0] == "a" else 0)
    if isinstance(out_axes, bool) or not isinstance(out_axes, int) or \
            not -ndim <= out_axes < ndim:
        raise ZymaseValueError(f"vmap: out_axes={out_axes!r} is not an axis of a result with "
                               f"{ndim} dimensions")
    k = out_axes % ndim
    if k == 0:
        return out
    perm = list(range(1, ndim))
    perm.insert(k, 0)
    return f"{out}.transpose({', '.join(map(str, perm))})"


def _vmap_grad(fn, spec, in_axes, out_axes, options):
    """``vmap(grad(f))``: the gradient of ``sum_b f(example b)`` with respect to the batched
    arguments, each differentiated shared argument first copied once per example."""
    if spec.has_aux:
        raise ZymaseTypeError("zymase.vmap of a gradient with has_aux=True is not supported: "
                              "vmap the gradient without the aux value", caller_loc())
    nums = (spec.argnums,) if isinstance(spec.argnums, int) else tuple(spec.argnums)
    py = python_function(spec.fn)
    opts = {**spec.options, **options}
    compiled: dict = {}
    kept = threading.local()  # the copies of shared arguments, refilled at each call

    @located
    def batched(*args):
        args, axes = _bound(py, args, in_axes)
        ks = tuple(k % len(args) for k in nums)
        n, new, batch = _batched_args(args, axes, ks, kept)
        key = (batch, ks)
        g = compiled.get(key)
        if g is None:
            summed = _write_sum(py, len(args), batch)
            g = compiled[key] = grad(summed, argnums=ks, optimize_before_ad=spec.optimize_before_ad,
                                     **opts)
        values = np.empty(n)
        grads = g(*new, values)
        grads = tuple(_move_result(x, out_axes) for x in grads)
        out = grads[0] if isinstance(spec.argnums, int) else grads
        return (_move_result(values, out_axes), out) if spec.with_value else out

    batched.__name__ = f"vmap({getattr(fn, '__name__', 'f')})"
    batched.__wrapped__ = fn
    batched.__zymase_transform__ = "zymase.vmap"
    return batched


def _batched_args(args, axes, ks, kept):
    """The arguments with the batch first: batched ones moved there, differentiated shared
    ones copied once per example."""
    n = next(a.shape[ax] for a, ax in zip(args, axes) if ax is not None)
    new = list(args)
    for k, (a, ax) in enumerate(zip(args, axes)):
        if ax is not None:
            new[k] = np.moveaxis(a, ax, 0)
        elif k in ks:  # a copy per example: each gets its own derivative
            new[k] = _copies(kept, k, np.asarray(a), n)
    batch = tuple(ax is not None or k in ks for k, ax in enumerate(axes))
    return n, new, batch


def _vmap_jacrev(fn, jac, in_axes, out_axes, options):
    """``vmap(jacrev(f))``: the Jacobian of ``sum_b f(example b)`` with respect to the batched
    arguments (rows per output element, examples on the next axis), moved to batch-first."""
    py, argnums, jopts = jac
    py = python_function(py)
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    opts = {**jopts, **options}
    compiled: dict = {}
    kept = threading.local()

    @located
    def batched(*args):
        args, axes = _bound(py, args, in_axes)
        ks = tuple(k % len(args) for k in nums)
        one = jit(py, **opts)(*_example(args, axes))
        if isinstance(one, np.ndarray) and one.ndim == 1:
            size = one.shape[0]
        elif isinstance(one, (float, np.floating)):
            size = None
        else:
            raise ZymaseTypeError("zymase.vmap of jacrev: the function must return a number "
                                  "or a 1-D array")
        n, new, batch = _batched_args(args, axes, ks, kept)
        key = (batch, ks, size is None)
        g = compiled.get(key)
        if g is None:
            summed = _write_sum(py, len(args), batch, vector=size is not None)
            g = compiled[key] = jacrev(summed, argnums=ks, **opts)
        extra = (np.empty(n),) if size is None else (size,)
        jacs = g(*new, *extra)  # (a tuple: ks is one)
        if size is not None:  # (out, batch, ...) -> (batch, out, ...)
            jacs = tuple(np.moveaxis(j, 1, 0) for j in jacs)
        jacs = tuple(_move_result(j, out_axes) for j in jacs)
        return jacs if isinstance(argnums, tuple) else jacs[0]

    batched.__name__ = f"vmap({getattr(fn, '__name__', 'f')})"
    batched.__wrapped__ = fn
    batched.__zymase_transform__ = "zymase.vmap"
    return batched


def _copies(kept, k: int, a, n: int):
    """``n`` copies of ``a`` in a buffer this thread keeps for argument ``k`` (fresh memory
    would cost a page fault per 4 KiB at every call)."""
    bufs = kept.__dict__.setdefault("bufs", {})
    buf = bufs.get(k)
    if buf is None or buf.shape != (n,) + a.shape or buf.dtype != a.dtype:
        buf = bufs[k] = np.empty((n,) + a.shape, a.dtype)
    buf[...] = a
    return buf


def _write_sum(py, nargs: int, batch, vector: bool = False):
    """``summed(a..., values)``: ``sum_b f(example b)``, each value stored in ``values``;
    ``vector``: ``summed(a..., m)``, the sum of the examples' 1-D results of length ``m``."""
    params = [f"a{k}" for k in range(nargs)]
    lead = batch.index(True)
    items = [f"{p}[b]" if bt else p for p, bt in zip(params, batch)]
    if vector:
        text = (f"def summed({', '.join(params)}, m):\n"
                "    s = np.zeros(m)\n"
                f"    for b in prange(a{lead}.shape[0]):\n"
                f"        r = {_call_text(py, items)}\n"
                "        for j in range(m):\n"
                "            s[j] += r[j]\n"
                "    return s\n")
    else:
        text = (f"def summed({', '.join(params)}, values):\n"
                "    s = 0.0\n"
                f"    for b in prange(a{lead}.shape[0]):\n"
                f"        v = {_call_text(py, items)}\n"
                "        values[b] = v\n"
                "        s += v\n"
                "    return s\n")
    name = f"<zymase.vmap-{next(_COUNTER)}>"
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    namespace = {"_f": py, "prange": prange, "np": np}
    exec(compile(text, name, "exec"), namespace)
    return namespace["summed"]


def _move_result(x, out_axes):
    if out_axes == 0 or not isinstance(x, np.ndarray):
        return x
    if isinstance(out_axes, bool) or not isinstance(out_axes, int) or \
            not -x.ndim <= out_axes < x.ndim:
        raise ZymaseValueError(f"vmap: out_axes={out_axes!r} is not an axis of a result with "
                               f"{x.ndim} dimensions")
    return np.moveaxis(x, 0, out_axes)
