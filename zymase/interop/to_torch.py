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

import numpy as np

from ..errors import ZymaseTypeError, ZymaseValueError
from ..frontend.source import python_function
from .kernel import ArgSpec, Kernel, unflatten, written_positions

_NAMES = itertools.count()
_LOCK = threading.Lock()
_forward_ad = None  # torch.autograd.forward_ad, once a TorchOp is made


def to_torch(fn, *, out_shapes=None, writes=(), name: str | None = None, **options):
    """``fn`` as a PyTorch operation whose derivatives are zymase's.

    ``fn`` is a plain Python function (or a ``zymase.jit`` one) returning a number, an array or
    a tuple of them.  Call the result with tensors for the arrays and Python values for the
    rest (constants: ints, floats, strings...).  ``out_shapes``: only where a result's shape
    does not follow from the arguments' shapes (an error says so): a function of the
    arguments' shapes (tuples) and constants returning one shape per result.  ``writes``: the
    names (or positions) of arguments ``fn`` fills in place (``def f(x, out): out[:] = ...``):
    the operation returns their final contents after ``fn``'s own results (their tensors are
    not changed: the operation works on copies, whose initial contents are differentiated
    too).  ``options`` are those of ``zymase.grad`` (``fastmath``, ``memory_limit``, ...).

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
    return TorchOp(fn, out_shapes, writes, name, options)


class TorchOp:
    """What ``to_torch`` returns: calls dispatch on which arguments are tensors and the
    constants' values (one set of custom operators each)."""

    def __init__(self, fn, out_shapes, writes, name, options):
        import torch  # lazy: torch is an optional dependency
        import torch.autograd.forward_ad  # lazy: an optional dependency

        global _forward_ad
        _forward_ad = torch.autograd.forward_ad
        self._torch = torch
        self.fn = python_function(fn)
        self.writes = written_positions(self.fn, writes)
        self.out_shapes = out_shapes
        self.options = options
        base = re.sub(r"\W", "_", name or self.fn.__name__)
        self.name = f"{base}_{next(_NAMES)}"
        self._families: dict = {}
        self.__name__ = self.fn.__name__
        self.__doc__ = self.fn.__doc__

    def __repr__(self):
        return f"<zymase.to_torch {self.fn.__qualname__}>"

    def _family(self, key, nargs, positions, consts):
        with _LOCK:
            fam = self._families.get(key)
            if fam is None:
                fam = self._families[key] = _Family(self, nargs, positions, dict(consts),
                                                    len(self._families))
            return fam

    def __call__(self, *args):
        torch = self._torch
        positions = tuple(k for k, a in enumerate(args) if isinstance(a, torch.Tensor))
        if not positions:
            raise ZymaseTypeError(f"{self.fn.__name__}: a to_torch operation needs at least "
                                  "one tensor argument")
        consts = tuple((k, a) for k, a in enumerate(args) if k not in positions)
        try:
            key = (len(args), positions, consts)
            hash(key)
        except TypeError:
            bad = next(a for _, a in consts if not _hashable(a))
            raise ZymaseTypeError(
                f"{self.fn.__name__}: argument of type {type(bad).__name__} is neither a tensor "
                "nor a constant (constants are numbers, strings, tuples...: hashable)") from None
        fam = self._families.get(key)
        if fam is None:
            fam = self._family(key, len(args), positions, consts)
        tensors = [args[k] for k in positions]
        for t in tensors:
            if t.device.type != "cpu":
                raise ZymaseValueError(f"{self.fn.__name__}: zymase operations run on the CPU; "
                                       f"this tensor is on {t.device} (use .cpu())")
        # torch.compile traces the operator, which carries its backward formula; forward mode
        # and torch.func transforms go through an autograd.Function around the operators
        # (jvp and vmap rules); a plain eager call skips the dispatcher (tens of us a call)
        if torch.compiler.is_compiling():
            out = fam.fwd(tensors)
        elif torch._C._are_functorch_transforms_active() or _forward_ad._current_level >= 0:
            out = fam.apply(*tensors)
        elif torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
            out = fam.direct(*tensors)
        else:
            out = fam._fwd(tensors)
        return unflatten(list(out), fam.structure(tensors))


