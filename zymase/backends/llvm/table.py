"""The table of LLVM emitters: ``OP_EMITTERS[op class](em, op) -> [result operands]``.

``ops.py`` (scalars), ``arrays.py`` (arrays, matrix products) and ``tape.py`` (the reverse-mode
tape) each register their emitters here with ``@emitter(AddF, SubF)``; ``emit.py`` reads it.
Region ops (``scf.*``) and calls are emitted by ``emit.py`` itself.
"""

from __future__ import annotations

from collections.abc import Callable

OP_EMITTERS: dict[type, Callable] = {}


def emitter(*kinds: type) -> Callable:
    """Register the decorated function as the emitter of the op classes ``kinds``."""
    def deco(fn):
        for k in kinds:
            OP_EMITTERS[k] = fn
        return fn
    return deco
