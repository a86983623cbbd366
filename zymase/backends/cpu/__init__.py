"""The CPU backend (``backend.py``): LLVM IR from ``backends/llvm`` compiled by llvmlite for this
CPU, loaded with MCJIT and called through ctypes or a C trampoline."""
