"""The markers zymase's frontend reads in user code; each also works as plain Python.

* ``zymase.checkpoint``: checkpoint a loop or a helper in reverse mode (the work is in
  ``autodiff/reverse/checkpoint.py``);
* ``zymase.prange``: a ``range`` whose iterations may run in parallel (``numba.prange`` is read the
  same way);
* ``zymase.custom_jvp`` / ``zymase.custom_vjp``: custom derivative rules, in the JAX style,
  compiled with the rest::

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

Imports nothing of zymase, so that the frontend can read these markers and users can import them
without the rest.
"""

from __future__ import annotations

import functools


def outline(fn):
    """Keep the calls of ``fn`` as calls in compiled code instead of inlining its body at each
    one: for a large routine called from many places (zymase's own factorizations), so that it
    is optimized and compiled once.  Plain Python: returns ``fn``."""
    fn.__zymase_outline__ = True
    return fn


class Checkpointed:
    """``zymase.checkpoint(fn)``: calls ``fn``; in reverse mode its inner values are not stored
    but recomputed from its arguments (see ``checkpoint``)."""

    __zymase_checkpoint__ = True

    def __init__(self, fn):
        self.fn = fn
        self.__name__ = getattr(fn, "__name__", "checkpointed")
        self.__wrapped__ = fn

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)


def checkpoint(what, snaps: int | None = None):
    """Mark a ``for`` loop, or a helper function, for checkpointing in reverse mode::

        for t in zymase.checkpoint(range(T), snaps=20):
            step(u, c)

        y = zymase.checkpoint(helper)(x, a)

    A marked loop stores at most ``snaps`` loop states (the values the loop carries and the
    buffers it writes) instead of a tape for every iteration, and recomputes the steps in
    between with the binomial (Revolve) schedule: ``T`` steps with ``s`` slots cost about ``r``
    extra forward runs where ``C(s + r, s) >= T``.  Without ``snaps`` the number comes from the
    transform's ``memory_limit`` when one is given, else ``isqrt(T) + 1``.  The loop must not
    ``break`` or ``return``, nor sit inside another loop.

    A marked helper is not inlined before differentiation: the gradient stores copies of its
    array arguments and re-runs it during the adjoint sweep, so none of its inner values are
    stored (calls outside loops; helpers returning scalars or nothing).

    Called from Python, ``checkpoint(iterable)`` returns ``iterable`` and
    ``checkpoint(fn)(*args)`` calls ``fn``; ``jit`` ignores both.
    """
    if callable(what):
        if snaps is not None:
            raise TypeError("snaps= is for loops; zymase.checkpoint(fn) takes none")
        return Checkpointed(what)
    if snaps is not None and (isinstance(snaps, bool) or not isinstance(snaps, int) or snaps < 1):
        raise ValueError(f"snaps must be a positive integer, not {snaps!r}")
    return what


def prange(*args):
    """``range`` whose iterations are independent, so compiled code runs them on all cores::

        @zymase.jit
        def norms(x, out):
            total = 0.0
            for i in zymase.prange(x.shape[0]):
                out[i] = np.sqrt(np.sum(x[i] ** 2))   # each iteration writes its own element
                total += out[i]                        # a reduction: summed per thread
            return total

    The iterations of a ``prange`` loop run on a pool of threads (``zymase.set_num_threads``),
    in blocks of consecutive iterations.  A name assigned in the body is private to its
    iteration, except reductions: ``s += e`` (``-=``, ``*=``, ``s = s + e``), ``m = max(m, e)``,
    ``m = min(m, e)``, which are combined across threads (float sums may differ from a serial
    run in the last bits; ``deterministic=True`` makes them independent of the thread count).
    ``a[k] += e`` with an index not owned by the iteration (a histogram, a scatter) is an atomic
    update.  The compiler refuses a ``break`` or ``return`` in the body, a value carried from one
    iteration to the next, and a plain write every iteration makes to the same element; other
    dependences between iterations (one iteration reading an element another writes, through
    indices the compiler cannot follow) are the user's responsibility, as in Numba and OpenMP.
    Derivatives of a ``prange`` loop, in both modes, are parallel loops too.

    Called from Python, ``prange(...)`` is ``range(...)``.
    """
    return range(*args)


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

    def defjvp(self, rule):
        """Give the function a forward-mode rule too (as ``custom_jvp.defjvp``): forward mode
        then uses it instead of differentiating the body."""
        self.jvp_rule = rule
        return rule
