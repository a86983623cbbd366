"""Automatic differentiation on the optimized IR (Enzyme's approach), driven by the rule records
in ``rules/``:

* ``activity.py``: which values and buffers can carry a derivative;
* ``forward.py``: forward mode (tangents, vector width W), ``jvp_function``;
* ``plan/``: what reverse mode stores, recomputes or reloads (decides; builds no IR);
* ``reverse/``: reverse mode, ``grad_function``: forward sweep, adjoint sweep, checkpointing;
* ``split.py``: ``f.grad`` cut into an augmented forward and an adjoint function;
* ``revolve.py``: the binomial checkpointing schedule (plain Python, compiled on demand);
* ``arrays.py``: loop nests over shadow buffers.
"""
