"""Random-program differential tests for derivatives.

The programs are ``tests/progen.py``'s (loops, branches, early exits, overwrites, in-place
stores through views and helper calls, int/float mixing); ``F`` wraps ``f`` into one float.
For each program and finite inputs:

- reverse mode (``zymase.grad`` with respect to x, y, a, b) and forward mode (``zymase.jvp``
  along a random tangent, and along it with ``b`` held constant, which ``f`` may still write)
  must give the same directional derivative, to rounding;
- ``hvp`` with respect to ``a`` must lie between the one-sided differences of the reverse
  gradient along the same direction;
- the reverse gradient must lie between the one-sided differences (step 1e-6) of CPython running
  the same source, up to rounding: where ``f`` is smooth they bracket the derivative within
  O(step); at a kink (a branch, ``abs``, ``min``, ``%``, ``int()``, a loop count that flips
  inside the step) they are the two slopes and the derivative of the branch taken is one of them.

A program zymase cannot differentiate must be refused with a ``ZymaseError`` naming the user's
source (never a crash or a wrong number); ``test_most_programs_differentiate`` keeps refusals
rare so the comparison is not vacuous.
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import tempfile

import numpy as np
import progen
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import zymase
from zymase.errors import ZymaseError

_TMP = tempfile.TemporaryDirectory(prefix="zymase_progen_ad_")
_SERIAL = itertools.count()
STEP = 1e-6


def load(prog: progen.Program):
    """The module of ``prog`` plus ``F``, a float-valued wrapper of ``f``."""
    if prog.returns == 2:
        wrap = ("def F(x, y, a, b, n):\n    r0, r1 = f(x, y, a, b, n)\n"
                "    return 1.0 * r0 + 0.5 * r1\n")
    else:
        wrap = "def F(x, y, a, b, n):\n    return 1.0 * f(x, y, a, b, n)\n"
    name = f"zymase_progen_ad_{os.getpid()}_{next(_SERIAL)}"
    path = os.path.join(_TMP.name, name + ".py")
    with open(path, "w") as fh:
        fh.write(prog.source + "\n\n" + wrap)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod, path


def flat(x, y, a, b) -> np.ndarray:
    return np.concatenate([[x, y], a, b])


def unflat(v: np.ndarray, size: int):
    return float(v[0]), float(v[1]), v[2:2 + size].copy(), v[2 + size:].copy()


def one_sided_differences(F, v: np.ndarray, size: int, n: int, h: float):
    """Forward and backward differences of F at v along each coordinate."""
    f0 = F(*unflat(v, size), n)
    fwd, bwd = np.empty_like(v), np.empty_like(v)
    for k in range(v.size):
        up, down = v.copy(), v.copy()
        up[k] += h
        down[k] -= h
        fwd[k] = (F(*unflat(up, size), n) - f0) / h
        bwd[k] = (f0 - F(*unflat(down, size), n)) / h
    return fwd, bwd


def _one_sided(F, v: np.ndarray, size: int, n: int, h: float, k: int):
    """Forward and backward differences of F at v along coordinate k."""
    f0 = F(*unflat(v, size), n)
    up, down = v.copy(), v.copy()
    up[k] += h
    down[k] -= h
    return (F(*unflat(up, size), n) - f0) / h, (f0 - F(*unflat(down, size), n)) / h


def differentiate(prog: progen.Program, v: np.ndarray, size: int, n: int, t: np.ndarray):
    """(value, gradient, jvp along t, CPython's F) or None when zymase refuses the program."""
    mod, path = load(prog)
    F = mod.F
    with np.errstate(all="ignore"):
        want = F(*unflat(v, size), n)
    if not np.isfinite(want) or abs(want) > 1e6:
        return None
    try:
        g = zymase.grad(F, argnums=(0, 1, 2, 3))(*unflat(v, size), n)
        value, tangent = zymase.jvp(F, unflat(v, size) + (n,), unflat(t, size) + (None,))
        # b held constant: its buffer (which f may write) is not differentiated
        _, tangent_no_b = zymase.jvp(F, unflat(v, size) + (n,),
                                     unflat(t, size)[:3] + (None, None))
    except ZymaseError as e:
        assert path in str(e), f"refusal does not name the user's file:\n{e}"
        return "refused"
    np.testing.assert_allclose(value, want, rtol=1e-9, atol=1e-12, err_msg="jvp's primal value")
    gf, part = flat(*g), t.copy()
    if not np.all(np.isfinite(gf)) and not np.isfinite(tangent):
        return None  # undefined in both modes (atan2(0, 0), sqrt at 0, ...): nothing to compare
    part[2 + size:] = 0.0
    scale = float(np.abs(gf) @ np.abs(part)) + 1e-12
    assert abs(float(gf @ part) - float(tangent_no_b)) <= 1e-9 * scale + 1e-12, (
        f"reverse <grad, t> with b constant = {float(gf @ part)!r} but jvp = {tangent_no_b!r}")
    return want, gf, float(tangent), F


def check(prog: progen.Program, v: np.ndarray, size: int, n: int, t: np.ndarray) -> str:
    got = differentiate(prog, v, size, n, t)
    if got is None or got == "refused":
        return got or "nonfinite"
    want, grad, tangent, F = got
    assert np.all(np.isfinite(grad)), f"non-finite gradient {grad}"
    # forward and reverse: the same directional derivative
    directional = float(grad @ t)
    scale = float(np.abs(grad) @ np.abs(t)) + 1e-12
    assert abs(directional - tangent) <= 1e-9 * scale + 1e-12, (
        f"reverse <grad, t> = {directional!r} but forward jvp = {tangent!r}")
    # the derivative of the branch taken lies between the one-sided slopes
    with np.errstate(all="ignore"):
        fwd, bwd = one_sided_differences(F, v, size, n, STEP)
    lo, hi = np.minimum(fwd, bwd), np.maximum(fwd, bwd)
    tol = 1e-6 * (1 + np.abs(grad)) + 1e-9 * (1 + abs(want)) / STEP
    finite = np.isfinite(lo) & np.isfinite(hi)
    bad = finite & ((grad < lo - tol) | (grad > hi + tol))
    for k in np.flatnonzero(bad):  # steeper than the step resolves (atan2 near its pole):
        for h in (1e-9, 1e-12, 1e-15):  # smaller steps must then bracket it
            with np.errstate(all="ignore"):
                f1, b1 = _one_sided(F, v, size, n, h, k)
            if np.isfinite(f1) and np.isfinite(b1) and \
                    min(f1, b1) - tol[k] <= grad[k] <= max(f1, b1) + tol[k]:
                bad[k] = False
                break
    assert not bad.any(), (
        f"reverse gradient outside the one-sided differences at {np.flatnonzero(bad)}:\n"
        f"grad={grad[bad]}\nforward={fwd[bad]}\nbackward={bwd[bad]}")
    smooth = finite & (hi - lo <= 1e-3 * (1 + np.abs(grad)))
    if not grad.any():
        return "zero gradient"
    return "checked" if smooth.any() else "kinks"


@st.composite
def cases(draw):
    size = draw(st.integers(3, 8))
    nums = st.floats(-2.0, 2.0, allow_nan=False, allow_infinity=False)
    v = np.array(draw(st.lists(nums, min_size=2 + 2 * size, max_size=2 + 2 * size)))
    t = np.array(draw(st.lists(st.floats(-1.0, 1.0), min_size=v.size, max_size=v.size)))
    n = draw(st.integers(0, progen.MAX_N))
    prog = progen.program(lambda k: draw(st.integers(0, k - 1)), nonfinite=False)
    return prog, v, size, n, t


_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _run(case):
    prog, v, size, n, t = case
    note(prog.source)
    note(f"v={v.tolist()} size={size} n={n} t={t.tolist()}")
    check(prog, v, size, n, t)


@settings(max_examples=25, derandomize=True, **_SETTINGS)
@given(cases())
def test_random_program_derivatives(case):
    _run(case)


@pytest.mark.slow
@settings(max_examples=600, **_SETTINGS)
@given(cases())
def test_random_program_derivatives_many(case):
    _run(case)


def test_most_programs_differentiate():
    """Refusals stay the exception; most programs have a nonzero gradient that gets compared."""
    counts = _differentiate(range(16))
    assert counts.get("refused", 0) <= 2, counts
    assert counts.get("checked", 0) >= 8, counts   # nonzero gradients compared with CPython


@pytest.mark.slow
def test_most_programs_differentiate_many():
    counts = _differentiate(range(16, 104))
    assert counts.get("refused", 0) <= 8, counts
    assert counts.get("checked", 0) >= 40, counts


def _differentiate(seeds) -> dict:
    outcomes = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        size = int(rng.integers(3, 9))
        v = rng.uniform(-2, 2, 2 + 2 * size)
        t = rng.uniform(-1, 1, v.size)
        n = int(rng.integers(0, progen.MAX_N + 1))
        outcomes.append(check(progen.random_program(seed), v, size, n, t))
    return {k: outcomes.count(k) for k in set(outcomes)}


def _limited_matches(prog, v, size, n, limit):
    """The gradient under ``memory_limit`` equals the unlimited one exactly (the same float
    operations run), or the limit is refused with the bytes needed, which then work."""
    mod, path = load(prog)
    args = unflat(v, size)
    with np.errstate(all="ignore"):
        want = mod.F(*args, n)
    if not np.isfinite(want) or abs(want) > 1e6:
        return "nonfinite"
    try:
        g = flat(*zymase.grad(mod.F, argnums=(0, 1, 2, 3))(*unflat(v, size), n))
    except ZymaseError:
        return "refused"
    for _ in range(6):
        try:
            got = flat(*zymase.grad(mod.F, argnums=(0, 1, 2, 3), memory_limit=limit)(
                *unflat(v, size), n))
            break
        except zymase.ZymaseMemoryError as e:
            assert path in str(e), str(e)
            limit = int(str(e).split("needs at least ")[1].split(" bytes")[0])
        except ZymaseError as e:  # a loop checkpointing cannot handle: refused where it is
            assert path in str(e) and ("checkpoint" in str(e) or "pass a copy" in str(e)), \
                str(e)
            return "refused under the limit"
    np.testing.assert_array_equal(got, g)
    return "checked" if g.any() else "zero gradient"


def test_random_programs_under_a_memory_limit():
    """Checkpointing on random programs (loops, while loops, breaks, early returns, branches,
    overwrites, views, helpers): 16 programs here (72 more with -m slow), each at a tight
    limit."""
    counts = _limited(range(100, 116))
    assert counts.get("checked", 0) >= 8, counts
    assert counts.get("refused under the limit", 0) <= 3, counts


@pytest.mark.slow
def test_random_programs_under_a_memory_limit_many():
    counts = _limited(range(116, 188))
    assert counts.get("checked", 0) >= 36, counts
    assert counts.get("refused under the limit", 0) <= 11, counts


def _limited(seeds) -> dict:
    outcomes = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        size = int(rng.integers(3, 9))
        v = rng.uniform(-2, 2, 2 + 2 * size)
        n = int(rng.integers(1, progen.MAX_N + 1))
        outcomes.append(_limited_matches(progen.random_program(seed), v, size, n, 64))
    return {k: outcomes.count(k) for k in set(outcomes)}


# ---------------------------------------------------------------------- Hessian-vector products


def check_hvp(prog: progen.Program, v: np.ndarray, size: int, n: int, t: np.ndarray) -> str:
    """``hvp`` (forward over reverse) with respect to ``a`` along ``t`` lies between the one-sided
    differences of the reverse gradient (checked against CPython by ``check``) along ``t``."""
    mod, path = load(prog)
    x, y, a, b = unflat(v, size)
    da = t[2:2 + size].copy()
    with np.errstate(all="ignore"):
        want = mod.F(x, y, a, b, n)
    if not np.isfinite(want) or abs(want) > 1e6:
        return "nonfinite"
    grad = zymase.grad(mod.F, argnums=2)
    try:
        g0 = grad(x, y, a, b, n)
        hv = zymase.hvp(mod.F, argnums=2)(x, y, a.copy(), b, n, da)
    except ZymaseError as e:
        assert path in str(e), f"refusal does not name the user's file:\n{e}"
        return "refused"
    def slopes(h):
        with np.errstate(all="ignore"):
            up, down = grad(x, y, a + h * da, b, n), grad(x, y, a - h * da, b, n)
        return (up - g0) / h, (g0 - down) / h

    h = 1e-5
    fwd, bwd = slopes(h)
    fwd8, bwd8 = slopes(h / 8)
    # where the gradient itself jumps (|x| at 0: sign(x) goes -1, 0, 1) the quotients grow
    # like 1/h and bracket nothing; the hvp there is the derivative of the branch taken
    with np.errstate(all="ignore"):
        jump = (np.abs(fwd8) > 4 * np.abs(fwd) + 1) | (np.abs(bwd8) > 4 * np.abs(bwd) + 1)
    lo, hi = np.minimum(fwd, bwd), np.maximum(fwd, bwd)
    tol = 1e-4 * (1 + np.abs(hv)) + 1e-7 * (1 + np.abs(g0)) / h
    finite = np.isfinite(lo) & np.isfinite(hi) & ~jump
    bad = finite & ((hv < lo - tol) | (hv > hi + tol))
    assert not bad.any(), (f"hvp outside the one-sided differences of grad at "
                           f"{np.flatnonzero(bad)}:\nhvp={hv[bad]}\nforward={fwd[bad]}\n"
                           f"backward={bwd[bad]}")
    return "checked" if hv.any() else "zero"


@settings(max_examples=20, derandomize=True, **_SETTINGS)
@given(cases())
def test_random_program_hessian_vector_products(case):
    prog, v, size, n, t = case
    note(prog.source)
    note(f"v={v.tolist()} size={size} n={n} t={t.tolist()}")
    check_hvp(prog, v, size, n, t)


@pytest.mark.slow
@settings(max_examples=300, **_SETTINGS)
@given(cases())
def test_random_program_hessian_vector_products_many(case):
    prog, v, size, n, t = case
    note(prog.source)
    check_hvp(prog, v, size, n, t)
