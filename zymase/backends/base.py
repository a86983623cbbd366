"""The backend interface: what the driver hands a backend and what it gets back.

A backend receives an **optimized IR module** (``zymase.ir``: every function the entries call,
already differentiated when a derivative was asked for, with ``array.free`` inserted), the names
of the **entry functions** Python will call, and the user's ``Options``.  It returns an
``Artifact``, from which ``artifact.entry(name)`` gives an ``Executable``: ``call(flat_args) ->
flat_results`` in the runtime's calling convention below.  It declares what it can run in
``capabilities``; the driver refuses, at the user's line, a program that needs more.

The calling convention (the same for every backend):

* arguments: one Python value per IR argument of the entry (``Executable.arg_types``): ``float``
  or NumPy float for ``f64``/``f32``, ``int`` for ``i64``/``i32``, ``bool`` for ``i1``,
  ``complex`` for ``c128``/``c64``, and a NumPy array of the exact dtype and rank for an array
  (writes go to the caller's array);
* results: a list with one value per IR result: Python ``float`` for ``f64`` (``np.float32``
  for ``f32``), ``int``, ``bool``, ``complex``, and NumPy arrays (a returned view of an argument
  stays a view of it);
* globals: ``call(flat, globals)`` also takes the arrays the module reads by reference
  (``array.global {slot}``: global and closure arrays, in slot order), checked by the caller to
  have the types the code was compiled for; compiled code never writes them;
* errors: a failed run-time check raises the zymase exception of its kind (``IndexError`` ->
  ``ZymaseIndexError`` ...) naming the user's file and line.

A new backend subclasses ``Backend`` and registers itself (``registry.register_backend``); every
transform then takes ``backend="<name>"``.  ``backends/cpu`` (LLVM, machine code for this CPU)
and ``backends/interp`` (the IR interpreter, for debugging and as an oracle) are the built-in ones.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..errors import UnsupportedError, ZymaseValueError, caller_loc
from ..ir.core import Module
from ..ir.types import ArrayType
from ..options import Options
from ..passes.licm import written_arguments

ALL_DTYPES = frozenset({"f64", "f32", "i64", "i32", "i16", "i8", "u64", "u32", "u16", "u8", "i1",
                        "c128", "c64"})
ALL_DIALECTS = frozenset({"arith", "math", "complex", "array", "linalg", "scf", "func", "rt",
                          "tape", "host"})


@dataclass(frozen=True)
class Capabilities:
    """What a backend can run and offer.

    ``dtypes``: scalar and element types it supports; ``dialects``: op families it runs (``tape``
    is what reverse mode adds); ``parallel_loops``: runs ``scf.parallel`` concurrently;
    ``mutation``: writes into argument arrays reach the caller; ``fast_calls``: gives each entry
    a C entry for the frame-less call path of ``jit`` objects; ``disk_cache``: its artifacts can
    be saved and loaded in another process (``jit(cache=True)``); ``tape_counts``: counts the
    tape slots each push site writes (``zymase.tape_report``); ``split_tapes``: a tape can pass
    from one entry to another (``zymase.vjp``'s split form: forward and adjoint functions;
    without it ``vjp`` runs the whole gradient in its pullback); ``tape_sets``: per-iteration
    tapes of a parallel loop's adjoint (without them parallel loops are reversed serially);
    ``switches``: the names of its own parts that ``disable=`` may switch off."""

    dtypes: frozenset = ALL_DTYPES
    dialects: frozenset = ALL_DIALECTS
    parallel_loops: bool = False
    mutation: bool = True
    fast_calls: bool = False
    disk_cache: bool = False
    tape_counts: bool = False
    split_tapes: bool = True
    tape_sets: bool = True
    switches: frozenset = frozenset()


def convention_scalar(t, v):
    """A scalar result as the calling convention gives it (``float``, ``np.float32``, ``int``,
    ``bool``, ``complex``)."""
    if t.is_complex:
        return complex(v) if t.bits == 128 else np.complex64(v)
    if t.is_float:
        return float(v) if t.bits == 64 else np.float32(v)
    if t.is_bool:
        return bool(v)
    return int(v)


class Executable(ABC):
    """One compiled entry function (see the calling convention in the module docstring)."""

    arg_types: list
    result_types: list
    written: tuple = ()  # positions of array arguments the code may write (refused read-only)
    fast: int | None = None  # address of a C entry (``Capabilities.fast_calls``), or None

    @abstractmethod
    def call(self, flat: list, globals_: list = ()) -> list:
        """Run on one value per IR argument (and the arrays ``array.global`` reads); one value
        per IR result."""

    def refuse_read_only(self, flat: list) -> None:
        """Refuse a read-only array where the code writes (a bytes buffer, a read-only mapping:
        writing would change immutable objects or fault)."""
        for k in self.written:
            if not flat[k].flags.writeable:
                raise ZymaseValueError(
                    f"assignment destination is read-only: the compiled code writes array "
                    f"argument {k}, which is not writeable (pass a copy: np.array(a))",
                    caller_loc())

    def free_tape(self, token: int) -> None:
        """Free a tape this entry exported (``tape.export``: a split forward entry's last
        results) that no adjoint entry took over."""
        raise NotImplementedError

    def error(self, err_id: int, a: int, b: int):
        """The exception for an error a fast C entry reported (backends with fast calls)."""
        raise NotImplementedError


class Artifact(ABC):
    """A compiled module: its entries, and what a backend offers beyond calling them."""

    listings: dict[str, str]  # stage name -> text (``explain``: e.g. "llvm" -> LLVM IR)

    @abstractmethod
    def entry(self, name: str) -> Executable:
        """The entry function ``name`` (one of the names given to ``Backend.compile``)."""

    def save(self) -> Any:
        """A picklable payload ``Backend.load`` turns back into this artifact, or None."""
        return None

    def tape_counts(self, n: int):
        """The ``n`` per-site tape slot counters (``Capabilities.tape_counts``)."""
        raise NotImplementedError


class Backend(ABC):
    """Turns an optimized IR module into callable entries.  Subclasses set ``name`` and
    ``capabilities`` and implement ``compile``; ``load`` where ``capabilities.disk_cache``."""

    name: ClassVar[str] = ""
    capabilities: ClassVar[Capabilities] = Capabilities()

    @abstractmethod
    def compile(self, module: Module, entries: Sequence[str], options: Options, *,
                count_tape: bool = False) -> Artifact:
        """Compile ``module`` so that each function in ``entries`` can be called from Python.
        ``count_tape``: count tape slots per push site (only asked where supported)."""

    def identity(self) -> tuple:
        """What, besides the name, an artifact saved by this backend depends on (versions, the
        machine): saved artifacts are reused only where it is equal."""
        return ()

    def load(self, payload: Any) -> Artifact:
        """An artifact from ``Artifact.save``'s payload (``capabilities.disk_cache``)."""
        raise NotImplementedError(f"backend {self.name!r} keeps nothing on disk")

    def dispatcher(self, fallback) -> PyDispatcher:
        """The call path of a ``jit`` object: ``.builtin`` is what the object calls, ``install``
        makes a specialization's fast entry the one tried first (``fast_calls`` backends give a
        C trampoline; others call ``fallback``, the general path, every time)."""
        return PyDispatcher(fallback)

    def check(self, module: Module, entries: Sequence[str]) -> None:
        """Refuse, at the op's line, what this backend cannot run."""
        caps = self.capabilities
        runs_all = caps.dialects >= ALL_DIALECTS and caps.dtypes >= ALL_DTYPES
        for f in () if runs_all else module:
            for op in f.walk():
                dialect = op.name.split(".", 1)[0]
                if dialect == "host" and dialect not in caps.dialects:
                    raise UnsupportedError(f"the {self.name} backend cannot call back into "
                                           "Python (np.fft, np.random, print): use the default "
                                           "backend", op.loc)
                if dialect not in caps.dialects:
                    raise UnsupportedError(f"the {self.name} backend cannot run {op.name} "
                                           f"(use the default backend)", op.loc)
                for v in op.results:
                    t = v.type.dtype if isinstance(v.type, ArrayType) else v.type
                    if str(t) in ALL_DTYPES and str(t) not in caps.dtypes:
                        raise UnsupportedError(f"the {self.name} backend has no {t} values "
                                               f"(use the default backend)", op.loc)
        if not caps.mutation:
            for name in entries:
                if written_arguments(module[name], module):
                    raise UnsupportedError(f"the {self.name} backend cannot write into argument "
                                           "arrays (return a new array instead)",
                                           module[name].loc)

    def __repr__(self) -> str:
        return f"<zymase backend {self.name!r}>"


class PyDispatcher:
    """The call path of backends without fast C entries: always the general path."""

    def __init__(self, fallback):
        self.builtin = fallback
        self.current = None

    def install(self, key, entry_address: int, raiser, captures=None) -> None:
        self.current = (key, id(captures))


@dataclass
class SimpleArtifact(Artifact):
    """An artifact that is a table of executables (enough for most backends)."""

    entries: dict[str, Executable]
    listings: dict[str, str] = field(default_factory=dict)

    def entry(self, name: str) -> Executable:
        return self.entries[name]
