"""``array``: strided buffers (memref-like).  An array value is a view: data pointer, shape and
element strides; views made by ``array.subview``/``array.transpose`` share the parent's buffer.

* ``array.alloc %d0.. {init = "none"|"zero"}`` a fresh C-contiguous buffer.
* ``array.const {data = dense<...>}`` a constant array (values compiled in).
* ``array.global {slot, name}`` an array read by reference from outside the function (a global
  or closure name, an attribute): the array bound to it when the call began, found in the
  call's table of such arrays at ``slot``.  Like ``array.const`` it is never written and
  distinct from every other buffer (calls that would break either are refused).
* ``array.dim %a {axis}`` / ``array.stride %a {axis}`` shape and element stride.
* ``array.load %a, %i..`` / ``array.store %v, %a, %i..`` element access (indices in range).
* ``array.atomic_add %v, %a, %i..`` adds ``v`` to an element as one indivisible step (the
  iterations of a parallel loop may add to the same element at once; ``a[idx[i]] += w``).
* ``array.subview %a, %off_0..%off_{n-1}, (%size, %step) per kept dim {keep = [..]}``: a view;
  dims with ``keep`` false are indexed (dropped), kept dims are sliced.
* ``array.broadcast %a, %d0..`` a view of shape ``d`` where dims of size 1 get stride 0.
* ``array.transpose %a {perm = [..]}`` a permuted view.
* ``array.reshape %a, %d0..`` the elements of C-contiguous ``%a`` viewed with shape ``d`` (the
  same buffer, C strides; the frontend checks that the sizes agree).
* ``array.index %i, %n {wrap, check}`` a Python index into a dim of size ``n``: with ``wrap``
  a negative ``i`` counts from the end; with ``check`` an index outside ``[0, n)`` raises
  IndexError.  The bounds-check pass removes the parts it proves unnecessary.
* ``array.free %a`` releases a buffer from ``array.alloc`` (inserted by the lifetime pass).
"""

from __future__ import annotations

from ..core import ALLOCATES, MAY_RAISE, PURE, READS, VIEW, WRITES
from ..types import I64, ArrayType
from .base import SimpleOp, VerifyError


class Alloc(SimpleOp):
    name = "array.alloc"
    n_operands = None
    traits = frozenset({ALLOCATES})
    __slots__ = ()

    def verify(self):
        super().verify()
        t = self.results[0].type
        if not isinstance(t, ArrayType) or t.ndim != len(self.operands) or t.layout != "C":
            raise VerifyError("array.alloc: result must be a C array with one dim per operand")
        if any(v.type != I64 for v in self.operands):
            raise VerifyError("array.alloc: dims must be i64")


class ArrayConst(SimpleOp):
    name = "array.const"
    n_operands = 0
    traits = frozenset({PURE})
    __slots__ = ()


class ArrayGlobal(ArrayConst):
    """An ``ArrayConst`` whose values (and shape) are read at call time: every rule about
    constants applies to it but the ones that use its data."""

    name = "array.global"
    __slots__ = ()


class _AxisQuery(SimpleOp):
    """An ``i64`` fact about one axis (``{axis = k}``) of an array (the base of ``Dim`` and
    ``Stride``, which stay unrelated classes: ``isinstance(op, Dim)`` never means a stride)."""

    n_operands = 1
    traits = frozenset({PURE})
    __slots__ = ()

    @classmethod
    def infer(cls, operand_types, attrs):
        return [I64]

    def verify(self):
        super().verify()
        t = self.operands[0].type
        if not isinstance(t, ArrayType) or not 0 <= self.attrs.get("axis", -1) < t.ndim:
            raise VerifyError(f"{self.name}: axis out of range")


class Dim(_AxisQuery):
    name = "array.dim"
    __slots__ = ()


class Stride(_AxisQuery):
    name = "array.stride"
    __slots__ = ()


class Load(SimpleOp):
    name = "array.load"
    n_operands = None
    traits = frozenset({READS})
    __slots__ = ()

    @classmethod
    def infer(cls, operand_types, attrs):
        return [operand_types[0].dtype]

    @property
    def array(self):
        return self.operands[0]

    @property
    def indices(self):
        return self.operands[1:]

    def verify(self):
        super().verify()
        _check_access(self, self.operands[0], self.operands[1:], self.results[0].type)


class Store(SimpleOp):
    name = "array.store"
    n_operands = None
    n_results = 0
    traits = frozenset({WRITES})
    written_operands = (1,)  # the buffer (operand 0 is the value)
    __slots__ = ()

    @property
    def value(self):
        return self.operands[0]

    @property
    def array(self):
        return self.operands[1]

    @property
    def indices(self):
        return self.operands[2:]

    def verify(self):
        super().verify()
        _check_access(self, self.operands[1], self.operands[2:], self.operands[0].type)


