"""The interpreter backend: the optimized IR run by ``zymase.ir.interp`` (``backend.py``)."""
