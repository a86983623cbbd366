"""zymase: a compiler that differentiates ordinary numerical Python.

    >>> import zymase
    >>> f = zymase.jit(lambda_free_function)        # doctest: +SKIP
"""

from . import autodiff as _autodiff_package  # noqa: F401  (bound before the function)
from .ad import checkpoint, grad, jvp, value_and_grad  # noqa: F401
from .api import JitFunction, explain, jit  # noqa: F401
from .backends.llvm.tape import release_memory, set_tape_cache  # noqa: F401
from .custom import custom_jvp, custom_vjp  # noqa: F401
from .enzyme import (  # noqa: F401
    Active,
    BatchDuplicated,
    Const,
    Duplicated,
    DuplicatedNoNeed,
    Forward,
    ForwardWithPrimal,
    Reverse,
    ReverseWithPrimal,
    autodiff,
)
from .errors import (  # noqa: F401
    DifferentiationError,
    ShapeError,
    UnsupportedError,
    ZymaseError,
    ZymaseIndexError,
    ZymaseMemoryError,
    ZymaseTypeError,
)
from .jacobians import hessian, hvp, jacfwd, jacobian, jacrev, vjp  # noqa: F401
from .tape_report import tape_report  # noqa: F401

__version__ = "0.1.0"