def _hashable(x) -> bool:
    try:
        hash(x)
        return True
    except TypeError:
        return False


_DTYPES = None


def _np_dtype(torch_dtype) -> str:
    name = str(torch_dtype).removeprefix("torch.")
    if name not in ("float32", "float64", "int32", "int64", "bool"):
        raise ZymaseTypeError(f"tensors of {name} cannot be passed to zymase operations (use "
                              "float32, float64, int32, int64 or bool)")
    return name


def _torch_dtype(torch, name: str):
    return getattr(torch, name)


class _Family:
    """The custom operators and autograd rule of one calling pattern: which arguments are
    tensors, and the constants' values."""

    def __init__(self, top: TorchOp, nargs: int, positions: tuple, consts: dict, k: int):
        import torch  # lazy: an optional dependency

        self.top, self.nargs, self.positions, self.consts = top, nargs, positions, consts
        self.kernels: dict = {}
        lib = f"zymase::{top.name}_{k}"
        self.fwd = self._op(lib, "(Tensor[] xs) -> Tensor[]", self._fwd, self._fwd_fake,
                            self._fwd_vmap)
        self._batched: dict = {}
        self.vjp = self._op(lib + "_vjp", "(Tensor[] xs, Tensor[] cts) -> Tensor[]",
                            self._vjp, self._vjp_fake)
        self.jvp = self._op(lib + "_jvp", "(Tensor[] xs, Tensor[] ts) -> Tensor[]",
                            self._jvp, self._jvp_fake)
        self.hvp = self._op(lib + "_hvp", "(Tensor[] xs, Tensor[] ct, Tensor[] vs) -> Tensor[]",
                            self._hvp, self._vjp_fake_xs)
        self.apply, self.direct = _autograd_functions(torch, self)
        self.fwd.register_autograd(self._fwd_backward, setup_context=_save_inputs)
        self.vjp.register_autograd(self._vjp_backward, setup_context=_save_inputs)

    def _op(self, qualname, schema, impl, fake, vmap=None):
        import torch  # lazy: an optional dependency

        op = torch.library.custom_op(qualname, impl, mutates_args=(), schema=schema)
        op.register_fake(fake)
        torch.library.register_vmap(op, vmap or _looped(op))
        return op

    # -- autograd formulas of the operators themselves (what torch.compile traces)

    def _fwd_backward(self, ctx, cts):
        return self.backward(list(ctx.inputs[0]), cts)

    def backward(self, xs, cts):
        """The gradients of the tensors ``xs`` for the outputs' cotangents ``cts``."""
        fin, fout = self.float_positions(xs)
        cts = [_zeros_if_none(cts[j], _like_out(self, xs, j)) for j in fout]
        torch = self.top._torch
        if torch.is_grad_enabled() or torch.compiler.is_compiling() or \
                torch._C._are_functorch_transforms_active():
            grads = self.vjp(xs, cts)  # the operator: its own backward is recorded
        else:  # a plain backward pass: the implementation, without the dispatcher's cost
            grads = self._vjp(xs, cts)
        out = [None] * len(xs)
        for i, g in zip(fin, grads):
            out[i] = g
        return out

    def _vjp_backward(self, ctx, gs):
        xs, cts = list(ctx.inputs[0]), list(ctx.inputs[1])
        fin, _ = self.float_positions(xs)
        gs = [_zeros_if_none(g, xs[i]) for g, i in zip(gs, fin)]
        d_xs = [None] * len(xs)
        if ctx.needs_input_grad[0]:
            for i, h in zip(fin, self.hvp(xs, cts, gs)):
                d_xs[i] = h
        d_cts = list(self.jvp(xs, gs)) if ctx.needs_input_grad[1] else None
        return d_xs, d_cts

    # -- kernels

    def kernel(self, xs) -> Kernel:
        try:
            return self.kernels[tuple((x.dtype, x.shape) for x in xs)]
        except (KeyError, TypeError):
            pass
        # shapes are specialized (guarded) under dynamic shapes: results depend on them
        key = tuple((_np_dtype(x.dtype), tuple(int(d) for d in x.shape)) for x in xs)
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

    def structure(self, xs):
        return self.kernel(xs).structure

    def float_positions(self, xs):
        """Indices (among the tensors) of the float ones, and of the float outputs."""
        k = self.kernel(xs)
        args = [i for i in range(self.nargs) if i not in self.consts]
        return [args.index(i) for i in k.float_inputs], k.float_outputs

    # -- implementations (NumPy views of the tensors in, new tensors out)

    def _fwd(self, xs):
        outs = self.kernel(xs).primal([_numpy(x) for x in xs])
        return _tensors(outs, xs)

    def _fwd_vmap(self, info, in_dims, xs):
        """vmap of the primal: ``zymase.vmap``'s compiled loop over the examples, one call."""
        dims = in_dims[0] if isinstance(in_dims[0], (list, tuple)) else [in_dims[0]] * len(xs)
        moved = [x if d is None else x.movedim(d, 0) for x, d in zip(xs, dims)]
        mapped = tuple(d is not None for d in dims)
        one = self.kernel([x[0] if m else x for x, m in zip(moved, mapped)])
        key = (mapped, tuple((x.dtype, tuple(x.shape)) for x in moved))
        k = self._batched.get(key)
        if k is None:
            from ..api.vmap import batched_function

            marks = iter(mapped)
            axes = [(0 if next(marks) else None) if s.is_array else None for s in one.specs]
            py = batched_function(one.fn, axes, one.result_desc)
            it = iter(moved)
            specs = [ArgSpec.array(_np_dtype(x.dtype), x.shape) if s.is_array else s
                     for s in one.specs for x in ([next(it)] if s.is_array else [None])]
            k = self._batched[key] = Kernel(py, self.top.options, specs)
        outs = _tensors(k.primal([_numpy(x) for x in moved]), moved)
        return outs, [0] * len(outs)

    def _fwd_fake(self, xs):
        return [_empty(xs[0], d, s) for d, s in self.kernel(xs).outputs]

    def _vjp(self, xs, cts):
        k = self.kernel(xs)
        return _tensors(k.vjp([_numpy(x) for x in xs], [_numpy(c) for c in cts]), xs)

    def _vjp_fake(self, xs, cts):
        return self._vjp_fake_xs(xs)

    def _vjp_fake_xs(self, xs, *rest):
        k = self.kernel(xs)
        return [_empty(xs[0], k.specs[i].dtype, k.specs[i].shape) for i in k.float_inputs]

    def _jvp(self, xs, ts):
        k = self.kernel(xs)
        return _tensors(k.jvp([_numpy(x) for x in xs], [_numpy(t) for t in ts]), xs)

    def _jvp_fake(self, xs, ts):
        k = self.kernel(xs)
        return [_empty(xs[0], *k.outputs[j]) for j in k.float_outputs]

    def _hvp(self, xs, ct, vs):
        k = self.kernel(xs)
        return _tensors(k.hvp([_numpy(x) for x in xs], _numpy(ct[0]),
                              [_numpy(v) for v in vs]), xs)


