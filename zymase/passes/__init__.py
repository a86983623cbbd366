"""Optimization passes on the IR, one per file, and the pipeline that runs them in order.

Each pass is a function ``pass_fn(module) -> bool`` (whether it changed anything).
"""

from .pipeline import PIPELINE, run_pipeline  # noqa: F401
