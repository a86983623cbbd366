"""Finding a user function's source, its AST, its globals and closure, and source locations."""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import dataclass
from typing import Any

from ..errors import UnsupportedError
from ..ir.core import Loc


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

    def loc(self, node: ast.AST) -> Loc:
        line = getattr(node, "lineno", 1)
        col = getattr(node, "col_offset", 0)
        return Loc(self.file, line + self.line0, col + self.col0 + 1, self.tree.name)

    def lookup(self, name: str):
        """A free name's value at compile time: closure first, then globals, then builtins."""
        if name in self.closure:
            return self.closure[name]
        if name in self.globals:
            return self.globals[name]
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
    code = getattr(fn, "__code__", None)
    if code is None:
        raise UnsupportedError(f"cannot compile {fn!r}: it is not a Python function")
    file = code.co_filename
    try:
        lines, start = inspect.getsourcelines(fn)
    except (OSError, TypeError) as e:
        raise UnsupportedError(
            f"cannot read the source of {fn.__qualname__} ({file}): zymase compiles functions "
            "defined in files, not in an interactive prompt or by exec"
        ) from e
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    col0 = _indent(text) - _indent(dedented)
    tree = ast.parse(dedented)
    fdef = tree.body[0]
    if not isinstance(fdef, ast.FunctionDef):
        raise UnsupportedError(
            f"cannot compile {fn.__qualname__}: only `def` functions are supported (not lambdas)",
            Loc(file, start, col0 + 1),
        )
    closure = {}
    if fn.__closure__:
        for name, cell in zip(code.co_freevars, fn.__closure__):
            try:
                closure[name] = cell.cell_contents
            except ValueError:
                pass
    src = Source(fn, fdef, file, start - 1, col0, fn.__globals__, closure)
    _CACHE[fn] = src
    return src


def _indent(text: str) -> int:
    for line in text.splitlines():
        if line.strip():
            return len(line) - len(line.lstrip())
    return 0
