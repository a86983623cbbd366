"""``zymase.to_torch(f)``: a zymase function as a PyTorch operation with zymase's derivatives.

    import torch, zymase  # lazy: an optional dependency

    def simulate(kappa, u0, dt, steps):      # plain Python and NumPy
        ...
        return u

    sim = zymase.to_torch(simulate)
    u = sim(kappa_tensor, u0_tensor, 1e-3, 100)   # tensors in, tensors out
    loss = ((u - target) ** 2).sum()
    loss.backward()                               # zymase's reverse mode

Tensors are the arrays (CPU; float32, float64, int32, int64, bool); other arguments are
constants (one compiled specialization per value).  Each call goes through custom operators of
the ``zymase`` namespace (``torch.library.custom_op``: ``<name>``, ``<name>_vjp``,
``<name>_jvp``, ``<name>_hvp``), each with a fake implementation (output shapes from the
arguments' shapes, ``ir/shapes.py``) and a vmap rule, inside an ``autograd.Function`` whose
``backward`` is zymase's VJP and ``jvp`` zymase's forward mode.  So it works under
``loss.backward()``, ``torch.autograd.grad``, ``torch.func.{grad,jvp,vjp,vmap,jacrev,jacfwd}``,
``torch.autograd.forward_ad`` and ``torch.compile(fullgraph=True)`` (no graph break); second
derivatives (``torch.func.hessian``, double backward) for a function of one float tensor that
returns one number (zymase's forward-over-reverse ``hvp``).  ``vmap`` of the primal runs
``zymase.vmap``'s compiled loop over the examples (one call); ``vmap`` of a derivative runs the
examples one after another through the compiled derivative.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..api.vmap import batched_function
from ..errors import (
    ZymaseError,
    ZymaseImportError,
    ZymaseTypeError,
    ZymaseValueError,
    at_caller,
)
from ..frontend.source import python_function
from .kernel import (
    ArgSpec,
    Kernel,
    const_key,
    owns_memory,
    structure_of,
    unflatten,
    written_positions,
)

_NAMES = itertools.count()
_LOCK = threading.Lock()
_forward_ad = None  # torch.autograd.forward_ad, once a TorchOp is made
_MADE: dict = {}  # (function, settings) -> its TorchOp


def to_torch(fn: Callable[..., Any], *,
             out_shapes: Callable[..., Any] | tuple[Any, ...] | None = None,
             writes: str | int | Sequence[str | int] = (), name: str | None = None,
             **options: Any) -> TorchOp:
    """A zymase function as a PyTorch operation whose derivatives are zymase's.

    Call the result with tensors for the arrays (CPU; float32, float64, int32, int64, bool)
    and Python values for the rest (constants: ints, floats, strings...; one compiled
    specialization per value); it returns tensors.  Each call goes through custom operators
    of the ``zymase`` namespace (``torch.library.custom_op``) inside an
    ``autograd.Function`` whose ``backward`` is zymase's reverse mode and ``jvp`` zymase's
    forward mode, so it works under ``loss.backward()``, ``torch.autograd.grad``,
    ``torch.func.{grad, jvp, vjp, vmap, jacrev, jacfwd}``, ``torch.autograd.forward_ad`` and
    ``torch.compile(fullgraph=True)`` (no graph break); second derivatives
    (``torch.func.hessian``, double backward) for a function of one float tensor returning
    one number.  Making the same operation twice returns the first one.

    Args:
        fn: A plain Python function (or a ``zymase.jit`` one) returning a number, an array or
            a tuple of them.
        out_shapes: Only where a result's shape does not follow from the arguments' shapes
            (an error says so): a function of the arguments' shapes (tuples) and constants
            returning one shape per result, or the shape(s) themselves.
        writes: The names (or positions) of arguments ``fn`` fills in place (``def f(x,
            out): out[:] = ...``): the operation returns their final contents after ``fn``'s
            own results (their tensors are not changed: the operation works on copies, whose
            initial contents are differentiated too).
        name: The base name of the registered operators (default: ``fn``'s name; a counter
            is appended), as seen in ``torch.ops.zymase`` and in traces.
        **options: Compilation options, as for ``zymase.grad``: ``fastmath``,
            ``boundscheck``, ``disable``, ``memory_limit``, ``backend``, ``cache``,
            ``deterministic``, ``parallel``.

    Returns:
        A ``TorchOp``: callable like ``fn``, returning tensors (a tuple for several results).

    Raises:
        ZymaseImportError: PyTorch is not installed.
        ZymaseTypeError: When called: no argument is a tensor, or a non-tensor argument is
            not a hashable constant.
        ZymaseValueError: When called: a tensor is not on the CPU, a result's shape needs
            ``out_shapes``, or ``writes`` names no parameter of ``fn``.

    Examples:
        >>> import numpy as np, torch, zymase
        >>> def energy(x, k):
        ...     e = 0.0
        ...     for i in range(x.shape[0] - 1):
        ...         e += k * (x[i + 1] - x[i]) ** 2
        ...     return e
        >>> op = zymase.to_torch(energy)
        >>> x = torch.tensor([0.0, 1.0, 3.0], dtype=torch.float64, requires_grad=True)
        >>> op(x, 0.5).backward()
        >>> x.grad
        tensor([-1., -1.,  2.], dtype=torch.float64)
    """
    # one operation per function and settings: making it registers operators, so a call of
    # ``to_torch(f)`` inside a loop finds the one made before
    try:
        key = (python_function(fn), out_shapes, writes, name, tuple(sorted(options.items())))
        hash(key)
    except TypeError:
        return TorchOp(fn, out_shapes, writes, name, options)
    with _LOCK:
        op = _MADE.get(key)
    if op is None:
        op = TorchOp(fn, out_shapes, writes, name, options)
        with _LOCK:
            op = _MADE.setdefault(key, op)
    return op


class TorchOp:
    """What ``to_torch`` returns.  Its operators are made once, here; a call names its
    *layout* (which arguments are tensors, the constants' values, the tensors' dtypes and
    ranks) with a string the operators take, so ``torch.compile`` sees the same operators
    for every layout (the string is a constant of the graph)."""

    def __init__(self, fn, out_shapes, writes, name, options):
        torch = _torch()
        from torch.autograd import forward_ad  # lazy: an optional dependency

        global _forward_ad, _prepare
        _forward_ad = forward_ad
        if _prepare is None:
            # run while torch.compile traces, its result a constant of the graph
            _prepare = torch.compiler.assume_constant_result(_prepare_layout)
        self._torch = torch
        self.fn = python_function(fn)
        self.writes = written_positions(self.fn, writes)
        self.out_shapes = out_shapes
        self.options = options
        base = re.sub(r"\W", "_", name or self.fn.__name__)
        self.name = f"{base}_{next(_NAMES)}"
        self.layouts: dict = {}  # key -> (layout string, result structure)
        self.patterns: dict = {}  # layout string -> _Pattern
        self.__name__ = self.fn.__name__
        self.__doc__ = self.fn.__doc__
        _OPS[id(self)] = self
        self.ops = _Ops(self)

    def __repr__(self):
        return f"<zymase.to_torch {self.fn.__qualname__}>"

    def __del__(self):
        _OPS.pop(id(self), None)

    def prepare(self, key):
        """(layout string, result structure) of a call's layout ``key``."""
        nargs, positions, consts, types = key
        # constants that compare equal may compile differently (2 and 2.0, 0.0 and -0.0)
        key = (nargs, positions, tuple((k, const_key(a)) for k, a in consts), types)
        with _LOCK:
            got = self.layouts.get(key)
            if got is None:
                pattern = _Pattern(self, nargs, positions, dict(consts))
                specs, it = [], iter(types)
                for i in range(nargs):
                    if i in pattern.consts:
                        specs.append(ArgSpec.const(pattern.consts[i]))
                    else:
                        dtype, ndim = next(it)
                        specs.append(ArgSpec.array(_np_dtype(dtype), (0,) * ndim))
                structure = structure_of(self.fn, self.options, specs, self.writes)
                layout = str(len(self.patterns))
                self.patterns[layout] = pattern
                got = self.layouts[key] = (layout, structure)
            return got

    def __call__(self, *args):
        try:
            return self._call(args)
        except ZymaseError as e:  # (an error about this call names the user's line)
            raise at_caller(e) from None

    def _call(self, args):
        torch = self._torch
        positions = tuple(k for k, a in enumerate(args) if isinstance(a, torch.Tensor))
        if not positions:
            raise ZymaseTypeError(f"{self.fn.__name__}: a to_torch operation needs at least "
                                  "one tensor argument")
        consts = tuple((k, a) for k, a in enumerate(args) if k not in positions)
        for _, a in consts:
            if not _hashable(a):
                raise ZymaseTypeError(
                    f"{self.fn.__name__}: argument of type {type(a).__name__} is neither a "
                    "tensor nor a constant (constants are numbers, strings, tuples...: "
                    "hashable)")
        tensors = [args[k] for k in positions]
        for t in tensors:
            if t.device.type != "cpu":
                raise ZymaseValueError(f"{self.fn.__name__}: zymase operations run on the CPU; "
                                       f"this tensor is on {t.device} (use .cpu())")
        types = tuple((str(t.dtype), t.dim()) for t in tensors)
        layout, structure = _prepare(id(self), (len(args), positions, consts, types))
        ops = self.ops
        # torch.compile traces the operator, which carries its backward formula; forward mode
        # and torch.func transforms go through an autograd.Function around the operators
        # (jvp and vmap rules); a plain eager call skips the dispatcher (tens of us a call)
        if torch.compiler.is_compiling():
            out = ops.fwd(tensors, layout)
        elif torch._C._are_functorch_transforms_active() or _forward_ad._current_level >= 0:
            out = ops.apply(layout, *tensors)
        elif torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
            out = ops.direct(layout, *tensors)
        else:
            out = ops._fwd(tensors, layout)
        return unflatten(list(out), structure)


