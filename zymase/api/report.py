"""``zymase.tape_report``: what reverse mode stores for given arguments, and what it avoids.

    r = zymase.tape_report(heat, u0, c, 1000, argnums=(0, 1))
    r.total_bytes          # 8008000
    print(r)
    tape: 8,008,000 bytes for heat(...) w.r.t. arguments (0, 1)
      stored  heat.py:25:5   float64  copy of `u` before the loop    1,000,000 x 8 B = 8,000,000 B
      ...
      instead: heat.py:26:15  `u[i]`  read from a copy taken before its loop
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..backends.registry import get_backend
from ..driver.compile import compile_derivative
from ..driver.request import Request
from ..errors import UnsupportedError, ZymaseError, caller_loc
from ..frontend.args import call_arguments
from ..frontend.source import python_function
from ..ir.ops import AddF, DivF, Index, Load, MulF, Pow, SubF, TapePushArray, TapePushRef
from .grad import check_scalar_result, options_of
from .values import check_differentiable, flat_args, located, normalize_argnums

HOW = {"recompute": "recomputed", "reload": "reloaded from memory nothing overwrites",
       "snapshot": "read from a copy taken before its loop",
       "carried": "read from that copy, one iteration back",
       "kept": "read from its array, kept by reference",
       "stored": "loaded back from the array it was stored into",
       "induction": "rebuilt from the loop counter (an induction variable)"}


@dataclass
class TapeEntry:
    where: str  # file:line:col
    what: str
    dtype: str
    count: int  # slots pushed during one gradient evaluation
    bytes: int


@dataclass
class TapeReport:
    function: str
    argnums: tuple
    entries: list[TapeEntry] = field(default_factory=list)
    avoided: list[tuple[str, str, str]] = field(default_factory=list)  # (where, what, how)

    @property
    def total_bytes(self) -> int:
        return sum(e.bytes for e in self.entries)

    @property
    def text(self) -> str:
        lines = [f"tape: {self.total_bytes:,} bytes for {self.function}(...) w.r.t. arguments "
                 f"{self.argnums}"]
        for e in sorted(self.entries, key=lambda e: -e.bytes):
            lines.append(f"  stored   {e.where:<28} {e.dtype:<8} {e.what:<40} "
                         f"{e.count:,} x 8 B = {e.bytes:,} B")
        for where, what, how in self.avoided:
            lines.append(f"  instead  {where:<28} {what:<40} {how}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text


@located
def tape_report(fn: Callable[..., Any], *args: Any, argnums: int | tuple[int, ...] = 0,
                optimize_before_ad: bool = True, **options: Any) -> TapeReport:
    """What reverse mode stores on its tape for given arguments, and what it avoids storing.

    Compiles the gradient of ``fn`` with respect to ``argnums`` (as ``zymase.grad`` does) with
    a counter on every tape push, runs it once at ``args``, and reports each place that
    pushed values (source location, what, dtype, how many slots, bytes) and each value the
    adjoint sweep gets another way (recomputed, reloaded from an array nothing overwrites,
    read from a copy taken before its loop, rebuilt from a loop counter, ...).  The report is
    of the unlimited tape: under ``memory_limit`` the same slots are pushed again as steps
    are recomputed, so a count would not be the memory used.

    Args:
        fn: A function returning a real float scalar, as for ``zymase.grad``.
        *args: The arguments to run it at (positional; defaults fill the rest).  Counts
            depend on them (loop trip counts, array sizes).
        argnums: The argument(s) to differentiate with respect to: an int or a tuple of ints.
        optimize_before_ad: As for ``zymase.grad``: False differentiates the unoptimized IR,
            so the tapes of both can be compared.
        **options: ``zymase.grad``'s options; ``disable=...`` (for instance
            ``{"reload"}``, ``{"recompute"}``, ``{"snapshot"}``) compares an ablation's tape
            with the default's.  ``memory_limit`` is refused.

    Returns:
        A ``TapeReport``: ``total_bytes`` (bytes pushed in one gradient evaluation),
        ``entries`` (one ``TapeEntry`` per pushing site: ``where``, ``what``, ``dtype``,
        ``count``, ``bytes``), ``avoided`` (``(where, what, how)`` of each value not
        stored), ``function``, ``argnums``; ``str(report)`` is a table of all of them.

    Raises:
        TypeError: ``memory_limit`` is given.
        UnsupportedError: The backend does not count tape slots (``"cpu"`` does).
        DifferentiationError: ``argnums`` is out of range or names an argument without
            floats.

    Examples:
        >>> import math, numpy as np, zymase
        >>> def f(x, n):
        ...     for i in range(n):
        ...         x = math.sin(x)
        ...     return x
        >>> report = zymase.tape_report(f, 1.0, 100)
        >>> report.total_bytes                    # one float64 per iteration
        800
        >>> print(report)  # doctest: +ELLIPSIS
        tape: 800 bytes for f(...) w.r.t. arguments (0,)
          stored ... float64 ... 100 x 8 B = 800 B

        Loads of an array nothing overwrites are read again, unless ``"reload"`` is
        disabled:

        >>> def g(x):
        ...     s = 0.0
        ...     for i in range(x.shape[0]):
        ...         s += x[i] * x[i]
        ...     return s
        >>> zymase.tape_report(g, np.ones(3)).total_bytes
        0
        >>> zymase.tape_report(g, np.ones(3), disable={"reload"}).total_bytes
        24
    """
    if options.get("memory_limit") is not None:
        raise TypeError("tape_report describes the unlimited tape; drop memory_limit (the limit "
                        "bounds what that tape costs: see benchmarks/bench_checkpoint.py)")
    try:
        return _report(fn, args, argnums, optimize_before_ad, options)
    except ZymaseError as e:
        raise e.with_traceback(None) from None


def _report(fn, args, argnums, optimize_before_ad, options):
    fn = python_function(fn)
    args = call_arguments(fn, args)
    nums = normalize_argnums(argnums, len(args), fn)
    check_differentiable(args, nums, fn)
    opts = options_of(options)
    if not get_backend(opts.backend).capabilities.tape_counts:
        raise UnsupportedError(f"the {opts.backend!r} backend does not count tape slots "
                               "(tape_report runs on backends that do, such as \"cpu\")",
                               caller_loc())
    d = compile_derivative(fn, args, Request("rev", nums, 1, (0,), optimize_before_ad, False), opts,
                           count_tape=True)
    check_scalar_result(fn, d.result, who="tape_report")
    flat = flat_args(d, args)
    shadows = [np.zeros_like(flat[i]) for i in d.flat_active if isinstance(flat[i], np.ndarray)]
    sites = d.module.meta.get("tape_sites", [])
    counts = d.artifact.tape_counts(len(sites))
    for k in range(len(sites)):
        counts[k] = 0
    seed = d.result[1].np_dtype.type(1.0) if d.result[0] == "s" else 1.0
    d.call(flat + shadows + [seed])
    report = TapeReport(fn.__name__, nums)
    for k, op in enumerate(sites):
        n = int(counts[k])
        if n:
            report.entries.append(TapeEntry(str(op.loc), _describe_push(op), _dtype(op), n, 8 * n))
    seen = set()
    for v, how in d.module.meta.get("decisions", {}).get(_grad_name(d), []):
        row = (_where(v), _value_text(v), HOW.get(how, how))
        if how != "tape" and row not in seen:
            seen.add(row)
            report.avoided.append(row)
    return report


def _grad_name(d) -> str:
    return d.func_name


def _describe_push(op) -> str:
    if isinstance(op, TapePushArray):
        return f"copy of `{op.operands[1].hint or 'an array'}` before the loop"
    if isinstance(op, TapePushRef):
        return f"reference to `{op.operands[1].hint or 'an array'}` (not its elements)"
    v = op.operands[1]
    if v.hint:
        return f"`{v.hint}`"
    if v.type.is_int:
        return "loop position / count"
    return "value"


def _dtype(op) -> str:
    if isinstance(op, TapePushRef):
        return "int64"  # addresses, shape and strides
    t = op.operands[1].type
    return (t.dtype if hasattr(t, "dtype") else t).np_dtype.name


def _where(v) -> str:
    op = v.op
    if op is not None:
        return str(op.loc)
    p = v.block.parent_op
    return str(p.loc) if p is not None else "?"


WORDS = {Load: "load", MulF: "product", AddF: "sum", SubF: "difference", DivF: "quotient",
         Pow: "power", Index: "index"}


def _value_text(v) -> str:
    op = v.op
    if v.hint:
        return f"`{v.hint}`"
    if op is None:
        return "loop-carried value"
    return WORDS.get(type(op), op.name.split(".")[-1])
