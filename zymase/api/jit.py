"""The user-facing transforms.  ``jit`` is here; the derivative transforms build on it.

    >>> import zymase
    >>> @zymase.jit
    ... def f(x, n):
    ...     s = 0.0
    ...     for i in range(1, n + 1):
    ...         s += x ** i / i
    ...     return s
    >>> round(f(0.5, 30), 12)
    0.69314718056
"""

from __future__ import annotations

import dataclasses
import functools
import sys

import numpy as np

from ..backends.registry import get_backend, register_backend
from ..backends.xla import backend as xla_backend
from ..driver.cache import shared
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
from .values import retrying


class JitFunction(functools.partial):
    """A Python function compiled on first call for each argument signature.

    On the CPU backend calls go straight to machine code (``backends/cpu/dispatch.py``): the
    newest specialization checks its own argument types (and the globals its code read) in C and
    falls back to ``_call`` for anything else.  Specializations are kept in the process's one
    cache (``driver.cache.shared``), shared with every other transform of the function.
    """

    def __new__(cls, fn, options: Options):
        holder = {}
        disp = get_backend(options.backend).dispatcher(
            lambda *args, **kwargs: holder["self"]._call(args, kwargs))
        self = super().__new__(cls, disp.builtin)
        holder["self"] = self
        self._dispatcher = disp
        return self

    def __init__(self, fn, options: Options):
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

    def run(self, args):
        """Run on one value per parameter (keywords and defaults already bound)."""
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

    def specialization(self, *args):
        """The compiled specialization for these arguments, one per parameter (compiling it
        if needed)."""
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


def explain(fn, *args, stages=None, llvm: bool = False, file=None, transform: str = "jit",
            argnums=0, backend=None) -> str:
    """Print (and return) the IR of ``fn`` for these arguments after each compiler stage.

    ``transform``: what is compiled: ``"jit"`` (the function itself), ``"grad"`` (reverse mode),
    ``"jvp"`` (forward mode), ``"vjp"`` (reverse mode split in two) or ``"hvp"`` (forward over
    reverse), with respect to ``argnums``.  ``stages`` limits the output to some stage names
    (``frontend``, each pass name, ``forward``, ``reverse``, ``lifetime``: the stages of
    ``zymase/driver/pipeline.py``); ``llvm=True`` adds the LLVM IR (the CPU backend's listing).
    Locations show the user's file:line:col.  ``backend="xla"`` adds the stage ``xla``: how each
    loop was lowered (raised to array operations, or kept as a ``lax.fori_loop`` and why) and
    the StableHLO XLA compiles (the transform runs once, on copies of the arguments).

        >>> zymase.explain(f, x, n)                       # doctest: +SKIP
        // ---- after frontend ----
        func.func @f(%x0: f64, %n1: i64) -> (f64) {entry = true} {
        ...
        >>> zymase.explain(f, x, n, transform="grad", stages=["reverse"])   # doctest: +SKIP
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


def jit(fn=None, *, fastmath: bool = False, boundscheck: bool = True, cache: bool = False,
        disable=(), backend=None, deterministic: bool = False, parallel: bool = False,
        in_shardings=None, out_shardings=None):
    """Compile ``fn`` to native code, one specialization per argument-type signature.

    Use bare (``@zymase.jit``) or with options (``@zymase.jit(fastmath=True)``).  See
    ``zymase.options.Options`` for what each option does.  ``backend="interp"`` runs the same
    optimized IR in the interpreter instead of machine code (see ``zymase.backends``).
    """
    if backend is not None and not isinstance(backend, str):
        register_backend(backend)
    options = Options(fastmath=fastmath, boundscheck=boundscheck, cache=cache,
                      disable=frozenset(disable), backend=backend_name(backend),
                      deterministic=bool(deterministic), parallel=bool(parallel),
                      in_shardings=in_shardings, out_shardings=out_shardings)
    get_backend(options.backend)  # an unknown name fails here, not at the first call
    if fn is None:
        return lambda f: JitFunction(f, options)
    return JitFunction(fn, options)
