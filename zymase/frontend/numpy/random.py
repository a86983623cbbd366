"""``np.random``: generators made in compiled code (``rng = np.random.default_rng(seed)``, then
``rng.random/standard_normal/normal/uniform/integers/exponential/poisson/binomial/gamma/beta/
choice/permutation/shuffle``) and the legacy functions (``np.random.seed/rand/randn/random/
normal/uniform/randint/choice/permutation/shuffle/...``).

Each draw is NumPy's own (a ``host.call`` of ``ir/host.py``), so a seed gives NumPy's stream to
the last bit, and the legacy functions share NumPy's global state with the Python around the
program.  A draw of ``size=None`` with number parameters is a number; with array parameters, or
with ``size`` (an int or a tuple, known when running), an array.  Samples are constants for
derivatives: a draw whose parameters carry derivatives is refused (``autodiff/activity.py``:
write ``mu + sigma * rng.standard_normal(n)``, the reparameterization).
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedError, ZymaseTypeError
from ...ir.types import F64, I64
from ..emit import alloc, host_call, load
from ..typing import Array, PyObj, Scalar, Struct, Tup
from .arrays import as_array, broadcast_dims, operand, sdtype
from .params import REQUIRED, bind, is_none, static
from .registry import STRUCT_METHODS, register_all

Generator = np.random.Generator

# method -> (parameters with defaults, result dtype, NumPy's name when it differs)
DRAWS = {
    "random": ((), F64),
    "standard_normal": ((), F64),
    "normal": ((("loc", 0.0), ("scale", 1.0)), F64),
    "uniform": ((("low", 0.0), ("high", 1.0)), F64),
    "exponential": ((("scale", 1.0),), F64),
    "standard_exponential": ((), F64),
    "poisson": ((("lam", 1.0),), I64),
    "binomial": ((("n", REQUIRED), ("p", REQUIRED)), I64),
    "gamma": ((("shape", REQUIRED), ("scale", 1.0)), F64),
    "beta": ((("a", REQUIRED), ("b", REQUIRED)), F64),
    "lognormal": ((("mean", 0.0), ("sigma", 1.0)), F64),
    "laplace": ((("loc", 0.0), ("scale", 1.0)), F64),
    "logistic": ((("loc", 0.0), ("scale", 1.0)), F64),
    "chisquare": ((("df", REQUIRED),), F64),
    "standard_t": ((("df", REQUIRED),), F64),
    "geometric": ((("p", REQUIRED),), I64),
}
LEGACY_ONLY = {"random_sample": "random"}


def _value(lw, v, node):
    """A parameter as a Value for the host function (numbers as float64 or int64)."""
    v = _fval(lw, v, node)
    if isinstance(v, Scalar):
        t = sdtype(v).type
        if t.is_complex:
            raise lw.err(ZymaseTypeError, "random parameters cannot be complex", node)
        return lw.b.cast(v.value, I64 if (t.is_int or t.is_bool) else F64)
    return v.value


def _fval(lw, v, node):
    """A bound parameter as an operand (a default such as ``loc=0.0`` is a Python number)."""
    if isinstance(v, (bool, int, float)):
        return Scalar(lw.b.const(float(v), F64), True)
    return operand(lw, v, node)


def _size(lw, size, node):
    """(the size's dims as Values, or None for ``size=None``)."""
    if is_none(size):
        return None
    items = size.items if isinstance(size, Tup) else (size,)
    dims = []
    for s in items:
        if not (isinstance(s, Scalar) and (s.type.is_int or s.type.is_bool)):
            raise lw.err(ZymaseTypeError, f"size= takes an int or a tuple of ints, not "
                         f"{lw.describe(s)}", node)
        dims.append(lw.b.cast(s.value, I64))
    return dims


def _draw(lw, fn, lead, method, params, size, dtype, node, kw=None, kind="plain"):
    """Allocate the result (``size``'s shape, the parameters' broadcast shape, or one number),
    let ``ir/host.py``'s ``fn`` fill it."""
    ops = [_value(lw, p, node) for p in params]
    arrays = [a for a in (_fval(lw, p, node) for p in params) if isinstance(a, Array)]
    dims = size if size is not None else (broadcast_dims(lw, arrays, node) if arrays else None)
    out = alloc(lw, dtype, dims if dims is not None else [lw.b.i64(1)])
    extra = {} if kw is None else {"kw": kw}
    host_call(lw, fn, [*lead, *ops, *(size or []), out.value], writes=[len(lead) + len(ops) +
              len(size or [])], state=True, method=method, nparams=len(ops),
              nsize=None if size is None else len(size), kind=kind, **extra)
    if dims is None:
        return Scalar(load(lw, out, [lw.b.i64(0)]), False)
    return out


def _params(lw, fname, spec, args, kwargs, node):
    p = bind(lw, fname, args, kwargs, node, [*spec, ("size", None)])
    return [p[k] for k, _ in spec], _size(lw, p["size"], node)


# ---------------------------------------------------------------------- Generator


def _default_rng(lw, args, kwargs, node):
    p = bind(lw, "np.random.default_rng", args, kwargs, node, [("seed", None)])
    seeded = not is_none(p["seed"])
    seed = _value(lw, p["seed"], node) if seeded else lw.b.i64(0)
    out = alloc(lw, I64, [lw.b.i64(1)])
    host_call(lw, "rng_new", [seed, out.value], writes=[1], state=True, seeded=seeded)
    return Struct(Generator, {"handle": Scalar(load(lw, out, [lw.b.i64(0)]), False)})


def _generator_method(lw, g: Struct, name, args, kwargs, node):
    handle = g.fields["handle"].value
    fname = f"Generator.{name}"
    if name in DRAWS:
        spec, dtype = DRAWS[name]
        params, size = _params(lw, fname, spec, args, kwargs, node)
        return _draw(lw, "rng", [handle], name, params, size, dtype, node)
    if name == "integers":
        p = bind(lw, fname, args, kwargs, node, [("low", REQUIRED), ("high", None),
                                                 ("size", None), ("dtype", None),
                                                 ("endpoint", False)])
        params = [p["low"]] if is_none(p["high"]) else [p["low"], p["high"]]
        endpoint = bool(static(lw, p["endpoint"]))
        return _draw(lw, "rng", [handle], "integers", params, _size(lw, p["size"], node), I64,
                     node, kw={"endpoint": endpoint})
    if name == "choice":
        return _choice(lw, "rng", [handle], fname, args, kwargs, node)
    if name == "permutation":
        return _permutation(lw, "rng", [handle], fname, args, kwargs, node)
    if name == "shuffle":
        p = bind(lw, fname, args, kwargs, node, [("x", REQUIRED), ("axis", 0)])
        x = as_array(lw, p["x"], fname, node)
        host_call(lw, "rng_shuffle", [handle, x.value], writes=[1], state=True, legacy=False)
        return PyObj(None)
    raise lw.err(UnsupportedError, f"np.random.Generator.{name}() is not supported in compiled "
                 "code (supported: " + ", ".join(sorted([*DRAWS, "integers", "choice",
                                                         "permutation", "shuffle"])) + ")", node)


def _choice(lw, fn, lead, fname, args, kwargs, node):
    p = bind(lw, fname, args, kwargs, node, [("a", REQUIRED), ("size", None), ("replace", True),
                                             ("p", None)])
    a = operand(lw, p["a"], node)
    dtype = I64 if isinstance(a, Scalar) else a.type.dtype
    if isinstance(a, Array) and a.type.ndim != 1:
        raise lw.err(UnsupportedError, f"{fname}() of an array of ndim {a.type.ndim} is not "
                     "supported (1-D arrays and ints are)", node)
    params = [a] if is_none(p["p"]) else [a, p["p"]]
    kw = {"replace": bool(static(lw, p["replace"]))}
    size = _size(lw, p["size"], node)
    if size is None:  # one element (the parameters do not broadcast here)
        out = alloc(lw, dtype, [lw.b.i64(1)])
        ops = [_value(lw, x, node) for x in params]
        host_call(lw, fn, [*lead, *ops, out.value], writes=[len(lead) + len(ops)], state=True,
                  method="choice", nparams=len(ops), nsize=None, kind="choice",
                  kw={**kw, "with_p": len(params) == 2})
        return Scalar(load(lw, out, [lw.b.i64(0)]), False)
    return _draw(lw, fn, lead, "choice", params, size, dtype, node,
                 kw={**kw, "with_p": len(params) == 2}, kind="choice")


def _permutation(lw, fn, lead, fname, args, kwargs, node):
    p = bind(lw, fname, args, kwargs, node, [("x", REQUIRED)])
    x = operand(lw, p["x"], node)
    if isinstance(x, Scalar):
        n = lw.b.cast(x.value, I64)
        out = alloc(lw, I64, [n])
    else:
        out = alloc(lw, x.type.dtype, lw.dims(x))
    ops = [_value(lw, x, node)]
    host_call(lw, fn, [*lead, *ops, out.value], writes=[len(lead) + 1], state=True,
              method="permutation", nparams=1, nsize=None, kind="plain")
    return out


# ---------------------------------------------------------------------- legacy np.random.*


def _legacy(name):
    fname = f"np.random.{name}"
    method = LEGACY_ONLY.get(name, name)

    def h(lw, args, kwargs, node):
        if method in DRAWS:
            spec, dtype = DRAWS[method]
            params, size = _params(lw, fname, spec, args, kwargs, node)
            return _draw(lw, "np_random", [], name, params, size, dtype, node)
        raise AssertionError(name)

    return h


def _dims_draw(name):
    """``np.random.rand(2, 3)`` / ``randn``: dimensions as arguments."""
    fname = f"np.random.{name}"

    def h(lw, args, kwargs, node):
        if kwargs:
            raise lw.err(ZymaseTypeError, f"{fname}() takes dimensions only", node)
        size = _size(lw, Tup(tuple(args)), node) if args else None
        return _draw(lw, "np_random", [], name, [], size, F64, node, kind="dims")

    return h


def _randint(lw, args, kwargs, node):
    p = bind(lw, "np.random.randint", args, kwargs, node,
             [("low", REQUIRED), ("high", None), ("size", None), ("dtype", None)])
    params = [p["low"]] if is_none(p["high"]) else [p["low"], p["high"]]
    return _draw(lw, "np_random", [], "randint", params, _size(lw, p["size"], node), I64, node)


def _seed(lw, args, kwargs, node):
    p = bind(lw, "np.random.seed", args, kwargs, node, [("seed", None)])
    if is_none(p["seed"]):
        raise lw.err(UnsupportedError, "np.random.seed() without a seed is not supported in "
                     "compiled code: give the seed", node)
    host_call(lw, "np_seed", [_value(lw, p["seed"], node)], state=True)
    return PyObj(None)


def _legacy_shuffle(lw, args, kwargs, node):
    p = bind(lw, "np.random.shuffle", args, kwargs, node, [("x", REQUIRED)])
    x = as_array(lw, p["x"], "np.random.shuffle", node)
    host_call(lw, "rng_shuffle", [lw.b.i64(0), x.value], writes=[1], state=True, legacy=True)
    return PyObj(None)


STRUCT_METHODS[Generator] = _generator_method
register_all({
    np.random.default_rng: _default_rng,
    np.random.seed: _seed,
    np.random.rand: _dims_draw("rand"),
    np.random.randn: _dims_draw("randn"),
    np.random.randint: _randint,
    np.random.shuffle: _legacy_shuffle,
    np.random.choice: lambda lw, a, k, n: _choice(lw, "np_random", [], "np.random.choice", a, k,
                                                  n),
    np.random.permutation: lambda lw, a, k, n: _permutation(lw, "np_random", [],
                                                            "np.random.permutation", a, k, n),
    **{getattr(np.random, n): _legacy(n) for n in [*DRAWS, *LEGACY_ONLY]
       if hasattr(np.random, n) and n not in ("integers",)},
})
