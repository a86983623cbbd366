"""Custom derivative rules, in the JAX style; the rules are compiled with the rest.

    @zymase.custom_jvp
    def f(x):
        return math.log1p(math.exp(x))

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), t / (1.0 + math.exp(-x))

    @zymase.custom_vjp
    def g(x): ...
    def g_fwd(x): return g(x), residuals        # residuals: anything the backward pass needs
    def g_bwd(res, ct): return (ct_x,)          # one cotangent per argument (None: none)
    g.defvjp(g_fwd, g_bwd)

Forward mode uses the ``jvp`` rule, reverse mode the ``vjp`` pair; a function with only one of
them is differentiated through its body in the other mode (so ``hessian`` keeps working with
only a ``custom_vjp``).  Called from plain Python, the function runs as written.
"""

from __future__ import annotations

import functools


class _Custom:
    def __init__(self, fn):
        self.fn = fn
        self.__zymase_custom__ = True
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)


class custom_jvp(_Custom):
    """A function with a custom forward-mode rule (``defjvp``)."""

    jvp_rule = None
    vjp_fwd = vjp_bwd = None

    def defjvp(self, rule):
        self.jvp_rule = rule
        return rule


class custom_vjp(_Custom):
    """A function with a custom reverse-mode rule (``defvjp(fwd, bwd)``)."""

    jvp_rule = None
    vjp_fwd = vjp_bwd = None

    def defvjp(self, fwd, bwd):
        self.vjp_fwd, self.vjp_bwd = fwd, bwd
        return self
