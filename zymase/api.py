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

import functools
import threading

import numpy as np

from .compiler import arrays_disjoint, compile_specialization
from .errors import ZymaseError
from .frontend.args import param_template
from .frontend.source import python_function
from .frontend.typing import type_key
from .options import Options
from .runtime.dispatch import Dispatcher

_SCALAR_KEYS = {float: "f", int: "i", bool: "b", complex: "c"}


def arg_key(x):
    """A cheap hashable key of an argument's compile-time type."""
    t = type(x)
    k = _SCALAR_KEYS.get(t)
    if k is not None:
        return k
    if t is np.ndarray:
        return (x.dtype.char, x.ndim, x.flags.c_contiguous)
    return type_key(param_template(x, "argument"))


class JitFunction(functools.partial):
    """A Python function compiled on first call for each argument signature.

    Calls go straight to machine code (see ``runtime/dispatch.py``): the newest specialization
    checks its own argument types in C and falls back to ``_call`` for anything else.
    """

    def __new__(cls, fn, options: Options):
        holder = {}
        disp = Dispatcher(lambda *args: holder["self"]._call(args))
        self = super().__new__(cls, disp.builtin)
        holder["self"] = self
        self._dispatcher = disp
        return self

    def __init__(self, fn, options: Options):
        self.py_func = python_function(fn)
        self.__zymase_fn__ = self.py_func
        self.options = options
        self._specs: dict = {}
        self._lock = threading.Lock()
        functools.update_wrapper(self, self.py_func)

    def __repr__(self):
        return f"<zymase.jit {self.py_func.__qualname__}>"

    def __reduce__(self):
        return (jit_from_options, (self.py_func, self.options))

    def _call(self, args):
        """The general path: any argument types; compiles what is missing."""
        try:
            key = tuple(arg_key(a) for a in args)
        except ZymaseError as e:
            raise e.with_traceback(None) from None
        noalias = True
        if sum(type(a) is np.ndarray for a in args) > 1:
            noalias = arrays_disjoint(args)
        spec = self._specs.get((key, noalias))
        if spec is None:
            spec = self._compile(args, key, noalias)
        elif spec.fast is not None and self._dispatcher.current != (key, noalias):
            self._dispatcher.install((key, noalias), spec.fast, _raiser(spec))
        try:
            return spec(args)
        except ZymaseError as e:
            raise e.with_traceback(None) from None

    def _compile(self, args, key, noalias):
        with self._lock:
            spec = self._specs.get((key, noalias))
            if spec is None:
                try:
                    spec = compile_specialization(self.py_func, args, self.options, noalias)
                except ZymaseError as e:
                    raise e.with_traceback(None) from None
                self._specs[(key, noalias)] = spec
                if spec.fast is not None:
                    self._dispatcher.install((key, noalias), spec.fast, _raiser(spec))
        return spec

    def specialization(self, *args):
        """The compiled specialization for these arguments (compiling it if needed)."""
        key = tuple(arg_key(a) for a in args)
        noalias = arrays_disjoint(args)
        return self._specs.get((key, noalias)) or self._compile(args, key, noalias)


def _raiser(spec):
    def raise_error(err_id, a, b):
        raise spec.entry.error(err_id, a, b).with_traceback(None)
    return raise_error


def jit_from_options(fn, options):
    return JitFunction(fn, options)


def jit(fn=None, *, fastmath: bool = False, boundscheck: bool = True, cache: bool = False,
        disable=()):
    """Compile ``fn`` to native code, one specialization per argument-type signature.

    Use bare (``@zymase.jit``) or with options (``@zymase.jit(fastmath=True)``).  See
    ``zymase.options.Options`` for what each option does.
    """
    options = Options(fastmath=fastmath, boundscheck=boundscheck, cache=cache,
                      disable=frozenset(disable))
    if fn is None:
        return lambda f: JitFunction(f, options)
    return JitFunction(fn, options)
