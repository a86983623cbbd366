"""The user-facing transforms.  ``jit`` is here; the derivative transforms build on it.

    >>> import zymase
    >>> @zymase.jit
    ... def f(x, n):
    ...     s = 0.0
    ...     for i in range(1, n + 1):
    ...         s += x ** i / i
    ...     return s
    >>> round(f(0.5, 30), 6)      # log(2), to 30 terms
    0.693147
"""

from __future__ import annotations

import dataclasses
import functools
import sys
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from ..backends.registry import get_backend, register_backend
from ..backends.xla import backend as xla_backend
from ..driver.cache import shared
from ..driver.pipeline import check_disable
from ..driver.compile import compile_derivative, compile_specialization
from ..driver.request import PRIMAL, Request
from ..driver.signature import arg_key, arrays_disjoint, only_scalars, rebuild_result
from ..errors import ZymaseError, at_caller
from ..frontend.args import arg_name, call_arguments, with_arguments
from ..frontend.source import python_function
from ..ir.printer import print_module
from ..options import Options, backend_name
from .grad import grad, jvp
from .jacobians import hvp
from .values import located, retrying

if TYPE_CHECKING:
    from ..backends.base import Backend
    from ..driver.compiled import Specialization


class JitFunction(functools.partial):
    """A Python function compiled to native code on its first call for each argument signature.

    What ``zymase.jit`` returns; call it like the original function (positional and keyword
    arguments, defaults).  A signature is the compile-time type of every argument: the Python
    scalar type, an array's dtype, rank and contiguity, a container's structure; a new one
    compiles a new specialization, kept for later calls.  On the CPU backend calls go straight
    to machine code (``backends/cpu/dispatch.py``): the newest specialization checks its own
    argument types (and the globals its code read) in C and falls back to the general path for
    anything else.  Specializations are kept in the process's one cache
    (``driver.cache.shared``), per function and options, shared with the other transforms of
    the function.  Instances pickle as the original function and its options.

    Args:
        fn: The plain Python function to compile (its source must be readable: a ``def`` in
            a file, a notebook cell or a doctest).
        options: The compilation options (a ``zymase.options.Options``; ``jit`` builds it
            from its keyword arguments).

    Attributes:
        py_func: The original Python function.
        options: The ``Options`` it was compiled with.

    Examples:
        >>> import numpy as np, zymase
        >>> def norm2(x):
        ...     return (x * x).sum()
        >>> f = zymase.jit(norm2)
        >>> isinstance(f, zymase.JitFunction), f.py_func is norm2, f.options.fastmath
        (True, True, False)
        >>> print(f(np.array([3.0, 4.0])))
        25.0
    """

    def __new__(cls, fn: Callable[..., Any], options: Options) -> JitFunction:
        holder = {}
        disp = get_backend(options.backend).dispatcher(
            lambda *args, **kwargs: holder["self"]._call(args, kwargs))
        self = super().__new__(cls, disp.builtin)
        holder["self"] = self
        self._dispatcher = disp
        return self

    def __init__(self, fn: Callable[..., Any], options: Options) -> None:
        self.py_func = python_function(fn)
        self.__zymase_fn__ = self.py_func
        self.options = options
        self._cache = shared(self.py_func, options)
        functools.update_wrapper(self, self.py_func)

    def __repr__(self):
        return f"<zymase.jit {self.py_func.__qualname__}>"

    def __reduce__(self):
        return (jit_from_options, (self.py_func, self.options))

    def _call(self, args, kwargs=None):
        """The general path: any argument types, keywords and defaults; compiles what is
        missing."""
        return with_arguments(self.py_func, args, kwargs, self.run)

    def run(self, args: Sequence[Any]) -> Any:
        """Run on one value per parameter (keywords and defaults already bound), compiling the
        specialization for their types if it is missing; returns the function's result."""
        try:
            key = tuple(arg_key(a, arg_name(self.py_func, k)) for k, a in enumerate(args))
        except ZymaseError as e:
            raise at_caller(e) from None
        # arrays inside containers count too
        noalias = only_scalars(args) or arrays_disjoint(args)

        def attempt(args):
            spec = self._cache.find((key, PRIMAL, noalias))
            if spec is None:
                spec = self._compile(args, key, noalias)
            elif spec.fast is not None and \
                    self._dispatcher.current != ((key, noalias), id(spec.captures)):
                self._install(key, noalias, spec)
            return spec(args)

        return retrying(self.py_func, attempt, args, self.options)

    def _compile(self, args, key, noalias):
        try:
            spec = self._cache.primal(args, (key, PRIMAL, noalias), noalias)
        except ZymaseError as e:
            raise at_caller(e) from None
        if spec.fast is not None:
            self._install(key, noalias, spec)
        return spec

    def _install(self, key, noalias, spec) -> None:
        self._dispatcher.install((key, noalias), spec.fast, _raiser(spec), spec.captures,
                                 _boxer(spec))

    def specialization(self, *args: Any) -> Specialization:
        """The compiled specialization for these arguments, one per parameter (compiling it
        if needed): its ``result`` describes the result type, ``module`` holds its IR."""
        key = tuple(arg_key(a) for a in args)
        noalias = arrays_disjoint(args)
        return self._cache.find((key, PRIMAL, noalias)) or self._compile(args, key, noalias)


