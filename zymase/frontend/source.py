"""Finding a user function's source, its AST, its globals and closure, and source locations."""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
from dataclasses import dataclass, field
from typing import Any

from ..errors import UnsupportedError
from ..ir.core import Loc
from .desugar import desugar


@dataclass
class Source:
    """A parsed Python function: its ``ast.FunctionDef`` and where its text lives."""

    fn: Any  # the Python function
    tree: ast.FunctionDef
    file: str
    line0: int  # line number of the source's first line, minus one
    col0: int  # columns removed by dedent
    globals: dict
    closure: dict
    captured: dict = field(default_factory=dict)  # free name -> value read as a constant

    def loc(self, node: ast.AST) -> Loc:
        line = getattr(node, "lineno", 1)
        col = getattr(node, "col_offset", 0)
        return Loc(self.file, line + self.line0, col + self.col0 + 1, self.tree.name)

    def lookup(self, name: str):
        """A free name's value at compile time: closure first, then globals, then builtins.
        Values other than functions, modules and classes are recorded in ``captured`` (the
        disk cache checks them before reusing code compiled with them)."""
        for scope in (self.closure, self.globals):
            if name in scope:
                value = scope[name]
                if not callable(value) and not inspect.ismodule(value):
                    self.captured[name] = value
                return value
        builtins = self.globals.get("__builtins__", __builtins__)
        if isinstance(builtins, dict):
            if name in builtins:
                return builtins[name]
        elif hasattr(builtins, name):
            return getattr(builtins, name)
        raise KeyError(name)


_CACHE: dict[Any, Source] = {}


def python_function(fn):
    """The plain Python function behind ``fn`` (unwraps numba and zymase dispatchers)."""
    for attr in ("py_func", "__zymase_fn__"):
        inner = getattr(fn, attr, None)
        if inner is not None:
            return python_function(inner)
    return fn


def get_source(fn) -> Source:
    fn = python_function(fn)
    src = _CACHE.get(fn)
    if src is not None:
        return src
    if inspect.ismethod(fn):
        raise UnsupportedError(
            f"cannot compile the bound method {fn.__qualname__}: zymase compiles functions; "
            "compile the plain function and pass the object (a dataclass) or its fields")
    code = getattr(fn, "__code__", None)
    if code is None:
        raise UnsupportedError(f"cannot compile {fn!r}: it is not a Python function")
    file = code.co_filename
    if fn.__name__ == "<lambda>":
        fdef, line0, col0 = _lambda_def(fn, code, file), 0, 0
    else:
        fdef, line0, col0 = _def(fn, file)
    closure = {}
    if fn.__closure__:
        for name, cell in zip(code.co_freevars, fn.__closure__):
            try:
                closure[name] = cell.cell_contents
            except ValueError:
                pass
    src = Source(fn, fdef, file, line0, col0, fn.__globals__, closure)
    desugar(src)  # comprehensions and loop `else` as plain loops
    _CACHE[fn] = src
    return src


def _def(fn, file: str):
    """A ``def`` function's ``ast.FunctionDef``, with the line and column offsets of its text."""
    try:
        lines, start = inspect.getsourcelines(fn)
    except (OSError, TypeError) as e:
        raise _no_source(fn, file) from e
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    col0 = _indent(text) - _indent(dedented)
    fdef = ast.parse(dedented).body[0]
    if not isinstance(fdef, ast.FunctionDef):
        raise UnsupportedError(f"cannot compile {fn.__qualname__}: it is not a `def` function",
                               Loc(file, start, col0 + 1))
    return fdef, start - 1, col0


