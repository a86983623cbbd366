"""What a call means: ``CALLS`` maps Python objects (NumPy functions, and the builtins and
``math`` functions of ``lower/builtins.py``) to handlers ``handler(lw, args, kwargs, node) ->
FVal``; ``METHODS`` maps array method names to ``method(lw, array, args, kwargs, node)``.

The topic modules fill the tables when they are imported (``@register``, ``register_all``,
``@method``); ``lower/calls.py`` looks a handler up when it lowers a call.  Each object and each
method name has one handler: registering one twice is an error, so no topic silently replaces
another's."""

from __future__ import annotations

CALLS: dict = {}
METHODS: dict = {}


def register_all(table: dict) -> None:
    """Add the handlers of ``table`` (Python object -> handler)."""
    for obj, handler in table.items():
        if obj in CALLS:
            raise KeyError(f"{obj!r} has a handler already")
        CALLS[obj] = handler


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
