"""Op definitions, one module per dialect.  Importing this package registers every op in
``zymase.ir.core.OPS`` (name -> class)."""

from . import arith, array, complex, func, linalg, math, rt, scf, tape  # noqa: F401
from .base import ElementwiseOp  # noqa: F401
