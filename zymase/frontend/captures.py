"""What compiled code read from outside its arguments: global and closure names, and attributes
of modules and plain objects, each as a ``Capture`` of where it was read and what it was.

Arrays are read **by reference**: the code gets the array bound to the name *at call time*
(``array.global {slot = k}``, filled from ``Captures.arrays()`` on every call), so writes into
it between calls are seen and rebinding the name to another array of the same dtype and rank
needs no recompile.  Every other value (a number, a tuple, a function, an object) is compiled in
as a constant; the code is used only while the name still holds it (``Captures.holds()``: an
identity check, or equality for numbers), otherwise the caller compiles again or finds the
specialization compiled for the new value.  The fast C entry checks the same guards without
Python (``backends/cpu/pyentry.py``: ``layout()`` tells it where each guard reads).

What stays captured at compile time: arrays inside a tuple or reached through an attribute of
an object without a ``__dict__`` (their values are copied into the code; the name that holds
the tuple or object is still guarded), and objects' contents beyond the attributes read.
"""

from __future__ import annotations

import ctypes
import gc
import hashlib
import sys
import types

import numpy as np

MISSING = object()


REBOUND_RETRIES = 4


class Rebound(Exception):  # (a signal to look the code up again, not an error)
    """A global array was rebound to another type between finding the code and calling it (by
    another thread): the caller looks the code up again."""


def rebound_error(fn):
    from ..errors import UnsupportedError, caller_loc  # lazy: only when a thread keeps rebinding
    return UnsupportedError(
        f"{fn.__qualname__}() reads a global array that another thread keeps rebinding to "
        f"arrays of other types: {REBOUND_RETRIES} attempts found a different type each time "
        "(pass the array as an argument)", caller_loc())


class Capture:
    """One value read from a namespace: ``ns`` (a dict: globals, a module's or an object's
    ``__dict__``; or a closure cell) under ``key``; ``slot``: its index in the table of arrays
    read by reference, or None for a value compiled in."""

    __slots__ = ("ns", "key", "value", "slot", "type", "origin")

    def __init__(self, ns, key, value, slot=None, type_=None, origin=None):
        self.ns, self.key, self.value, self.slot, self.type = ns, key, value, slot, type_
        self.origin = origin  # (module, qualname) of the function, or (parent index, attribute)

    def current(self):
        if isinstance(self.ns, dict):
            return self.ns.get(self.key, MISSING)
        try:
            return self.ns.cell_contents
        except ValueError:
            return MISSING

    def where(self) -> str:
        return f"`{self.key}`" if isinstance(self.key, str) else "a closure variable"


class Captures:
    """The captures of one compilation, in the order the fast entry checks them."""

    def __init__(self):
        self.items: list[Capture] = []
        self._index: dict = {}
        self.n_slots = 0
        self._table = None

    def __bool__(self) -> bool:
        return bool(self.items)

    # ------------------------------------------------------------------ while lowering
    def read(self, ns, key, value, origin, array_type=None) -> Capture:
        """Record that the code read ``value`` from ``ns[key]`` (``array_type``: read by
        reference as an array of that type)."""
        k = (id(ns), key)
        found = self._index.get(k)
        if found is not None:
            return found
        slot = None
        if array_type is not None:  # (not kept: the array is looked up on every call)
            slot, self.n_slots, value = self.n_slots, self.n_slots + 1, None
        c = Capture(ns, key, value, slot, array_type, origin)
        self._index[k] = c
        self.items.append(c)
        return c

    def layout(self) -> list:
        """Plain data for backends: per capture ``(kind, array type or None)``, kind ``"dict"``
        or ``"cell"``."""
        return [("dict" if isinstance(c.ns, dict) else "cell", c.type) for c in self.items]

    # ------------------------------------------------------------------ at call time
    def holds(self) -> bool:
        """Whether every name still holds what the code was compiled for (arrays: an array of
        the compiled dtype, rank and layout)."""
        for c in self.items:
            now = c.current()
            if now is c.value:
                continue
            if c.slot is not None:
                if not fits(now, c.type):
                    return False
            elif same_value(now, c.value):
                self._refresh(c, now)
            else:
                return False
        return True

    def arrays(self) -> list:
        """The arrays the names read by reference hold now, in slot order (checked: a call never
        hands compiled code an array of another type)."""
        if not self.n_slots:
            return []
        out = [None] * self.n_slots
        for c in self.items:
            if c.slot is not None:
                now = c.current()
                if not fits(now, c.type):
                    raise Rebound(c.key)
                out[c.slot] = now
        return out

    def table(self) -> int:
        """Address of the guard table the fast C entry reads: ``(namespace, key, expected)``
        object pointers per capture (``expected`` unused for arrays)."""
        if self._table is None:
            t = (ctypes.c_void_p * (3 * len(self.items) or 1))()
            for j, c in enumerate(self.items):
                t[3 * j] = id(c.ns)
                t[3 * j + 1] = id(c.key) if isinstance(c.ns, dict) else 0
                t[3 * j + 2] = id(c.value)
            self._table = t
        return ctypes.addressof(self._table)

    def _refresh(self, c: Capture, now) -> None:
        """An equal number rebound as a new object: guard the new object from now on."""
        c.value = now
        if self._table is not None:
            self._table[3 * self.items.index(c) + 2] = id(now)