def torch_shape(x):
    shape = x.shape
    hash(shape)
    return shape


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
        if any(np.may_share_memory(a, b) for b in inputs + seen) or not a.flags.writeable \
                or not a.flags.c_contiguous:
            a = a.copy()
        seen.append(a)
        out.append(torch.from_numpy(a))
    return out


def _empty(like, dtype: str, shape):
    import torch  # lazy: an optional dependency

    return like.new_empty(tuple(shape), dtype=getattr(torch, dtype))


def _looped(op):
    """A vmap rule: the examples one after another through ``op``, stacked."""
    import torch  # lazy: an optional dependency

    def rule(info, in_dims, *lists):
        n = info.batch_size
        dims = [d if isinstance(d, (list, tuple)) else [d] * len(lst)
                for lst, d in zip(lists, in_dims)]
        outs = []
        for b in range(n):
            outs.append(op(*[[t if d is None else t.select(d, b) for t, d in zip(lst, ds)]
                             for lst, ds in zip(lists, dims)]))
        stacked = [torch.stack([o[j] for o in outs]) for j in range(len(outs[0]))] \
            if n else []
        return stacked, [0] * len(stacked)
    return rule


def _autograd_functions(torch, fam: _Family):
    """The ``autograd.Function`` around ``fam.fwd`` (its ``apply``), and the one around
    ``fam.vjp`` that makes the backward pass differentiable again."""

    class Vjp(torch.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(n_xs, *xs_cts):
            xs, cts = list(xs_cts[:n_xs]), list(xs_cts[n_xs:])
            return tuple(fam.vjp(xs, cts))

        @staticmethod
        def setup_context(ctx, inputs, output):
            n = inputs[0]
            ctx.n_xs = n
            ctx.save_for_backward(*inputs[1:])
            ctx.save_for_forward(*inputs[1:])

        @staticmethod
        def backward(ctx, *gs):
            saved = ctx.saved_tensors
            xs, cts = list(saved[:ctx.n_xs]), list(saved[ctx.n_xs:])
            fin, _ = fam.float_positions(xs)
            gs = [_zeros_if_none(g, xs[i]) for g, i in zip(gs, fin)]
            need_x = any(ctx.needs_input_grad[1:1 + ctx.n_xs])
            need_ct = any(ctx.needs_input_grad[1 + ctx.n_xs:])
            d_xs = [None] * len(xs)
            if need_x:
                hv = fam.hvp(xs, cts, gs)
                for i, h in zip(fin, hv):
                    d_xs[i] = h
            d_cts = list(fam.jvp(xs, gs)) if need_ct else [None] * len(cts)
            return (None, *d_xs, *d_cts)

        @staticmethod
        def jvp(ctx, _n, *tangents):
            saved = ctx.saved_tensors
            xs, cts = list(saved[:ctx.n_xs]), list(saved[ctx.n_xs:])
            fin, _ = fam.float_positions(xs)
            dxs, dcts = tangents[:ctx.n_xs], tangents[ctx.n_xs:]
            dcts = [_zeros_if_none(t, c) for t, c in zip(dcts, cts)]
            out = list(fam.vjp(xs, dcts))
            if any(dxs[i] is not None for i in fin):
                vs = [_zeros_if_none(dxs[i], xs[i]) for i in fin]
                out = [a + b for a, b in zip(out, fam.hvp(xs, cts, vs))]
            return tuple(out)

    class Apply(torch.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(*xs):
            return tuple(fam.fwd(list(xs)))

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)
            ctx.save_for_forward(*inputs)
            _, fout = fam.float_positions(list(inputs))
            ints = [o for j, o in enumerate(output) if j not in fout]
            if ints:
                ctx.mark_non_differentiable(*ints)

        @staticmethod
        def backward(ctx, *cts):
            xs = list(ctx.saved_tensors)
            fin, fout = fam.float_positions(xs)
            cts = [_zeros_if_none(cts[j], _like_out(fam, xs, j)) for j in fout]
            grads = Vjp.apply(len(xs), *xs, *cts)
            out = [None] * len(xs)
            for i, g in zip(fin, grads):
                out[i] = g
            return tuple(out)

        @staticmethod
        def jvp(ctx, *ts):
            xs = list(ctx.saved_tensors)
            fin, fout = fam.float_positions(xs)
            tans = [_zeros_if_none(ts[i], xs[i]) for i in fin]
            touts = iter(fam.jvp(xs, tans))
            k = fam.kernel(xs)
            return tuple(next(touts) if j in fout else None for j in range(len(k.outputs)))

    class Direct(torch.autograd.Function):
        """Eager calls outside torch.func transforms: the implementations themselves."""

        @staticmethod
        def forward(ctx, *xs):
            ctx.save_for_backward(*xs)
            outs = fam._fwd(list(xs))
            _, fout = fam.float_positions(list(xs))
            ints = [o for j, o in enumerate(outs) if j not in fout]
            if ints:
                ctx.mark_non_differentiable(*ints)
            return tuple(outs)

        @staticmethod
        def backward(ctx, *cts):
            return tuple(fam.backward(list(ctx.saved_tensors), list(cts)))

    return Apply.apply, Direct.apply


def _zeros_if_none(t, like):
    return like.new_zeros(like.shape) if t is None else t


def _like_out(fam, xs, j):
    d, s = fam.kernel(xs).outputs[j]
    return _empty(xs[0], d, s).zero_()
