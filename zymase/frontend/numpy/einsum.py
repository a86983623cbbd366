"""``np.einsum``: the subscripts string is parsed at compile time (explicit ``"ij,jk->ik"`` or
implicit ``"ij,jk"``, whose output is the letters seen once, in alphabetical order).

* One operand whose output only reorders its letters (``"ij->ji"``) is a transposed view, as in
  NumPy.
* Two operands whose contraction is a matrix product become ``matmul`` of transposed views (BLAS,
  and the product's derivative rule): one letter contracted, at most one free letter per operand,
  and batch letters (in both operands and the output) only where both operands have a free one
  (``"ij,jk->ik"``, ``"ij,kj->ki"``, ``"ij,j->i"``, ``"i,i->"``, ``"bij,bjk->bik"``); the result
  is viewed in the output's order.
* Everything else is a loop nest: over the output's letters, with a sum over the others in
  each element (``"ii->"`` trace, ``"ij->"`` sum, ``"ij,ij->"``, ``"i,j->ij"``, three operands).
  Where NumPy returns a view (one operand, nothing summed: ``"ii->i"``) the copy is protected
  against writes (``copies.py``).

Sizes follow NumPy: each letter has one size, size-1 dims broadcast (checked at run time).
``...`` stands for the dims the letters do not name (``expand_ellipsis`` writes it out as
letters).  Derivatives come from the ops this lowers to.
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedError, ZymaseValueError
from ...ir.ops import Transpose
from ..emit import alloc, arith, load, nest, store
from ..typing import Array, PyObj, Scalar
from .arrays import as_array, broadcast_shapes, broadcast_to, common_type
from .copies import protect_copy
from .linalg import matmul
from .registry import register


@register(np.einsum)
def _einsum(lw, args, kwargs, node):
    for k in kwargs:
        if k != "optimize":  # the contraction order: the result is the same
            raise lw.err(UnsupportedError, f"np.einsum({k}=...) is not supported", node)
    if not args or not (isinstance(args[0], PyObj) and isinstance(args[0].obj, str)):
        raise lw.err(UnsupportedError, "np.einsum needs its subscripts as a constant string "
                     "first (the form with lists of axes is not supported)", node)
    ops = [as_array(lw, v, "np.einsum", node) for v in args[1:]]

    def fail(msg):
        return lw.err(ZymaseValueError, f"np.einsum('{args[0].obj}'): {msg}", node)

    subscripts = expand_ellipsis(args[0].obj, [a.type.ndim for a in ops], fail)
    terms, out = parse(subscripts, [a.type.ndim for a in ops], fail)
    if len(ops) == 1 and set(terms[0]) == set(out):  # nothing summed
        return _permuted(lw, ops[0], terms[0], out)
    if len(ops) == 2:
        product = _as_matmul(lw, terms, out, ops, node)
        if product is not None:
            return product
    return _loops(lw, terms, out, ops, node)


def expand_ellipsis(subscripts: str, ndims: list[int], fail) -> str:
    """The subscripts with each ``...`` written out as letters no term uses: an operand's
    ``...`` stands for its dims the letters do not name, right-aligned with the others'
    (they broadcast); the output has them all, first when it is implicit (NumPy's rule)."""
    s = subscripts.replace(" ", "")
    if "..." not in s:
        return s
    ins, arrow, out = s.partition("->")
    terms = ins.split(",")
    if len(terms) != len(ndims):
        raise fail(f"{len(terms)} operand(s) in the subscripts, {len(ndims)} given")
    named = set(s) - {".", ",", "-", ">"}
    free = [c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in named]
    counts = []
    for term, nd in zip(terms, ndims):
        k = nd - len(term.replace("...", "")) if "..." in term else 0
        if k < 0 or term.count("...") > 1:
            raise fail(f"'{term}' does not fit an operand with {nd} dims")
        counts.append(k)
    most = max(counts)
    letters = "".join(free[:most])
    terms = [t.replace("...", letters[most - k:]) for t, k in zip(terms, counts)]
    if arrow:
        out = out.replace("...", letters)
    else:
        rest = "".join(terms).replace(" ", "")
        out = letters + "".join(sorted(c for c in set(rest) - set(letters)
                                       if rest.count(c) == 1))
    return ",".join(terms) + "->" + out


def parse(subscripts: str, ndims: list[int], fail) -> tuple[list[str], str]:
    """(one string of letters per operand, the output's letters); ``fail(msg)`` makes the
    error to raise."""
    s = subscripts.replace(" ", "")
    ins, arrow, out = s.partition("->")
    terms = ins.split(",")
    if len(terms) != len(ndims):
        raise fail(f"{len(terms)} operand(s) in the subscripts, {len(ndims)} given")
    if not all(c.isascii() and c.isalpha() for c in "".join(terms) + out) or "->" in out:
        raise fail("subscripts are letters, commas and one '->'")
    for term, nd in zip(terms, ndims):
        if len(term) != nd:
            raise fail(f"'{term}' names {len(term)} dims of an operand with {nd}")
    letters = "".join(terms)
    if not arrow:
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    if len(set(out)) != len(out) or not set(out) <= set(letters):
        raise fail(f"output '{out}' repeats a letter or has one no operand has")
    return terms, out


def _permuted(lw, a: Array, term: str, out: str):
    """An operand whose letters the output only reorders (a view, as NumPy returns), or, with a
    repeated letter (``"ii->i"``), the loop nest's copy protected like NumPy's view would be."""
    if len(set(term)) == len(term):
        if term == out:
            return a
        return Array(lw.b.op(Transpose, a.value, perm=[term.index(c) for c in out]))
    block, start = lw.b.block, len(lw.b.block.ops)
    r = _loops(lw, [term], out, [a], None)
    protect_copy(block, start, r, "einsum")
    return r


def _as_matmul(lw, terms, out, ops, node):
    """``matmul`` of transposed views when the contraction is a matrix product, else None."""
    ta, tb = terms
    if len(set(ta)) < len(ta) or len(set(tb)) < len(tb):
        return None
    batch = [c for c in out if c in ta and c in tb]
    summed = [c for c in ta if c in tb and c not in out]
    free_a, free_b = ([c for c in t if c not in u] for t, u in ((ta, tb), (tb, ta)))
    if (len(summed) != 1 or len(free_a) > 1 or len(free_b) > 1
            or not set(free_a + free_b) <= set(out) or (batch and not (free_a and free_b))):
        return None
    a = _view(lw, ops[0], ta, batch + free_a + summed)
    b = _view(lw, ops[1], tb, batch + summed + free_b)
    r = matmul(lw, a, b, node, "np.einsum")
    natural = batch + free_a + free_b
    return r if list(out) == natural else _view(lw, r, "".join(natural), list(out))


def _view(lw, a: Array, term: str, order: list[str]) -> Array:
    perm = [term.index(c) for c in order]
    if perm == list(range(len(perm))):
        return a
    return Array(lw.b.op(Transpose, a.value, perm=perm))


def _loops(lw, terms, out, ops, node):
    """out[out letters] = sum over the other letters of the product of the operands' elements;
    a Scalar when the output has no letter."""
    t = common_type(ops)
    letters = list(out) + [c for c in dict.fromkeys("".join(terms)) if c not in out]
    sizes = {c: broadcast_shapes(lw, [[lw.dim(a, k)] for a, term in zip(ops, terms)
                                      for k, x in enumerate(term) if x == c])[0]
             for c in letters}
    views = [broadcast_to(lw, a, [sizes[c] for c in term]) for a, term in zip(ops, terms)]

    def element(idx_of):
        p = None
        for a, term in zip(views, terms):
            v = lw.b.cast(load(lw, a, [idx_of[c] for c in term]), t)
            p = v if p is None else arith(lw, "mul", p, v)
        return p

    def total(outer):
        summed = letters[len(out):]
        if not summed:
            return element(outer)

        def body(idx, acc):
            return [arith(lw, "add", acc[0], element({**outer, **dict(zip(summed, idx))}))]

        return nest(lw, [sizes[c] for c in summed], body, [lw.b.const(0, t)])[0]

    if not out:
        return Scalar(total({}), False)
    r = alloc(lw, t, [sizes[c] for c in out])
    nest(lw, lw.dims(r), lambda idx, acc: store(lw, total(dict(zip(out, idx))), r, idx))
    return r
