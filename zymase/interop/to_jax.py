"""``zymase.to_jax(f)``: a zymase function as a JAX operation, called by XLA as native code.

    import jax, jax.numpy as jnp, zymase  # lazy: an optional dependency

    sim = zymase.to_jax(simulate)                 # plain Python and NumPy inside
    loss = lambda kappa: jnp.sum(sim(kappa, u0, 1e-3, 100) ** 2)
    jax.jit(jax.grad(loss))(kappa)                # zymase's reverse mode, inside XLA

Each call binds one JAX primitive (``zymase_call``).  It lowers to an XLA FFI custom call whose
target is the compiled code's own handler (``ffi.py``): no Python runs when XLA executes it, on
CPU.  Its rules are zymase's derivatives:

* JVP: the compiled forward mode (``mode="jvp"``, linear in the tangents);
* transpose of the JVP: the compiled reverse mode (``mode="vjp"``), so ``jax.grad``,
  ``jax.vjp`` and ``jax.linearize`` use zymase's adjoint;
* JVP of the VJP: the VJP of the tangent cotangents plus zymase's forward-over-reverse ``hvp``
  (functions of one float array returning one float): ``jax.hessian``;
* vmap: of the primal, ``zymase.vmap``'s compiled loop over the examples (one custom call);
  of a derivative, the examples one after another (``lax.map`` over its custom call).

Arrays (``jax.Array``, NumPy, tracers) are the operation's operands; other arguments are
constants (one compiled specialization per value).  Output shapes follow from the operands'
shapes (``ir/shapes.py``) or are given with ``out_shapes=``.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..api.vmap import batched_function
from ..driver.cache import shared
from ..driver.request import Request
from ..errors import (
    DifferentiationError,
    ZymaseError,
    ZymaseImportError,
    ZymaseTypeError,
    at_caller,
)
from ..frontend.args import flatten_arg
from ..frontend.source import python_function
from ..options import transform_options
from .ffi import Handler, Plan
from .kernel import ArgSpec, Kernel, unflatten, written_positions

_NAMES = itertools.count()
_LOCK = threading.Lock()
_PRIMITIVE = None
_MADE: dict = {}  # (function, settings) -> its JaxOp


def to_jax(fn: Callable[..., Any], *,
           out_shapes: Callable[..., Any] | tuple[Any, ...] | None = None,
           writes: str | int | Sequence[str | int] = (), **options: Any) -> JaxOp:
    """A zymase function as a JAX operation whose derivatives are zymase's.

    The result is called like ``fn``, with JAX (or NumPy) arrays for the array arguments and
    Python values for the rest (constants: one compiled specialization per value).  Each call
    binds one JAX primitive that XLA runs as an FFI custom call into the compiled code (no
    Python runs then, on CPU).  It works under ``jax.jit``, ``jax.grad``, ``jax.jvp``,
    ``jax.vjp``, ``jax.linearize``, ``jax.vmap``, ``jax.hessian`` (a function of one float
    array returning one float) and inside ``jax.shard_map`` (each shard calls the compiled
    code on its block).  Its JVP is zymase's forward mode, its transpose zymase's reverse mode,
    its vmap ``zymase.vmap``'s compiled loop.  Without ``jax_enable_x64``, NumPy float64
    inputs become float32 as usual in JAX.  Making the same operation twice returns the first
    one.

    Args:
        fn: A plain Python function (or a ``zymase.jit`` one) returning a number, an array or
            a tuple of them.
        out_shapes: Only where a result's shape does not follow from the arguments' shapes
            (an error says so): a function of the arguments' shapes (tuples, for arrays) and
            the constants returning one shape per result, or the shape(s) themselves.
        writes: The names (or positions) of arguments ``fn`` fills in place (``def f(x,
            out): out[:] = ...``): the operation returns their final contents after ``fn``'s
            own results (JAX arrays are not changed; their initial contents are
            differentiated too).
        **options: Compilation options, as for ``zymase.grad``: ``fastmath``,
            ``boundscheck``, ``disable``, ``memory_limit``, ``backend``, ``cache``,
            ``deterministic``, ``parallel`` (an unknown name raises ``TypeError`` at the
            first call).

    Returns:
        A ``JaxOp``: callable like ``fn``, returning ``jax.Array`` results (a tuple for
        several); ``op.flat(*args)`` gives them as a flat list.

    Raises:
        ZymaseImportError: JAX is not installed.
        ZymaseTypeError: When called: no argument is an array.
        ZymaseValueError: When called: a result's shape needs ``out_shapes``, or ``writes``
            names no parameter of ``fn``.

    Examples:
        >>> import jax, jax.numpy as jnp, zymase
        >>> def energy(x, k):
        ...     e = 0.0
        ...     for i in range(x.shape[0] - 1):
        ...         e += k * (x[i + 1] - x[i]) ** 2
        ...     return e
        >>> op = zymase.to_jax(energy)
        >>> grad = jax.jit(jax.grad(lambda x: op(x, 0.5)))
        >>> grad(jnp.array([0.0, 1.0, 3.0]))  # doctest: +ELLIPSIS
        Array([-1., -1.,  2.], dtype=float...)
        >>> def fill(x, out):
        ...     for i in range(x.shape[0]):
        ...         out[i] = 2.0 * x[i]
        ...     return (x * x).sum()
        >>> sq_and_double = zymase.to_jax(fill, writes="out")
        >>> sq_and_double(jnp.array([1.0, 2.0]), jnp.zeros(2))  # doctest: +ELLIPSIS
        (Array(5., dtype=float...), Array([2., 4.], dtype=float...))
    """
    try:  # one operation per function and settings (its compiled kernels are kept)
        key = (python_function(fn), out_shapes, writes, tuple(sorted(options.items())))
        hash(key)
    except TypeError:
        return JaxOp(fn, out_shapes, writes, options)
    with _LOCK:
        op = _MADE.get(key)
    if op is None:
        op = JaxOp(fn, out_shapes, writes, options)
        with _LOCK:
            op = _MADE.setdefault(key, op)
    return op


class JaxOp:
    """What ``to_jax`` returns."""

    def __init__(self, fn, out_shapes, writes, options):
        try:
            import jax  # noqa: F401  # lazy: an optional dependency
        except ImportError:
            raise ZymaseImportError("zymase.to_jax needs JAX: pip install jax (or "
                                    "pip install 'zymase[interop]')") from None
        self.fn = python_function(fn)
        self.writes = written_positions(self.fn, writes)
        self.out_shapes = out_shapes
        self.options = options
        self.kernels: dict = {}
        self.__name__ = self.fn.__name__
        self.__doc__ = self.fn.__doc__

    def __repr__(self):
        return f"<zymase.to_jax {self.fn.__qualname__}>"

    def __call__(self, *args):
        try:
            kern, outs = self._bind(args)
        except ZymaseError as e:  # (an error about this call names the user's line)
            raise at_caller(e) from None
        return unflatten(list(outs), kern.kernel.structure)

    def flat(self, *args):
        """The outputs as a flat list."""
        return list(self._bind(args)[1])

    def _bind(self, args):
        import jax  # lazy: an optional dependency

        arrays, specs = [], []
        for a in args:
            if isinstance(a, (jax.Array, np.ndarray, np.generic)) or hasattr(a, "aval"):
                if not hasattr(a, "aval"):  # NumPy: as JAX will see it (float32 without x64)
                    a = jax.numpy.asarray(a)
                arrays.append(a)
                specs.append(ArgSpec.array(a.dtype, a.shape))
            else:
                specs.append(ArgSpec.const(a))
        if not arrays:
            raise ZymaseTypeError(f"{self.fn.__name__}: a to_jax operation needs at least one "
                                  "array argument")
        key = tuple(specs)
        with _LOCK:
            kern = self.kernels.get(key)
            if kern is None:
                kern = self.kernels[key] = JaxKernel(self, specs)
        return kern, primitive().bind(*arrays, kern=kern, mode="primal", active=())


class JaxKernel:
    """One signature of a ``JaxOp``: shapes and the FFI targets of its modes (made when XLA
    first needs them)."""

    def __init__(self, op: JaxOp, specs: list):
        import jax  # lazy: an optional dependency

        self.op = op
        self.specs = specs
        self.kernel = Kernel(op.fn, op.options, specs, op.out_shapes, op.writes)
        self._eager: dict = {}
        self._batched: dict = {}
        self.arrays = [s for s in specs if s.is_array]
        self.float_in = [k for k, s in enumerate(self.arrays) if s.is_float]
        self.float_out = self.kernel.float_outputs
        self.handlers: dict = {}
        if not jax.config.jax_enable_x64:
            wide = [d for d, _ in self.kernel.outputs if d in ("float64", "int64")]
            if wide:
                raise ZymaseTypeError(
                    f"{op.fn.__name__}() returns {wide[0]} values, which JAX keeps only with "
                    "jax.config.update('jax_enable_x64', True) (or pass float32 arrays and "
                    "return float32)")

    def batched(self, mapped: tuple):
        """The operation on examples stacked along axis 0 of the operands marked in
        ``mapped``: ``zymase.vmap``'s batched function (a loop over the examples), made an
        operation of its own; returns its flat outputs."""
        op = self._batched.get(mapped)
        if op is None:
            marks = iter(mapped)
            axes = [(0 if next(marks) else None) if s.is_array else None for s in self.specs]
            py = batched_function(self.kernel.fn, axes, self.kernel.result_desc)
            op = self._batched[mapped] = JaxOp(py, None, (), self.op.options)
        arrays = iter(range(len(mapped)))

        def run(*xs):
            args = [xs[next(arrays)] if s.is_array else s.value for s in self.specs]
            return op.flat(*args)
        return run

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other

    # -- avals

    def out_avals(self, mode: str, active: tuple):
        """The outputs of ``mode``; ``active``: the float operands (indices among the
        arrays) that have tangents (``jvp``) or get cotangents (``vjp``, ``hvp``)."""
        import jax.core  # lazy: an optional dependency

        def aval(dtype, shape):
            return jax.core.ShapedArray(tuple(shape), np.dtype(dtype))

        outs = self.kernel.outputs
        if mode == "primal":
            return [aval(d, s) for d, s in outs]
        if mode == "jvp":
            return [aval(*outs[j]) for j in self.float_out]
        ins = [aval(self.arrays[i].dtype, self.arrays[i].shape) for i in active]
        if mode == "vjp":
            return ins
        return ins + ins  # hvp: H v, and the shadow it accumulates (dropped)

    # -- FFI targets

    def target(self, mode: str, active: tuple) -> str:
        import jax  # lazy: an optional dependency

        with _LOCK:
            h = self.handlers.get((mode, active))
            if h is None:
                name = f"zymase_{self.op.fn.__name__}_{mode}_{next(_NAMES)}"
                entry, plan = self._plan(mode, active)
                h = self.handlers[(mode, active)] = (name, Handler(entry, plan, name))
                jax.ffi.register_ffi_target(name, h[1].capsule, platform="cpu")
            return h[0]

    def _example(self):
        k = self.kernel
        return [_example_value(s) for s in k.specs]

    def _flat_args(self, example, templates):
        """Per IR argument of the primal: ("in", operand index) or ("const", value)."""
        out, n = [], 0
        for s, a, t in zip(self.specs, example, templates):
            flat = flatten_arg(a, t)
            if s.is_array:
                out.append(("in", n))
                n += 1
            else:
                out += [("const", v) for v in flat]
        return out

    def _plan(self, mode, active):
        comp = shared(self.kernel.fn, transform_options(**self.op.options))
        example = self._example()
        ins = [(s.dtype, len(s.shape)) for s in self.arrays]
        outs = [(d, len(s)) for d, s in self.kernel.outputs]
        n_in = len(ins)
        if mode == "primal":
            spec = comp.primal(example)
            args = self._flat_args(example, spec.templates)
            return spec.entry, Plan(ins, outs, args, [("out", j) for j in range(len(outs))],
                                    spec.entry.written, _globals(spec.captures))
        # only the operands with tangents (cotangents) are active: the others get no shadow
        fl_in = [ins[i] for i in active]
        fl_out = [outs[j] for j in self.float_out]
        arrays_at = [k for k, s in enumerate(self.specs) if s.is_array]
        user_float = [arrays_at[i] for i in active]
        if mode == "jvp":
            d = comp.get(example, Request("fwd", tuple(user_float), 1, ()))
            args = self._flat_args(example, d.templates)
            args += [("in", n_in + m) for m in range(len(d.flat_active))]
            results = [None] * d.n_flat_results + [("out", j) for j in range(len(fl_out))]
            return d.entry, Plan(ins + fl_in, fl_out, args, results, d.entry.written,
                                 _globals(d.captures))
        if mode == "vjp":
            d = comp.get(example, Request("rev", tuple(user_float), 1, tuple(self.float_out)))
            args = self._flat_args(example, d.templates)
            scalars = []
            for m, i in enumerate(d.flat_active):
                if self.specs[self._user_of(i, d)].shape:
                    args.append(("zero", m))
                else:
                    scalars.append(m)
            args += [("in", n_in + m) for m in range(len(fl_out))]
            results = [None] * d.n_flat_results + [("out", m) for m in scalars]
            return d.entry, Plan(ins + fl_out, fl_in, args, results, d.entry.written,
                                 _globals(d.captures))
        # hvp: one float operand, one float result (checked by the JVP rule)
        (k,) = user_float
        d = comp.get(example, Request("fwd-rev", (k,), 1, (self.float_out[0],)))
        args = self._flat_args(example, d.templates)
        x_array = bool(self.specs[k].shape)
        if x_array:
            args.append(("zero", 1))  # the shadow
        args.append(("in", n_in))  # the seed: the output's cotangent
        args.append(("in", n_in + 1))  # the direction
        if x_array:
            args.append(("zero", 0))  # its tangent: H v
        results = [None] * len(d.entry.result_types)
        if not x_array:
            results[-1] = ("out", 0)
        return d.entry, Plan(ins + [fl_out[0], fl_in[0]], fl_in + fl_in, args, results,
                             d.entry.written, _globals(d.captures))

    def _user_of(self, flat_index, d):
        return d.leaf_of[flat_index][0]


def _example_value(s):
    if not s.is_array:
        return s.value
    if not s.shape:
        return 0.0 if s.dtype == "float64" else np.dtype(s.dtype).type(0)
    return np.zeros(s.shape, s.dtype)


def _globals(captures) -> list:
    return list(captures.arrays()) if captures is not None and captures.n_slots else []


# ---------------------------------------------------------------------- the primitive


def primitive():
    """The ``zymase_call`` primitive, defined on first use (JAX is imported then)."""
    global _PRIMITIVE
    with _LOCK:
        if _PRIMITIVE is None:
            _PRIMITIVE = _define()
        return _PRIMITIVE


def _define():
    import jax  # lazy: an optional dependency
    from jax.extend.core import Primitive  # lazy: an optional dependency
    from jax.interpreters import ad, batching, mlir  # lazy: an optional dependency

    p = Primitive("zymase_call")
    p.multiple_results = True

    def impl(*args, kern, mode, active):  # outside jit: one compiled XLA call, kept
        run = kern._eager.get((mode, active))
        if run is None:
            run = kern._eager[(mode, active)] = jax.jit(
                lambda *a: p.bind(*a, kern=kern, mode=mode, active=active))
        return run(*args)

    p.def_impl(impl)

    def abstract_eval(*avals, kern, mode, active):
        outs = kern.out_avals(mode, active)
        # inside shard_map: the results vary over the manual mesh axes their operands vary
        # over (JAX 0.10: ``manual_axis_type``)
        like = next((a for a in avals
                     if getattr(getattr(a, "manual_axis_type", None), "varying", None)), None)
        if like is None:
            return outs
        from jax.sharding import PartitionSpec  # lazy: an optional dependency

        return [like.update(shape=o.shape, dtype=o.dtype, weak_type=False,
                            sharding=like.sharding.update(
                                spec=PartitionSpec(*[None] * len(o.shape))))
                for o in outs]

    p.def_abstract_eval(abstract_eval)

    def lowering(ctx, *args, kern, mode, active):
        return jax.ffi.ffi_lowering(kern.target(mode, active))(ctx, *args)

    mlir.register_lowering(p, lowering, platform="cpu")

    def zero(y):
        return ad.Zero(jax.typeof(y).to_tangent_aval())

    def zeros_like(aval):
        return jax.numpy.zeros(aval.shape, aval.dtype)

    def bind(*args, kern, mode, active):
        return p.bind(*args, kern=kern, mode=mode, active=active)

    def jvp(primals, tangents, *, kern, mode, active):
        if mode == "primal":
            ys = bind(*primals, kern=kern, mode="primal", active=())
            # the operands with a tangent: forward mode for those alone
            active = tuple(i for i in kern.float_in if type(tangents[i]) is not ad.Zero)
            if not active:
                return ys, [zero(y) for y in ys]
            touts = iter(bind(*primals, *[tangents[i] for i in active], kern=kern, mode="jvp",
                              active=active))
            return ys, [next(touts) if j in kern.float_out else zero(y)
                        for j, y in enumerate(ys)]
        if mode == "vjp":
            n = len(kern.arrays)
            xs, cts = primals[:n], primals[n:]
            dxs, dcts = tangents[:n], tangents[n:]
            out = bind(*xs, *cts, kern=kern, mode="vjp", active=active)
            touts = None
            if not all(type(t) is ad.Zero for t in dcts):
                touts = bind(*xs, *[ad.instantiate_zeros(t) for t in dcts], kern=kern,
                             mode="vjp", active=active)
            if not all(type(dxs[i]) is ad.Zero for i in kern.float_in):
                _second_order_ok(kern)
                (i,) = kern.float_in
                v = ad.instantiate_zeros(dxs[i])
                hv = bind(*xs, cts[0], v, kern=kern, mode="hvp", active=(i,))[:1]
                if active != (i,):  # (cotangents were asked for no operand)
                    hv = []
                touts = hv if touts is None else [a + b for a, b in zip(touts, hv)]
            if touts is None:
                return out, [zero(o) for o in out]
            return out, list(touts)
        raise DifferentiationError(
            f"zymase cannot differentiate the {mode} of {kern.op.fn.__name__}() once more: "
            "second derivatives go through its reverse mode (forward over reverse): use "
            "jax.hessian, jax.jacfwd(jax.grad(f)) or jax.jvp of jax.grad, not a derivative "
            "of jax.jvp / jax.jacfwd")

    ad.primitive_jvps[p] = jvp

    def transpose(cts, *args, kern, mode, active):
        n = len(kern.arrays)
        xs = args[:n]
        if mode in ("jvp", "vjp"):
            cts = [zeros_like(a) if type(c) is ad.Zero else c
                   for c, a in zip(cts, kern.out_avals(mode, active))]
            other = "vjp" if mode == "jvp" else "jvp"
            return [None] * n + list(bind(*xs, *cts, kern=kern, mode=other, active=active))
        # hvp(x, c, v) = c H v: bilinear in the cotangent c and the direction v (H symmetric)
        c, v = args[n], args[n + 1]
        w = cts[0]
        if type(w) is ad.Zero:
            return [None] * (n + 2)
        if ad.is_undefined_primal(v):
            return [None] * (n + 1) + [bind(*xs, c, w, kern=kern, mode="hvp",
                                            active=active)[0]]
        one = jax.numpy.ones_like(c)
        hv = bind(*xs, one, v, kern=kern, mode="hvp", active=active)[0]
        return [None] * n + [jax.numpy.sum(hv * w), None]

    ad.primitive_transposes[p] = transpose

    def batch(args, dims, *, kern, mode, active):
        mapped = [isinstance(d, int) for d in dims]
        moved = [jax.numpy.moveaxis(a, d, 0) if m else a for a, d, m in zip(args, dims, mapped)]
        if mode == "primal":  # zymase.vmap's compiled loop over the examples (one call)
            outs = kern.batched(tuple(mapped))(*moved)
            return list(outs), [0] * len(outs)

        def one(xs):
            it = iter(xs)
            full = [next(it) if m else a for a, m in zip(moved, mapped)]
            return bind(*full, kern=kern, mode=mode, active=active)

        outs = jax.lax.map(one, [a for a, m in zip(moved, mapped) if m])
        return list(outs), [0] * len(outs)

    batching.primitive_batchers[p] = batch
    return p


def _second_order_ok(kern) -> None:
    k = kern.kernel
    if len(kern.float_in) != 1 or len(kern.float_out) != 1 or \
            k.outputs[kern.float_out[0]][1] != ():
        raise DifferentiationError(
            f"second derivatives of {kern.op.fn.__name__}() are available for functions of "
            "one float array returning one float (zymase's hvp); this one has "
            f"{len(kern.float_in)} float operand(s) and {len(kern.float_out)} float result(s)")
