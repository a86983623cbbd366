"""The user-facing transforms: ``jit.py`` (jit, explain), ``grad.py`` (grad, value_and_grad,
jvp), ``jacobians.py`` (vjp, jacfwd, jacrev, hessian, hvp), ``enzyme.py`` (autodiff and its
annotations), ``report.py`` (tape_report); ``values.py`` maps user values to the flat argument
lists of compiled code and back.  Each compiles through ``zymase.driver``."""
