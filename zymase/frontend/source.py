"""Finding a user function's source, its AST, its globals and closure, and source locations."""

from __future__ import annotations

import ast
import inspect
import linecache
import sys
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
    """The plain Python function behind ``fn`` (unwraps numba and zymase dispatchers; a
    ``custom_jvp``/``custom_vjp`` function becomes a function that calls it, so that a
    transform of it uses its rule)."""
    for attr in ("py_func", "__zymase_fn__"):
        inner = getattr(fn, attr, None)
        if inner is not None:
            return python_function(inner)
    if getattr(fn, "__zymase_custom__", False):
        return _calling(fn)
    return fn


def _calling(custom):
    """``def name(params): return custom(params)``, made once per custom function, with its
    text in ``linecache`` (compiled like any function; the call takes the rule)."""
    made = getattr(custom, "_zymase_entry", None)
    if made is not None:
        return made
    try:
        sig = inspect.signature(custom.fn)
    except (TypeError, ValueError):
        return custom
    params, star, namespace = [], False, {"__zymase_rule": custom}
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            return custom  # (refused as the function itself would be)
        if p.kind == p.KEYWORD_ONLY and not star:
            params.append("*")
            star = True
        if p.default is p.empty:
            params.append(p.name)
        else:  # (a default the frontend reads from the text, as for any function)
            namespace[f"__zymase_default_{p.name}"] = p.default
            params.append(f"{p.name}=__zymase_default_{p.name}")
    name = getattr(custom.fn, "__name__", "")
    name = name if name.isidentifier() else "custom_function"
    names = [p.split("=")[0] for p in params if p != "*"]
    passed = ", ".join(n if sig.parameters[n].kind != inspect.Parameter.KEYWORD_ONLY
                       else f"{n}={n}" for n in names)
    file = f"<zymase: {name} and its derivative rule>"
    text = f"def {name}({', '.join(params)}):\n    return __zymase_rule({passed})\n"
    linecache.cache[file] = (len(text), None, text.splitlines(True), file)
    exec(compile(text, file, "exec"), namespace)
    made = namespace[name]
    custom._zymase_entry = made
    return made


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


def source_loc(fn) -> Loc | None:
    """The location of ``fn``'s ``def`` line (for messages about the function as a whole)."""
    try:
        src = get_source(fn)
    except UnsupportedError:
        return None
    return src.loc(src.tree)


def _def(fn, file: str):
    """A ``def`` function's ``ast.FunctionDef``, with the line and column offsets of its text."""
    recover_source(fn.__code__)
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
    recover_source(code)
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


def recover_source(code) -> None:
    """Put the text of a function defined outside a file into ``linecache`` when it can be
    found and shown to be that function's text (it compiles to the same bytecode): the
    program of ``python -c``, or the lines typed at an interactive prompt with ``readline``
    history.  (Shells such as IPython and Jupyter, and ``exec`` of text registered in
    ``linecache``, already keep it there.)"""
    file = code.co_filename
    if not (file.startswith("<") and file.endswith(">")):
        return
    known = linecache.getlines(file)
    if known and (file.startswith("<ipython-input-") or _defines("".join(known), file, code)):
        return
    for text in _candidates(file, code):
        if _defines(text, file, code):
            linecache.cache[file] = (len(text), None, text.splitlines(True), file)
            return
    if known and file in ("<string>", "<stdin>"):
        # (the text there is another program's: exec inside `python -c`, another prompt line)
        raise _no_source_named(getattr(code, "co_qualname", code.co_name), file)
    if known:
        raise UnsupportedError(
            f"the text that linecache holds for {file} does not define {code.co_name}() as "
            "it was compiled (another text was registered under the same name since): "
            "register each text under a name of its own")


def _candidates(file: str, code):
    if file == "<string>":
        argv = getattr(sys, "orig_argv", [])
        if "-c" in argv[:-1]:
            yield argv[argv.index("-c") + 1]
    elif file == "<stdin>":
        yield from _typed_blocks(code)


def _typed_blocks(code):
    """Texts typed at the prompt (newest first) that may hold ``code``: each history entry
    from one that starts the definition to the end of the indented block."""
    try:
        import readline  # lazy: only at an interactive prompt, where the history lives
    except ImportError:
        return
    lines = [readline.get_history_item(k) or ""
             for k in range(1, readline.get_current_history_length() + 1)]
    for start in range(len(lines) - 1, -1, -1):
        head = lines[start]
        if head[:1].isspace() or not head.strip():
            continue
        end = start + 1
        while end < len(lines) and (lines[end][:1].isspace() or not lines[end].strip()):
            end += 1
        block = lines[start:end]
        # the prompt compiles each statement alone: the function's first line is the block's
        # first line plus its offset in the block
        first = code.co_firstlineno - 1
        if first < len(block):
            yield "\n".join(block) + "\n"


def _defines(text: str, file: str, code) -> bool:
    """Whether ``text`` compiled as ``file`` holds ``code`` (same name, line, bytecode)."""
    try:
        top = compile(text, file, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    stack = [top]
    while stack:
        c = stack.pop()
        if c.co_name == code.co_name and c.co_firstlineno == code.co_firstlineno and \
                c.co_code == code.co_code:
            return True
        stack += [k for k in c.co_consts if hasattr(k, "co_code")]
    return False


def _no_source(fn, file: str) -> UnsupportedError:
    return _no_source_named(fn.__qualname__, file)


def _no_source_named(name: str, file: str) -> UnsupportedError:
    return UnsupportedError(
        f"cannot read the source of {name}(): it was defined in {file}, whose text "
        "Python did not keep.  zymase compiles a function from its source: define it in a "
        "file (a module, a script, a notebook cell), at an IPython or Python 3.13+ prompt, or "
        "in `python -c`; for exec() of a string, register the text first with "
        "`linecache.cache[name] = (len(text), None, text.splitlines(True), name)` and exec "
        "`compile(text, name, 'exec')`")


def _indent(text: str) -> int:
    for line in text.splitlines():
        if line.strip():
            return len(line) - len(line.lstrip())
    return 0
