"""What a call means: ``CALLS`` maps Python objects (NumPy functions, and the builtins and
``math`` functions of ``lower/builtins.py``) to handlers ``handler(lw, args, kwargs, node) ->
FVal``; ``METHODS`` maps array method names to ``method(lw, array, args, kwargs, node)``.

The topic modules fill the tables when they are imported (``@register``, ``register_all``,
``@method``); ``lower/calls.py`` looks a handler up when it lowers a call.  Each object and each
method name has one handler: registering one twice is an error, so no topic silently replaces
another's.

Objects of libraries that ``import zymase`` must not import (SciPy) are registered by name
(``register_lazy``) and enter ``CALLS`` when ``lookup`` misses while their module is loaded:
code that calls ``scipy.special.expit`` has imported ``scipy.special`` already."""

from __future__ import annotations

import sys

CALLS: dict = {}
METHODS: dict = {}
STRUCT_METHODS: dict = {}  # Python type -> method(lw, struct, name, args, kwargs, node)
LAZY: dict = {}  # module name -> {attribute name: handler}, not yet in CALLS
LAZY_NAMES: dict = {}  # module name -> the attribute names registered lazily (kept: for the docs)


def register_all(table: dict) -> None:
    """Add the handlers of ``table`` (Python object -> handler)."""
    for obj, handler in table.items():
        if obj in CALLS:
            raise KeyError(f"{obj!r} has a handler already")
        CALLS[obj] = handler


def register_lazy(module: str, table: dict) -> None:
    """Add the handlers of ``table`` (attribute name of ``module`` -> handler) without importing
    ``module``: ``lookup`` resolves them once the program has imported it."""
    names = LAZY.setdefault(module, {})
    LAZY_NAMES.setdefault(module, set()).update(table)
    for name, handler in table.items():
        if name in names:
            raise KeyError(f"{module}.{name} has a handler already")
        names[name] = handler


def lookup(obj):
    """The handler of the Python object ``obj``, or None; a miss first moves the lazy tables of
    the modules imported since into ``CALLS``."""
    try:
        handler = CALLS.get(obj)
        if handler is None and LAZY:
            _resolve_lazy()
            handler = CALLS.get(obj)
    except TypeError:  # (unhashable)
        return None
    return handler


def _resolve_lazy() -> None:
    """Bind the lazy tables of the imported modules (safe under concurrent compiles: a table
    leaves ``LAZY`` once all its names are found, and binding one twice is harmless)."""
    for module in list(LAZY):
        mod, names = sys.modules.get(module), LAZY.get(module)
        if mod is None or names is None:
            continue
        found = 0
        for name, handler in names.items():
            obj = getattr(mod, name, None)  # (None: an older version without it)
            if obj is not None:
                found += 1
                if CALLS.setdefault(obj, handler) is not handler:  # (aliases: psi, digamma)
                    raise KeyError(f"{module}.{name} has a handler already")
        if found == len(names):
            LAZY.pop(module, None)


def register(*objs):
    """Decorator: the handler of the Python objects ``objs``."""
    def deco(fn):
        register_all(dict.fromkeys(objs, fn))
        return fn
    return deco


def add_methods(table: dict) -> None:
    """Add the array methods of ``table`` (method name -> handler)."""
    for name, fn in table.items():
        if name in METHODS:
            raise KeyError(f"the array method {name!r} has a handler already")
        METHODS[name] = fn


def method(*names):
    """Decorator: the handler of the array methods ``names``."""
    def deco(fn):
        add_methods(dict.fromkeys(names, fn))
        return fn
    return deco
