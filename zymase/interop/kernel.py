"""A zymase function seen as an operation of another framework (``to_torch``, ``to_jax``).

An operation is called with arrays (tensors, JAX arrays) and constants (Python numbers,
strings, ...): a ``Kernel`` is the function compiled for one *signature* (each array's dtype and
shape, each constant's value).  It knows its outputs before running anything (their shapes
follow from the arguments' shapes: ``ir/shapes.py``; the user names them where they do not), and
runs the primal and the derivatives on NumPy arrays:

    k = Kernel(f, options, [ArgSpec.array("float64", (8,)), ArgSpec.const(3)])
    k.outputs                      # [("float64", (8,)), ...]
    k.primal([x])                  # the flat outputs, NumPy arrays (0-d for numbers)
    k.jvp([x], [dx])               # tangents of the float outputs
    k.vjp([x], [ct])               # cotangents of the float array arguments
    k.hvp([x], ct, [v])            # second order, for functions returning one float

Numbers among the arguments are constants (each value its own signature, like JAX's static
arguments), except 0-d arrays, which are passed as numbers of their dtype and differentiated.
"""

from __future__ import annotations

import inspect
import itertools
import linecache
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..api.jit import jit
from ..api.values import flat_args, gather_adjoints, rebuild
from ..driver.cache import shared
from ..driver.compile import compile_specialization
from ..driver.request import Request
from ..driver.signature import arrays_disjoint
from ..errors import DifferentiationError, ShapeError, ZymaseTypeError, ZymaseValueError
from ..frontend.args import flatten_arg
from ..frontend.source import python_function
from ..ir.shapes import result_shapes
from ..ir.types import ArrayType
from ..options import transform_options

FLOATS = ("float32", "float64")
DTYPES = FLOATS + ("int32", "int64", "bool")
JIT_OPTIONS = ("fastmath", "boundscheck", "cache", "disable", "backend", "deterministic",
               "parallel")


@dataclass(frozen=True)
class ArgSpec:
    """One argument of a call: an array (``dtype`` name and ``shape``) or a constant
    (``value``)."""

    dtype: str | None = None
    shape: tuple | None = None
    value: Any = field(default=None, compare=False)
    tag: Any = None  # what tells constants apart: const_key(value)

    @staticmethod
    def array(dtype, shape) -> ArgSpec:
        dtype = np.dtype(dtype).name
        if dtype not in DTYPES:
            raise ZymaseTypeError(f"arrays of {dtype} cannot be passed to zymase operations "
                                  f"(use one of {', '.join(DTYPES)})")
        return ArgSpec(dtype, tuple(int(d) for d in shape))

    @staticmethod
    def const(value) -> ArgSpec:
        try:
            hash(value)
        except TypeError:
            raise ZymaseTypeError(f"a constant argument must be hashable (a number, string, "
                                  f"tuple...), not {type(value).__name__}") from None
        return ArgSpec(value=value, tag=const_key(value))

    @property
    def is_array(self) -> bool:
        return self.dtype is not None

    @property
    def is_float(self) -> bool:
        return self.dtype in FLOATS


def const_key(value):
    """A key telling apart constants that compare equal but compile differently: ``2`` and
    ``2.0`` (an int and a float), ``0.0`` and ``-0.0``, ``True`` and ``1``."""
    if isinstance(value, tuple):
        return ("tuple", tuple(const_key(v) for v in value))
    if isinstance(value, float):
        return ("float", value.hex())
    return (type(value).__qualname__, value)


def owns_memory(a: np.ndarray) -> bool:
    """Whether ``a``'s memory is the compiled call's own (a buffer it allocated, or a NumPy
    array nothing else holds), not an argument's or a global's that it returned a view of."""
    obj = a
    while True:
        base = obj.base
        if base is None:
            return True
        if hasattr(base, "keep"):  # backends/cpu/abi.py: _Memory, keeping an _Owner or an array
            return not isinstance(base.keep, np.ndarray)
        if not isinstance(base, np.ndarray):  # foreign memory (a tensor's, a buffer)
            return False
        obj = base


