"""Finding a user function's source, its AST, its globals and closure, and source locations."""

from __future__ import annotations

import __future__
import ast
import functools
import inspect
import linecache
import os
import sys
import textwrap
import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import UnsupportedError, ZymaseTypeError, caller_loc
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
    transform = getattr(fn, "__zymase_transform__", None)
    if transform is not None:
        raise UnsupportedError(
            f"{getattr(fn, '__name__', transform)} is what `{transform}` returned (a Python "
            "function that runs compiled code); a transform of it is not supported: transform "
            "the plain function (zymase.hessian(f), zymase.hvp(f) or zymase.jacfwd(zymase.jacrev"
            "(f)) for second derivatives, zymase.vmap(zymase.grad(f)) for per-example "
            "gradients), or call it directly", caller_loc())
    if getattr(fn, "__zymase_custom__", False):
        return _calling(fn)
    if isinstance(fn, functools.partial):
        return _partial(fn)
    if type(fn).__name__ == "_lru_cache_wrapper" and hasattr(fn, "__wrapped__"):
        return python_function(fn.__wrapped__)  # (compiled code computes; nothing to cache)
    return fn


def check_entry(fn) -> None:
    """Refuse, at the user's call, a library's function given to ``jit`` or a transform
    directly (NumPy's Python functions are compiled through zymase's registry when called from
    a compiled function, not from their source)."""
    if not callable(fn):
        raise ZymaseTypeError(f"zymase compiles a Python function; it was given "
                              f"{_describe(fn)}", caller_loc())
    module = (getattr(fn, "__module__", None) or "").split(".")[0]
    if module in ("numpy", "scipy"):
        name = getattr(fn, "__name__", "f")
        prefix = {"numpy": "np", "scipy": "scipy"}[module]
        raise UnsupportedError(
            f"cannot compile {module}'s {name} on its own: zymase compiles your functions, "
            f"which may call it: wrap it, e.g. `lambda x: {prefix}.{name}(x)`", caller_loc())


def _describe(obj) -> str:
    """A short description of a value for messages (no reprs with addresses)."""
    if isinstance(obj, (bool, int, float, complex, str)):
        return f"the {type(obj).__name__} {obj!r}"
    if isinstance(obj, np.ufunc):
        return f"the NumPy ufunc np.{obj.__name__}"
    mod = getattr(type(obj), "__module__", "")
    name = type(obj).__name__ if mod in ("builtins", "__main__") or "<locals>" in \
        type(obj).__qualname__ else f"{mod}.{type(obj).__qualname__}"
    return f"a {name} object"


def _partial(p):
    """``functools.partial(f, *a, **kw)`` as a function of the remaining parameters that
    calls ``f`` with the bound values (read as globals of that function)."""
    return _forwarding(p, python_function(p.func), p, p.args, "functools.partial of {}",
                       "partial_function")


def _calling(custom):
    """``def name(params): return custom(params)`` for a custom function (compiled like any
    function; the call takes the rule)."""
    return _forwarding(custom, custom, custom.fn, (), "{} and its derivative rule",
                       "custom_function")


def _forwarding(owner, target, signed, bound: tuple, title: str, fallback: str):
    """``def name(params): return target(*bound, params)`` with ``signed``'s parameters (and
    defaults), made once per ``owner`` with its text in ``linecache`` under
    ``<zymase: title>``; ``owner`` itself where its signature cannot be written so."""
    made = getattr(owner, "_zymase_entry", None)
    if made is not None:
        return made
    try:
        sig = inspect.signature(signed)
    except (TypeError, ValueError):
        return owner
    namespace = {"__zymase_target": target}
    passed = []
    for k, a in enumerate(bound):
        namespace[f"__zymase_arg{k}"] = a
        passed.append(f"__zymase_arg{k}")
    params, star = [], False
    for prm in sig.parameters.values():
        if prm.kind in (prm.VAR_POSITIONAL, prm.VAR_KEYWORD):
            return owner  # (refused as such functions are)
        if prm.kind == prm.KEYWORD_ONLY and not star:
            params.append("*")
            star = True
        if prm.default is prm.empty:
            params.append(prm.name)
        else:  # (a default the frontend reads from the text, as for any function)
            namespace[f"__zymase_default_{prm.name}"] = prm.default
            params.append(f"{prm.name}=__zymase_default_{prm.name}")
        passed.append(f"{prm.name}={prm.name}" if star else prm.name)
    name = getattr(signed if signed is not owner else target, "__name__", "")
    name = name if name.isidentifier() else fallback
    file = f"<zymase: {title.format(name)}>"
    text = f"def {name}({', '.join(params)}):\n    return __zymase_target({', '.join(passed)})\n"
    linecache.cache[file] = (len(text), None, text.splitlines(True), file)
    exec(compile(text, file, "exec"), namespace)
    made = namespace[name]
    try:
        owner._zymase_entry = made
    except AttributeError:
        pass
    return made


