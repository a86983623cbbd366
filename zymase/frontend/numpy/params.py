"""Binding the arguments of a NumPy function as Python does (``bind``), and reading the ones
that must be known at compile time (``static``, ``const_int``, ``norm_axis``)."""

from __future__ import annotations

from ...errors import UnsupportedError, ZymaseTypeError
from ...ir.ops import NegF, NegI
from ..typing import FVal, PyObj, Scalar, Tup

REQUIRED = object()  # marks a parameter without a default in ``bind``


def bind(lw, fname, args, kwargs, node, params, ignorable=None):
    """Python's binding of ``args``/``kwargs`` to ``params`` ((name, default) pairs).

    Returns ``{name: FVal or the default}``.  A keyword outside ``params`` is refused with
    UnsupportedError unless ``ignorable`` maps it to the constant it was given (``keepdims=False``).
    """
    names = [p for p, _ in params]
    if len(args) > len(params):
        raise lw.err(
            ZymaseTypeError,
            f"{fname}() takes at most {len(params)} positional argument(s) here, got {len(args)}",
            node,
        )
    out = dict(params)
    out.update(zip(names, args))
    for k, v in kwargs.items():
        if k in names[: len(args)]:
            raise lw.err(ZymaseTypeError, f"{fname}() got multiple values for `{k}`", node)
        if k in names:
            out[k] = v
        elif not (ignorable and k in ignorable and _same_constant(lw, v, ignorable[k])):
            raise lw.err(
                UnsupportedError,
                f"{fname}() keyword argument `{k}` is not supported "
                f"here (supported: {', '.join(names) or 'none'})",
                node,
            )
    missing = [k for k, v in out.items() if v is REQUIRED]
    if missing:
        raise lw.err(ZymaseTypeError, f"{fname}() is missing the argument `{missing[0]}`", node)
    return out


def _same_constant(lw, v, default):
    if default is None:
        return is_none(v)
    c = static(lw, v)
    return c is not None and type(c) is type(default) and c == default


def static(lw, v):
    """The Python value of a bound argument known at compile time (None when it is not); a
    negated constant (``axis=-1``) counts as one."""
    if not isinstance(v, FVal):
        return v
    c = lw.constant_of(v)
    op = v.value.op if isinstance(v, Scalar) else None
    if c is None and isinstance(op, (NegI, NegF)):
        inner = lw.constant_of(Scalar(op.operands[0]))
        return None if inner is None or isinstance(inner, bool) else -inner
    return c


def is_none(v) -> bool:
    return v is None or (isinstance(v, PyObj) and v.obj is None)


def const_int(lw, v, what, node) -> int:
    k = static(lw, v)
    if isinstance(k, bool) or not isinstance(k, int):
        raise lw.err(UnsupportedError, f"{what} must be a constant integer", node)
    return k


def const_axes(lw, v, ndim, what, node) -> list[int]:
    """The axes of an int or a tuple of ints known when compiling (``axis=(1, 2)``), each in
    ``range(ndim)``, none repeated."""
    items = v.items if isinstance(v, Tup) else (v,)
    out = [norm_axis(lw, const_int(lw, x, what, node), ndim, node) for x in items]
    if len(set(out)) != len(out):
        raise lw.err(ZymaseTypeError, f"{what}: repeated axis", node)
    return out


def norm_axis(lw, axis: int, ndim: int, node) -> int:
    if not -ndim <= axis < ndim:
        raise lw.err(
            ZymaseTypeError, f"axis {axis} is out of bounds for an array of dimension {ndim}", node
        )
    return axis % ndim