_OPS: dict = {}  # id -> TorchOp (what the traced ``_prepare`` finds)
_prepare = None


def _prepare_layout(op_id, key):
    return _OPS[op_id].prepare(key)


def _hashable(x) -> bool:
    try:
        hash(x)
        return True
    except TypeError:
        return False


def _np_dtype(torch_dtype) -> str:
    name = str(torch_dtype).removeprefix("torch.")
    if name not in ("float32", "float64", "int32", "int64", "bool"):
        raise ZymaseTypeError(f"tensors of {name} cannot be passed to zymase operations (use "
                              "float32, float64, int32, int64 or bool)")
    return name


class _Pattern:
    """One calling pattern: which arguments are tensors, the constants' values; its kernels,
    one per set of tensor dtypes and shapes."""

    def __init__(self, top: TorchOp, nargs: int, positions: tuple, consts: dict):
        self.top, self.nargs, self.positions, self.consts = top, nargs, positions, consts
        self.kernels: dict = {}
        self.batched: dict = {}

    def kernel(self, xs) -> Kernel:
        try:
            return self.kernels[tuple((x.dtype, x.shape) for x in xs)]
        except (KeyError, TypeError):
            pass
        # shapes are specialized (guarded) under dynamic shapes: results depend on them
        key = tuple((_np_dtype(x.dtype), tuple(int(d) for d in x.shape)) for x in xs)
        with _LOCK:
            k = self.kernels.get(key)
            if k is None:
                it = iter(key)
                specs = []
                for i in range(self.nargs):
                    if i in self.consts:
                        specs.append(ArgSpec.const(self.consts[i]))
                    else:
                        specs.append(ArgSpec.array(*next(it)))
                k = self.kernels[key] = Kernel(self.top.fn, self.top.options, specs,
                                               self.top.out_shapes, self.top.writes)
        try:
            self.kernels[tuple((x.dtype, torch_shape(x)) for x in xs)] = k
        except TypeError:  # symbolic sizes
            pass
        return k

    def float_positions(self, xs):
        """Indices (among the tensors) of the float ones, and of the float outputs."""
        k = self.kernel(xs)
        args = [i for i in range(self.nargs) if i not in self.consts]
        return [args.index(i) for i in k.float_inputs], k.float_outputs


