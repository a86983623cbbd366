"""Calls: ``f(args)`` finds ``f``'s handler in the registry (``numpy/registry.py``: builtins,
``math``, NumPy) or compiles a called plain Python function into a ``func.func`` of its own and
emits ``func.call``; ``custom_jvp``/``custom_vjp`` functions get their rules lowered beside them
and ``zymase.checkpoint`` helpers stay calls until reverse mode.  A method call goes to the
registry's ``METHODS`` (arrays) or to ``lists.py``.
"""

from __future__ import annotations

import ast
import inspect
import types

from ...errors import RUNTIME_ERRORS, UnsupportedError, ZymaseError, ZymaseTypeError
from ...ir.ops import Call, Conj
from ...ir.printer import Symbol
from .. import numpy as _numpy  # noqa: F401  (its topics fill the registry)
from ..custom_rules import lower_rules
from ..lists import list_method
from ..numpy.registry import METHODS, STRUCT_METHODS, lookup
from ..typing import (
    Array,
    EmptyList,
    FVal,
    ListVal,
    PyObj,
    Scalar,
    Struct,
    Tup,
    flatten,
    rebuild,
)
from .builtins import SIGNATURES, bind_builtin


class BoundMethod:
    """``obj.name`` for an array/list/scalar ``obj``, waiting to be called."""

    def __init__(self, obj: FVal, name: str):
        self.obj, self.name = obj, name


IMMUTABLE = (str, bytes, tuple, int, float, complex, frozenset)


def call_object(lw, obj, args, kwargs, node):
    if isinstance(obj, BoundMethod):
        return call_method(lw, obj.obj, obj.name, args, kwargs, node)
    handler = lookup(obj)  # (scipy.special too, once the program has imported it)
    if handler is not None:
        if obj in SIGNATURES:  # a builtin: bind its arguments as Python does
            args, kwargs = bind_builtin(lw, obj, args, kwargs, node), {}
        try:
            return handler(lw, args, kwargs, node)
        except (AttributeError, TypeError) as e:
            # a compile-time object (None, a string, a function) where the routine takes
            # numbers or arrays: say so at the call, not with the handler's internal error
            objs = [v for v in [*args, *kwargs.values()] if isinstance(v, PyObj)]
            if not objs or isinstance(e, ZymaseError):
                raise
            name = getattr(obj, "__name__", "this function")
            raise lw.err(ZymaseTypeError, f"{name}() takes numbers and arrays here, not "
                         f"{lw.describe(objs[0])}", node) from None
    if getattr(obj, "__zymase_custom__", False):
        return lw.call_custom(obj, args, kwargs, node)
    if getattr(obj, "__zymase_checkpoint__", False):  # kept a call until reverse mode
        out = lw.call_user(obj.fn, args, kwargs, node)
        call = lw.b.block.ops[-1]
        callee = lw.mod.module[str(call.attrs["callee"])]
        callee.attrs["noinline"] = callee.attrs["checkpoint_call"] = True
        return out
    if isinstance(obj, types.FunctionType) or hasattr(obj, "py_func"):
        return lw.call_user(obj, args, kwargs, node)
    if isinstance(getattr(obj, "__self__", None), IMMUTABLE) and \
            isinstance(obj, types.BuiltinMethodType):
        # a method of a constant string or tuple, on constants (`mode.startswith("s")`)
        known = [lw.python_value(a) for a in [*args, *kwargs.values()]]
        if all(ok for ok, _ in known):
            values = [v for _, v in known]
            try:
                out = obj(*values[:len(args)], **dict(zip(kwargs, values[len(args):])))
            except Exception as e:  # (raised when compiling, of the class Python raises)
                cls = next((RUNTIME_ERRORS[c.__name__] for c in type(e).__mro__
                            if c.__name__ in RUNTIME_ERRORS), ZymaseTypeError)
                raise lw.err(cls, f"{type(e).__name__}: {e}", node) from None
            return lw.pyvalue(out, node)
    name = getattr(obj, "__qualname__", None) or repr(obj)
    mod = getattr(obj, "__module__", None)
    full = f"{mod}.{name}" if mod and mod != "builtins" else name
    raise lw.err(UnsupportedError, f"calling `{full}` is not supported in compiled code", node)