def _lambda_def(fn, code, file: str) -> ast.FunctionDef:
    """A lambda as the ``def`` it stands for (``def lambda(args): return body``), found in its
    file's syntax tree by line, argument names and, where one line holds several lambdas with
    the same arguments, the columns its code covers."""
    text = "".join(linecache.getlines(file, fn.__globals__))
    if not text:
        raise _no_source(fn, file)
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        raise _no_source(fn, file) from e
    names = list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    found = [node for node in ast.walk(tree) if isinstance(node, ast.Lambda)
             and node.lineno == code.co_firstlineno and _arg_names(node.args) == names]
    if len(found) > 1:
        spots = _positions(code)
        found = [node for node in found if any(
            (node.body.lineno, node.body.col_offset) <= spot
            <= (node.body.end_lineno, node.body.end_col_offset) for spot in spots)]
    if len(found) != 1:
        raise UnsupportedError(
            f"cannot tell which lambda on line {code.co_firstlineno} of {file} to compile "
            "(several look alike): give it a name with `def`", Loc(file, code.co_firstlineno, 1))
    lam = found[0]
    ret = ast.Return(lam.body, lineno=lam.body.lineno, col_offset=lam.body.col_offset,
                     end_lineno=lam.body.end_lineno, end_col_offset=lam.body.end_col_offset)
    extra = {"type_params": []} if "type_params" in ast.FunctionDef._fields else {}
    return ast.FunctionDef(name="lambda", args=lam.args, body=[ret], decorator_list=[],
                           returns=None, lineno=lam.lineno, col_offset=lam.col_offset,
                           end_lineno=lam.end_lineno, end_col_offset=lam.end_col_offset, **extra)


def _arg_names(args: ast.arguments) -> list:
    return [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]


def _positions(code) -> set:
    """(line, column) where the code's instructions start (Python 3.11+; none before)."""
    get = getattr(code, "co_positions", None)
    return {(ln, col) for ln, _, col, _ in get() if ln is not None and col is not None} \
        if get else set()


def _no_source(fn, file: str) -> UnsupportedError:
    return UnsupportedError(
        f"cannot read the source of {fn.__qualname__} ({file}): zymase compiles functions "
        "defined in files, not in an interactive prompt or by exec")


def _indent(text: str) -> int:
    for line in text.splitlines():
        if line.strip():
            return len(line) - len(line.lstrip())
    return 0


def captured_digests(entry_fn, functions) -> list | None:
    """(module, qualname, name, digest) for every value the compiled ``functions`` read from
    globals or closures, or None when one of them cannot be checked in a later process (a
    value without a digest, or a function nested in another that captured one)."""
    out = []
    for fn in functions:
        src = get_source(fn)
        for name, value in src.captured.items():
            d = value_digest(value)
            if d is None or (fn is not entry_fn and "<locals>" in fn.__qualname__):
                return None
            out.append((fn.__module__, fn.__qualname__, name, d))
    return out


def captured_unchanged(entry_fn, digests) -> bool:
    """Whether every recorded value still has its digest (the entry function's own names are
    read from it; other functions are found by module and qualified name)."""
    import sys
    for module, qualname, name, digest in digests:
        fn = entry_fn if (module, qualname) == (entry_fn.__module__, entry_fn.__qualname__) \
            else _find(sys.modules.get(module), qualname)
        if fn is None:
            return False
        closure = dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in
                                                     fn.__closure__ or ())))
        scope = closure if name in closure else fn.__globals__
        if name not in scope or value_digest(scope[name]) != digest:
            return False
    return True


def _find(module, qualname):
    obj = module
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    return python_function(obj) if obj is not None else None


def value_digest(v) -> str | None:
    """A stable digest of a constant a function captured, or None when there is none."""
    import hashlib

    import numpy as np
    if v is None or isinstance(v, (bool, int, float, complex, str, bytes)):
        return repr((type(v).__name__, v))
    if isinstance(v, np.generic):
        return repr((v.dtype.str, v.item()))
    if isinstance(v, np.ndarray):
        h = hashlib.sha256(np.ascontiguousarray(v).tobytes())
        return repr((v.dtype.str, v.shape, h.hexdigest()))
    if isinstance(v, tuple):
        parts = [value_digest(x) for x in v]
        return None if None in parts else repr(tuple(parts))
    return None
