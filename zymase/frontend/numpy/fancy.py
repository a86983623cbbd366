"""Indexing with arrays: ``x[mask]``, ``x[idx]`` and ``x[rows, cols]`` (reads copy; writes go
into ``x``).

* A boolean mask selects, in C order, the positions where it is true: ``x[mask]`` counts them,
  allocates, then fills; the mask's shape must match the axes it indexes (IndexError).
* An integer array gathers along one axis: ``x[idx]`` has shape ``idx.shape + x.shape[1:]``;
  negative indices wrap, out-of-range ones raise IndexError under ``boundscheck``.
* Several integer arrays (``x[rows, cols]``, ``N[xi[m], yi[m]] = v``) are broadcast together
  and pick one element per position, as NumPy's advanced indexing.
* Other items may stand beside the array as in NumPy (``x[:, idx]``, ``x[mask, 1:]``,
  ``x[0, idx]``); integers must be adjacent to the array (no slice between them).
* ``x[idx] = v`` writes in index order, so a repeated index keeps the last value, and
  ``x[idx] += v`` means ``x[idx] = x[idx] + v`` (not ``np.add.at``), as in NumPy.
"""

from __future__ import annotations

from ...errors import UnsupportedError, ZymaseIndexError, ZymaseTypeError
from ...ir.core import Block, Region
from ...ir.ops import AddI, CmpI, If, OrI
from ...ir.types import I64
from ..emit import alloc, check, load, nest, store
from ..typing import Array, Scalar
from .arrays import broadcast_shapes, broadcast_to, copy_array, may_overlap, operand, sdtype

FULL = ("slice", None, None, None)


def _plan(lw, base: Array, items, node):
    """(view, position p of the indexed axes in the view, index array(s), is_mask): one mask,
    or a list of integer arrays (each indexes one axis of the view from ``p`` on)."""
    pos = [k for k, it in enumerate(items) if it[0] == "array"]
    k = pos[0]
    idx = items[k][1]
    dts = [items[j][1].type.dtype for j in pos]
    if not all(dt.is_bool or dt.is_int for dt in dts):
        raise lw.err(
            ZymaseIndexError, "arrays used as indices must be of integer (or boolean) type", node
        )
    if len(pos) > 1 and any(dt.is_bool for dt in dts):
        raise lw.err(
            UnsupportedError, "a boolean mask beside other index arrays is not supported; "
            "index with np.nonzero(mask)'s arrays instead", node
        )
    dt = dts[0]
    advanced = [j for j, it in enumerate(items) if it[0] != "slice"]
    if advanced != list(range(advanced[0], advanced[-1] + 1)):
        raise lw.err(
            UnsupportedError,
            "an index array with integer indices separated from it by a slice is not supported",
            node,
        )
    m = idx.type.ndim if dt.is_bool else 1
    rest = [FULL if it[0] == "array" else it for it in items[:k]] + [FULL] * m + [
        FULL if it[0] == "array" else it for it in items[k + 1 :]]
    if len(rest) > base.type.ndim:
        raise lw.err(
            ZymaseIndexError, f"too many indices for an array with ndim={base.type.ndim}", node
        )
    view = base if all(it == FULL for it in rest) else Array(lw.subview(base, rest, node))
    p = sum(1 for it in items[:k] if it[0] == "slice")
    if dt.is_bool:
        return view, p, idx, True
    return view, p, [items[j][1] for j in pos], False


def _if(lw, cond, then_fn, else_fn, types):
    """``scf.if`` whose branches yield the Values ``then_fn()`` / ``else_fn()`` return."""
    blocks = []
    for fn in (then_fn, else_fn):
        blk = Block()
        with lw.b.at(blk):
            lw.b.yield_(*fn())
        blocks.append(blk)
    op = lw.b.create(If, [cond], types, regions=[Region([x]) for x in blocks])
    return list(op.results)


def _check_mask(lw, view, p, mask):
    vd = lw.dims(view)
    for j, d in enumerate(lw.dims(mask)):
        check(
            lw,
            lw.b.op(CmpI, d, vd[p + j], pred="eq"),
            "IndexError",
            "boolean index did not match the indexed array",
        )


def _count(lw, mask):
    def body(idx, acc):
        return [lw.b.op(AddI, acc[0], lw.b.cast(load(lw, mask, idx), I64))]

    return nest(lw, lw.dims(mask), body, [lw.b.i64(0)])[0]


