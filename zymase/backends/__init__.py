"""Backends: what turns optimized IR into something Python can call.

``base.py`` is the interface (``Backend``, ``Artifact``, ``Executable``, ``Capabilities``);
``registry.py`` selects one by name.  Built in: ``cpu/`` (LLVM through llvmlite, machine code for
this CPU; emission itself is in ``llvm/``), ``interp/`` (the IR interpreter) and ``xla/`` (JAX
operations under ``jax.jit``; JAX is imported only when it is used).
"""

from .base import Artifact, Backend, Capabilities, Executable, SimpleArtifact  # noqa: F401
from .interp.backend import InterpBackend  # noqa: F401
from .registry import backend_names, get_backend, register_backend  # noqa: F401