def _raiser(spec):
    def raise_error(err_id, a, b):
        raise spec.entry.error(err_id, a, b).with_traceback(None)
    return raise_error


def _boxer(spec):
    """What the fast entry calls for results it does not box itself (views, constants, empty
    arrays): the general path's decoding of the result slots it filled."""
    entry, desc = spec.entry, spec.result

    def box(address, *objs):
        return rebuild_result(desc, entry.decode_at(address, objs))
    return box


def jit_from_options(fn, options):
    return JitFunction(fn, options)


EXPLAINED = {"jit": "primal", "grad": "rev", "jvp": "fwd", "vjp": "rev-split", "hvp": "fwd-rev"}


@located
def explain(fn: Callable[..., Any], *args: Any, stages: Collection[str] | None = None,
            llvm: bool = False, file: TextIO | None = None, transform: str = "jit",
            argnums: int | tuple[int, ...] = 0, backend: str | Backend | None = None) -> str:
    """Print (and return) the IR of a function for given arguments after each compiler stage.

    Compiles ``fn`` (or one of its derivatives) for the types of ``args`` and shows the IR
    after the frontend, after every optimization pass and after each differentiation stage,
    every op located at the user's ``file:line:col``.  Nothing is run (except with
    ``backend="xla"``, below); the compiled code is not kept.  ``ZYMASE_DUMP=after:licm,reverse``
    (or ``all``) prints the same during any compilation.

    Args:
        fn: The function: plain Python or a ``zymase.jit`` function (whose options are used).
        *args: Example arguments, one per positional parameter (defaults fill the rest): only
            their types matter.
        stages: Stage names to show (default: all): ``"frontend"``, each pass name
            (``"inline"``, ``"canonicalize"``, ``"cse"``, ``"fuse"``, ``"licm"``,
            ``"boundscheck"``, ``"storefwd"``, ``"dce"``), ``"forward"``, ``"reverse"``,
            ``"split"``, ``"lifetime"``, ``"llvm"``, ``"xla"`` (the stages of
            ``zymase/driver/pipeline.py``).
        llvm: If True, add the LLVM IR the CPU backend generates (stage ``"llvm"``).
        file: Where to print (default ``sys.stdout``); the text is returned either way.
        transform: What is compiled: ``"jit"`` (the function itself, the default),
            ``"grad"`` (reverse mode), ``"jvp"`` (forward mode), ``"vjp"`` (reverse mode
            split into a forward and an adjoint function) or ``"hvp"`` (forward over
            reverse).
        argnums: The argument(s) the derivative is taken with respect to (an int or a tuple
            of ints; ignored for ``transform="jit"``).
        backend: The backend to compile for (default: ``fn``'s, else ``"cpu"``).
            ``"xla"`` adds the stage ``"xla"``: how each loop was lowered (raised to array
            operations, or kept as a ``lax.fori_loop`` and why) and the StableHLO XLA
            compiles; for it the transform runs once, on copies of the arguments.

    Returns:
        The printed text: one ``// ---- after <stage> ----`` section per stage.

    Raises:
        ValueError: An unknown ``transform``.
        UnsupportedError: ``fn`` uses Python or NumPy that zymase does not compile.

    Examples:
        >>> import io, zymase
        >>> def f(x):
        ...     return 2.0 * x + 1.0
        >>> text = zymase.explain(f, 3.0, stages=["frontend"])  # doctest: +ELLIPSIS
        // ---- after frontend ----
        func.func @f(%x0: f64) -> (f64) {...} {
        ...arith.mulf...
        >>> text = zymase.explain(f, 3.0, transform="grad", file=io.StringIO())
        >>> "// ---- after reverse ----" in text, "func.func @f.grad" in text
        (True, True)
    """
    if transform not in EXPLAINED:
        raise ValueError(f"transform must be one of {', '.join(EXPLAINED)}, not {transform!r}")
    options = fn.options if isinstance(fn, JitFunction) else Options()
    if backend is not None:
        options = dataclasses.replace(options, backend=backend_name(backend))
    py = python_function(fn)
    args = call_arguments(py, args)
    out = []

    def dump(stage, module):
        if stage == "llvm" and not llvm:
            return
        if stages is not None and stage not in stages:
            return
        text = module if isinstance(module, str) else print_module(module, locs=True)
        out.append(f"// ---- after {stage} ----\n{text}")

    try:
        if transform == "jit":
            compile_specialization(py, args, options, arrays_disjoint(args), dump=dump)
        else:
            nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
            req = Request(EXPLAINED[transform], tuple(k % len(args) for k in nums),
                          primal=transform != "grad")
            compile_derivative(py, args, req, options, dump=dump)
        if options.backend == "xla" and (stages is None or "xla" in stages):
            listing = _xla_listing(py, args, options, transform, argnums)
            out.append(f"// ---- after xla ----\n{listing}")
    except ZymaseError as e:
        raise e.with_traceback(None) from None
    text = "\n".join(out)
    print(text, file=file or sys.stdout)
    return text


