"""Calling compiled entry functions from Python (see ``entry.py`` for the C side).

Each thread has its own context struct (error slot and arena).  Arrays are passed as the NumPy
objects themselves; returned arrays whose memory zymase allocated become NumPy arrays that free
that memory when they die; returned views of an argument stay views of it.  A raised run-time
error is rebuilt as the zymase exception of its kind, naming the user's line.
"""

from __future__ import annotations

import ctypes
import threading

import numpy as np

from ...errors import RUNTIME_ERRORS, ZymaseError, ZymaseOverflowError, caller_loc, host_error
from ...ir import host
from ...ir.types import ArrayType
from ..base import Executable
from ..llvm.host import HOST_ERROR
from .entry import result_slots

_libc = ctypes.CDLL(None)
_free = _libc.free
_free.argtypes = [ctypes.c_void_p]
_free.restype = None


class Context(ctypes.Structure):
    _fields_ = [("err_id", ctypes.c_int64), ("err_a", ctypes.c_int64), ("err_b", ctypes.c_int64),
                ("arena", ctypes.c_void_p), ("len", ctypes.c_int64), ("cap", ctypes.c_int64),
                ("globals", ctypes.c_void_p)]  # llvm/types.py: CTX_GLOBALS


class _Owner:
    """Frees a zymase-allocated block when the last array using it dies."""

    __slots__ = ("ptr",)

    def __init__(self, ptr: int):
        self.ptr = ptr

    def __del__(self):
        _free(self.ptr)


def _c_types(t):
    if isinstance(t, ArrayType):
        return [ctypes.py_object]
    if t.is_complex:
        return [ctypes.c_double, ctypes.c_double]
    return [ctypes.c_double] if t.is_float else [ctypes.c_int64]


def _converter(t):
    """How one Python argument becomes the C arguments of its IR type (None: as it is)."""
    if isinstance(t, ArrayType):
        return None
    if t.is_complex:
        return "complex"
    if t.is_float:
        return float
    if t.unsigned and t.bits == 64:
        return _u64_bits
    return int


def _u64_bits(v) -> int:
    """A uint64 argument as the signed 64-bit int with its bits (ctypes passes c_int64)."""
    v = int(v)
    return v - (1 << 64) if v >= 1 << 63 else v


class _MethodDef(ctypes.Structure):
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p),
                ("ml_flags", ctypes.c_int), ("ml_doc", ctypes.c_char_p)]


_new_cfunction = ctypes.pythonapi.PyCFunction_NewEx
_new_cfunction.restype = ctypes.py_object
_new_cfunction.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]


def builtin_function(address: int, name: str, self_obj=None):
    """A Python builtin (``METH_FASTCALL | METH_KEYWORDS``) calling the machine code at
    ``address`` with ``self_obj`` as its first argument.  Returns (builtin, method table
    entry); the caller keeps both alive."""
    mdef = _MethodDef(name.encode(), address, 0x0080 | 0x0002, None)
    self_ptr = None if self_obj is None else id(self_obj)
    return _new_cfunction(ctypes.addressof(mdef), self_ptr, None), mdef


