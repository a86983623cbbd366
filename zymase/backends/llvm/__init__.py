"""IR -> LLVM IR text: the emitters of every op (``table.py``, filled by ``ops.py``, ``arrays.py``
and ``tape.py``), the CFG of structured control flow (``emit.py``), the runtime functions
(``runtime.py``) and what a target adds (``target.py``).  Target-neutral: ``backends/cpu``
compiles the text for this machine."""
