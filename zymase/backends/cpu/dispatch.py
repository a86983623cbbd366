"""The call path of a ``JitFunction`` without a Python frame.

A ``JitFunction`` is a ``functools.partial`` of one C builtin, the trampoline.  The trampoline
reads the *current* specialization's state ``{fast entry, fallback, raiser, guards, boxer}``
through a capsule and jumps to its fast entry (``pyentry.py``).  The fast entry checks the
argument types (and what the code read from globals: ``guards``) itself; on a mismatch it calls
``fallback(*args)`` (the general path, which may compile a new specialization and make it
current), when the body raised it calls ``raiser``, and it calls ``boxer`` for results it does
not box itself (``pybox.py``).
"""

from __future__ import annotations

import ctypes
import threading

from .abi import builtin_function
from .engine import compile_ir
from .pyentry import dispatch_ir

_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]

_LOCK = threading.Lock()
_DISPATCH = None


def _dispatch_code():
    global _DISPATCH
    with _LOCK:
        if _DISPATCH is None:
            _DISPATCH = compile_ir(dispatch_ir())
        return _DISPATCH


class State(ctypes.Structure):
    _fields_ = [("entry", ctypes.c_void_p), ("fallback", ctypes.py_object),
                ("raiser", ctypes.py_object), ("guards", ctypes.c_void_p),
                ("boxer", ctypes.py_object)]  # pybox.STATE_BOXER


class Dispatcher:
    """Owns the trampoline builtin of one JitFunction and the pointer to its current state."""

    def __init__(self, fallback):
        code = _dispatch_code()
        self._general = State(code.address("zy.general"), fallback, None)
        self._by_key: dict = {}
        self.current = None
        self._cell = ctypes.c_void_p(ctypes.addressof(self._general))
        self._capsule = _capsule_new(ctypes.addressof(self._cell), None, None)
        self._fallback = fallback
        self.builtin, self._mdef = builtin_function(code.address("zy.trampoline"), "zymase",
                                                    self._capsule)

    def install(self, key, entry_address: int, raiser, captures=None, boxer=None) -> None:
        """Make a specialization's fast entry the one tried first (``key`` names it;
        ``captures``: what its code read from outside, checked by the entry on each call;
        ``boxer(slots address, *objects)``: the results the entry does not box itself).
        ``current`` becomes ``(key, id(captures))``."""
        key = (key, id(captures))
        st = self._by_key.get(key)
        if st is None:  # states stay alive: a running call may still use an old one
            st = self._by_key[key] = State(entry_address, self._fallback, raiser,
                                           captures.table() if captures else None, boxer)
            st.captures = captures  # keeps the guard table alive
        self._cell.value = ctypes.addressof(st)
        self.current = key