def call_method(lw, obj, name, args, kwargs, node):
    if isinstance(obj, ListVal) or (isinstance(obj, EmptyList) and name == "append"):
        return list_method(lw, obj, name, args, kwargs, node)
    if isinstance(obj, Array) and name in METHODS:
        return METHODS[name](lw, obj, args, kwargs, node)
    if isinstance(obj, Struct) and obj.pytype in STRUCT_METHODS:
        return STRUCT_METHODS[obj.pytype](lw, obj, name, args, kwargs, node)
    if isinstance(obj, Tup) and name in ("append", "extend", "insert", "pop"):
        raise lw.err(UnsupportedError, f"a list written as a literal (`[1.0, 2.0]`) is a fixed "
                     f"tuple in compiled code and has no `{name}`: start with `[]` and append, "
                     "or use np.array", node)
    if isinstance(obj, Scalar) and name == "conjugate":
        return Scalar(lw.b.op(Conj, obj.value), obj.weak) if obj.type.is_complex else obj
    raise lw.err(UnsupportedError, f"{lw.describe(obj)} has no supported method `{name}`", node)


class CallMixin:
    """Mixin of FunctionLowerer: calls of Python functions."""

    def expr_Call(self, node):
        if any(isinstance(a, ast.Starred) for a in node.args) or any(
                k.arg is None for k in node.keywords):
            raise self.err(UnsupportedError, "*args and **kwargs in calls are not supported", node)
        f = self.expr(node.func)
        if not isinstance(f, PyObj):
            raise self.err(ZymaseTypeError, f"{self.describe(f)} is not callable", node)
        args = [self.expr(a) for a in node.args]
        kwargs = {k.arg: self.expr(k.value) for k in node.keywords}
        return call_object(self, f.obj, args, kwargs, node)

    def bind_params(self, fn, args, kwargs, node):
        sig = inspect.signature(fn)
        kinds = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        if any(p.kind in kinds for p in sig.parameters.values()):
            raise self.err(UnsupportedError, f"calling `{fn.__name__}`: functions with *args or "
                           "**kwargs parameters are not supported", node)
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise self.err(ZymaseTypeError, f"bad call to {fn.__name__}: {e}", node) from None
        params = []
        for name, p in inspect.signature(fn).parameters.items():
            if name in bound.arguments:
                params.append(bound.arguments[name])
            elif p.default is not inspect.Parameter.empty:
                params.append(self.pyvalue(p.default, node))
        return params

    def call_custom(self, cf, args, kwargs, node):
        """A call to a ``custom_jvp``/``custom_vjp`` function: its rules are lowered beside it
        (see frontend/custom_rules.py) and the call stays a call until differentiation."""
        params = self.bind_params(cf.fn, args, kwargs, node)
        callee, result = self.mod.specialize(cf.fn, params, self.src.loc(node))
        lower_rules(self, cf, callee, params, result, node)
        return self.emit_call(callee, params, result)

    def call_user(self, fn, args, kwargs, node):
        """Call a plain Python function: compile it for these argument types and emit func.call."""
        transform = getattr(fn, "__zymase_transform__", None)
        if transform is not None:
            raise self.err(UnsupportedError, f"calling `{transform}` inside a compiled function "
                           "is not supported: call the transform from Python (compiled code may "
                           "call the plain function; zymase.vmap batches a transform)", node)
        params = self.bind_params(fn, args, kwargs, node)
        callee, result = self.mod.specialize(fn, params, self.src.loc(node))
        if getattr(fn, "__zymase_outline__", False):  # (a large routine: compiled once)
            self.mod.module[callee].attrs.update(noinline=True, outlined=True)
        return self.emit_call(callee, params, result)

    def call_library(self, fn, args, node):
        """Call a routine of ``library.py``: compiled like a helper, and marked so that its
        ops take the caller's location when inlined (errors name the user's line)."""
        if getattr(fn, "__zymase_custom__", False):  # (with a derivative rule)
            out = self.call_custom(fn, args, {}, node)
        else:
            out = self.call_user(fn, args, {}, node)
        call = next(op for op in reversed(self.b.block.ops) if isinstance(op, Call))
        self.mod.module[str(call.attrs["callee"])].attrs["library"] = True
        return out

    def emit_call(self, callee, params, result):
        flat_args = [v for p in params for v in _flat(p)]
        op = self.b.create(Call, flat_args, [v.type for v in _flat(result)],
                           {"callee": Symbol(callee)})
        return rebuild(result, list(op.results)) if result is not None else PyObj(None)


def _flat(v):
    return flatten(v) if v is not None else []
