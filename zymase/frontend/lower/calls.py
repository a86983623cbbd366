"""Calls: ``f(args)`` finds ``f``'s handler in the registry (``numpy/registry.py``: builtins,
``math``, NumPy) or compiles a called plain Python function into a ``func.func`` of its own and
emits ``func.call``; ``custom_jvp``/``custom_vjp`` functions get their rules lowered beside them
and ``zymase.checkpoint`` helpers stay calls until reverse mode.  A method call goes to the
registry's ``METHODS`` (arrays) or to ``lists.py``.
"""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import os
import site
import sys
import sysconfig
import types

from ...errors import RUNTIME_ERRORS, UnsupportedError, ZymaseError, ZymaseTypeError
from ...ir.ops import Call, Conj
from ...ir.printer import Symbol
from .. import numpy as _numpy  # noqa: F401  (its topics fill the registry)
from ..custom_rules import lower_rules
from ..lists import list_method
from ..numpy.registry import METHODS, STRUCT_METHODS, lookup
from ..source import python_function
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
    if isinstance(obj, functools.partial) or (type(obj).__name__ == "_lru_cache_wrapper"
                                              and hasattr(obj, "__wrapped__")):
        made = python_function(obj)  # (a function of the remaining parameters; the wrapped one)
        if made is not obj:
            return call_object(lw, made, args, kwargs, node)
    if isinstance(obj, types.FunctionType) or hasattr(obj, "py_func"):
        foreign = foreign_library(obj, lw, node)  # (a function passed in, `f(x)`, too)
        if foreign is not None:
            raise lw.err(UnsupportedError, foreign, node)
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
    hint = BUILTIN_HINTS.get(obj) if _hashable(obj) else None
    if hint is not None:
        raise lw.err(UnsupportedError, f"{obj.__name__}() is not supported in compiled code: "
                     f"{hint}", node)
    foreign = foreign_library(obj, lw, node)
    if foreign is not None:
        raise lw.err(UnsupportedError, foreign, node)
    name = getattr(obj, "__qualname__", None) or repr(obj)
    mod = getattr(obj, "__module__", None)
    full = f"{mod}.{name}" if mod and mod != "builtins" else name
    raise lw.err(UnsupportedError, f"calling `{full}` is not supported in compiled code", node)


# Python builtins compiled code does not call -> what to write instead
BUILTIN_HINTS = {
    builtins.sorted: "use np.sort(a) (for a list built in the function, np.sort(np.array(lst)))",
    builtins.any: "for an array use np.any(a) or a.any(); any(... for ... in ...) of a "
                  "generator expression works too",
    builtins.all: "for an array use np.all(a) or a.all(); all(... for ... in ...) of a "
                  "generator expression works too",
    builtins.range: "range() is compiled as the iterable of a `for` loop (or of a "
                    "comprehension); for an array of numbers use np.arange",
    builtins.enumerate: "enumerate() is compiled as the iterable of a `for` loop",
    builtins.zip: "zip() is compiled as the iterable of a `for` loop",
    builtins.reversed: "reversed() is compiled as the iterable of a `for` loop; for an array "
                       "use a[::-1]",
    builtins.map: "write a loop or a list comprehension",
    builtins.filter: "write a loop or a list comprehension with `if`",
    builtins.list: "build a list with [] and append, or a list comprehension; for an array use "
                   "np.array(...)",
    builtins.tuple: "write the tuple out, (a, b, ...)",
    builtins.type: "compiled code holds one type per name; decide on types before calling the "
                   "compiled function",
    builtins.str: "compiled code computes numbers; format the results after the call",
    builtins.repr: "compiled code computes numbers; format the results after the call",
    builtins.format: "compiled code computes numbers; format the results after the call",
}


# ------------------------------------------------------------------ other libraries' code
ZYMASE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
_SITE_NAMES = ("site-packages", "dist-packages")
# a function of another library -> what to write instead
LIBRARY_HINTS = {
    ("statistics", "mean"): "np.mean(x)", ("statistics", "fmean"): "np.mean(x)",
    ("statistics", "median"): "np.median(x)", ("statistics", "stdev"): "np.std(x, ddof=1)",
    ("statistics", "pstdev"): "np.std(x)", ("statistics", "variance"): "np.var(x, ddof=1)",
    ("statistics", "pvariance"): "np.var(x)", ("copy", "copy"): "x.copy() or np.copy(x)",
    ("copy", "deepcopy"): "x.copy() or np.copy(x)", ("itertools", "product"): "nested for loops",
    ("itertools", "combinations"): "nested for loops", ("functools", "reduce"): "a for loop",
    ("operator", "mul"): "the operator `*`", ("operator", "add"): "the operator `+`",
    ("random", None): "np.random.default_rng(seed) and its methods",
    ("statistics", None): "np.mean, np.median, np.std, np.var",
}


