"""Code generators: ``llvm`` (CPU, through llvmlite)."""
