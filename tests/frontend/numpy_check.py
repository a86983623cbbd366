"""Shared by the NumPy tests: run a function compiled and by CPython/NumPy and compare results
(values, shapes, dtypes, NumPy scalar vs Python scalar)."""

import numpy as np

import zymase

RTOL = {np.dtype(np.float32): 1e-6, np.dtype(np.complex64): 1e-6}


def copy_arg(x):
    return x.copy() if isinstance(x, np.ndarray) else x


def assert_same(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w)
        return
    if isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray), f"expected an array, got {type(got)}"
        assert (got.dtype, got.shape) == (want.dtype, want.shape)
    else:
        assert np.asarray(got).dtype == np.asarray(want).dtype, (type(got), type(want))
        # a NumPy float stays a NumPy float (the runtime returns strong bool/int/complex results
        # as Python's)
        if isinstance(want, (float, np.floating)):
            assert isinstance(got, np.generic) == isinstance(want, np.generic), (got, want)
    if np.asarray(want).dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=RTOL.get(np.asarray(want).dtype, 1e-12), atol=0)
    else:
        np.testing.assert_array_equal(got, want)


def check(fn, *args):
    want = fn(*map(copy_arg, args))
    got = zymase.jit(fn)(*map(copy_arg, args))
    assert_same(got, want)


RNG = np.random.default_rng(7)


def arr(*shape, dtype=np.float64):
    x = RNG.standard_normal(shape) * 3
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    if np.dtype(dtype).kind in "ib":
        x = np.round(x)
    return x.astype(dtype)


DTYPES = [np.float64, np.float32, np.int64]


def check_interp(fn, *args):
    """The frontend's IR run by the NumPy interpreter (the oracle) gives NumPy's values."""
    from zymase.frontend.args import param_template
    from zymase.frontend.module import ModuleLowerer
    from zymase.ir import interp
    from zymase.options import Options

    ml = ModuleLowerer(Options())
    f = ml.lower_entry(fn, [param_template(a, "arg") for a in args])
    got = _flat(interp.run(ml.module, f.sym_name, *map(copy_arg, args)))
    want = _flat(fn(*map(copy_arg, args)))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=0)


def _flat(x):
    return [y for v in x for y in _flat(v)] if isinstance(x, (tuple, list)) else [x]


def central_differences(fn, args, k, h=1e-6):
    """d fn(*args) / d args[k] by central differences, element by element (an independent
    reference for gradients)."""
    x = np.asarray(args[k], dtype=np.float64)
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        hi = [x + e if j == k else a for j, a in enumerate(args)]
        lo = [x - e if j == k else a for j, a in enumerate(args)]
        out[i] = (fn(*hi) - fn(*lo)) / (2 * h)
    return out
