"""Typing the arguments of a call from Python: each argument becomes a template FVal whose IR
types are the compiled function's parameter types, and a signature key for the compile cache.

Python floats/ints/bools are weak scalars, NumPy scalars strong ones, arrays of the supported
dtypes are ``array<dtype,ndim,C|A>``, tuples stay tuples, dataclass and namedtuple instances
become structs of their fields, and dicts with string keys structs of their entries (read as
``d["key"]``).  Anything else is refused with a message that says what to pass.
"""

from __future__ import annotations

import dataclasses
import inspect
import weakref

import numpy as np

from ..errors import ZymaseTypeError, caller_loc
from ..ir.core import Value
from ..ir.types import ArrayType, scalar_from_dtype
from .typing import Array, PyObj, Scalar, Struct, Tup, TupList, python_scalar_stype, static_key

# what a subclass may define without changing how ndarray computes
_HARMLESS = frozenset({"__module__", "__doc__", "__dict__", "__weakref__", "__qualname__",
                       "__new__", "__init__", "__array_finalize__", "__array_wrap__",
                       "__reduce__", "__reduce_ex__", "__setstate__", "__repr__", "__str__",
                       "__annotations__", "__init_subclass__", "__class_getitem__", "__slots__",
                       "__array_priority__", "__firstlineno__", "__static_attributes__"})


def plain_subclass(t) -> bool:
    """Whether ndarray subclass ``t`` computes as ``ndarray`` does: none of its classes
    redefines an ndarray operator, method or hook (``np.memmap`` does not; ``np.matrix`` and
    masked arrays do), so that a view as ``ndarray`` computes what NumPy would."""
    for c in t.__mro__:
        if c is np.ndarray:
            return True
        if c is np.memmap:  # (its __getitem__ and __array_wrap__ only choose the result type)
            continue
        if any(name not in _HARMLESS and hasattr(np.ndarray, name) for name in vars(c)):
            return False
    return True


def param_template(x, where: str):
    """The FVal template for argument value ``x`` (``where`` names it in errors)."""
    st = python_scalar_stype(x)
    if st is not None:
        return Scalar(Value(st.type), True)
    key = static_key(x)
    if key is not None:
        return PyObj(key[2])
    if isinstance(x, np.ndarray):
        if type(x) is not np.ndarray and not plain_subclass(type(x)):
            raise ZymaseTypeError(f"{where} is a {type(x).__module__}.{type(x).__name__}, an "
                                  "ndarray subclass that redefines ndarray operators or methods "
                                  "(zymase computes as ndarray does); pass np.asarray(x)")
        t = scalar_from_dtype(x.dtype)
        if t is None:
            hint = ("inside a dataclass or namedtuple, pass x.astype(np.float32)"
                    if x.dtype.char == "e" else
                    "inside a dataclass or namedtuple, pass x.astype(x.dtype.newbyteorder('='))"
                    if not x.dtype.isnative else
                    "use float64, float32, float16, complex, bool or an integer type")
            raise ZymaseTypeError(f"{where}: arrays of dtype {x.dtype} are not supported "
                                  f"({hint})")
        if x.ndim == 0:
            return Scalar(Value(t), False)  # a 0-d array: a NumPy scalar of its dtype
        if any(s % x.itemsize for s in x.strides):
            raise ZymaseTypeError(f"{where}: array strides are not a multiple of the item size")
        layout = "C" if x.flags.c_contiguous else "A"
        return Array(Value(ArrayType(t, x.ndim, layout)))
    if isinstance(x, np.generic):
        t = scalar_from_dtype(x.dtype)
        if t is None:
            raise ZymaseTypeError(f"{where}: NumPy scalars of {x.dtype} are not supported")
        return Scalar(Value(t), False)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return Struct(type(x), {f: param_template(getattr(x, f), f"{where}.{f}")
                                for f in x._fields})
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return Struct(type(x), {f.name: param_template(getattr(x, f.name), f"{where}.{f.name}")
                                for f in dataclasses.fields(x)})
    if isinstance(x, dict):
        if not all(type(k) is str for k in x):
            raise ZymaseTypeError(f"{where} is a dict whose keys are not all strings; zymase "
                                  "takes dicts with string keys")
        return Struct(dict, {k: param_template(v, f"{where}[{k!r}]") for k, v in x.items()})
    if isinstance(x, tuple):
        return Tup(tuple(param_template(v, f"{where}[{k}]") for k, v in enumerate(x)))
    if isinstance(x, list) and x and all(isinstance(v, np.ndarray) for v in x):
        return TupList(tuple(param_template(v, f"{where}[{k}]") for k, v in enumerate(x)))
    if isinstance(x, list):
        raise ZymaseTypeError(f"{where} is a Python list; zymase needs a NumPy array here "
                              "(pass np.asarray(...)); lists of arrays are accepted")
    raise ZymaseTypeError(
        f"{where} is a {type(x).__module__}.{type(x).__qualname__}, which zymase cannot "
        "compile; it takes numbers, NumPy arrays and scalars, tuples, lists of arrays, dicts "
        "with string keys, dataclasses and namedtuples of these, and holds strings, None, enum "
        "members, functions, classes and dtypes constant (one compilation per value)")


