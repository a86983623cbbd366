"""Op definitions, one module per dialect.  Importing this package registers every op in
``zymase.ir.core.OPS`` (name -> class) and exports every op class under one unique name, so code
outside this package names ops by class, never by their text name::

    from zymase.ir.ops import For, MulF
    y = b.op(MulF, x, x)
    if isinstance(op, For): ...
"""

from ..core import Op
from . import arith, array, complex, func, host, linalg, math, rt, scf, tape
from .base import ElementwiseOp, PredicateOp, SimpleOp, VerifyError  # noqa: F401

DIALECTS = (arith, array, complex, func, host, linalg, math, rt, scf, tape)


def _op_classes(module) -> dict:
    return {k: v for k, v in vars(module).items()
            if isinstance(v, type) and issubclass(v, Op) and v.name
            and v.name.split(".")[0] == module.__name__.rsplit(".", 1)[1]}


for _d in DIALECTS:
    _found = _op_classes(_d)
    _d.__all__ = sorted(_found)
    for _k, _cls in _found.items():
        _cls.__name__ = _cls.__qualname__ = _k  # the generated classes (unary/binary) too
        globals()[_k] = _cls
__all__ = sorted({k for d in DIALECTS for k in d.__all__})
del _d, _found, _k, _cls
