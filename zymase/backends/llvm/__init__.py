"""The CPU backend: IR -> LLVM IR text -> llvmlite (new pass manager, O3, host CPU) -> MCJIT."""
