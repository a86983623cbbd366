"""zymase: a compiler that differentiates ordinary numerical Python.

    >>> import zymase
    >>> f = zymase.jit(lambda_free_function)        # doctest: +SKIP
"""

from .ad import grad, jvp, value_and_grad  # noqa: F401
from .api import JitFunction, explain, jit  # noqa: F401
from .errors import (  # noqa: F401
    DifferentiationError,
    ShapeError,
    UnsupportedError,
    ZymaseError,
    ZymaseIndexError,
    ZymaseTypeError,
)

__version__ = "0.1.0"
