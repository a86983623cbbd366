"""Lowering one Python function, specialized to its argument types, into a ``func.func``.

``stmts.py`` has ``FunctionLowerer`` (statements, ``if``), built from mixins: ``loops.py``
(``for``, ``while``), ``exprs.py`` (expressions), ``indexing.py`` (subscripts, views, what a
``for`` iterates) and ``calls.py`` (calls and methods); ``builtins.py`` lowers Python's builtins
and the ``math`` module.  Array work goes to ``frontend/numpy/``, which gets the lowerer as
``lw`` and calls back into it.
"""