# standard modules about files, text and the system rather than numbers
NOT_NUMERICAL = frozenset({
    "os", "posix", "nt", "posixpath", "ntpath", "json", "re", "pathlib", "string", "logging",
    "time", "datetime", "sys", "pickle", "io", "shutil", "subprocess", "csv", "textwrap",
    "warnings", "glob", "tempfile", "socket", "threading", "multiprocessing", "typing",
    "inspect"})


def foreign_library(obj, lw, node) -> str | None:
    """The message refusing a call of ``obj`` when it is another library's code, else None.

    zymase compiles the user's own Python functions (and NumPy through its handlers); a called
    function of another library would be compiled as a helper too and fail deep inside that
    library's file.  The rule, by where the function's code lives:

    * in the standard library (``sysconfig``'s ``stdlib``/``platstdlib`` of this interpreter or
      of its base installation, a frozen or built-in module): refused;
    * in a ``site-packages``/``dist-packages`` directory (an installed package): refused,
      unless its top-level package is the calling function's own (an installed package's
      helpers calling each other) or one of that package's modules imports zymase (a package
      written for zymase);
    * anywhere else (the user's scripts and project, an editable install, which runs from the
      project's directory, generated code): compiled.

    zymase's own code (``library.py``) is compiled, and numba/zymase dispatchers are judged by
    the Python function they wrap.  NumPy and ``math`` functions zymase does not handle are
    refused as not among the supported ones.
    """
    try:
        return _foreign_library(obj, lw, node)
    except Exception:  # (an object that answers attribute reads oddly: judged as before)
        return None


def _foreign_library(obj, lw, node) -> str | None:
    if getattr(obj, "__zymase_custom__", False) or getattr(obj, "__zymase_checkpoint__", False) \
            or getattr(obj, "__zymase_transform__", None) is not None:
        return None
    fn = _plain_function(obj)
    mod = getattr(fn, "__module__", None) or getattr(obj, "__module__", None)
    owner = getattr(obj, "__self__", None)  # (a builtin method: `random.random`)
    if mod is None and owner is not None and not isinstance(owner, types.ModuleType):
        mod = type(owner).__module__
    if not isinstance(mod, str) or mod == "builtins" or mod.split(".")[0] == "zymase":
        return None
    if not (isinstance(fn, (types.FunctionType, types.BuiltinFunctionType, type)) or
            isinstance(obj, types.BuiltinFunctionType)):
        return None
    code = getattr(fn, "__code__", None)
    if mod.split(".")[0] == "numpy" and code is None:
        return None  # (NumPy's compiled functions and classes: the plain refusal, as listed in
        # the docs' NumPy support page)
    file = code.co_filename if code is not None else getattr(sys.modules.get(mod), "__file__",
                                                              None)
    where = _code_place(file, mod)
    if where is None:
        return None
    kind, top = where
    if kind == "site":
        caller = _code_place(lw.src.file, "")
        if (caller is not None and caller[1] == top) or _imports_zymase(top):
            return None
    name = _written_name(fn, node, mod)
    python_code = "Python code" if code is not None else "code"
    if top in ("numpy", "math", "cmath"):
        what = "NumPy" if top == "numpy" else f"`{top}`"
        return (f"calling `{name}` is not supported: it is not among the {what} functions "
                f"zymase compiles (the list: 'NumPy support' in the docs); use those, or call "
                "it outside the compiled function")
    leaf = getattr(fn, "__name__", "")
    hint = LIBRARY_HINTS.get((top, leaf)) or _numpy_namesake(leaf) or \
        LIBRARY_HINTS.get((top, None))
    if hint is not None:
        instead = f"compute it with NumPy ({hint})" if hint.startswith("np") else f"write {hint}"
    elif top in NOT_NUMERICAL:
        return (f"calling `{name}` is not supported: zymase compiles your functions and NumPy, "
                f"not other libraries' {python_code}; compiled code computes numbers, so call "
                "it outside the compiled function (before the call, passing its result in, or "
                "after it)")
    else:
        instead = "compute it with NumPy"
    return (f"calling `{name}` is not supported: zymase compiles your functions and NumPy, not "
            f"other libraries' {python_code}; {instead}, or call it outside the compiled "
            "function")


def _plain_function(fn):
    """The Python function a numba or zymase dispatcher wraps (``fn`` itself otherwise)."""
    for _ in range(8):
        inner = getattr(fn, "py_func", None) or getattr(fn, "__zymase_fn__", None)
        if inner is None:
            break
        fn = inner
    return fn