class _Ops:
    """The custom operators of one ``TorchOp`` (``zymase::<name>``, ``_vjp``, ``_jvp``,
    ``_hvp``), their fake implementations, vmap rules and autograd formulas."""

    def __init__(self, top: TorchOp):
        import torch  # lazy: an optional dependency

        self.top = top
        lib = f"zymase::{top.name}"
        self.fwd = self._op(lib, "(Tensor[] xs, str layout) -> Tensor[]", self._fwd,
                            self._fwd_fake, self._fwd_vmap)
        self.vjp = self._op(lib + "_vjp",
                            "(Tensor[] xs, Tensor[] cts, str layout) -> Tensor[]",
                            self._vjp, self._vjp_fake)
        self.jvp = self._op(lib + "_jvp", "(Tensor[] xs, Tensor[] ts, str layout) -> Tensor[]",
                            self._jvp, self._jvp_fake)
        self.hvp = self._op(lib + "_hvp",
                            "(Tensor[] xs, Tensor[] ct, Tensor[] vs, str layout) -> Tensor[]",
                            self._hvp, self._hvp_fake)
        self.apply, self.direct = _autograd_functions(torch, self)
        self.fwd.register_autograd(self._fwd_backward, setup_context=_save_inputs)
        self.vjp.register_autograd(self._vjp_backward, setup_context=_save_inputs)

    def _op(self, qualname, schema, impl, fake, vmap=None):
        import torch  # lazy: an optional dependency

        op = torch.library.custom_op(qualname, impl, mutates_args=(), schema=schema)
        op.register_fake(fake)
        torch.library.register_vmap(op, vmap or _looped(op))
        return op

    def pattern(self, layout: str) -> _Pattern:
        return self.top.patterns[layout]

    def kernel(self, xs, layout) -> Kernel:
        return self.pattern(layout).kernel(xs)

    def float_positions(self, xs, layout):
        return self.pattern(layout).float_positions(xs)

    # -- autograd formulas of the operators themselves (what torch.compile traces)

    def _fwd_backward(self, ctx, cts):
        return self.backward(list(ctx.inputs[0]), cts, ctx.inputs[1]), None

    def backward(self, xs, cts, layout, needed=None):
        """The gradients of the tensors ``xs`` for the outputs' cotangents ``cts`` (of those
        marked in ``needed``, when given: the others are constants of the reverse pass)."""
        fin, fout = self.float_positions(xs, layout)
        cts = [_zeros_if_none(cts[j], self._out_zeros(xs, layout, j)) for j in fout]
        torch = self.top._torch
        if torch.is_grad_enabled() or torch.compiler.is_compiling() or \
                torch._C._are_functorch_transforms_active():
            grads = self.vjp(xs, cts, layout)  # the operator: its own backward is recorded
        else:  # a plain backward pass: the implementation, without the dispatcher's cost
            if needed is not None:
                fin = [i for i in fin if needed[i]]
            grads = self._vjp(xs, cts, layout, fin)
        out = [None] * len(xs)
        for i, g in zip(fin, grads):
            out[i] = g
        return out

    def _vjp_backward(self, ctx, gs):
        xs, cts, layout = list(ctx.inputs[0]), list(ctx.inputs[1]), ctx.inputs[2]
        fin, _ = self.float_positions(xs, layout)
        gs = [_zeros_if_none(g, xs[i]) for g, i in zip(gs, fin)]
        d_xs = [None] * len(xs)
        if ctx.needs_input_grad[0]:
            for i, h in zip(fin, self.hvp(xs, cts, gs, layout)):
                d_xs[i] = h
        d_cts = list(self.jvp(xs, gs, layout)) if ctx.needs_input_grad[1] else None
        return d_xs, d_cts, None

    def _out_zeros(self, xs, layout, j):
        d, s = self.kernel(xs, layout).outputs[j]
        return _empty(xs[0], d, s).zero_()

    # -- implementations (NumPy views of the tensors in, new tensors out)

    def _fwd(self, xs, layout):
        outs = self.kernel(xs, layout).primal([_numpy(x) for x in xs])
        return _tensors(outs, xs)

    def _fwd_vmap(self, info, in_dims, xs, layout):
        """vmap of the primal: ``zymase.vmap``'s compiled loop over the examples, one call."""
        dims = in_dims[0] if isinstance(in_dims[0], (list, tuple)) else [in_dims[0]] * len(xs)
        moved = [x if d is None else x.movedim(d, 0) for x, d in zip(xs, dims)]
        mapped = tuple(d is not None for d in dims)
        one = self.kernel([x.new_zeros(x.shape[1:]) if m else x for x, m in zip(moved, mapped)],
                          layout)
        n = info.batch_size
        if n == 0:
            outs = [moved[0].new_zeros((0, *s), dtype=getattr(_torch(), d))
                    for d, s in one.outputs]
            return outs, [0] * len(outs)
        cache = self.pattern(layout).batched
        key = (mapped, tuple((x.dtype, tuple(x.shape)) for x in moved))
        k = cache.get(key)
        if k is None:
            marks = iter(mapped)
            axes = [(0 if next(marks) else None) if s.is_array else None for s in one.specs]
            py = batched_function(one.fn, axes, one.result_desc)
            it = iter(moved)
            specs = [ArgSpec.array(_np_dtype(x.dtype), x.shape) if s.is_array else s
                     for s in one.specs for x in ([next(it)] if s.is_array else [None])]
            k = cache[key] = Kernel(py, self.top.options, specs)
        outs = _tensors(k.primal([_numpy(x) for x in moved]), moved)
        return outs, [0] * len(outs)

    def _fwd_fake(self, xs, layout):
        return [_empty(xs[0], d, s) for d, s in self.kernel(xs, layout).outputs]

    def _vjp(self, xs, cts, layout, tensors=None):
        """The vjp's implementation (of the float tensors at ``tensors`` only, when given)."""
        k = self.kernel(xs, layout)
        positions = self.pattern(layout).positions
        wanted = None if tensors is None else {positions[i] for i in tensors}
        return _tensors(k.vjp([_numpy(x) for x in xs], [_numpy(c) for c in cts], wanted), xs)

    def _vjp_fake(self, xs, cts, layout):
        return self._inputs_fake(xs, layout)

    def _hvp_fake(self, xs, ct, vs, layout):
        return self._inputs_fake(xs, layout)

    def _inputs_fake(self, xs, layout):
        k = self.kernel(xs, layout)
        return [_empty(xs[0], k.specs[i].dtype, k.specs[i].shape) for i in k.float_inputs]

    def _jvp(self, xs, ts, layout):
        k = self.kernel(xs, layout)
        return _tensors(k.jvp([_numpy(x) for x in xs], [_numpy(t) for t in ts]), xs)

    def _jvp_fake(self, xs, ts, layout):
        k = self.kernel(xs, layout)
        return [_empty(xs[0], *k.outputs[j]) for j in k.float_outputs]

    def _hvp(self, xs, ct, vs, layout):
        k = self.kernel(xs, layout)
        return _tensors(k.hvp([_numpy(x) for x in xs], _numpy(ct[0]),
                              [_numpy(v) for v in vs]), xs)