class EntryPoint(Executable):
    """A compiled entry function: ``call(flat_args)`` returns the flat list of results
    (``backends/base.py``: the calling convention); ``fast`` is the address of its C entry for
    the frame-less call path (``pyentry.py``), when it has one."""

    def __init__(self, compiled, symbol: str, arg_types, result_types, errors, written=(),
                 fast: int | None = None):
        self.compiled = compiled  # keeps the machine code alive
        self.fast = fast
        self.errors = errors
        self.written = tuple(written)  # array arguments the code may write: refused read-only
        self.arg_types = list(arg_types)
        self.result_types = list(result_types)
        argtypes = [t for a in self.arg_types for t in _c_types(a)]
        proto = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, *argtypes)
        self.cfunc = proto(compiled.address(symbol))
        self.convert = [_converter(t) for t in self.arg_types]
        self.simple = all(c is None or c is float or c is int for c in self.convert)
        self.nslots = max(1, sum(result_slots(t) for t in self.result_types))
        self.slot_type = ctypes.c_int64 * self.nslots
        self._local = threading.local()

    def free_tape(self, token: int) -> None:
        _free(token)  # the tape buffer: malloc'ed by the runtime (backends/llvm/tape.py)

    def _ctx(self) -> Context:
        ctx = getattr(self._local, "ctx", None)
        if ctx is None:
            ctx = self._local.ctx = Context()
        return ctx

    def call(self, args: list, globals_: list = ()) -> list:
        self.refuse_read_only(args)
        flat = []
        for conv, a in zip(self.convert, args):
            if conv is None:
                flat.append(a)
            elif conv == "complex":
                c = complex(a)
                flat += [c.real, c.imag]
            else:
                v = conv(a)
                if conv is int and not -(2 ** 63) <= v < 2 ** 63:  # ctypes would wrap it
                    raise ZymaseOverflowError(f"integer argument {v} does not fit in 64 bits",
                                              caller_loc())
                flat.append(v)
        ctx = self._ctx()
        rets = self.slot_type()
        if globals_:  # the table of array objects (kept alive by ``globals_`` for the call)
            table = (ctypes.c_void_p * len(globals_))(*map(id, globals_))
            ctx.globals = ctypes.addressof(table)
            args = list(args) + list(globals_)  # a returned view of one stays a view
        status = self.cfunc(ctypes.addressof(ctx), ctypes.addressof(rets), *flat)
        if status:
            self._release(ctx, set())
            raise self._error(ctx)
        out, kept = self._decode(rets, args)
        if ctx.len:
            self._release(ctx, kept)
        return out

    def _release(self, ctx: Context, kept: set) -> None:
        if not ctx.len:
            return
        ptrs = (ctypes.c_void_p * ctx.len).from_address(ctx.arena)
        for p in ptrs:
            if p not in kept:
                _free(p)
        ctx.len = 0

    def _error(self, ctx: Context) -> ZymaseError:
        return self.error(ctx.err_id, ctx.err_a, ctx.err_b)

    def error(self, err_id: int, a: int, b: int) -> ZymaseError:
        """The user-facing exception for a raised error id and its two payloads."""
        kind, msg, loc = self.errors[err_id - 1]
        if kind == HOST_ERROR:  # a Python function called from the program raised
            return host_error(host.take_error(), loc)
        cls = RUNTIME_ERRORS.get(kind, ZymaseError)
        return cls(msg.format(a=a, b=b), loc)

    def decode_at(self, address: int, args) -> list:
        """The results the fast entry stored at ``address`` (as ``call`` decodes them; their
        fresh memory is already out of the arena)."""
        return self._decode(self.slot_type.from_address(address), args)[0]

    def _decode(self, rets, args):
        ints = rets
        floats = (ctypes.c_double * self.nslots).from_buffer(rets)
        out, slot, owners = [], 0, {}
        for t in self.result_types:
            if isinstance(t, ArrayType):
                n = t.ndim
                base, data = ints[slot] & 0xFFFFFFFFFFFFFFFF, ints[slot + 1] & 0xFFFFFFFFFFFFFFFF
                shape = tuple(ints[slot + 2: slot + 2 + n])
                strides = tuple(ints[slot + 2 + n: slot + 2 + 2 * n])
                out.append(_array(t, base, data, shape, strides, owners, args))
                slot += 2 + 2 * n
            elif t.is_complex:
                out.append(complex(floats[slot], floats[slot + 1]))
                slot += 2
            elif t.is_float:
                out.append(float(floats[slot]) if t.bits == 64 else np.float32(floats[slot]))
                slot += 1
            elif t.is_bool:
                out.append(bool(ints[slot]))
                slot += 1
            else:  # (a u64 above 2**63 comes back from its bits)
                out.append(int(ints[slot]) % (1 << 64) if t.unsigned else int(ints[slot]))
                slot += 1
        return out, set(owners)


class _Memory:
    """Exposes a block of memory to NumPy and keeps its owner (an _Owner or an argument) alive."""

    __slots__ = ("__array_interface__", "keep")


def _from_pointer(data, shape, bstrides, dtype, keep):
    m = _Memory()
    m.__array_interface__ = {"data": (data, False), "shape": shape, "strides": bstrides,
                             "typestr": dtype.str, "version": 3}
    m.keep = keep
    return np.asarray(m)


def _array(t: ArrayType, base, data, shape, strides, owners, args):
    """A NumPy array for a returned array struct."""
    dtype = t.dtype.np_dtype
    item = dtype.itemsize
    bstrides = tuple(s * item for s in strides)
    if base:
        own = owners.get(base)
        if own is None:
            own = owners[base] = _Owner(base)
        if any(d == 0 for d in shape):
            return np.empty(shape, dtype)
        return _from_pointer(data, shape, bstrides, dtype, own)
    if any(d == 0 for d in shape):
        return np.empty(shape, dtype)
    lo = data + sum(min(0, (d - 1) * s) for d, s in zip(shape, bstrides))
    hi = data + sum(max(0, (d - 1) * s) for d, s in zip(shape, bstrides)) + item
    owner = _argument_containing(args, lo, hi)
    view = _from_pointer(data, shape, bstrides, dtype, owner)
    return view if owner is not None else view.copy()  # a constant of the compiled code


def _argument_containing(args, lo, hi):
    for a in args:
        if isinstance(a, np.ndarray) and a.size:
            alo, ahi = _byte_bounds(a)
            if alo <= lo and hi <= ahi:
                return a
    return None


_byte_bounds = getattr(np, "byte_bounds", None) or np.lib.array_utils.byte_bounds  # NumPy 1 / 2
