"""``tape``: the stack on which reverse mode keeps values its adjoint sweep needs.

* ``%t = tape.new : tape`` an empty tape; ``tape.free %t`` releases it.
* ``tape.reserve %t, %n`` makes room for ``n`` more slots (one check before a loop nest
  instead of one per push).
* ``tape.push %t, %v`` pushes a scalar (complex values take two slots, others one).
* ``%v = tape.pop %t : T`` pops the value pushed last.
* ``%p = tape.mark %t : i64`` the current position; ``tape.push_array %t, %a`` pushes every
  element of a C-contiguous array (a snapshot); ``%v = tape.read %t, %pos : T`` reads the slot
  at an absolute position (an element of a snapshot); ``tape.drop %t, %n`` discards ``n`` slots.
* ``tape.push_ref %t, %a`` pushes an array's descriptor (base and data addresses, shape,
  strides: ``2 + 2 * ndim`` slots, not its elements; the buffer must outlive the pop, see
  ``lifetime.py``); ``%a = tape.pop_ref %t : array<...>`` pops it.
* ``%buf, %pos = tape.export %t : i64, i64`` hands the tape's buffer (an address) and position
  to the caller (the split form's forward function returns them); ``%t = tape.adopt %buf, %pos``
  takes such a buffer over in another call (the adjoint function, which frees it).
* Tapes of a parallel loop's iterations (reverse mode's parallel adjoint): ``%h = tape.set_new
  %n : i64`` makes one tape per thread and a record per iteration (a handle); in the forward
  loop, ``%t = tape.chunk %h, %k : tape`` is the running thread's tape, on which iteration
  ``k`` pushes, and ``tape.close %h, %k, %t`` records where its values end; in the adjoint
  loop, ``%t = tape.at %h, %k : tape`` is a tape of iteration ``k``'s values alone (its pops
  meet no other iteration's, so the threads need no order); ``tape.set_free %h, %n`` releases
  it all.

Pushes happen in the forward sweep, pops in exactly the reverse order in the adjoint sweep.
All four have effects: passes never move, merge or drop them.
"""

from __future__ import annotations

from ..core import ALLOCATES, READS, WRITES
from ..types import I64, TAPE, ArrayType, ScalarType
from .base import SimpleOp, VerifyError

_EFFECTS = frozenset({READS, WRITES})


class TapeNew(SimpleOp):
    name = "tape.new"
    n_operands = 0
    traits = frozenset({ALLOCATES, WRITES})
    __slots__ = ()

    @classmethod
    def infer(cls, operand_types, attrs):
        return [TAPE]


class TapeExport(SimpleOp):
    name = "tape.export"
    n_operands = 1
    n_results = 2
    traits = _EFFECTS
    __slots__ = ()

    @classmethod
    def infer(cls, operand_types, attrs):
        return [I64, I64]


class TapeAdopt(SimpleOp):
    name = "tape.adopt"
    n_operands = 2
    traits = frozenset({ALLOCATES, WRITES})
    __slots__ = ()

    @classmethod
    def infer(cls, operand_types, attrs):
        return [TAPE]


class TapeFree(SimpleOp):
    name = "tape.free"
    n_operands = 1
    n_results = 0
    traits = _EFFECTS
    __slots__ = ()


class TapeReserve(SimpleOp):
    name = "tape.reserve"
    n_operands = 2
    n_results = 0
    traits = _EFFECTS
    __slots__ = ()


class _Transfer(SimpleOp):
    """A push (the value is operand 1) or a pop (the value is the result) of a ``kind`` value."""
    traits = _EFFECTS
    kind: type = ScalarType
    what = "a scalar"
    __slots__ = ()

    def verify(self):
        super().verify()
        v = self.operands[1] if self.n_results == 0 else self.results[0]
        if self.operands[0].type != TAPE or not isinstance(v.type, self.kind):
            verb = "needs a tape and" if self.n_results == 0 else "needs a tape and gives"
            raise VerifyError(f"{self.name} {verb} {self.what}")


class TapePush(_Transfer):
    name = "tape.push"
    n_operands = 2
    n_results = 0
    __slots__ = ()


class TapePop(_Transfer):
    name = "tape.pop"
    n_operands = 1
    __slots__ = ()


class TapePushRef(_Transfer):
    name = "tape.push_ref"
    n_operands = 2
    n_results = 0
    kind, what = ArrayType, "an array"
    __slots__ = ()


class TapePopRef(_Transfer):
    name = "tape.pop_ref"
    n_operands = 1
    kind, what = ArrayType, "an array"
    __slots__ = ()


class TapeMark(SimpleOp):
    name = "tape.mark"
    n_operands = 1
    traits = _EFFECTS  # position-dependent: never moved
    __slots__ = ()

    @classmethod
    def infer(cls, operand_types, attrs):
        return [I64]


class TapePushArray(SimpleOp):
    name = "tape.push_array"
    n_operands = 2
    n_results = 0
    traits = _EFFECTS
    __slots__ = ()


class TapeRead(SimpleOp):
    name = "tape.read"
    n_operands = 2
    traits = _EFFECTS
    __slots__ = ()


class TapeDrop(SimpleOp):
    name = "tape.drop"
    n_operands = 2
    n_results = 0
    traits = _EFFECTS
    __slots__ = ()


class TapeSetNew(SimpleOp):
    name = "tape.set_new"
    n_operands = 1
    traits = frozenset({ALLOCATES, WRITES})
    __slots__ = ()

    @classmethod
    def infer(cls, operand_types, attrs):
        return [I64]


class TapeChunk(SimpleOp):
    name = "tape.chunk"
    n_operands = 2
    traits = _EFFECTS  # names a tape: kept where it is, like the tape ops that use it
    __slots__ = ()

    @classmethod
    def infer(cls, operand_types, attrs):
        return [TAPE]


class TapeClose(SimpleOp):
    name = "tape.close"
    n_operands = 3
    n_results = 0
    traits = _EFFECTS
    __slots__ = ()


class TapeAt(SimpleOp):
    name = "tape.at"
    n_operands = 2
    traits = _EFFECTS
    __slots__ = ()

    @classmethod
    def infer(cls, operand_types, attrs):
        return [TAPE]


class TapeSetFree(SimpleOp):
    name = "tape.set_free"
    n_operands = 2
    n_results = 0
    traits = _EFFECTS
    __slots__ = ()


def slots(t: ScalarType) -> int:
    return 2 if t.is_complex else 1
