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

    Forward mode uses the ``jvp`` rule, reverse mode the ``vjp`` pair.  A function with only a
    ``jvp`` rule uses it in reverse mode too, transposed, as JAX does (the rule must be linear in
    the tangents); one with only a ``vjp`` pair is differentiated through its body in forward mode
    (so ``hessian`` keeps working with only a ``custom_vjp``).  The rules' outputs are checked:
    a pair ``(output, tangent)`` from a ``jvp`` rule, the tangent shaped like the output; one
    cotangent per argument from a backward rule, shaped like the argument (nothing is
    broadcast).  Called from plain Python, the function runs as written.

Imports nothing of zymase, so that the frontend can read these markers and users can import them
without the rest.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any


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


def checkpoint(what: Iterable[Any] | Callable[..., Any],
               snaps: int | None = None) -> Iterable[Any] | Callable[..., Any]:
    """Mark a ``for`` loop, or a helper function, for checkpointing in reverse mode.

    Use it inside a function that zymase differentiates: ``for t in
    zymase.checkpoint(range(T), snaps=20): ...`` or ``y = zymase.checkpoint(helper)(x, a)``.

    A marked loop stores at most ``snaps`` loop states (the values the loop carries and the
    buffers it writes) instead of a tape for every iteration, and recomputes the steps in
    between with the binomial (Revolve) schedule: ``T`` steps with ``s`` slots cost about ``r``
    extra forward runs where ``C(s + r, s) >= T``.  The gradient is bit-for-bit the one
    without the mark.  The loop must not ``break`` or ``return``, nor sit inside another loop.

    A marked helper is not inlined before differentiation: the gradient stores copies of its
    array arguments and re-runs it during the adjoint sweep, so none of its inner values are
    stored (calls outside loops; helpers returning scalars or nothing).

    Called from Python, ``checkpoint(iterable)`` returns ``iterable`` and
    ``checkpoint(fn)(*args)`` calls ``fn``; ``jit`` ignores both.

    Args:
        what: The iterable of a ``for`` loop (a ``range``), or a helper function.
        snaps: For a loop: the number of loop states to keep (a positive int).  None (the
            default) takes it from the transform's ``memory_limit`` when one is given, else
            ``isqrt(T) + 1``.  A helper takes none.

    Returns:
        ``what`` itself for an iterable; for a function, a callable wrapper that calls it.

    Raises:
        TypeError: ``snaps`` given with a function.
        ValueError: ``snaps`` is not a positive integer.

    Examples:
        >>> import math, numpy as np, zymase
        >>> def plain(x, n):
        ...     for t in range(n):
        ...         x = math.sin(x)
        ...     return x
        >>> def marked(x, n):
        ...     for t in zymase.checkpoint(range(n), snaps=4):
        ...         x = math.sin(x)
        ...     return x
        >>> zymase.grad(marked)(1.0, 100) == zymase.grad(plain)(1.0, 100)
        True
        >>> def energy(x):
        ...     return (np.sin(x) ** 2).sum()
        >>> def loss(x):
        ...     return 2.0 * zymase.checkpoint(energy)(x)
        >>> zymase.grad(loss)(np.array([0.0, 0.25]))
        array([0.        , 0.95885108])
    """
    if callable(what):
        if snaps is not None:
            raise TypeError("snaps= is for loops; zymase.checkpoint(fn) takes none")
        return Checkpointed(what)
    if snaps is not None and (isinstance(snaps, bool) or not isinstance(snaps, int) or snaps < 1):
        raise ValueError(f"snaps must be a positive integer, not {snaps!r}")
    return what


def prange(*args: int) -> range:
    """A ``range`` whose iterations are independent, so compiled code runs them on all cores.

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
    Derivatives of a ``prange`` loop, in both modes, are parallel loops too.  A ``prange``
    nested in another parallel loop runs serially.

    Called from Python, ``prange(...)`` is ``range(...)``.

    Args:
        *args: As for ``range``: ``stop``, ``start, stop`` or ``start, stop, step`` (ints).

    Returns:
        ``range(*args)`` (in compiled code: the loop's iterations, run in parallel).

    Examples:
        >>> import numpy as np, zymase
        >>> @zymase.jit
        ... def norms(x, out):
        ...     total = 0.0
        ...     for i in zymase.prange(x.shape[0]):
        ...         out[i] = np.sqrt(np.sum(x[i] ** 2))  # each iteration writes its own element
        ...         total += out[i]                       # a reduction: summed per thread
        ...     return total
        >>> out = np.zeros(2)
        >>> print(norms(np.array([[3.0, 4.0], [6.0, 8.0]]), out))
        15.0
        >>> out
        array([ 5., 10.])
        >>> list(zymase.prange(3))
        [0, 1, 2]
    """
    return range(*args)


class _Custom:
    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.__zymase_custom__ = True
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)


