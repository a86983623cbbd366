"""Copies where NumPy returns a view: ``reshape``/``ravel`` of an array that may not be
contiguous, ``np.ascontiguousarray`` of a slice, the diagonal of a matrix, ``np.einsum('ii->i')``.
They are marked when made (``protect_copy``); once the module is lowered, ``check_reshape_copies``
refuses any write into one (where NumPy would have written into the original, or raised), so the
difference never shows."""

from __future__ import annotations

from ...errors import UnsupportedError
from ...ir.ops import Alloc, Call, Store
from ...ir.roots import array_roots, written_buffers
from ...ir.types import ArrayType
from ..typing import Array

# what writing into a protected copy would have done in NumPy
PROTECTED = {
    "reshape": "writing into the result of `reshape`/`ravel` of an array that may not be "
               "contiguous (a slice or a transpose): NumPy returns a view when the strides allow "
               "it (the write would change the original), zymase copies; write into an explicit "
               "copy (`.reshape(...).copy()`) or into the original",
    "contiguous": "writing into the result of `np.ascontiguousarray`/`np.asarray(order='C')` of "
                  "a slice or transpose: NumPy returns a view when the array happens to be "
                  "contiguous, zymase copies; write into an explicit copy (`.copy()`)",
    "diagonal": "writing into the result of `np.diag`/`np.diagonal` of a matrix: NumPy returns "
                "a read-only view (the write raises ValueError there), zymase copies; write into "
                "an explicit copy (`np.diag(m).copy()`)",
    "einsum": "writing into the result of `np.einsum` of one operand with a repeated letter "
              "and nothing summed (`'ii->i'`): NumPy returns a view (the write would change the "
              "original), zymase copies; write into an explicit copy (`.copy()`)",
    "broadcast": "writing into the result of `np.broadcast_to`/`np.broadcast_arrays`: NumPy "
                 "returns a read-only view (several elements may share one memory location; the "
                 "write raises ValueError or warns there); write into an explicit copy "
                 "(`np.broadcast_to(a, shape).copy()`) or into the original",
}


def protect_copy(block, start: int, out: Array, kind: str) -> None:
    """Mark ``out`` (made by the ops of ``block`` from index ``start`` on) as a copy where NumPy
    returns a view: ``check_reshape_copies`` refuses writes into it (its own filling apart)."""
    out.value.op.attrs["protected_copy"] = kind
    for op in block.ops[start:]:
        for inner in op.walk():
            if isinstance(inner, Store) and inner.operands[1] is out.value:
                inner.attrs["copy_fill"] = True


def check_reshape_copies(module) -> None:
    """Refuse writes into the copies made where NumPy returns a view (see PROTECTED): the
    ``reshape``/``ravel`` of a possibly non-contiguous array, the diagonal of a matrix."""
    written = _written_params(module)
    for func in module:
        copies = [op for op in func.walk() if isinstance(op, Alloc)
                  and op.attrs.get("protected_copy")]
        if not copies:
            continue
        roots = array_roots(func)
        bufs = {op.result: op for op in copies}
        for op in func.walk():
            if op.attrs.get("copy_fill"):
                continue
            targets = _written_operands(op, written)
            hit = next((r for t in targets for r in roots.get(t, ()) if r in bufs), None)
            if hit is not None:
                raise UnsupportedError(PROTECTED[bufs[hit].attrs["protected_copy"]], op.loc)


def _written_operands(op, written: dict) -> list:
    """The array operands ``op`` may write (``written_buffers``; a call: those its callee
    writes, per ``written``, all of them when the callee is unknown)."""
    if isinstance(op, Call):
        w = written.get(str(op.attrs.get("callee")))
        return [v for k, v in enumerate(op.operands)
                if isinstance(v.type, ArrayType) and (w is None or k in w)]
    return written_buffers(op)


def _written_params(module) -> dict:
    """Function name -> indices of the array parameters it may write (through calls too)."""
    out = {f.sym_name: set() for f in module}
    changed = True
    while changed:
        changed = False
        for func in module:
            roots = array_roots(func)
            args = {a: k for k, a in enumerate(func.args)}
            for op in func.walk():
                targets = _written_operands(op, out)
                new = {args[r] for t in targets for r in roots.get(t, ()) if r in args}
                if not new <= out[func.sym_name]:
                    out[func.sym_name] |= new
                    changed = True
    return out