def fits(x, t) -> bool:
    """Whether array ``x`` can be handed to code compiled for array type ``t``."""
    return type(x) is np.ndarray and x.dtype == t.dtype.np_dtype and x.ndim == t.ndim and \
        x.flags.c_contiguous == (t.layout == "C")  # (as for arguments: signature.arg_key)


def same_value(a, b) -> bool:
    """Numbers (and tuples of them, None, strings) compare by value; everything else by
    identity."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (bool, int, float, complex, str, bytes, np.generic)) or a is None:
        return bool(a == b) or (a != a and b != b)  # NaN rebound as NaN
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same_value(x, y) or x is y for x, y in zip(a, b))
    return False


def describe(x) -> str:
    if type(x) is np.ndarray:
        return f"an array of {x.dtype}, rank {x.ndim}"
    if x is MISSING:
        return "nothing (it was deleted)"
    return f"a {type(x).__name__}"


LIBRARIES = frozenset({"numpy", "math", "cmath", "scipy", "builtins", "zymase", "numba"})


def guarded(value) -> bool:
    """Whether a read of ``value`` needs a guard (modules, builtins, classes and NumPy's
    functions do not: code does not rebind ``np`` or ``np.sum``)."""
    if isinstance(value, (types.ModuleType, types.BuiltinFunctionType, type, np.ufunc)):
        return False
    mod = getattr(value, "__module__", None) if callable(value) else None
    return not (isinstance(mod, str) and mod.split(".")[0] in LIBRARIES)


def attribute_namespace(obj, name: str):
    """The dict that holds attribute ``name`` of ``obj`` (a module's or a plain object's
    ``__dict__``), or None (a class attribute, a property, a library module)."""
    if isinstance(obj, types.ModuleType) and obj.__name__.split(".")[0] in LIBRARIES:
        return None
    if isinstance(obj, type):
        return _class_namespace(obj, name)
    d = getattr(obj, "__dict__", None)
    return d if type(d) is dict and name in d else None


_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement


def _class_namespace(cls: type, name: str):
    """The dict of the user class (``cls`` or the base it inherits ``name`` from) that holds
    attribute ``name``: the dict behind its read-only ``__dict__`` proxy, so that
    ``Config.lr = 0.5`` after compiling is seen, as a global's new value is.  None for
    built-in and library classes (whose attributes do not change)."""
    for c in cls.__mro__:
        if name in vars(c):
            if not c.__flags__ & _HEAPTYPE or \
                    c.__module__.split(".")[0] in LIBRARIES | {"enum"}:
                return None
            found = [d for d in gc.get_referents(vars(c)) if type(d) is dict]
            return found[0] if len(found) == 1 and name in found[0] else None
    return None


# ---------------------------------------------------------------------- on disk


def describe_all(captures: Captures, entry_fn) -> list | None:
    """Plain data for the disk cache: where each capture is found in a new process and what it
    must hold there; None when one cannot be found or checked there (a nested function's
    global, an object's attribute, a value without a digest)."""
    out = []
    for c in captures.items:
        origin = c.origin
        if origin is None:
            return None
        if origin[0] != "module" and "<locals>" in origin[2] and \
                tuple(origin[1:]) != (entry_fn.__module__, entry_fn.__qualname__):
            return None  # a nested helper: not found by name in another process
        if origin[0] == "module":
            mod = sys.modules.get(origin[1])
            if mod is None or mod.__dict__ is not c.ns:
                return None
        d = array_digest(c.type) if c.slot is not None else value_digest(c.value)
        if d is None:
            return None
        out.append([list(origin), c.key, d, c.slot])
    return out


def restore_all(entry_fn, desc) -> Captures | None:
    """The ``Captures`` of an entry loaded from disk, found in this process; None when a name
    is missing or holds something else than when the code was compiled."""
    caps = Captures()
    for origin, key, digest, slot in desc:
        ns = _namespace(entry_fn, origin, key)
        if ns is None:
            return None
        c = Capture(ns, key, None, slot, None, tuple(origin))
        value = c.current()
        if slot is not None:
            c.type = _array_type(digest)
            if c.type is None or not fits(value, c.type):
                return None
            caps.n_slots = max(caps.n_slots, slot + 1)
        elif value_digest(value) != digest:
            return None
        else:
            c.value = value
        caps._index[(id(ns), key)] = c
        caps.items.append(c)
    return caps


def _namespace(entry_fn, origin, key):
    kind = origin[0]
    if kind == "module":
        mod = sys.modules.get(origin[1])
        return None if mod is None else mod.__dict__
    module, qualname = origin[1], origin[2]
    fn = entry_fn if (module, qualname) == (entry_fn.__module__, entry_fn.__qualname__) \
        else _find(sys.modules.get(module), qualname)
    if fn is None:
        return None
    if kind == "global":
        return fn.__globals__
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    return cells.get(key)


def _find(module, qualname):
    obj = module
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    while obj is not None and hasattr(obj, "__zymase_fn__"):
        obj = obj.__zymase_fn__
    return getattr(obj, "py_func", obj) if obj is not None else None


def array_digest(t) -> str:
    return f"array:{t.dtype.np_dtype.str}:{t.ndim}:{t.layout}"


def _array_type(digest: str):
    from ..ir.types import ArrayType, scalar_from_dtype  # lazy: only for entries from disk
    try:
        _, dt, ndim, layout = digest.split(":")
        st = scalar_from_dtype(np.dtype(dt))
        return None if st is None else ArrayType(st, int(ndim), layout)
    except (ValueError, TypeError):
        return None


def value_digest(v) -> str | None:
    """A stable digest of a constant the code read, or None when there is none."""
    if v is None or isinstance(v, (bool, int, float, complex, str, bytes)):
        return repr((type(v).__name__, v))
    if isinstance(v, np.generic):
        return repr((v.dtype.str, v.item()))
    if isinstance(v, np.ndarray):  # an array compiled in (a subclass)
        h = hashlib.sha256(np.ascontiguousarray(v).tobytes())
        return repr((type(v).__name__, v.dtype.str, v.shape, h.hexdigest()))
    if isinstance(v, tuple):
        parts = [value_digest(x) for x in v]
        return None if None in parts else repr(tuple(parts))
    if isinstance(v, types.FunctionType):  # its code too: a name redefined at run time
        return repr(("function", v.__module__, v.__qualname__, code_digest(v.__code__)))
    return None


def code_digest(code) -> str:
    """A digest of a code object that is the same in every process (``marshal`` output is not:
    it depends on reference counts)."""
    h = hashlib.sha256()

    def feed(c):
        h.update(c.co_code)
        h.update(repr((c.co_names, c.co_varnames, c.co_freevars, c.co_cellvars, c.co_argcount,
                       c.co_kwonlyargcount, c.co_flags)).encode())
        for k in c.co_consts:
            if isinstance(k, types.CodeType):
                feed(k)
            else:
                h.update(repr(sorted(map(repr, k)) if isinstance(k, frozenset) else k).encode())

    feed(code)
    return h.hexdigest()