def flatten_arg(x, tpl) -> list:
    """The run-time values an argument contributes, in the order of its template's IR values."""
    if isinstance(tpl, Scalar) and type(x) is np.ndarray:
        return [x[()]]  # a 0-d array
    if isinstance(tpl, (Scalar, Array)):
        return [x]
    if isinstance(tpl, Tup):
        return [v for item, t in zip(x, tpl.items) for v in flatten_arg(item, t)]
    if isinstance(tpl, Struct):
        get = dict.__getitem__ if tpl.pytype is dict else getattr
        return [v for f, t in tpl.fields.items() for v in flatten_arg(get(x, f), t)]
    return []


# --------------------------------------------------------------------- arrays of other libraries

_FOREIGN: dict = {}  # id(NumPy view) -> (weak reference to it, the array it views)


def _is_jax_array(x) -> bool:
    return type(x).__module__.startswith(("jaxlib", "jax.")) and hasattr(x, "sharding")


def host_view(x, where: str = "an argument"):
    """A read-only NumPy view of a ``jax.Array`` (on the CPU, no copy), remembered so that a
    backend that runs on JAX's devices can take the array itself (``foreign_array``)."""
    try:
        v = np.asarray(x)
    except Exception as e:  # a tracer: the function is called inside a JAX transformation
        raise ZymaseTypeError(f"{where} is a JAX value being traced ({type(x).__name__}); "
                              "inside jax.jit, grad or vmap call a zymase function through "
                              "zymase.to_jax(f)") from e
    if v.flags.writeable:
        v = v.view()
        v.flags.writeable = False
    key = id(v)
    _FOREIGN[key] = (weakref.ref(v, lambda _, key=key: _FOREIGN.pop(key, None)), x)
    return v


def foreign_array(v):
    """The ``jax.Array`` that NumPy array ``v`` is a view of (``host_view``), or None."""
    found = _FOREIGN.get(id(v))
    return found[1] if found is not None and found[0]() is v else None


