"""``check_grads``: zymase's derivatives against central differences of the CPython function.

For each random direction ``t`` over the active arguments (JAX's ``check_grads`` idea):

* forward mode: the tangent of ``zymase.jvp(f, x, t)`` ~= (f(x + h t) - f(x - h t)) / 2h;
* reverse mode: ``<t, zymase.grad(f)(x)>`` ~= the same difference quotient;
* the projection identity ``<t, J^T 1> == <J t, 1>`` between the two modes, to a tighter
  tolerance than the difference quotient allows;
* the primal values of ``value_and_grad`` and ``jvp`` equal CPython's.

The difference quotient is Richardson-extrapolated (``(4 D(h/2) - D(h)) / 3``, error O(h^4)), so
float64 checks hold to ``rtol=1e-6``.  float32 arguments get a larger step and ``rtol=2e-2``.
Every call gets fresh copies of array arguments, so programs may mutate their inputs.
"""

from __future__ import annotations

import numpy as np

import zymase

F64_RTOL, F32_RTOL = 1e-6, 2e-2
F64_EPS, F32_EPS = 1e-4, 1e-2


def copy_args(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def is_active(x) -> bool:
    if isinstance(x, np.ndarray):
        return x.dtype.kind == "f"
    return isinstance(x, float)


def is_f32(args) -> bool:
    return any(isinstance(a, np.ndarray) and a.dtype == np.float32 for a in args) or any(
        isinstance(a, np.float32) for a in args
    )


def _direction(x, rng):
    if isinstance(x, np.ndarray):
        return rng.standard_normal(x.shape).astype(x.dtype)
    return float(rng.standard_normal())


def _shift(args, nums, tangent, h):
    out = list(copy_args(args))
    for k, t in zip(nums, tangent):
        x = out[k]
        out[k] = (
            (x + x.dtype.type(h) * t).astype(x.dtype) if isinstance(x, np.ndarray) else x + h * t
        )
    return tuple(out)


def central_difference(fn, args, nums, tangent, eps):
    """Richardson-extrapolated central difference of CPython ``fn`` along ``tangent``."""

    def quotient(h):
        up = float(fn(*_shift(args, nums, tangent, h)))
        down = float(fn(*_shift(args, nums, tangent, -h)))
        return (up - down) / (2 * h)

    return (4 * quotient(eps / 2) - quotient(eps)) / 3


def _inner(tangent, grads):
    return sum(
        float(np.sum(np.asarray(t, np.float64) * np.asarray(g, np.float64)))
        for t, g in zip(tangent, grads)
    )


def _scale(tangent, grads):
    """A magnitude for relative comparisons of <t, g> (robust to cancellation in the sum)."""
    return sum(
        float(np.sum(np.abs(np.asarray(t, np.float64) * np.asarray(g, np.float64))))
        for t, g in zip(tangent, grads)
    )


def assert_close(got, want, rtol, scale, what):
    tol = rtol * max(abs(want), abs(got), scale, 1e-3)
    assert abs(got - want) <= tol, f"{what}: got {got!r}, want {want!r} (|diff| > {tol:.3g})"


def check_grads(
    fn,
    args,
    argnums=None,
    *,
    rtol=None,
    eps=None,
    mode_rtol=None,
    n_dirs=2,
    seed=0,
    modes=("fwd", "rev"),
):
    """Check zymase's forward and reverse derivatives of scalar ``fn`` at ``args``.

    ``argnums``: the argument positions to differentiate (default: every float argument).
    ``rtol``/``eps``: tolerance and step of the finite-difference comparisons; ``mode_rtol``:
    tolerance of forward vs reverse (looser where float32 intermediates round differently).
    ``modes``: which of "fwd" / "rev" to check (a mode zymase refuses is left out by the caller).
    Returns the reverse-mode gradients (a tuple over ``argnums``), or None without "rev".
    """
    args = tuple(args)
    if argnums is None:
        argnums = tuple(k for k, a in enumerate(args) if is_active(a))
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    f32 = is_f32(args)
    rtol = rtol if rtol is not None else (F32_RTOL if f32 else F64_RTOL)
    eps = eps if eps is not None else (F32_EPS if f32 else F64_EPS)
    want = fn(*copy_args(args))
    value_rtol = 1e-6 if f32 else 1e-12

    grads = None
    if "rev" in modes:
        value, grads = zymase.value_and_grad(fn, nums)(*copy_args(args))
        assert_close(float(value), float(want), value_rtol, 0.0, "value_and_grad primal")
        for k, g in zip(nums, grads):
            _check_structure(g, args[k], f"grad of argument {k}")

    rng = np.random.default_rng(seed)
    for d in range(n_dirs):
        tangent = [_direction(args[k], rng) for k in nums]
        fd = central_difference(fn, args, nums, tangent, eps)
        jvp_t = None
        if "fwd" in modes:
            tangents = [None] * len(args)
            for k, t in zip(nums, tangent):
                tangents[k] = t
            primal, jvp_t = zymase.jvp(fn, copy_args(args), tangents)
            assert_close(float(primal), float(want), value_rtol, 0.0, "jvp primal")
            jvp_t = float(jvp_t)
            assert_close(jvp_t, fd, rtol, 0.0, f"forward mode vs finite differences (dir {d})")
        if grads is not None:
            vjp = _inner(tangent, grads)
            scale = _scale(tangent, grads)
            assert_close(vjp, fd, rtol, scale, f"reverse mode vs finite differences (dir {d})")
            if jvp_t is not None:
                exact = mode_rtol if mode_rtol is not None else (1e-4 if f32 else 1e-10)
                assert_close(vjp, jvp_t, exact, scale, f"<t, grad> vs jvp (dir {d})")
    return grads


def _check_structure(g, x, what):
    if isinstance(x, np.ndarray):
        assert isinstance(g, np.ndarray), f"{what}: expected an array, got {type(g)}"
        assert (g.shape, g.dtype) == (x.shape, x.dtype), f"{what}: {g.shape} {g.dtype}"
    else:
        assert isinstance(g, float), f"{what}: expected a float, got {type(g)}"
