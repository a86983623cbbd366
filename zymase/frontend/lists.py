"""Python lists built inside a function: ``lst = []``, ``lst.append(x)``, ``len(lst)``, ``lst[i]``,
``np.array(lst)``.  A list is a buffer with a capacity and a length; ``append`` doubles the
buffer when it is full (copying the elements to the same positions).  Elements are scalars of
one type.  The buffers are marked ``list`` so that reverse mode can give all of a list's buffers
one shadow, the size of the last (``ReverseTransform.list_shadow``)."""

from __future__ import annotations

from ..errors import UnsupportedError, ZymaseTypeError
from ..ir.core import Block, Region
from ..ir.ops import AddI, CmpI, Dim, If, MaxI, MulI, Store
from ..ir.types import ArrayType
from .emit import alloc, load, nest, store
from .typing import Array, ListVal, PyObj, Scalar, result_type, stype

INITIAL_CAPACITY = 16


def list_method(lw, lst, name, args, kwargs, node):
    if name != "append":
        raise lw.err(UnsupportedError, f"list.{name}() is not supported (only append)", node)
    if len(args) != 1 or not isinstance(args[0], Scalar):
        if getattr(node, "zy_comprehension", False):  # desugar.py's append
            raise lw.err(UnsupportedError, "a list comprehension's elements must be numbers "
                         f"here, not {lw.describe(args[0])} (lists hold scalars in compiled "
                         "code); for rows of a 2-D array, fill np.empty((m, n)) in a loop",
                         node.args[0])
        raise lw.err(ZymaseTypeError, "list.append() takes one scalar", node)
    x = args[0]
    if isinstance(lst, ListVal) and _wider(x.type, lst.dtype):
        raise lw.err(UnsupportedError, f"this list holds {lst.dtype.np_dtype.name} numbers, and "
                     f"appending a {x.type.np_dtype.name} would change them (lists hold one type "
                     "in compiled code): start the list with a value of the wider type", node)
    if not isinstance(lst, ListVal):
        buf = alloc(lw, x.type if not x.weak else result_type(stype(x), stype(x)).type,
                    [lw.b.i64(INITIAL_CAPACITY)])
        buf.value.op.attrs["list"] = True  # reverse mode gives a list's buffers one shadow
        lst = ListVal(buf.value, lw.b.i64(0))
    new = append(lw, lst, x)
    target = node.func.value
    if not hasattr(target, "id"):
        raise lw.err(UnsupportedError, "append() needs a list held in a local name", node)
    lw.symtab[target.id] = new
    return PyObj(None)


def _wider(t, dtype) -> bool:
    """Whether a value of type ``t`` would lose its kind in a list of ``dtype`` (a float in a
    list of ints, a complex in a list of floats)."""
    rank = lambda u: 2 if u.is_complex else 1 if u.is_inexact else 0  # noqa: E731
    return rank(t) > rank(dtype)


def append(lw, lst: ListVal, x: Scalar) -> ListVal:
    b = lw.b
    cap = b.op(Dim, lst.buf, axis=0)
    full = b.op(CmpI, lst.length, cap, pred="ge")
    then, other = Block(), Block()
    with b.at(then):
        new_cap = b.op(MaxI, b.op(MulI, cap, b.i64(2)), b.i64(INITIAL_CAPACITY))
        grown = alloc(lw, lst.dtype, [new_cap])
        grown.value.op.attrs["list"] = True
        old = Array(lst.buf)
        nest(lw, [lst.length], lambda idx, acc: store(lw, load(lw, old, idx), grown, idx))
        b.yield_(grown.value)
    with b.at(other):
        b.yield_(lst.buf)
    t = ArrayType(lst.dtype, 1, "C")
    buf = b.create(If, [full], [t], {"list_grow": True},
                   regions=[Region([then]), Region([other])]).result
    b.create(Store, [b.cast(x.value, lst.dtype), buf, lst.length])
    return ListVal(buf, b.op(AddI, lst.length, b.i64(1)))

