"""The driver: what to compile (``request.py``), how (``pipeline.py``: the stage lists of each
mode), once (``cache.py``, ``disk_cache.py``), and what the transforms get back
(``compile.py``, ``compiled.py``, ``signature.py``)."""
