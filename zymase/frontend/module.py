"""Lowering a root function and every function it calls into one IR module.

Each (Python function, argument types) pair is lowered once into its own ``func.func``.  A
recursive call uses a guessed result type; when the function's actual result type differs, the
function is lowered again with that type (at most a few times).
"""

from __future__ import annotations

import ast

from ..errors import UnsupportedError, ZymaseTypeError
from ..ir.core import Func, Loc, Module, Value
from ..ir.ops import Return
from ..ir.types import I64
from . import scan
from .captures import Captures
from .lower.calls import BoundMethod
from .lower.stmts import FunctionLowerer
from .numpy.copies import check_reshape_copies
from .source import get_source, python_function
from .typing import EmptyList, ListVal, PyObj, Scalar, Struct, Tup, flatten, ir_types, type_key

MAX_RECURSION_RETYPE = 4


class ModuleLowerer:
    def __init__(self, options):
        self.options = options
        self.module = Module()
        self.specs: dict = {}  # key -> (func name, result template)
        self.in_progress: dict = {}  # key -> [name, guessed result, used?]
        self.names: set[str] = set()
        self.captures = Captures()  # what the functions read from outside their arguments
        self.read_once = 0  # groups of loads that read each element once (passes/fuse.py)

    def lower_entry(self, fn, params) -> Func:
        name, _ = self.specialize(fn, params, None, entry=True)
        check_reshape_copies(self.module)
        return self.module[name]

    def specialize(self, fn, params, loc: Loc | None, entry: bool = False):
        """The func for ``fn`` at these argument FVals: (name, result template or None)."""
        pyfn = python_function(fn)
        key = (pyfn, tuple(type_key(p) for p in params), entry)
        if key in self.specs:
            return self.specs[key]
        if key in self.in_progress:
            state = self.in_progress[key]
            state[2] = True
            return state[0], state[1]
        src = get_source(pyfn)
        name = self._unique(src.tree.name)
        guess = Scalar(Value(I64), True) if scan.returns_value(src.tree) else None
        for _ in range(MAX_RECURSION_RETYPE):
            state = self.in_progress[key] = [name, guess, False]
            before = set(self.specs)
            try:
                func, ret = self._lower(src, name, params, entry)
            except ZymaseTypeError as e:
                # a recursive call's guessed type met another return's (the base case returns
                # an array): guess that one
                ret = next((r for r in getattr(e, "returned", ()) if type_key_or_none(r) !=
                            type_key_or_none(guess)), None) if state[2] else None
                if ret is None:
                    raise
            else:
                if not state[2] or type_key_or_none(ret) == type_key_or_none(guess):
                    break
            guess = ret
            for k in set(self.specs) - before:  # callees typed with the wrong guess (mutual
                del self.module.funcs[self.specs.pop(k)[0]]  # recursion): lower them again
        else:
            raise UnsupportedError(f"cannot settle the result type of recursive `{name}`",
                                   src.loc(src.tree))
        del self.in_progress[key]
        self.module.add(func)
        self.specs[key] = (name, ret)
        return name, ret

    def _lower(self, src, name, params, entry):
        arg_types = [t for p in params for t in ir_types(p)]
        func = Func(name, arg_types, [], loc=src.loc(src.tree))
        if entry:
            func.attrs["entry"] = True
        lw = FunctionLowerer(self, src, func, params, self.options)
        try:
            ret = lw.lower_body()
        except ZymaseTypeError as e:
            e.returned = list(lw.returned)  # (for ``specialize``'s next guess)
            raise
        if entry and _holds(ret, (ListVal, EmptyList)) is not None:
            raise UnsupportedError("returning a list from compiled code is not supported: "
                                   "return np.array(lst) (or a tuple)", _return_loc(src))
        method = _holds(ret, BoundMethod) if entry else None
        if method is not None:
            raise UnsupportedError(f"`.{method.name}` is a method or an attribute zymase does not "
                                   "know: call it, or return another attribute",
                                   _return_loc(src))
        vals = flatten(ret) if ret is not None else []
        func.attrs["result_types"] = [v.type for v in vals]
        with lw.b.location(src.loc(src.tree)):
            lw.b.create(Return, vals, [])
        return func, ret

    def _unique(self, base: str) -> str:
        name, k = base, 1
        while name in self.names:
            name = f"{base}_{k}"
            k += 1
        self.names.add(name)
        return name


def _holds(v, kinds):
    """The first part of returned value ``v`` of one of ``kinds`` (lists; PyObj contents such as
    BoundMethod), or None."""
    if isinstance(v, PyObj) and isinstance(v.obj, kinds):
        return v.obj
    if isinstance(v, kinds):
        return v
    parts = v.items if isinstance(v, Tup) else v.fields.values() if isinstance(v, Struct) else ()
    return next((h for h in (_holds(x, kinds) for x in parts) if h is not None), None)


def _return_loc(src):
    node = next((n for n in ast.walk(src.tree) if isinstance(n, ast.Return) and n.value),
                src.tree)
    return src.loc(node)


def type_key_or_none(v):
    return None if v is None else type_key(v)
