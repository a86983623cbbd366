"""The optimization pipeline: a table of named passes, run in order.

Each entry is ``(name, pass_fn)`` with ``pass_fn(module) -> bool``.  ``run_pipeline`` skips the
names in ``disable`` (ablations such as "no LICM"), verifies the module after every pass when asked
(or when ``ZYMASE_VERIFY=1``), and hands the module to ``dump(stage, module)`` after each pass.
Mirrors LLVM's new pass manager pipelines and Numba's ``PassManager`` table.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from ..ir.core import Module
from ..ir.ops.base import VerifyError
from ..ir.verify import verify_module
from .boundscheck import boundscheck
from .canonicalize import canonicalize
from .cse import cse
from .dce import dce
from .fuse import fuse
from .inline import inline
from .licm import licm
from .storefwd import storefwd

Pass = Callable[[Module], bool]

PIPELINE: list[tuple[str, Pass]] = [
    ("inline", inline),  # calls to non-recursive functions -> the callee's body
    ("canonicalize", canonicalize),  # fold constants, algebraic identities, dead branches/loops
    ("cse", cse),  # one op per distinct pure computation (and per load between writes)
    ("canonicalize", canonicalize),  # fold what CSE exposed (checks of equal dims)
    ("fuse", fuse),  # elementwise loops filling a temporary -> computed where it is read
    ("licm", licm),  # loop-invariant code out of loops (guarded when the loop may not run)
    ("boundscheck", boundscheck),  # prove index checks, version loops on the rest
    ("canonicalize", canonicalize),  # clean up what hoisting exposed
    ("cse", cse),
    ("licm", licm),  # what the removed checks no longer pin inside loops
    ("storefwd", storefwd),  # a store the next iteration reads -> a carried value
    ("dce", dce),  # unused ops, dead loops and never-read buffers
]


def run_pipeline(
    module: Module,
    passes: list[tuple[str, Pass]] = PIPELINE,
    disable=(),
    verify: bool = False,
    dump: Callable[[str, Module], None] | None = None,
) -> list[str]:
    """Run ``passes`` on ``module`` in place; return the names of the passes that changed it."""
    verify = verify or os.environ.get("ZYMASE_VERIFY") == "1"
    changed = []
    for name, pass_fn in passes:
        if name in disable:
            continue
        if pass_fn(module):
            changed.append(name)
        if verify:
            _verify(module, name)
        if dump is not None:
            dump(name, module)
    return changed


def _verify(module: Module, stage: str) -> None:
    try:
        verify_module(module)
    except VerifyError as e:
        raise VerifyError(f"invalid IR after pass {stage!r}: {e}") from e