def torch_shape(x):
    shape = x.shape
    hash(shape)
    return shape


def _torch():
    try:
        import torch  # lazy: an optional dependency
    except ImportError:
        raise ZymaseImportError("zymase.to_torch needs PyTorch: pip install torch (or "
                                "pip install 'zymase[interop]')") from None
    return torch


def _save_inputs(ctx, inputs, output):
    ctx.inputs = inputs


def _numpy(t):
    return t.detach().contiguous().numpy()


def _tensors(arrays, xs):
    """New tensors for results (never sharing memory with an input or each other: operators
    return fresh tensors)."""
    import torch  # lazy: an optional dependency

    inputs = [x.detach().numpy() for x in xs]
    out, seen = [], []
    for a in arrays:
        a = np.asarray(a)
        # a view of an operand or of a global array, or a second view of one buffer: copied
        if not owns_memory(a) or any(np.may_share_memory(a, b) for b in inputs + seen) or \
                not a.flags.writeable or not a.flags.c_contiguous:
            a = a.copy()
        seen.append(a)
        out.append(torch.from_numpy(a))
    return out


def _empty(like, dtype: str, shape):
    import torch  # lazy: an optional dependency

    return like.new_empty(tuple(shape), dtype=getattr(torch, dtype))


def _looped(op):
    """A vmap rule: the examples one after another through ``op``, stacked (the layout
    string, the last argument, passes through)."""
    import torch  # lazy: an optional dependency

    def rule(info, in_dims, *args):
        *lists, layout = args
        n = info.batch_size
        dims = [d if isinstance(d, (list, tuple)) else [d] * len(lst)
                for lst, d in zip(lists, in_dims)]
        outs = []
        for b in range(max(n, 1)):  # (an empty batch: one example of zeros, for the shapes)
            outs.append(op(*[[t if d is None else t.select(d, b) if n else
                              t.new_zeros(t.shape[:d] + t.shape[d + 1:])
                              for t, d in zip(lst, ds)]
                             for lst, ds in zip(lists, dims)], layout))
        stacked = [torch.stack([o[j] for o in outs]) if n else
                   outs[0][j].new_zeros((0, *outs[0][j].shape)) for j in range(len(outs[0]))]
        return stacked, [0] * len(stacked)
    return rule


