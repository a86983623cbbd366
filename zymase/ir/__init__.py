"""zymase's SSA IR: types, ops with nested regions, builder, text printer and parser, verifier,
and a NumPy interpreter that serves as the oracle for every backend.  Imports nothing else from
zymase."""

from . import ops  # noqa: F401  (registers every op)
from .builder import Builder  # noqa: F401
from .core import OPS, Block, Func, Loc, Module, Op, Region, Value  # noqa: F401
from .types import C64, C128, F32, F64, I1, I32, I64, ArrayType, ScalarType  # noqa: F401
