"""Binomial checkpointing (Griewank's Revolve) as a state machine the derivative code calls.

Reversing ``T`` steps of a loop, with room for ``snaps`` saved loop states, the adjoint sweep
asks ``revolve_next(st)`` what to do next until it says ``TERMINATE``:

* ``ADVANCE``: run the primal steps ``st[A]`` .. ``st[B] - 1`` (no tape);
* ``TAKESHOT``: save the current state into slot ``st[A]``;
* ``RESTORE``: load the state saved in slot ``st[A]``;
* ``YOUTURN``: run steps ``st[A]`` .. ``st[B] - 1`` recording their tape, then their adjoint
  (one step, or up to ``st[RUN]`` when that many steps' tape fits the memory limit).

``st`` is an int64 array: ``[check, capo, fine, snaps, valid, A, B, spare, run,
ch[0..snaps)]`` where ``ch[k]`` is the step whose state slot ``k`` holds, ``check`` the topmost
used slot, ``capo`` the step of the current state (meaningful when ``valid``), ``fine`` the
number of steps not yet reversed and ``run`` the most steps recorded at once.  Slot 0 holds the
state before step 0 when the machine starts (``start``).

Splitting rule: reversing ``l`` steps from a saved state with ``d`` slots from the current one
upwards, ``r`` is the smallest number of repetitions with ``C(d + r, r) >= l``; the state is
advanced by ``m = max(1, l - C(d - 1 + r, r), C(d + r - 2, d))`` steps and saved there: the
right part then needs ``d - 1`` slots and ``r`` repetitions and the left part ``d`` slots and
``r - 1``, and ``m`` lies in the range where the total number of steps is the binomial optimum
(``tests/autodiff/test_checkpoint.py`` checks every schedule against the optimum found by
dynamic programming).  With ``run > 1`` the same rule works on runs of ``run`` steps.  The
function is plain Python: the derivative module compiles it with
zymase itself, and the tests run it in CPython.
"""

from __future__ import annotations

TERMINATE, ADVANCE, TAKESHOT, RESTORE, YOUTURN = 0, 1, 2, 3, 4
# st[0:HEADER] is the machine's state (indices below), st[HEADER + k] = ch[k]
CHECK, CAPO, FINE, SNAPS, VALID, A, B, SPARE, RUN, HEADER = range(10)


def revolve_next(st):
    check = st[CHECK]
    capo = st[CAPO]
    fine = st[FINE]
    if fine == 0:
        return TERMINATE
    if st[VALID] == 0:  # the current state is not usable: restore the newest useful checkpoint
        while st[HEADER + check] >= fine:
            check -= 1
        st[CHECK] = check
        st[CAPO] = st[HEADER + check]
        st[VALID] = 1
        st[A] = check
        return RESTORE
    run = st[RUN]
    if fine - capo <= run:  # record what is left at once
        st[FINE] = capo
        st[VALID] = 0
        st[A] = capo
        st[B] = fine
        return YOUTURN
    if st[HEADER + check] != capo:
        check += 1
        st[CHECK] = check
        st[HEADER + check] = capo
        st[A] = check
        return TAKESHOT
    steps = (fine - capo + run - 1) // run  # in runs
    free = st[SNAPS] - check
    reps = 0
    beta = 1
    while beta < steps:
        reps += 1
        beta = beta * (free + reps) // reps
    m = steps - beta * free // (free + reps)  # the most the right part can take
    if reps >= 2:  # the least the left part should take: C(free + reps - 2, free)
        least = beta * reps // (free + reps) * (reps - 1) // (free + reps - 1)
        if m < least:
            m = least
    if m < 1:
        m = 1
    m = m * run
    if m > fine - capo - 1:
        m = fine - capo - 1
    st[A] = capo
    st[B] = capo + m
    st[CAPO] = capo + m
    return ADVANCE


def start(st, steps: int, snaps: int, run: int = 1) -> None:
    """Set up ``st`` (length HEADER + snaps) to reverse ``steps`` steps; slot 0 holds step 0."""
    st[CHECK], st[CAPO], st[FINE], st[SNAPS], st[VALID] = 0, 0, steps, snaps, 0
    st[RUN] = run
    st[HEADER] = 0


def schedule(steps: int, snaps: int, run: int = 1):
    """The actions for ``steps`` steps, ``snaps`` slots and runs of ``run`` steps, as
    (action, A, B) tuples (for tests)."""
    import numpy as np
    st = np.zeros(HEADER + max(snaps, 1), dtype=np.int64)
    start(st, steps, snaps, run)
    out = []
    while True:
        a = revolve_next(st)
        if a == TERMINATE:
            return out
        out.append((a, int(st[A]), int(st[B]) if a in (ADVANCE, YOUTURN) else None))


def optimal_steps(steps: int, snaps: int) -> int:
    """The fewest primal steps any schedule needs beyond the ``steps`` recorded ones (Griewank:
    ``r * l - C(s + r, r - 1)`` with ``r`` minimal such that ``C(s + r, s) >= l``)."""
    from math import comb
    if steps <= 1:
        return 0
    r = 0
    while comb(snaps + r, snaps) < steps:
        r += 1
    return r * steps - comb(snaps + r, r - 1)
