"""What the custom-rule lowering (``custom_rules.py``) and reverse mode through a jvp rule
(``custom_lowering.py``) build with: the stop-gradient helpers, conversions of a rule's values
to the function's types, and the run-time shape checks of rules' outputs."""

from __future__ import annotations

from ..ir.builder import Builder
from ..ir.core import Value
from ..ir.ops import Alloc, Assert, CmpI, Dim, Load, Relayout, Store
from ..ir.types import ArrayType
from ..lang import custom_vjp
from .typing import Array, Scalar, Struct, Tup, flatten


# ---------------------------------------------------------------------- the stop helpers

# Reverse mode of a function with only a jvp rule (``custom_lowering.py``): ``_stop(x)`` is
# ``x`` with no reverse-mode derivative (its backward rule gives no cotangent), and
# ``_probe(x)`` is ``(stop(x), x - stop(x))``: the primal the rule sees, and a tangent whose
# value is 0 and whose derivative with respect to ``x`` is the identity.  Forward mode (and
# forward over reverse) goes through ``_stop``'s body: a tangent passes.


@custom_vjp
def _stop(x):
    return x * 1.0  # (a new array: nothing written later changes what the rule read)


def _stop_fwd(x):
    return _stop(x), None


def _stop_bwd(res, ct):
    return (None,)


_stop.defvjp(_stop_fwd, _stop_bwd)


def _probe(x):
    s = _stop(x)
    return s, x - s


# ---------------------------------------------------------------------- IR helpers


def _tangent_leaves(p) -> list:
    """Per flat value of template ``p``: its template when the rule gets a tangent for it (a
    float scalar or array; not a list's buffer), else None."""
    if isinstance(p, (Scalar, Array)):
        return [p if _inexact(p.type) else None]
    if isinstance(p, Tup):
        return [x for q in p.items for x in _tangent_leaves(q)]
    if isinstance(p, Struct):
        return [x for q in p.fields.values() for x in _tangent_leaves(q)]
    return [None] * len(flatten(p))


def _inexact(t) -> bool:
    t = t.dtype if isinstance(t, ArrayType) else t
    return getattr(t, "is_inexact", False)


def _has_float(t) -> bool:
    return any(_inexact(v.type) for v in flatten(t)) if t is not None else False


def _scalar_converts(src, dst) -> bool:
    """A scalar of type ``src`` may stand for one of ``dst`` (a Python int for a float, a float
    of another precision, a real for a complex); never complex to real nor float to int."""
    if src == dst:
        return True
    order = {"b": 0, "i": 1, "f": 2, "c": 3}
    if src.kind not in order or dst.kind not in order:
        return False
    return dst.kind in "fc" and order[src.kind] <= order[dst.kind]


def same_kind(src, dst) -> bool:
    """Array element types a rule's output may have for the function's: the same, or a float
    (complex) of another precision, converted (``convert``)."""
    return src == dst or (src.kind == dst.kind and src.kind in "fc")


def convert(b: Builder, v: Value, t) -> Value:
    """``v`` with type ``t``: a scalar cast, an array of another precision (a converted copy)
    or of another layout (``A`` to ``C``: a contiguous copy).  The checks leave nothing else."""
    if v.type == t:
        return v
    if not isinstance(t, ArrayType):
        return b.cast(v, t)
    if v.type.dtype != t.dtype:
        v = _copy(b, v, t.dtype)
    if v.type == t:
        return v
    if t.layout != "C":
        return b.op(Relayout, v, type=t)
    return _copy(b, v)


def _zeros_like(b: Builder, v: Value) -> Value:
    if not isinstance(v.type, ArrayType):
        return b.const(0, v.type)
    shape = [b.op(Dim, v, axis=k) for k in range(v.type.ndim)]
    z = b.create(Alloc, shape, [v.type.with_layout("C")], {"init": "zero"}).result
    return z if z.type == v.type else b.op(Relayout, z, type=v.type)


def _copy(b: Builder, src: Value, dtype=None) -> Value:
    """A C-contiguous copy of ``src`` (its elements converted to ``dtype``, if given)."""
    dtype = dtype or src.type.dtype
    shape = [b.op(Dim, src, axis=k) for k in range(src.type.ndim)]
    out = b.create(Alloc, shape, [ArrayType(dtype, src.type.ndim, "C")], {"init": "none"}).result
    b.nest(shape, lambda idx: b.create(Store, [b.cast(b.op(Load, src, *idx), dtype), out, *idx],
                                       []))
    return out


def check_shape(b: Builder, a: Value, want: list, lead: str, obj: str, tail: str) -> None:
    """ShapeError at run time unless ``a``'s shape is ``want`` (i64 values): see ``check_dims``."""
    check_dims(b, [b.op(Dim, a, axis=k) for k in range(a.type.ndim)], want, lead, obj, tail)


def check_dims(b: Builder, got: list, want: list, lead: str, obj: str, tail: str) -> None:
    """ShapeError at run time unless the shape ``got`` is ``want`` (i64 values), saying "``lead``
    of shape (n,) for ``obj``, which has shape (m,)``tail``" (more axes: by the axis that
    differs; a run-time message shows two numbers)."""
    ndim = len(got)
    for k, (g, d) in enumerate(zip(got, want, strict=True)):
        ok = b.op(CmpI, g, d, pred="eq")
        if ndim == 1:
            text = f"{lead} of shape ({{a}},) for {obj}, which has shape ({{b}},){tail}"
        else:
            text = (f"{lead} with {{a}} elements along axis {k} for {obj}, which has {{b}} "
                    f"there (both of rank {ndim}){tail}")
        b.create(Assert, [ok, g, d], [], {"kind": "ShapeError", "msg": text})