class Kernel:
    """``fn`` compiled for one signature (a list of ``ArgSpec``)."""

    def __init__(self, fn, options: dict, specs: list[ArgSpec], out_shapes=None, writes=()):
        self.fn = python_function(fn)
        self.name = self.fn.__name__
        self.options = dict(options)
        self.jit_options = {k: v for k, v in options.items() if k in JIT_OPTIONS}
        self.specs = list(specs)
        self.float_inputs = [k for k, s in enumerate(specs) if s.is_float]
        example = [_example(s) for s in specs]
        self.fn, spec = compiled(self.fn, self.options, specs, writes, example)
        # arguments the code writes: given copies (operations never change their operands)
        owners = [k for k, (a, t) in enumerate(zip(example, spec.templates))
                  for _ in flatten_arg(a, t)]
        self.written = {owners[i] for i in spec.entry.written} | set(writes)
        self.result_desc = spec.result
        self.structure = _structure(spec.result, self.name)
        self.leaves = _leaves(spec.result)
        shapes = self._infer(spec, example, out_shapes)
        self.outputs = [(t.dtype.np_dtype.name if isinstance(t, ArrayType) else t.np_dtype.name,
                         s) for t, s in zip(self.leaves, shapes)]
        self.float_outputs = [j for j, (d, _) in enumerate(self.outputs) if d in FLOATS]
        self._call = jit(self.fn, **self.jit_options)
        self._comp = shared(self.fn, transform_options(**self.options))

    # -- shapes

    def _infer(self, spec, example, out_shapes) -> list:
        if out_shapes is not None:
            given = out_shapes(*[s.shape if s.is_array else s.value for s in self.specs]) \
                if callable(out_shapes) else out_shapes
            shapes = [given] if len(self.leaves) == 1 and _is_shape(given) else list(given)
            if len(shapes) != len(self.leaves) or not all(_is_shape(s) for s in shapes):
                raise ZymaseValueError(f"out_shapes must give {len(self.leaves)} shape(s) for "
                                       f"the results of {self.name}(), not {given!r}")
            for j, (t, sh) in enumerate(zip(self.leaves, shapes)):
                ndim = t.ndim if isinstance(t, ArrayType) else 0
                if len(sh) != ndim:
                    raise ZymaseValueError(
                        f"out_shapes gives result {j} of {self.name}() the shape {tuple(sh)}, "
                        f"but it is {'an array with ' if ndim else 'a number: '}"
                        f"{ndim} dimension{'s' if ndim != 1 else ''}")
            return [tuple(int(d) for d in s) for s in shapes]
        module = spec.module
        if module is None:  # loaded from the disk cache: compile the IR again to read it
            options = transform_options(**{**self.options, "cache": False})
            module = compile_specialization(self.fn, example, options,
                                            arrays_disjoint(example)).module
        entry = next(f for f in module if f.attrs.get("entry"))
        known = []
        for a, t, s in zip(example, spec.templates, self.specs):
            for v in flatten_arg(a, t):
                # a number from a 0-d array is data, not known when the operation is built
                known.append(np.shape(v) if isinstance(v, np.ndarray) else
                             None if s.is_array else v)
        outer = spec.captures.arrays() if spec.captures is not None and \
            spec.captures.n_slots else []
        shapes = result_shapes(module, entry.sym_name, known, [np.shape(g) for g in outer])
        for j, s in enumerate(shapes):
            if any(d is None for d in s):
                raise ZymaseValueError(
                    f"the shape of result {j} of {self.name}() depends on more than the shapes "
                    f"of its arguments ({_show(s)}): give it with out_shapes= (a function of the "
                    "arguments' shapes and constants returning one shape per result)")
        return shapes

    # -- calls on NumPy arrays

    def args(self, arrays: list) -> list:
        """The user's arguments: ``arrays`` (one per array argument) and the constants."""
        it = iter(arrays)
        out = []
        for s in self.specs:
            if not s.is_array:
                out.append(s.value)
                continue
            a = np.asarray(next(it), dtype=s.dtype)
            if a.ndim and not a.flags.c_contiguous:
                a = np.ascontiguousarray(a)
            if len(out) in self.written:
                a = a.copy()
            out.append(a[()] if a.ndim == 0 else a)
        return out

    def _flat(self, result) -> list:
        flat = _flatten(result, self.structure)
        out = []
        for j, (v, (dtype, shape)) in enumerate(zip(flat, self.outputs)):
            a = np.asarray(v, dtype=dtype)
            if a.shape != shape:
                raise ShapeError(f"result {j} of {self.name}() has shape {a.shape}, not the "
                                 f"{shape} declared for it: give out_shapes= its real shape")
            out.append(a)
        return out

    def primal(self, arrays: list) -> list:
        return self._flat(self._call(*self.args(arrays)))

    def _derivative(self, args, req):
        """The compiled derivative ``req`` and the flat arguments for ``args`` (copies of the
        arrays it writes: an operation never changes its operands)."""
        d = self._comp.get(args, req)
        flat = flat_args(d, args)
        for i in d.written:
            if isinstance(flat[i], np.ndarray):
                flat[i] = np.array(flat[i])
        d.check_distinct(flat)
        return d, flat

    def jvp(self, arrays: list, tangents: list) -> list:
        """Tangents of the float outputs for ``tangents`` (one per float array argument, None
        for a direction of zeros): one run of the compiled forward mode."""
        args = self.args(arrays)
        if not self.float_inputs or all(t is None for t in tangents):
            return [np.zeros(self.outputs[j][1], self.outputs[j][0])
                    for j in self.float_outputs]
        d, flat = self._derivative(args, Request("fwd", tuple(self.float_inputs), 1, ()))
        given = dict(zip(self.float_inputs, tangents))
        tans = []
        for i in d.flat_active:
            k = d.leaf_of[i][0]
            t = given.get(k)
            tans.append(np.zeros_like(flat[i]) if t is None and isinstance(flat[i], np.ndarray)
                        else flat[i] * 0 if t is None else _like(t, flat[i]))
        out = d.call(flat + tans)[d.n_flat_results:]
        return [np.asarray(v, dtype=self.outputs[j][0]).reshape(self.outputs[j][1])
                for v, j in zip(out, self.float_outputs)]

    def vjp(self, arrays: list, cotangents: list, wanted=None) -> list:
        """Cotangents of the float array arguments (of those in ``wanted``, argument
        positions, when given: the others are held constant and get no shadow) for
        ``cotangents`` (one per float output, None for zeros): one run of the compiled reverse
        mode (forward and adjoint sweeps)."""
        nums = tuple(self.float_inputs if wanted is None else
                     [k for k in self.float_inputs if k in wanted])
        if not nums:
            return []
        args = self.args(arrays)
        d, flat = self._derivative(args, Request("rev", nums, 1, tuple(self.float_outputs)))
        seeds = []
        for j, c in zip(self.float_outputs, cotangents):
            dtype, shape = self.outputs[j]
            c = np.zeros(shape, dtype) if c is None else np.asarray(c, dtype=dtype)
            seeds.append(np.ascontiguousarray(c.reshape(shape)) if shape
                         else np.dtype(dtype).type(c.reshape(())))
        shadows = {i: np.zeros_like(flat[i]) for i in d.flat_active
                   if isinstance(flat[i], np.ndarray)}
        out = d.call(flat + list(shadows.values()) + seeds)
        per_arg = gather_adjoints(d, nums, shadows, out[d.n_flat_results:])
        return [np.asarray(rebuild(d.templates[k], per_arg[k]), dtype=self.specs[k].dtype)
                .reshape(self.specs[k].shape) for k in nums]

    def hvp(self, arrays: list, cotangent, directions: list) -> list:
        """The tangent of ``vjp(arrays, [cotangent])`` along ``directions`` of the arguments
        (second order): ``cotangent * H v``, for functions of one float array argument
        returning one float."""
        if len(self.float_outputs) != 1 or self.outputs[self.float_outputs[0]][1] != () or \
                len(self.float_inputs) != 1:
            raise DifferentiationError(
                f"second derivatives of {self.name}() are available for functions of one float "
                "argument returning one float (zymase.hvp); this one has "
                f"{len(self.float_inputs)} float argument(s) and "
                f"{len(self.float_outputs)} float result(s)")
        k, j = self.float_inputs[0], self.float_outputs[0]
        dtype, shape = self.specs[k].dtype, self.specs[k].shape
        v = directions[0]
        if v is None:
            return [np.zeros(shape, dtype)]
        args = self.args(arrays)
        # forward over reverse with the cotangent as the seed: cotangent * H v
        d, flat = self._derivative(args, Request("fwd-rev", (k,), 1, (j,)))
        x = flat[d.flat_active[0]]
        seed = np.dtype(self.outputs[j][0]).type(np.asarray(cotangent).reshape(()))
        if isinstance(x, np.ndarray):
            hv = np.zeros_like(x)
            d.call(flat + [np.zeros_like(x), seed, _like(v, x), hv])
        else:
            hv = d.call(flat + [seed, _like(v, x)])[-1]
        return [np.asarray(hv, dtype=dtype).reshape(shape)]