def _code_place(file, mod: str):
    """("stdlib" | "site", top-level package) of code in ``file`` (module ``mod``), or None for
    the user's own code."""
    top = mod.split(".")[0]
    if top in sys.builtin_module_names:
        return "stdlib", top
    if not isinstance(file, str) or not file:
        return None
    if file.startswith("<frozen "):
        return "stdlib", file[len("<frozen "):].rstrip(">").split(".")[0]
    if file.startswith("<"):
        return None  # (generated code, a notebook cell)
    path = os.path.realpath(os.path.abspath(file))
    if path.startswith(ZYMASE_DIR + os.sep):
        return None
    parts = path.split(os.sep)
    for k in range(len(parts) - 1, -1, -1):
        if parts[k] in _SITE_NAMES and k + 1 < len(parts):
            return "site", _top_name(parts[k + 1])
    for d in _site_dirs():
        if path.startswith(d + os.sep):
            return "site", _top_name(path[len(d) + 1:].split(os.sep)[0])
    for d in _stdlib_dirs():
        if path.startswith(d + os.sep):
            return "stdlib", top or _top_name(path[len(d) + 1:].split(os.sep)[0])
    return None


def _top_name(part: str) -> str:
    return part[:-3] if part.endswith(".py") else part.split(".")[0]


_DIRS: dict = {}


def _stdlib_dirs() -> list:
    if "stdlib" not in _DIRS:
        found = set()
        for base in ({}, {"base": sys.base_prefix, "platbase": sys.base_exec_prefix}):
            try:
                paths = sysconfig.get_paths(vars=base) if base else sysconfig.get_paths()
            except Exception:  # (an unusual installation scheme)
                continue
            found.update(paths.get(k) for k in ("stdlib", "platstdlib"))
        found.add(os.path.dirname(os.__file__))
        _DIRS["stdlib"] = [os.path.realpath(d) for d in found if d]
    return _DIRS["stdlib"]


def _site_dirs() -> list:
    if "site" not in _DIRS:
        found = {sysconfig.get_paths().get(k) for k in ("purelib", "platlib")}
        found.update(getattr(site, "getsitepackages", list)())
        if getattr(site, "ENABLE_USER_SITE", False):
            found.add(site.getusersitepackages())
        _DIRS["site"] = [os.path.realpath(d) for d in found if d]
    return _DIRS["site"]


def _imports_zymase(top: str) -> bool:
    """Whether a loaded module of the installed package ``top`` imports zymase (or names from
    it): a package written to be compiled by zymase."""
    found = _DIRS.setdefault("zymase users", {})
    if top not in found:
        def uses(m) -> bool:
            try:
                for v in list(vars(m).values()):
                    owner = v.__name__ if isinstance(v, types.ModuleType) else \
                        str(getattr(v, "__module__", "") or "")
                    if owner.split(".")[0] == "zymase":
                        return True
            except Exception:  # (a module with unusual attributes: not one of zymase's)
                pass
            return False

        found[top] = any(uses(m) for name, m in list(sys.modules.items())
                         if m is not None and (name == top or name.startswith(top + ".")))
    return found[top]


def _written_name(fn, node, mod: str) -> str:
    """The callee as the user wrote it (``scipy.linalg.solve``), else its public module and
    name (``statistics.mean`` for ``mean`` imported from it)."""
    f = getattr(node, "func", None)
    if isinstance(f, ast.Attribute):
        root = f
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name):
            return ast.unparse(f)
    public = ".".join(p for p in mod.split(".") if not p.startswith("_")) or mod
    return f"{public}.{getattr(fn, '__qualname__', getattr(fn, '__name__', '?'))}"


def _numpy_namesake(name: str) -> str | None:
    """``np.name`` or ``np.linalg.name`` where zymase compiles one of that name."""
    import numpy as np

    for prefix, ns in (("np", np), ("np.linalg", np.linalg)):
        f = getattr(ns, name, None)
        if f is not None and not isinstance(f, types.ModuleType) and _hashable(f) and \
                lookup(f) is not None:
            return f"{prefix}.{name}(...)"
    return None


def _hashable(obj) -> bool:
    try:
        hash(obj)
    except TypeError:
        return False
    return True


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
        node.func.zy_called = True  # (`a.name` here is a method call: see expr_Attribute)
        f = self.expr(node.func)
        if not isinstance(f, PyObj):
            raise self.err(ZymaseTypeError, f"{self.describe(f)} is not callable", node)
        if _hashable(f.obj) and lookup(f.obj) is None:  # (before its arguments: they may be
            foreign = foreign_library(f.obj, self, node)  # what only that library takes)
            if foreign is not None:
                raise self.err(UnsupportedError, foreign, node)
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
        # (the parameters of the Python function itself: a numba dispatcher's are *args)
        params = self.bind_params(_plain_function(fn), args, kwargs, node)
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
