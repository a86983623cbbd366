"""``zymase.checkpoint``: marks a loop or a helper for checkpointing in reverse mode (read by the
frontend; the work is in ``autodiff/checkpoint.py``).  No imports: the frontend uses it."""


from __future__ import annotations


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
