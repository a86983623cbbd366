"""Automatic differentiation on the optimized IR (Enzyme's approach): activity analysis, a
forward transform (tangents, vector width W) and a reverse transform (augmented primal plus
adjoint sweep in one function, with a cache-or-recompute plan), all driven by the rule records
in ``rules/``."""
