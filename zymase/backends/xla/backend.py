"""The XLA backend: ``backend="xla"`` lowers the optimized IR (the primal, or a derivative after
zymase's AD) to JAX operations (``lower.py``) and compiles them with ``jax.jit``: XLA runs the
program on whatever device JAX has.

    >>> import numpy as np, zymase
    >>> def f(x):
    ...     s = 0.0
    ...     for i in range(x.shape[0]):
    ...         s += x[i] * x[i]
    ...     return s
    >>> zymase.jit(f, backend="xla")(np.arange(4.0))
    14.0

One XLA computation per argument signature, array shapes and integer arguments (XLA shapes are
static: an integer may size an array); float64 is enabled inside it only (the user's JAX
configuration is not changed).  Arrays come back as NumPy arrays; writes into argument arrays are
copied back into them.  JAX is an optional dependency: without it the backend says so.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Sequence

import numpy as np

from ...errors import RUNTIME_ERRORS, ZymaseError, ZymaseImportError
from ...frontend.args import foreign_array
from ...ir.core import Module
from ...ir.types import ArrayType
from ...options import Options
from ...passes.licm import written_arguments
from ..base import (
    ALL_DIALECTS,
    Backend,
    Capabilities,
    Executable,
    SimpleArtifact,
    convention_scalar,
)


def _jax():
    try:
        import jax  # lazy: an optional dependency
    except ImportError:
        raise ZymaseImportError("backend='xla' needs JAX: pip install jax (or "
                                "pip install 'zymase[interop]')") from None
    return jax


_RECORDING: list = []  # (while ``recording``) lists the calls are appended to


@contextlib.contextmanager
def recording():
    """The calls of XLA executables while the block runs: (executable, flat arguments,
    globals) each (``explain``)."""
    seen: list = []
    _RECORDING.append(seen)
    try:
        yield seen
    finally:
        _RECORDING.remove(seen)


class XlaExecutable(Executable):
    def __init__(self, module: Module, name: str):
        f = module[name]
        self.module, self.name = module, name
        self.arg_types, self.result_types = list(f.arg_types), list(f.result_types)
        self.written = tuple(written_arguments(f, module))
        self._computations: dict = {}
        self.notes: dict = {}  # computation key -> how its loops were lowered
        self._capacity: dict = {}  # signature -> tape slots its last run needed
        self._lock = threading.Lock()

    def _static(self, t) -> bool:
        """Integer and boolean arguments are part of the computation (they may size arrays)."""
        return not isinstance(t, ArrayType) and not t.is_inexact

    def _prepare(self, flat, globals_):
        """The computation's key for these arguments (integer values, shapes, dtypes) and its
        dynamic operands (arrays flattened, floats)."""
        static = tuple(int(a) if self._static(t) else None
                       for t, a in zip(self.arg_types, flat))
        key = (static, tuple((a.dtype.str, a.shape) for a in flat if isinstance(a, np.ndarray)),
               tuple((g.dtype.str, g.shape) for g in globals_))
        dynamic = [_operand(a) if isinstance(t, ArrayType) else t.np_dtype.type(a)
                   for t, a, s in zip(self.arg_types, flat, static) if s is None]
        placed = {x.shape: x.sharding for x in dynamic
                  if not isinstance(x, (np.ndarray, np.generic))}
        if placed:  # NumPy operands (gradients' shadows) sharded like a sharded one's shape
            jax = _jax()
            with jax.enable_x64(True):  # (float64 stays float64)
                dynamic = [jax.device_put(x, placed[x.shape]) if isinstance(x, np.ndarray)
                           and x.shape in placed else x for x in dynamic]
        dynamic += [np.ascontiguousarray(g) for g in globals_]
        return static, key, dynamic

    def _computation(self, jax, static, key, flat, globals_):
        """The jitted computation for ``key`` with room for the tape its last run needed, and
        its error table."""
        with self._lock:
            capacity = self._capacity.get(key, 1024)
            found = self._computations.get((key, capacity))
            if found is None:
                shapes = {k: a.shape for k, a in enumerate(flat) if isinstance(a, np.ndarray)}
                found = self._computations[(key, capacity)] = self._build(
                    jax, static, shapes, globals_, capacity, key)
        return found + (capacity,)

    def compiled(self, flat: list, globals_: list = ()):
        """The computation for these arguments as XLA compiled it (a JAX ``Compiled``:
        ``as_text()``, ``memory_analysis()``, ``cost_analysis()``)."""
        jax = _jax()
        static, key, dynamic = self._prepare(flat, globals_)
        with jax.enable_x64(True):
            fn = self._computation(jax, static, key, flat, globals_)[0]
            return fn.lower(*dynamic).compile()

    def listing(self, flat: list, globals_: list = (), compiled: bool = False) -> str:
        """The XLA computation for these arguments: StableHLO as lowered, or (``compiled``)
        the HLO XLA optimized (``zymase.explain(..., backend="xla")``), after a list of how
        each loop was lowered."""
        jax = _jax()
        static, key, dynamic = self._prepare(flat, globals_)
        with jax.enable_x64(True):
            fn = self._computation(jax, static, key, flat, globals_)[0]
            lowered = fn.lower(*dynamic)
            text = lowered.compile().as_text() if compiled else lowered.as_text()
        notes = sorted(self.notes.get(key, {}).values(), key=lambda n: (n[0].line, n[0].col))
        head = "".join(f"// {loc}: {how}\n" for loc, how in notes)
        return head + text

    def call(self, flat: list, globals_: list = ()) -> list:
        jax = _jax()
        self.refuse_read_only(flat)
        for seen in _RECORDING:
            seen.append((self, list(flat), list(globals_)))
        static, key, dynamic = self._prepare(flat, globals_)
        with jax.enable_x64(True):
            while True:
                fn, errors, capacity = self._computation(jax, static, key, flat, globals_)
                outs, written, status = fn(*dynamic)
                need, *err = np.asarray(status).tolist()
                if need <= capacity:
                    break
                # the tape needed more room: run again with room for all of it
                with self._lock:
                    self._capacity[key] = max(self._capacity.get(key, 1024),
                                              1 << (need - 1).bit_length())
        if err[0]:
            kind, msg, loc = errors[err[0] - 1]
            raise RUNTIME_ERRORS.get(kind, ZymaseError)(msg.format(a=err[1], b=err[2]), loc)
        for k, data in zip(self.written, written):
            flat[k][...] = np.asarray(data).reshape(flat[k].shape)
        on_device = any(foreign_array(a) is not None for a in flat if isinstance(a, np.ndarray))
        return [_result(t, v, on_device) for t, v in zip(self.result_types, outs)]

    def _build(self, jax, static, shapes, globals_, capacity, key=None):
        """The jitted computation for arguments of these shapes and integer values, and the
        table of the errors it may report (filled while it is traced)."""
        from .lower import Lowering, View, c_strides  # lazy: needs JAX

        jnp = jax.numpy
        errors: list = []
        types, name, module, written = self.arg_types, self.name, self.module, self.written

        def computation(*dynamic):
            it = iter(dynamic)
            lo = Lowering(module, jax, errors)
            lo.sharded = bool(key and key[-1])
            lo.err = (jnp.int64(0), jnp.int64(0), jnp.int64(0))
            lo.capacity = capacity
            lo.need = lo.new_buf(jnp.zeros(1, jnp.int64), "need")
            args, bufs = [], {}
            for k, (t, s) in enumerate(zip(types, static)):
                if s is not None:
                    args.append(t.np_dtype.type(s))
                    continue
                x = next(it)
                if isinstance(t, ArrayType):
                    shape = shapes[k]
                    buf = bufs[k] = lo.new_buf(x.reshape(-1), "arg")
                    args.append(View(buf, 0, shape, c_strides(shape)))
                else:
                    args.append(x)
            lo.globals_ = []
            for g, x in zip(globals_, it):
                buf = lo.new_buf(x.reshape(-1), "global")
                lo.globals_.append(View(buf, 0, g.shape, c_strides(g.shape)))
            out = lo.run(name, args)
            self.notes[key] = lo.notes
            results = [lo.read(v) if isinstance(t, ArrayType) else jnp.asarray(v, t.np_dtype)
                       for t, v in zip(self.result_types, out)]
            status = jnp.stack([jnp.asarray(x, jnp.int64) for x in
                                (lo.need.data[0], *lo.err)])
            return results, [bufs[k].data for k in written], status

        return jax.jit(computation), errors


def _operand(a):
    """An array argument as the computation takes it: the ``jax.Array`` itself where the
    caller passed one (it stays on its devices, with its sharding), else the NumPy array."""
    found = foreign_array(a)
    return found if found is not None else np.ascontiguousarray(a)


def _result(t, v, on_device: bool):
    """Arrays stay ``jax.Array``\\ s where the call had some (else NumPy arrays)."""
    if isinstance(t, ArrayType):
        return v if on_device else np.asarray(v)
    return convention_scalar(t, v)


class XlaBackend(Backend):
    """Lowers the optimized IR to JAX and runs it through XLA (``jax.jit``)."""

    name = "xla"
    capabilities = Capabilities(dtypes=frozenset({"f64", "f32", "i64", "i32", "i1"}),
                                dialects=ALL_DIALECTS - {"host"}, split_tapes=False,
                                tape_sets=False)

    def compile(self, module: Module, entries: Sequence[str], options: Options, *,
                count_tape: bool = False) -> SimpleArtifact:
        _jax()
        return SimpleArtifact({name: XlaExecutable(module, name) for name in entries})