_WRAPPERS = itertools.count()


def compiled(fn, options: dict, specs: list, writes=(), example=None):
    """(the function an operation runs, its compiled primal) for ``specs``: ``fn`` itself,
    or with ``writes``, a wrapper returning the written arguments too."""
    example = [_example(s) for s in specs] if example is None else example
    spec = shared(fn, transform_options(**options)).primal(example)
    if writes:
        for k in writes:
            if not specs[k].is_array or not specs[k].shape:
                raise ZymaseTypeError(f"argument {k} of {fn.__name__}() is declared written "
                                      "(writes=): pass an array there")
        fn = _returning_written(fn, len(specs), writes, spec.result)
        spec = shared(fn, transform_options(**options)).primal(example)
    return fn, spec


def structure_of(fn, options: dict, specs: list, writes=()):
    """The structure of ``fn``'s results for arguments of these dtypes and ranks (shapes do
    not matter: every array spec may be empty)."""
    fn, spec = compiled(python_function(fn), options, specs, writes)
    return _structure(spec.result, fn.__name__)


def written_positions(fn, writes) -> tuple:
    """The positions of the arguments named (or numbered) in ``writes=``."""
    if isinstance(writes, (str, int)):
        writes = (writes,)
    names = list(inspect.signature(fn).parameters)
    out = []
    for w in writes:
        if isinstance(w, str):
            if w not in names:
                raise ZymaseValueError(f"writes={w!r}: {fn.__name__}() has no parameter "
                                       f"{w!r} (its parameters: {', '.join(names)})")
            out.append(names.index(w))
        elif isinstance(w, int) and not isinstance(w, bool) and -len(names) <= w < len(names):
            out.append(w % len(names))
        else:
            raise ZymaseValueError(f"writes= takes parameter names or positions of "
                                   f"{fn.__name__}(), not {w!r}")
    return tuple(sorted(set(out)))


