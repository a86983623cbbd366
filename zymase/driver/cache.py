"""The one cache of compiled code in the process, shared by every transform.

``shared(fn, options)`` gives the ``Specializations`` of one function under one ``Options``
(which include the backend), kept while the function lives (weakly: a dropped function frees
its code).  Every ``jit``, ``grad``, ``value_and_grad``, ``jvp``, ``vjp``, ``jac*``,
``hessian`` and ``autodiff`` object of a function uses it, so a second transform object of a
compiled function costs a lookup.

A ``Specializations`` is keyed by ``(argument signature, Request, noalias)``; each key holds the
variants compiled for what the code read from outside its arguments (``frontend/captures.py``):
a lookup returns the newest variant whose captures still hold, and compiles (once, under a lock)
when none does.  Compiled code kept on disk across processes is in ``disk_cache.py``.
"""

from __future__ import annotations

import threading
import weakref

from ..frontend.source import check_entry, python_function
from ..options import Options
from .compile import compile_derivative, compile_specialization
from .request import PRIMAL, Request
from .signature import arrays_disjoint, only_scalars, signature_key

MAX_VARIANTS = 8  # per key: a global switched back and forth between a few values stays cached


class Specializations:
    """Compiled specializations of ``fn`` under ``options`` (see the module docstring)."""

    def __init__(self, fn, options: Options):
        fn = python_function(fn)
        check_entry(fn)
        try:
            self._fn = weakref.ref(fn)
        except TypeError:
            self._fn = lambda: fn
        self.options = options
        self.compiled: dict = {}
        self.lock = threading.Lock()

    @property
    def fn(self):
        return self._fn()

    def key(self, args, req: Request = PRIMAL, noalias: bool | None = None) -> tuple:
        return (signature_key(self.fn, args), req, noalias)

    def find(self, key):
        """The newest variant compiled for ``key`` whose captures still hold, or None."""
        for v in self.compiled.get(key, ()):
            if v.holds():
                return v
        return None

    def _add(self, key, v) -> None:
        self.compiled[key] = [v, *self.compiled.get(key, ())][:MAX_VARIANTS]

    def get(self, args, req: Request, key=None):
        """The derivative ``req`` for the types of ``args`` (compiled on first request)."""
        key = key or self.key(args, req)
        d = self.find(key)
        if d is None:
            with self.lock:
                d = self.find(key)
                if d is None:
                    d = compile_derivative(self.fn, args, req, self.options, key=key[0])
                    self._add(key, d)
        return d

    def primal(self, args, key=None, noalias: bool | None = None):
        """The primal's specialization for ``args``; ``noalias`` (default: whether the arrays
        are disjoint) lets the compiler assume that no two arrays overlap."""
        if noalias is None:
            noalias = only_scalars(args) or arrays_disjoint(args)
        key = key or self.key(args, PRIMAL, noalias)
        spec = self.find(key)
        if spec is None:
            with self.lock:
                spec = self.find(key)
                if spec is None:
                    spec = compile_specialization(self.fn, args, self.options, noalias,
                                                  key=key[0])
                    self._add(key, spec)
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
