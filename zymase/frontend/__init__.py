"""The frontend: Python functions (their ``ast``) and concrete argument types -> typed IR.

Imports run one way, from the top of this list down:

* ``module.py`` lowers a root function and every function it calls into one IR module;
* ``lower/`` lowers one function: statements, loops, expressions, subscripts, calls, builtins;
* ``numpy/`` the NumPy subset, one topic per module, each filling ``numpy/registry.py``;
* ``lists.py`` (``append``), ``custom_rules.py`` (``custom_jvp``/``custom_vjp`` rules);
* ``emit.py`` loop nests, buffers and checks shared by all of the above;
* ``source.py``, ``desugar.py``, ``scan.py`` the function's ``ast``; ``args.py`` argument
  templates; ``typing.py`` compile-time values and promotion; ``library.py`` routines written in
  the compiled subset.
"""