def _each_selected(lw, view, p, mask, visit):
    """``visit(outer, mask_idx, k)`` for every true position of ``mask`` (``k`` counts them from 0
    within each ``outer`` index of the axes before ``p``)."""
    vd = lw.dims(view)
    one = lw.b.i64(1)

    def outer(o, acc):
        def inner(mi, acc):
            k = acc[0]

            def then():
                visit(o, mi, k)
                return [lw.b.op(AddI, k, one)]

            return _if(lw, load(lw, mask, mi), then, lambda: [k], [I64])

        nest(lw, lw.dims(mask), inner, [lw.b.i64(0)])

    nest(lw, vd[:p], outer)


def _gathered(lw, view, p, idxs, node):
    """(the dims of the result of indexing ``view`` with the integer arrays ``idxs`` at axes
    ``p, p + 1, ...``, the arrays broadcast together, how many result dims they give)."""
    vd = lw.dims(view)
    shape = broadcast_shapes(lw, [lw.dims(i) for i in idxs]) if len(idxs) > 1 else lw.dims(
        idxs[0])
    idxs = [broadcast_to(lw, i, shape) for i in idxs]
    return idxs, vd[:p] + shape + vd[p + len(idxs) :], len(shape)


def _gather_index(lw, view, p, idxs, oidx, nq):
    """The view index of output index ``oidx`` (whose ``nq`` dims at ``p`` index each of
    ``idxs``, broadcast to one shape)."""
    at = []
    for a, idx in enumerate(idxs):
        j = Scalar(lw.b.cast(load(lw, idx, oidx[p : p + nq]), I64), False)
        at.append(lw.norm_index(j, lw.dim(view, p + a), None))
    return oidx[:p] + at + oidx[p + nq :]


def fancy_read(lw, base: Array, items, node) -> Array:
    view, p, idx, is_mask = _plan(lw, base, items, node)
    vd = lw.dims(view)
    dt = view.type.dtype
    if not is_mask:
        idx, out_dims, nq = _gathered(lw, view, p, idx, node)
        out = alloc(lw, dt, out_dims)
        nest(
            lw,
            out_dims,
            lambda oi, acc: store(
                lw, load(lw, view, _gather_index(lw, view, p, idx, oi, nq)), out, oi
            ),
        )
        return out
    m = idx.type.ndim
    _check_mask(lw, view, p, idx)
    rest = vd[p + m :]
    out = alloc(lw, dt, vd[:p] + [_count(lw, idx)] + rest)

    def visit(o, mi, k):
        nest(lw, rest, lambda r, acc: store(lw, load(lw, view, o + mi + r), out, o + [k] + r))

    _each_selected(lw, view, p, idx, visit)
    return out


def _value(lw, value, base: Array, node):
    v = operand(lw, value, node)
    if sdtype(v).type.is_complex and not base.type.dtype.is_complex:
        raise lw.err(ZymaseTypeError, "cannot assign complex values into a real array", node)
    if isinstance(v, Array) and may_overlap(v, base):
        v = copy_array(lw, v)
    return v


def _target(lw, v, dims, node):
    """``v`` broadcast to the indexing result's shape ``dims`` (ShapeError when it cannot be)."""
    if isinstance(v, Scalar):
        return v
    if v.type.ndim > len(dims):
        raise lw.err(
            ZymaseTypeError, "the value has more dimensions than the indexing result", node
        )
    for d, t in zip(lw.dims(v)[::-1], dims[::-1]):
        ok = lw.b.op(
            OrI,
            lw.b.op(CmpI, d, t, pred="eq"),
            lw.b.op(CmpI, d, lw.b.i64(1), pred="eq"),
        )
        check(
            lw,
            ok,
            "ShapeError",
            "shape mismatch: the value array could not be broadcast to the indexing result",
        )
    return broadcast_to(lw, v, dims)


def _element(lw, v, idx, t):
    x = v.value if isinstance(v, Scalar) else load(lw, v, idx)
    return lw.b.cast(x, t)


def fancy_write(lw, base: Array, items, value, node):
    view, p, idx, is_mask = _plan(lw, base, items, node)
    v = _value(lw, value, base, node)
    vd = lw.dims(view)
    t = view.type.dtype
    if not is_mask:
        idx, dims, nq = _gathered(lw, view, p, idx, node)
        v = _target(lw, v, dims, node)
        nest(
            lw,
            dims,
            lambda oi, acc: store(
                lw, _element(lw, v, oi, t), view, _gather_index(lw, view, p, idx, oi, nq)
            ),
        )
        return
    m = idx.type.ndim
    _check_mask(lw, view, p, idx)
    rest = vd[p + m :]
    if isinstance(v, Array):
        v = _target(lw, v, vd[:p] + [_count(lw, idx)] + rest, node)

    def visit(o, mi, k):
        nest(lw, rest, lambda r, acc: store(lw, _element(lw, v, o + [k] + r, t), view, o + mi + r))

    _each_selected(lw, view, p, idx, visit)