class custom_jvp(_Custom):
    """A function with a custom forward-mode derivative rule, in the style of JAX.

    Decorate a function with ``@zymase.custom_jvp`` and give it a rule with ``defjvp``.
    Forward mode (``jvp``, ``jacfwd``, ``autodiff(Forward, ...)``) of any function that calls
    it then uses the rule, compiled with the rest, instead of differentiating its body.
    Reverse mode (``grad``, ``vjp``, ``jacrev``, and ``hessian``, forward over reverse) uses
    the rule too, as JAX does: the rule is linear in the tangents, and reverse mode applies
    that linear map transposed (zymase evaluates the rule with tangents ``x - stop(x)``, zero
    but carrying the derivative, and differentiates the tangent it returns), so ``jacfwd``
    and ``jacrev`` agree.  The value is still the one the body computes.  A ``custom_vjp``
    with a ``defjvp`` rule keeps its backward rule for reverse mode.  Transforms take it
    directly too (``zymase.jvp(softplus, ...)``); called from plain Python, the function runs
    as written.

    Args:
        fn: The function (plain Python and NumPy).

    Examples:
        >>> import math, zymase
        >>> @zymase.custom_jvp
        ... def softplus(x):
        ...     return math.log1p(math.exp(x))
        >>> @softplus.defjvp
        ... def softplus_jvp(primals, tangents):
        ...     (x,), (t,) = primals, tangents
        ...     return softplus(x), t / (1.0 + math.exp(-x))
        >>> def f(x):
        ...     return 2.0 * softplus(x)
        >>> zymase.jvp(f, (0.0,), (1.0,))
        (1.3862943611198906, 1.0)
        >>> zymase.grad(f)(0.0)                   # reverse mode: the rule, transposed
        1.0
        >>> softplus(0.0)                         # plain Python
        0.6931471805599453
    """

    jvp_rule = None
    vjp_fwd = vjp_bwd = None

    def defjvp(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        """Set the forward-mode rule; usable as a decorator.

        Args:
            rule: ``rule(primals, tangents)``: ``primals`` is the tuple of the function's
                arguments, ``tangents`` a tuple of their tangents (same types for floats and
                float arrays, None for the rest); returns ``(output, output_tangent)``, the
                output being what the function returns and the tangent of the output's
                structure, shape and dtype (a scalar is not broadcast to an array), linear in
                ``tangents``.  Anything else is refused when compiling, or for array shapes
                with a ``ShapeError`` at run time.

        Returns:
            ``rule`` itself.
        """
        self.jvp_rule = rule
        return rule


class custom_vjp(_Custom):
    """A function with a custom reverse-mode derivative rule, in the style of JAX.

    Decorate a function with ``@zymase.custom_vjp`` and give it a forward and a backward rule
    with ``defvjp(fwd, bwd)``.  Reverse mode (``grad``, ``vjp``, ``jacrev``, ...) of any
    function that calls it then uses the rules, compiled with the rest: ``fwd`` runs in the
    forward sweep, ``bwd`` in the adjoint sweep.  Forward mode differentiates the body,
    unless ``defjvp`` gives a forward rule too (so ``hessian`` keeps working with only a
    ``custom_vjp``).  Transforms take it directly too (``zymase.grad(clip_gradient)``);
    called from plain Python, the function runs as written.

    Args:
        fn: The function (plain Python and NumPy).

    Examples:
        >>> import numpy as np, zymase
        >>> @zymase.custom_vjp
        ... def clip_gradient(x):
        ...     return x
        >>> def clip_fwd(x):
        ...     return x, None                     # (output, residuals)
        >>> def clip_bwd(res, ct):
        ...     return (max(-1.0, min(1.0, ct)),)  # one cotangent per argument
        >>> _ = clip_gradient.defvjp(clip_fwd, clip_bwd)
        >>> def f(x):
        ...     return 3.0 * clip_gradient(x)
        >>> zymase.grad(f)(2.0)                   # 3.0, clipped by the rule
        1.0
        >>> zymase.jvp(f, (2.0,), (1.0,))         # forward mode: through the body
        (6.0, 3.0)
    """

    jvp_rule = None
    vjp_fwd = vjp_bwd = None

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any]) -> custom_vjp:
        """Set the reverse-mode rules.

        Args:
            fwd: ``fwd(*args)``, called with the function's arguments: returns ``(output,
                residuals)``, the residuals being anything the backward rule needs.
            bwd: ``bwd(residuals, ct)``, with ``ct`` the output's cotangent: returns a tuple
                with one cotangent per argument (None for an argument that gets none), each
                of its argument's structure, shape and dtype: no broadcasting, as in JAX (a
                scalar for an array argument, or a cotangent of another rank or dtype, is
                refused when compiling; one of another shape raises ``ShapeError`` at run
                time, naming the rule, the argument and both shapes).

        Returns:
            The ``custom_vjp`` itself.
        """
        self.vjp_fwd, self.vjp_bwd = fwd, bwd
        return self

    def defjvp(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        """Give the function a forward-mode rule too (as ``custom_jvp.defjvp``): forward mode
        then uses it instead of differentiating the body.

        Args:
            rule: ``rule(primals, tangents)`` returning ``(output, output_tangent)``.

        Returns:
            ``rule`` itself.
        """
        self.jvp_rule = rule
        return rule
