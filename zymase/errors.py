"""Every user-facing error.  Each names the user's file, line and column and shows the source
line with a caret; none shows a zymase-internal path.

    >>> raise UnsupportedError("generators are not supported", loc)   # doctest: +SKIP
    zymase.errors.UnsupportedError: model.py:12:9: generators are not supported
        y = (v for v in x)
            ^
"""

from __future__ import annotations

import linecache

from numpy.linalg import LinAlgError as _LinAlgError

from .ir.core import Loc
from .ir.ops.rt import ShapeError as _IRShapeError


class ZymaseError(Exception):
    """Base class of zymase's errors.  ``loc`` is the user's source location (or None)."""

    def __init__(self, msg: str, loc: Loc | None = None, note: str = ""):
        self.msg = msg
        self.loc = loc
        self.note = note
        super().__init__(self.render())

    def render(self) -> str:
        if self.loc is None or self.loc.line <= 0:
            return self.msg + (f"\n{self.note}" if self.note else "")
        text = f"{self.loc}: {self.msg}"
        src = linecache.getline(self.loc.file, self.loc.line).rstrip("\n")
        if src.strip():
            text += f"\n    {src}\n    {' ' * (self.loc.col - 1)}^"
        if self.note:
            text += f"\n{self.note}"
        return text


def at_caller(e: ZymaseError) -> ZymaseError:
    """``e`` without zymase's frames; an error with no location of its own (about arguments,
    an operation's settings) points at the user's call."""
    if e.loc is None:
        e.loc = caller_loc()
        e.args = (e.render(),)
    return e.with_traceback(None)


def caller_loc() -> Loc | None:
    """The location of the innermost frame outside zymase (the user's call site)."""
    import os
    import sys

    pkg = os.path.dirname(os.path.abspath(__file__))
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(pkg):
        frame = frame.f_back
    if frame is None:
        return None
    line, col = frame.f_lineno, 1
    positions = getattr(frame.f_code, "co_positions", None)
    if positions is not None:
        pos = list(positions())[frame.f_lasti // 2]
        if pos[0] is not None:
            line, col = pos[0], (pos[2] or 0) + 1
    return Loc(frame.f_code.co_filename, line, col, frame.f_code.co_name)


class UnsupportedError(ZymaseError):
    """The function uses Python or NumPy that zymase does not compile."""


class ZymaseTypeError(ZymaseError, TypeError):
    """An argument or an expression has a type zymase cannot use there."""


class ZymaseImportError(ZymaseError, ImportError):
    """An optional dependency a feature needs is not installed (PyTorch for ``to_torch``,
    JAX for ``to_jax``)."""


class ShapeError(ZymaseError, _IRShapeError):
    """Array shapes do not match (raised at run time by compiled code)."""


class ZymaseIndexError(ZymaseError, IndexError):
    """An index is out of range (raised at run time by compiled code)."""


class ZymaseValueError(ZymaseError, ValueError):
    """A value is out of the domain of an operation (raised at run time by compiled code)."""


class ZymaseOverflowError(ZymaseError, OverflowError):
    """A float does not fit the 64-bit integer it is converted to (raised at run time), or a
    Python int does not fit the NumPy int type it meets (``uint8_array + 300``, when compiling,
    as NumPy 2 raises)."""


class ZymaseZeroDivisionError(ZymaseError, ZeroDivisionError):
    """Integer or float division/modulo by zero (raised at run time by compiled code)."""


class ZymaseAssertionError(ZymaseError, AssertionError):
    """A user ``assert`` failed in compiled code."""


class ZymaseMemoryError(ZymaseError, MemoryError):
    """A derivative cannot keep its tape under the ``memory_limit`` it was given."""


class ZymaseNameError(UnsupportedError, NameError):
    """A free name is defined nowhere (raised when the function is compiled: compiled code
    cannot look it up later)."""


class ZymaseUnboundLocalError(ZymaseError, UnboundLocalError):
    """A local variable is read on a path that did not assign it (raised at run time)."""


class ZymaseRuntimeError(ZymaseError, RuntimeError):
    """A ``raise RuntimeError(...)`` of the user's, in compiled code."""


class ZymaseNotImplementedError(ZymaseError, NotImplementedError):
    """A ``raise NotImplementedError(...)`` of the user's, in compiled code."""


class ZymaseArithmeticError(ZymaseError, ArithmeticError):
    """A ``raise ArithmeticError(...)`` of the user's, in compiled code."""


class ZymaseFloatingPointError(ZymaseError, FloatingPointError):
    """A ``raise FloatingPointError(...)`` of the user's, in compiled code."""


class ZymaseLinAlgError(ZymaseError, _LinAlgError):
    """``numpy.linalg.LinAlgError`` raised by compiled code."""


class DifferentiationError(ZymaseError):
    """The requested derivative cannot be computed (no rule, inactive output, integer input)."""


RUNTIME_ERRORS = {
    "IndexError": ZymaseIndexError,
    "ValueError": ZymaseValueError,
    "ShapeError": ShapeError,
    "ZeroDivisionError": ZymaseZeroDivisionError,
    "OverflowError": ZymaseOverflowError,
    "AssertionError": ZymaseAssertionError,
    "MemoryError": ZymaseMemoryError,
    "UnboundLocalError": ZymaseUnboundLocalError,
    "TypeError": ZymaseTypeError,
    "RuntimeError": ZymaseRuntimeError,
    "NotImplementedError": ZymaseNotImplementedError,
    "ArithmeticError": ZymaseArithmeticError,
    "FloatingPointError": ZymaseFloatingPointError,
    "LinAlgError": ZymaseLinAlgError,
}


def host_error(exc: BaseException | None, loc) -> ZymaseError:
    """The error of a Python function the program called (``np.fft``, ``np.random``, ``print``
    run by ``host.call``): the zymase class of its kind, its message, at ``loc``; the original
    exception is the cause."""
    if exc is None:
        return ZymaseRuntimeError("a NumPy call from compiled code failed", loc)
    cls = next((RUNTIME_ERRORS[c.__name__] for c in type(exc).__mro__
                if c.__name__ in RUNTIME_ERRORS), ZymaseRuntimeError)
    err = cls(f"{type(exc).__name__}: {exc}", loc)
    err.__cause__ = exc
    return err