def _returning_written(fn, nargs: int, writes, desc):
    """``fn`` returning, after its own results, the final contents of the arguments it writes
    (``writes``: their positions): the source of a wrapper, compiled like any function."""
    params = [f"a{k}" for k in range(nargs)]
    call = f"_f({', '.join(params)})"
    filled = [params[k] for k in writes]
    if desc[0] == "p" and desc[1] is None:
        lines = [f"    {call}", f"    return ({', '.join(filled)},)"]
    elif desc[0] == "t":
        mine = [f"r[{j}]" for j in range(len(desc[1]))]
        lines = [f"    r = {call}", f"    return ({', '.join(mine + filled)},)"]
    else:
        lines = [f"    r = {call}", f"    return (r, {', '.join(filled)})"]
    text = f"def {fn.__name__}({', '.join(params)}):\n" + "\n".join(lines) + "\n"
    name = f"<zymase.writes-{next(_WRAPPERS)}>"
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    namespace = {"_f": fn}
    exec(compile(text, name, "exec"), namespace)
    return namespace[fn.__name__]


def _example(s: ArgSpec):
    if not s.is_array:
        return s.value
    if not s.shape:
        return np.dtype(s.dtype).type(0)[()] if s.dtype != "float64" else 0.0
    return np.zeros(s.shape, s.dtype)


def _like(t, primal):
    if isinstance(primal, np.ndarray):
        return np.array(t, dtype=primal.dtype).reshape(primal.shape)
    return type(primal)(np.asarray(t).reshape(()))


def _structure(desc, name):
    """("leaf",) for a number or an array, ("tuple", parts) for a tuple of them."""
    kind = desc[0]
    if kind in ("s", "a"):
        return ("leaf",)
    if kind == "t":
        return ("tuple", tuple(_structure(p, name) for p in desc[1]))
    raise ZymaseTypeError(f"{name}() must return a number, an array or a tuple of them to be "
                          "used as an operation")


def _leaves(desc) -> list:
    if desc[0] in ("s", "a"):
        return [desc[1]]
    return [t for p in desc[1] for t in _leaves(p)]


def _flatten(value, structure) -> list:
    if structure[0] == "leaf":
        return [value]
    return [v for x, s in zip(value, structure[1]) for v in _flatten(x, s)]


def _unflatten(flat: list, structure):
    it = iter(flat)

    def build(s):
        return next(it) if s[0] == "leaf" else tuple(build(p) for p in s[1])
    return build(structure)


def unflatten(flat: list, structure):
    """Outputs with the structure the function returns (a leaf, or nested tuples)."""
    return _unflatten(flat, structure)


def _is_shape(s) -> bool:
    return isinstance(s, (tuple, list)) and all(isinstance(d, (int, np.integer)) for d in s)


def _show(shape) -> str:
    return "(" + ", ".join("?" if d is None else str(d) for d in shape) + \
        ("," if len(shape) == 1 else "") + ")"
