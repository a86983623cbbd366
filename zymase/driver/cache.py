"""The one cache of compiled specializations in the process, for every transform.

A ``Specializations`` holds what one function was compiled to under one ``Options`` (which
includes the backend), keyed by ``(argument signature, Request, noalias)``; ``get`` compiles
what is missing, once, under a lock.  ``jit`` and ``grad`` objects own one each; ``shared(fn,
options)`` gives the one kept per function (while it lives) for calls that get the function
anew each time (``jvp``, ``vjp``, ``autodiff`` and the primal values they need).  Compiled code
kept on disk across processes is in ``disk_cache.py``.
"""

from __future__ import annotations

import threading
import weakref

from ..frontend.source import python_function
from ..options import Options
from .compile import compile_derivative, compile_specialization
from .request import PRIMAL, Request
from .signature import arrays_disjoint, only_scalars, signature_key


class Specializations:
    """Compiled specializations of ``fn`` under ``options`` (see the module docstring)."""

    def __init__(self, fn, options: Options):
        self.fn = python_function(fn)
        self.options = options
        self.compiled: dict = {}
        self.lock = threading.Lock()

    def key(self, args, req: Request = PRIMAL, noalias: bool | None = None) -> tuple:
        return (signature_key(self.fn, args), req, noalias)

    def get(self, args, req: Request, key=None):
        """The derivative ``req`` for the types of ``args`` (compiled on first request)."""
        key = key or self.key(args, req)
        d = self.compiled.get(key)
        if d is None:
            with self.lock:
                d = self.compiled.get(key)
                if d is None:
                    d = compile_derivative(self.fn, args, req, self.options, key=key[0])
                    self.compiled[key] = d
        return d

    def primal(self, args, key=None, noalias: bool | None = None):
        """The primal's specialization for ``args``; ``noalias`` (default: whether the arrays
        are disjoint) lets the compiler assume that no two arrays overlap."""
        if noalias is None:
            noalias = only_scalars(args) or arrays_disjoint(args)
        key = key or self.key(args, PRIMAL, noalias)
        spec = self.compiled.get(key)
        if spec is None:
            with self.lock:
                spec = self.compiled.get(key)
                if spec is None:
                    spec = compile_specialization(self.fn, args, self.options, noalias,
                                                  key=key[0])
                    self.compiled[key] = spec
        return spec


_SHARED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_SHARED_LOCK = threading.Lock()


def shared(fn, options: Options) -> Specializations:
    """The specializations kept for ``fn`` and ``options`` while ``fn`` lives (a function that
    cannot be weakly referenced gets a fresh, unshared one)."""
    fn = python_function(fn)
    with _SHARED_LOCK:
        try:
            per_fn = _SHARED.setdefault(fn, {})
        except TypeError:
            return Specializations(fn, options)
        found = per_fn.get(options)
        if found is None:
            found = per_fn[options] = Specializations(fn, options)
        return found
