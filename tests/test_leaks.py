"""A call that raises frees what it allocated: buffers (in the raising function and its callers,
in loops, escaping or not), tapes and shadow arrays.  A process making many raising calls stays
flat, for jit (both entry paths), grad, vjp, jvp and hvp."""

import math
import os

import numpy as np
import pytest

import zymase

N = 10_000
CALLS = 2000
BOUND = 20 * 2**20  # leaking one array of N doubles per call would grow it by 150 MiB

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/statm"),
                                reason="needs Linux /proc")


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def out_of_range(a, k):
    b = np.zeros(a.shape[0])
    c = a * 2.0
    d = np.empty(a.shape[0])
    d[:] = c + b
    return float(d[k] + c[0])  # a Python float: the fast entry's kind of result


def raises_when_positive(a):
    b = np.sin(a) * a
    c = b * b
    if c[0] > 0.0:
        raise ValueError("positive")
    return float(c.sum())


def helper(a):
    b = a * 3.0
    if b[0] > 0.0:
        raise ValueError("from the helper")
    return b.sum()


def calls_helper(a):
    c = a * 2.0
    return helper(c) + c.sum()


def allocates_per_iteration(a):
    s, k = 0.0, 0
    while k < 10:
        t = np.sin(a) + k
        s += t[k] * t[-1]
        assert s < 2.0, "too big"  # (at k = 1) a check on the values keeps t in use before it
        k += 1
    return s


def renews_an_array(a):
    x = a * 1.0
    for i in range(5):
        x = x * 2.0 + a
        if i == 3:
            raise ValueError("renewed")
    return x.sum()


def tapes_a_loop(a):  # its gradient allocates only the tape (N values)
    s = 1.0
    for i in range(a.shape[0]):
        s = math.sin(s * a[i]) + s
    if s > 0.0:
        raise ValueError("after the loop")
    return s


def tapes_a_prange(a):  # its gradient keeps a tape per iteration of the parallel loop
    s = 0.0
    for i in zymase.prange(a.shape[0]):
        t = a[i]
        for _ in range(3):
            t = math.sin(t * a[i]) + t
        s += t
    if s > 0.0:
        raise ValueError("after the parallel loop")
    return s


def returns_arrays(a):
    b = a * 2.0
    c = a + 1.0
    assert b[0] < 0.0, "positive"
    return b, c


CALL = lambda f, a: f(a)  # noqa: E731

CASES = {  # name: (what is called, how, the exception it raises)
    "jit index": (zymase.jit(out_of_range), lambda f, a: f(a, N + 5), IndexError),
    "jit raise": (zymase.jit(raises_when_positive), CALL, ValueError),  # the fast entry
    "jit general entry": (zymase.jit(raises_when_positive), lambda f, a: f(a=a), ValueError),
    "jit helper": (zymase.jit(calls_helper), CALL, ValueError),
    "jit loop": (zymase.jit(allocates_per_iteration), CALL, AssertionError),
    "jit renewed": (zymase.jit(renews_an_array), CALL, ValueError),
    "jit returned": (zymase.jit(returns_arrays), CALL, AssertionError),
    "grad": (zymase.grad(raises_when_positive), CALL, ValueError),
    "grad helper": (zymase.grad(calls_helper), CALL, ValueError),
    "grad loop": (zymase.grad(allocates_per_iteration), CALL, AssertionError),
    "grad tape": (zymase.grad(tapes_a_loop), CALL, ValueError),
    "grad prange tapes": (zymase.grad(tapes_a_prange), CALL, ValueError),
    "vjp": (raises_when_positive, lambda f, a: zymase.vjp(f, a), ValueError),
    "vjp tape": (tapes_a_loop, lambda f, a: zymase.vjp(f, a), ValueError),
    "jvp": (raises_when_positive, lambda f, a: zymase.jvp(f, (a,), (a,)), ValueError),
    "hvp": (zymase.hvp(renews_an_array), lambda f, a: f(a, a), ValueError),
}


@pytest.mark.parametrize("case", CASES)
def test_raising_calls_free_what_they_allocated(case):
    fn, call, error = CASES[case]
    a = np.linspace(0.1, 1.0, N)

    def run(times):
        for _ in range(times):
            with pytest.raises(error):
                call(fn, a)

    run(50)  # compiles, and lets the allocator settle
    before = rss_bytes()
    run(CALLS)
    grown = rss_bytes() - before
    assert grown < BOUND, f"RSS grew by {grown / 2**20:.1f} MiB over {CALLS} raising calls"
