"""zymase: a compiler that differentiates ordinary numerical Python.

    >>> import zymase
    >>> @zymase.jit
    ... def f(x):
    ...     return 3.0 * x * x
    >>> f(2.0), zymase.grad(f)(2.0)
    (12.0, 12.0)
"""

__all__ = [
    "Active",
    "BatchDuplicated",
    "Const",
    "DifferentiationError",
    "Duplicated",
    "DuplicatedNoNeed",
    "Forward",
    "ForwardWithPrimal",
    "JitFunction",
    "Reverse",
    "ReverseWithPrimal",
    "ShapeError",
    "UnsupportedError",
    "ZymaseError",
    "ZymaseImportError",
    "ZymaseIndexError",
    "ZymaseMemoryError",
    "ZymaseTypeError",
    "__version__",
    "autodiff",
    "checkpoint",
    "custom_jvp",
    "custom_vjp",
    "explain",
    "get_num_threads",
    "grad",
    "hessian",
    "hvp",
    "jacfwd",
    "jacobian",
    "jacrev",
    "jit",
    "jvp",
    "prange",
    "release_memory",
    "set_num_threads",
    "set_tape_cache",
    "tape_report",
    "to_jax",
    "to_torch",
    "value_and_grad",
    "vjp",
    "vmap",
]

from .api.enzyme import (  # noqa: F401
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
from .api.grad import grad, jvp, value_and_grad  # noqa: F401
from .api.jacobians import hessian, hvp, jacfwd, jacobian, jacrev, vjp  # noqa: F401
from .api.jit import JitFunction, explain, jit  # noqa: F401
from .api.report import tape_report  # noqa: F401
from .api.vmap import vmap  # noqa: F401
from .backends.cpu.memory import release_memory, set_tape_cache  # noqa: F401
from .backends.cpu.threads import get_num_threads, set_num_threads  # noqa: F401
from .errors import (  # noqa: F401
    DifferentiationError,
    ShapeError,
    UnsupportedError,
    ZymaseError,
    ZymaseImportError,
    ZymaseIndexError,
    ZymaseMemoryError,
    ZymaseTypeError,
)
from .interop.to_jax import to_jax  # noqa: F401
from .interop.to_torch import to_torch  # noqa: F401
from .lang import checkpoint, custom_jvp, custom_vjp, prange  # noqa: F401
from .version import __version__  # noqa: F401