def get_source(fn) -> Source:
    fn = python_function(fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        what = _describe(fn)
        if isinstance(fn, np.ufunc):
            todo = f"wrap it in a function: `lambda x: np.{fn.__name__}(x)`"
        elif callable(fn) and not isinstance(fn, type) and \
                getattr(type(fn), "__module__", "") not in ("builtins", "numpy"):
            todo = ("compile a plain function that takes the object's arrays and numbers as "
                    "arguments (or the object itself, if it is a dataclass)")
        else:
            todo = "zymase compiles functions written in Python"
        raise UnsupportedError(f"cannot compile {what}: it is not a Python function; {todo}")
    src = _CACHE.get(fn)
    if src is not None:
        return src
    if inspect.ismethod(fn):
        raise UnsupportedError(
            f"cannot compile the bound method {fn.__qualname__}: zymase compiles functions; "
            "compile the plain function and pass the object (a dataclass) or its fields")
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
        raise UnsupportedError(f"cannot compile {fn.__qualname__}: it is not a `def` function "
                               "(its file was edited after its module was imported?)",
                               Loc(file, start, col0 + 1))
    if not _text_matches(fn, dedented):
        raise UnsupportedError(
            f"the text of {fn.__qualname__}() in {file} is not the code Python runs (the file "
            "changed after its module was imported); reload the module (importlib.reload, or "
            "%autoreload in IPython) or restart, then compile it", caller_loc())
    return fdef, start - 1, col0


def _rewritten(fn) -> bool:
    """Whether ``fn``'s module was compiled from rewritten source (pytest rewrites asserts)."""
    module = sys.modules.get(getattr(fn, "__module__", None) or "")
    return type(getattr(module, "__loader__", None)).__name__ == "AssertionRewritingHook"


def _same_code(a, b, names: bool) -> bool:
    """Whether code objects ``a`` and ``b`` agree in their parameters, float constants and
    (with ``names``) the global and attribute names they use, nested code included.  (Not the
    bytecode: compiling a function's text alone need not give its bytes in the module.)"""
    if (a.co_argcount, a.co_kwonlyargcount, _floats(a)) != \
            (b.co_argcount, b.co_kwonlyargcount, _floats(b)):
        return False
    return not names or _names(a) == _names(b)


def _names(code) -> list:
    out = list(code.co_names)
    for c in code.co_consts:
        if hasattr(c, "co_names"):
            out += _names(c)
    return sorted(out)


def _floats(code) -> list:
    """The float and complex constants of a code object and the code nested in it."""
    out = []
    for c in code.co_consts:
        if hasattr(c, "co_consts"):
            out += _floats(c)
        elif type(c) in (float, complex):
            out.append(repr(c))
    return sorted(out)


def _text_matches(fn, text: str) -> bool:
    """Whether ``text`` (a ``def``, dedented) compiles to ``fn``'s code, as it does unless the
    file was edited after Python compiled it.  Free variables are made cells of a function
    around the text, so they compile as they did; for modules whose asserts pytest rewrote,
    only parameters and float constants are compared."""
    code = fn.__code__
    free = code.co_freevars
    if free:
        text = "def __zymase_outer():\n" + "".join(f"    {n} = None\n" for n in free) + \
            textwrap.indent(text, "    ") + "\n"
    try:
        module = compile(text, code.co_filename, "exec", dont_inherit=True,
                         flags=code.co_flags & _FUTURE_FLAGS)
    except (SyntaxError, ValueError):
        return True
    if free:
        module = next((c for c in module.co_consts if hasattr(c, "co_code")), None)
        if module is None:
            return True
    made = next((c for c in module.co_consts if hasattr(c, "co_name") and
                 c.co_name == code.co_name), None)
    return made is None or _same_code(made, code, not _rewritten(fn))


_FUTURE_FLAGS = 0
for _name in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _name).compiler_flag


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
