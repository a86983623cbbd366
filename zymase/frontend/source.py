"""Finding a user function's source, its AST, its globals and closure, and source locations."""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
import weakref
from dataclasses import dataclass, field
from typing import Any

from ..errors import UnsupportedError
from ..ir.core import Loc
from .desugar import desugar


@dataclass
class Source:
    """A parsed Python function: its ``ast.FunctionDef`` and where its text lives."""

    ref: Any  # the Python function, weakly (a dropped function frees what was kept of it)
    tree: ast.FunctionDef
    file: str
    line0: int  # line number of the source's first line, minus one
    col0: int  # columns removed by dedent
    globals: dict
    closure: dict
    cells: dict = field(default_factory=dict)  # closure name -> its cell

    @property
    def fn(self):
        return self.ref()

    def loc(self, node: ast.AST) -> Loc:
        line = getattr(node, "lineno", 1)
        col = getattr(node, "col_offset", 0)
        return Loc(self.file, line + self.line0, col + self.col0 + 1, self.tree.name)

    def lookup(self, name: str):
        """A free name's value now: closure first, then globals, then builtins (what compiled
        code read is recorded by the lowering: ``captures.py``)."""
        if name in self.cells:  # the cell's value now (a Source outlives compilations)
            try:
                self.closure[name] = self.cells[name].cell_contents
            except ValueError:
                pass
        for scope in (self.closure, self.globals):
            if name in scope:
                return scope[name]
        builtins = self.globals.get("__builtins__", __builtins__)
        if isinstance(builtins, dict):
            if name in builtins:
                return builtins[name]
        elif hasattr(builtins, name):
            return getattr(builtins, name)
        raise KeyError(name)

    def resolve(self, name: str):
        """``(value, namespace)`` of a free name: the namespace is the closure cell or the
        globals dict it was found in (None for a builtin)."""
        value = self.lookup(name)
        if name in self.cells:
            return value, self.cells[name]
        return value, self.globals if name in self.globals else None


_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # function -> Source


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
    closure, cells = {}, {}
    if fn.__closure__:
        for name, cell in zip(code.co_freevars, fn.__closure__):
            try:
                closure[name] = cell.cell_contents
                cells[name] = cell
            except ValueError:
                pass
    try:
        ref = weakref.ref(fn)
    except TypeError:
        ref = (lambda f: lambda: f)(fn)
    src = Source(ref, fdef, file, line0, col0, fn.__globals__, closure, cells)
    desugar(src)  # comprehensions and loop `else` as plain loops
    _CACHE[fn] = src
    return src


def _def(fn, file: str):
    """A ``def`` function's ``ast.FunctionDef``, with the line and column offsets of its text."""
    try:
        # (of the code object: for a function with ``__wrapped__``, inspect would give the
        # wrapped function's text, not the code that runs)
        lines, start = inspect.getsourcelines(fn.__code__)
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