def _host(x, where, written_back: list):
    """``x`` as the compiled code takes it: ``jax.Array``\\ s as NumPy views, 0-d arrays as
    NumPy scalars, float16 arrays as float32 copies and non-native byte order as native copies
    (a writeable original gets the copy's values back after the call: ``written_back`` holds
    the pairs), plain ndarray subclasses viewed as ndarray; inside tuples, lists and dicts too."""
    t = type(x)
    if t is tuple:
        return tuple(_host(v, where, written_back) for v in x)
    if t is list:
        return [_host(v, where, written_back) for v in x]
    if t is dict:
        return {k: _host(v, f"{where}[{k!r}]", written_back) for k, v in x.items()}
    if t is np.float16:
        return np.float32(x)
    if isinstance(x, np.ndarray):
        if t is not np.ndarray:
            if not plain_subclass(t):
                return x  # (refused by param_template, with the reason)
            x = x.view(np.ndarray)
        if x.ndim == 0:
            return _host(x[()], where, written_back)
        if x.dtype.char != "e" and x.dtype.isnative:
            return x
        for original, copy in written_back:
            if original is x:  # (one array passed twice: one copy, as one buffer)
                return copy
            if np.may_share_memory(original, x):
                raise ZymaseTypeError(
                    f"{where} overlaps another float16 or byte-swapped argument; zymase "
                    "computes on converted copies, which would not share memory: pass "
                    "x.astype(np.float32) (or a native-order copy) and convert back")
        copy = x.astype(np.float32 if x.dtype.char == "e" else x.dtype.newbyteorder("="))
        if not x.flags.writeable:
            copy.flags.writeable = False
        written_back.append((x, copy))
        return copy
    if _is_jax_array(x):
        return host_view(x, where)
    return x


def _viewed(a) -> bool:
    """Whether ``_host`` may change argument ``a`` (anything but a plain float, int or a
    native-order ndarray of 1 or more dimensions)."""
    t = type(a)
    if t is np.ndarray:
        return a.ndim == 0 or a.dtype.char == "e" or not a.dtype.isnative
    return t in (tuple, list, dict) or t is np.float16 or isinstance(a, np.ndarray) or \
        _is_jax_array(a)


def foreign_inputs(args) -> list:
    """The ``jax.Array``\\ s among ``args`` (as viewed by ``call_arguments``)."""
    out = []
    for a in args:
        if isinstance(a, np.ndarray):
            f = foreign_array(a)
            if f is not None:
                out.append(f)
        elif type(a) in (tuple, list):
            out += foreign_inputs(a)
    return out


def place_like(result, inputs: list):
    """``result`` with its arrays as ``jax.Array``\\ s on the devices of ``inputs`` (the
    ``jax.Array`` arguments of the call): sharded like an input of the same shape, else on
    the first input's first device."""
    import jax  # lazy: only reached when the call had JAX arrays

    def put(x):
        if isinstance(x, np.ndarray):
            with jax.enable_x64(True):  # (float64 stays float64, whatever JAX's setting)
                for a in inputs:
                    if a.shape == x.shape:
                        return jax.device_put(x, a.sharding)
                return jax.device_put(x, next(iter(inputs[0].devices())))
        if type(x) in (tuple, list):
            return type(x)(put(v) for v in x)
        if type(x) is dict:
            return {k: put(v) for k, v in x.items()}
        return x

    return put(result)


def _per_item(shardings, n: int, what: str) -> list:
    if isinstance(shardings, (tuple, list)):
        if len(shardings) != n:
            raise ValueError(f"{what} has {len(shardings)} entries for {n} values")
        return list(shardings)
    return [shardings] * n


def shard_arguments(args: tuple, shardings) -> tuple:
    """``in_shardings=``: each array argument placed with its sharding (a ``jax.Array``,
    viewed as ``call_arguments`` views one)."""
    import jax  # lazy: only reached with shardings, which need JAX

    out = []
    for k, (a, s) in enumerate(zip(args, _per_item(shardings, len(args), "in_shardings"))):
        if s is not None and isinstance(a, np.ndarray):
            with jax.enable_x64(True):  # (float64 stays float64, whatever JAX's setting)
                a = jax.device_put(foreign_array(a) if foreign_array(a) is not None else a, s)
            a = host_view(a, f"argument {k}")
        out.append(a)
    return tuple(out)