class AtomicAdd(SimpleOp):
    name = "array.atomic_add"
    n_operands = None
    n_results = 0
    traits = frozenset({READS, WRITES})
    written_operands = (1,)
    __slots__ = ()

    def verify(self):
        super().verify()
        _check_access(self, self.operands[1], self.operands[2:], self.operands[0].type)
        if self.operands[0].type.is_bool:
            raise VerifyError("array.atomic_add: not on booleans")


class Subview(SimpleOp):
    name = "array.subview"
    n_operands = None
    traits = frozenset({PURE, VIEW})
    __slots__ = ()

    @property
    def source(self):
        return self.operands[0]

    def parts(self):
        """(offsets, [(size, step) per kept dim]) of this view."""
        n = self.operands[0].type.ndim
        offs = self.operands[1:1 + n]
        rest = self.operands[1 + n:]
        return offs, [(rest[2 * k], rest[2 * k + 1]) for k in range(len(rest) // 2)]

    def verify(self):
        super().verify()
        src, res = self.operands[0].type, self.results[0].type
        keep = self.attrs.get("keep")
        if not isinstance(src, ArrayType) or not isinstance(res, ArrayType):
            raise VerifyError("array.subview works on arrays")
        if keep is None or len(keep) != src.ndim or sum(keep) != res.ndim:
            raise VerifyError("array.subview: keep must have one flag per source dim")
        if len(self.operands) != 1 + src.ndim + 2 * res.ndim or res.dtype != src.dtype:
            raise VerifyError("array.subview: wrong operand count or element type")


class Broadcast(SimpleOp):
    name = "array.broadcast"
    n_operands = None
    traits = frozenset({PURE, VIEW})
    __slots__ = ()


class Transpose(SimpleOp):
    name = "array.transpose"
    n_operands = 1
    traits = frozenset({PURE, VIEW})
    __slots__ = ()

    @classmethod
    def infer(cls, operand_types, attrs):
        t = operand_types[0]
        return [ArrayType(t.dtype, t.ndim, "C" if t.ndim <= 1 and t.layout == "C" else "A")]


class Reshape(SimpleOp):
    name = "array.reshape"
    n_operands = None
    traits = frozenset({PURE, VIEW})
    __slots__ = ()

    def verify(self):
        super().verify()
        src, res = self.operands[0].type, self.results[0].type
        if not (isinstance(src, ArrayType) and isinstance(res, ArrayType)):
            raise VerifyError("array.reshape works on arrays")
        if src.layout != "C" or res.layout != "C" or res.dtype != src.dtype:
            raise VerifyError("array.reshape views a C-contiguous array as another one")
        if len(self.operands) != 1 + res.ndim or any(v.type != I64 for v in self.operands[1:]):
            raise VerifyError("array.reshape: one i64 size per result dim")


class ArrayFree(SimpleOp):
    name = "array.free"
    n_operands = 1
    n_results = 0
    traits = frozenset({WRITES})
    written_operands = (0,)
    __slots__ = ()


def _check_access(op, arr, indices, elem):
    t = arr.type
    if not isinstance(t, ArrayType):
        raise VerifyError(f"{op.name}: {t} is not an array")
    if len(indices) != t.ndim or any(i.type != I64 for i in indices):
        raise VerifyError(f"{op.name}: needs {t.ndim} i64 indices")
    if elem != t.dtype:
        raise VerifyError(f"{op.name}: element type {elem} != {t.dtype}")


class Index(SimpleOp):
    name = "array.index"
    n_operands = 2
    traits = frozenset({MAY_RAISE})
    __slots__ = ()

    @classmethod
    def infer(cls, operand_types, attrs):
        return [I64]

    def verify(self):
        super().verify()
        if any(v.type != I64 for v in self.operands):
            raise VerifyError("array.index works on i64")


class Relayout(SimpleOp):
    """``%b = array.relayout %a : array<f64,1,A>``: the same view typed with a weaker layout."""

    name = "array.relayout"
    n_operands = 1
    traits = frozenset({PURE, VIEW})
    __slots__ = ()


class Offset(SimpleOp):
    """``%k = array.offset %view, %root : i64``: how many elements ``view``'s first element lies
    after ``root``'s (both view one buffer)."""

    name = "array.offset"
    n_operands = 2
    traits = frozenset({PURE})
    __slots__ = ()

    @classmethod
    def infer(cls, operand_types, attrs):
        return [I64]


class DataPtr(SimpleOp):
    """``%p = array.data_ptr %a : i64``: the address of ``a``'s first element (reverse mode
    uses it to tell which buffer a loop-carried array refers to)."""

    name = "array.data_ptr"
    n_operands = 1
    traits = frozenset({PURE})
    __slots__ = ()

    @classmethod
    def infer(cls, operand_types, attrs):
        return [I64]