def _xla_listing(py, args, options, transform, argnums) -> str:
    """Run the transform once on copies of ``args`` with the XLA backend; what it compiled."""
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    kw = dict(fastmath=options.fastmath, boundscheck=options.boundscheck, backend="xla")
    with xla_backend.recording() as seen:
        if transform == "jit":
            JitFunction(py, options)(*copies)
        elif transform == "grad":
            grad(py, argnums=argnums, **kw)(*copies)
        elif transform in ("jvp", "hvp"):
            nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
            ones = [np.ones_like(a) if isinstance(a, np.ndarray) else 1.0 for a in copies]
            if transform == "jvp":
                tangents = [t if k in nums else None for k, t in enumerate(ones)]
                jvp(py, copies, tangents, **kw)
            else:
                hvp(py, argnums=nums[0], **kw)(*copies, ones[nums[0]])
        else:
            raise ValueError(f"explain(backend='xla') shows transform='jit', 'grad', 'jvp' "
                             f"or 'hvp', not {transform!r}")
    ex, flat, globals_ = seen[-1]
    return ex.listing(flat, globals_)


def jit(fn: Callable[..., Any] | None = None, *, fastmath: bool = False, boundscheck: bool = True,
        cache: bool = False, disable: Iterable[str] = (), backend: str | Backend | None = None,
        deterministic: bool = False, parallel: bool = False, in_shardings: Any = None,
        out_shardings: Any = None) -> JitFunction | Callable[[Callable[..., Any]], JitFunction]:
    """Compile a Python function to native code, one specialization per argument signature.

    Use it bare (``@zymase.jit``) or with options (``@zymase.jit(fastmath=True)``).  The
    function is compiled on its first call for each signature (the types, dtypes and ranks of
    its arguments) and runs as machine code afterwards; plain Python and NumPy inside
    (loops, indexing, array expressions, ufuncs, tuples, dataclasses, calls of other plain
    functions).  Every derivative transform (``zymase.grad``, ...) accepts a ``jit``
    function too: it differentiates the Python function behind it, with the transform's own
    options.

    Args:
        fn: The function to compile.  None (``@zymase.jit(...)`` with options) returns a
            decorator.
        fastmath: Let float operations be reassociated and contracted (reductions vectorize;
            results may differ in the last bits).
        boundscheck: Out-of-range indices raise ``IndexError`` (the default).  The compiler
            removes the checks it proves unnecessary; False removes them all (an
            out-of-range index is then undefined behaviour).
        cache: Keep the machine code on disk across processes (``$ZYMASE_CACHE_DIR``,
            default ``~/.cache/zymase``), keyed by source, argument types, options and
            versions.
        disable: Names of compiler parts to switch off, for ablations: optimization passes
            (``"inline"``, ``"canonicalize"``, ``"cse"``, ``"fuse"``, ``"licm"``,
            ``"boundscheck"``, ``"storefwd"``, ``"dce"``), the ``"optimize"`` stage as a
            whole, ``"vector-math"`` (CPU: no vectorized libm).
        backend: Where the code runs: ``"cpu"`` (machine code; the default, or
            ``$ZYMASE_BACKEND``), ``"interp"`` (the same optimized IR in an interpreter),
            ``"xla"`` (through JAX), a name registered with
            ``zymase.backends.register_backend``, or a ``Backend`` instance (registered
            under its name).
        deterministic: ``prange`` loops give bit-identical results for any number of threads
            (reductions combine fixed blocks in order; a loop needing float atomic adds runs
            serially).
        parallel: NumPy array expressions, ufuncs and reductions over large arrays (above
            about 16,000 elements) run on all threads too; ``prange`` loops run in parallel
            either way.
        in_shardings: ``backend="xla"`` only, as in ``jax.jit``: a ``jax.sharding.Sharding``
            for every array argument, or a tuple with one (or None) per argument; arguments
            are placed so before the call.
        out_shardings: ``backend="xla"`` only: the same for the results, placed after the
            call.

    Returns:
        A ``JitFunction`` (callable like ``fn``), or with ``fn=None`` a decorator that makes
        one.

    Raises:
        ValueError: An unknown ``backend`` name, or shardings without ``backend="xla"``.
        UnsupportedError: At the first call, ``fn`` uses Python or NumPy that zymase does not
            compile (the message names the line).

    Examples:
        >>> import numpy as np, zymase
        >>> @zymase.jit
        ... def f(x, n):
        ...     s = 0.0
        ...     for i in range(1, n + 1):
        ...         s += x ** i / i
        ...     return s
        >>> round(f(0.5, 30), 10)                 # 30 terms of the series of log(2)
        0.6931471805
        >>> @zymase.jit(fastmath=True, boundscheck=False)
        ... def dot(a, b):
        ...     return (a * b).sum()
        >>> print(dot(np.array([1.0, 2.0]), np.array([3.0, 4.0])))
        11.0
    """
    if backend is not None and not isinstance(backend, str):
        register_backend(backend)
    if isinstance(disable, str):
        raise TypeError(f"disable= takes a set of names, e.g. disable={{{disable!r}}}")
    options = Options(fastmath=fastmath, boundscheck=boundscheck, cache=cache,
                      disable=frozenset(disable), backend=backend_name(backend),
                      deterministic=bool(deterministic), parallel=bool(parallel),
                      in_shardings=in_shardings, out_shardings=out_shardings)
    # an unknown backend or part to disable fails here, not at the first call
    check_disable(options.disable, get_backend(options.backend))
    if fn is None:
        return lambda f: JitFunction(f, options)
    return JitFunction(fn, options)