def place_with(result, shardings):
    """``out_shardings=``: the result's arrays placed with their shardings."""
    import jax  # lazy: only reached with shardings, which need JAX

    def put(x, s):
        if s is None:
            return x
        if isinstance(x, (np.ndarray, jax.Array)):
            with jax.enable_x64(True):
                return jax.device_put(x, s)
        if type(x) in (tuple, list):
            return type(x)(put(v, s) for v in x)
        return x

    if isinstance(shardings, (tuple, list)) and type(result) in (tuple, list):
        return type(result)(put(r, s) for r, s in
                            zip(result, _per_item(shardings, len(result), "out_shardings")))
    return put(result, shardings)


_SIGNATURES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # fn -> (signature, ...)
_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def arg_name(fn, k: int) -> str:
    """How errors name parameter ``k`` of ``fn`` (arguments bound one per parameter)."""
    name = getattr(fn, "__name__", "function")
    code = getattr(fn, "__code__", None)
    if code is not None and 0 <= k < code.co_argcount + code.co_kwonlyargcount:
        return f"argument `{code.co_varnames[k]}` of {name}()"
    return f"argument {k} of {name}()"


def call_arguments(fn, args: tuple, kwargs: dict | None = None,
                   written_back: list | None = None) -> tuple:
    """The arguments of ``fn(*args, **kwargs)`` as one value per parameter, in the order of
    ``fn``'s parameters: keywords put in place and defaults filled in, as Python binds them
    (a bad call raises Python's ``TypeError``).  A function with ``*args`` or ``**kwargs`` gets
    ``args`` back as they are (the frontend refuses it, naming the line).  Arguments are viewed
    as the compiled code takes them (``_host``: ``jax.Array``\\ s, 0-d, float16 and
    byte-swapped arrays, ndarray subclasses); ``written_back`` collects the ``(original,
    copy)`` pairs whose copy must be stored back after the call (``with_arguments``)."""
    back = [] if written_back is None else written_back
    if kwargs or any(_viewed(a) for a in args):
        args = tuple(_host(a, arg_name(fn, k), back) for k, a in enumerate(args))
        kwargs = {k: _host(v, f"argument `{k}` of {getattr(fn, '__name__', 'function')}()",
                           back) for k, v in (kwargs or {}).items()}
    try:
        known = _SIGNATURES.get(fn)
    except TypeError:  # not weakly referenceable
        known = None
    if known is None:
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            return _read_only_unless_written_back(args, back, written_back)
        kinds = [p.kind for p in sig.parameters.values()]
        if any(k in _VARIADIC for k in kinds):
            sig = None
        positional = sum(k != inspect.Parameter.KEYWORD_ONLY for k in kinds)
        known = (sig, positional if positional == len(kinds) else -1)
        try:
            _SIGNATURES[fn] = known
        except TypeError:
            pass
    sig, positional = known
    if sig is None or (not kwargs and len(args) == positional):
        return _read_only_unless_written_back(args, back, written_back)
    try:
        bound = sig.bind(*args, **(kwargs or {}))
    except TypeError as e:
        raise ZymaseTypeError(f"{getattr(fn, '__name__', 'function')}(): {e}",
                              caller_loc()) from None
    bound.apply_defaults()
    out = tuple(bound.arguments.values())
    if any(_viewed(a) for a in out):  # (a default value)
        out = tuple(_host(a, arg_name(fn, k), back) for k, a in enumerate(out))
    return _read_only_unless_written_back(out, back, written_back)


def _read_only_unless_written_back(args, back, written_back):
    """Converted copies nobody stores back are read-only: a write into one is refused rather
    than lost."""
    if written_back is None:
        for _, copy in back:
            copy.flags.writeable = False
    return args


def with_arguments(fn, args: tuple, kwargs: dict | None, run):
    """``run(call_arguments(fn, args, kwargs))``, then what the code wrote into the copies of
    float16 or byte-swapped arrays stored back into the caller's arrays (rounded to float16,
    as NumPy stores)."""
    written_back: list = []
    try:
        return run(call_arguments(fn, args, kwargs, written_back))
    finally:  # (also when the code raised: what it wrote before stays written, as in NumPy)
        for original, copy in written_back:
            if original.flags.writeable:
                np.copyto(original, copy, casting="unsafe")