def _autograd_functions(torch, ops: _Ops):
    """The ``autograd.Function`` around ``ops.fwd`` (for torch.func transforms and forward
    mode), the one around ``ops.vjp`` that makes its backward pass differentiable again, and
    the one plain eager calls use (the implementations themselves)."""

    class Vjp(torch.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(layout, n_xs, *xs_cts):
            return tuple(ops.vjp(list(xs_cts[:n_xs]), list(xs_cts[n_xs:]), layout))

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.layout, ctx.n_xs = inputs[0], inputs[1]
            ctx.save_for_backward(*inputs[2:])
            ctx.save_for_forward(*inputs[2:])

        @staticmethod
        def backward(ctx, *gs):
            saved, n = ctx.saved_tensors, ctx.n_xs
            xs, cts = list(saved[:n]), list(saved[n:])
            fin, _ = ops.float_positions(xs, ctx.layout)
            gs = [_zeros_if_none(g, xs[i]) for g, i in zip(gs, fin)]
            d_xs = [None] * len(xs)
            if any(ctx.needs_input_grad[2:2 + n]):
                for i, h in zip(fin, ops.hvp(xs, cts, gs, ctx.layout)):
                    d_xs[i] = h
            d_cts = list(ops.jvp(xs, gs, ctx.layout)) if any(ctx.needs_input_grad[2 + n:]) \
                else [None] * len(cts)
            return (None, None, *d_xs, *d_cts)

        @staticmethod
        def jvp(ctx, _layout, _n, *tangents):
            saved, n = ctx.saved_tensors, ctx.n_xs
            xs, cts = list(saved[:n]), list(saved[n:])
            fin, _ = ops.float_positions(xs, ctx.layout)
            dxs, dcts = tangents[:n], tangents[n:]
            dcts = [_zeros_if_none(t, c) for t, c in zip(dcts, cts)]
            out = list(ops.vjp(xs, dcts, ctx.layout))
            if any(dxs[i] is not None for i in fin):
                vs = [_zeros_if_none(dxs[i], xs[i]) for i in fin]
                out = [a + b for a, b in zip(out, ops.hvp(xs, cts, vs, ctx.layout))]
            return tuple(out)

    class Apply(torch.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(layout, *xs):
            return tuple(ops.fwd(list(xs), layout))

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.layout = inputs[0]
            ctx.save_for_backward(*inputs[1:])
            ctx.save_for_forward(*inputs[1:])
            _, fout = ops.float_positions(list(inputs[1:]), ctx.layout)
            ints = [o for j, o in enumerate(output) if j not in fout]
            if ints:
                ctx.mark_non_differentiable(*ints)

        @staticmethod
        def backward(ctx, *cts):
            xs = list(ctx.saved_tensors)
            fin, fout = ops.float_positions(xs, ctx.layout)
            cts = [_zeros_if_none(cts[j], ops._out_zeros(xs, ctx.layout, j)) for j in fout]
            grads = Vjp.apply(ctx.layout, len(xs), *xs, *cts)
            out = [None] * len(xs)
            for i, g in zip(fin, grads):
                out[i] = g
            return (None, *out)

        @staticmethod
        def jvp(ctx, _layout, *ts):
            xs = list(ctx.saved_tensors)
            fin, fout = ops.float_positions(xs, ctx.layout)
            tans = [_zeros_if_none(ts[i], xs[i]) for i in fin]
            touts = iter(ops.jvp(xs, tans, ctx.layout))
            k = ops.kernel(xs, ctx.layout)
            return tuple(next(touts) if j in fout else None for j in range(len(k.outputs)))

    class Direct(torch.autograd.Function):
        """Eager calls outside torch.func transforms: the implementations themselves."""

        @staticmethod
        def forward(ctx, layout, *xs):
            ctx.layout = layout
            ctx.save_for_backward(*xs)
            outs = ops._fwd(list(xs), layout)
            _, fout = ops.float_positions(list(xs), layout)
            ints = [o for j, o in enumerate(outs) if j not in fout]
            if ints:
                ctx.mark_non_differentiable(*ints)
            return tuple(outs)

        @staticmethod
        def backward(ctx, *cts):
            return (None, *ops.backward(list(ctx.saved_tensors), list(cts), ctx.layout,
                                        ctx.needs_input_grad[1:]))

    return Apply.apply, Direct.apply


def _zeros_if_none(t, like):
    return like.new_zeros(like.shape) if t is None else t
