"""The table of what compiled code supports, by module, generated from the registry
(``registry.CALLS``, ``METHODS``, ``STRUCT_METHODS``, ``LAZY``), and the list of common NumPy
functions it does not, each with the error a user sees (found by compiling a call to it).

``python -m zymase.frontend.numpy.support > docs/numpy.md`` writes the page; a test checks that
the page in the repository is the one this generates.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
import textwrap

import numpy as np

from .registry import CALLS, LAZY_NAMES, METHODS, STRUCT_METHODS

MODULES = [  # (heading, how a name is shown)
    ("numpy", "np.{}"), ("numpy.linalg", "np.linalg.{}"), ("numpy.fft", "np.fft.{}"),
    ("numpy.random", "np.random.{}"), ("scipy.special", "scipy.special.{}"), ("math", "math.{}"),
    ("builtins", "{}"),
]

# Common NumPy functions that compiled code does not support: (call as written in a program,
# arguments).  The page shows the error each gives.
UNSUPPORTED = [
    ("np.linalg.eig(a)", "a"), ("np.linalg.svd(a + 1j * a)", "a"),
    ("np.linalg.cholesky(a + 1j * a)", "a"),
    ("np.polyfit(v, v, 1)", "v"), ("np.partition(v, 1)", "v"), ("np.lexsort((v, v))", "v"),
    ("np.vectorize(abs)(v)", "v"), ("np.apply_along_axis(np.sum, 0, a)", "a"),
    ("np.fft.hfft(v)", "v"),
    ("np.random.default_rng(0).vonmises(0.0, 1.0)", "v"), ("np.float16(v[0])", "v"),
    ("f'{v[0]}'", "v"),
]


UFUNC_METHODS = ("Ufunc methods: `outer` of the binary ufuncs (`np.add.outer`, `np.less.outer`, "
                 "...), `reduce` of `add`, `multiply`, `maximum`, `minimum`, `logical_and`, "
                 "`logical_or`, `accumulate` of `add` and `multiply`, `at` (`np.add.at(a, idx, "
                 "v)`: a repeated index adds each time; `multiply`, `maximum`, `minimum` too).")


def _name(obj) -> tuple[str, str] | None:
    """(module heading, shown name) of a registered object, or None for internal ones."""
    owner = getattr(obj, "__self__", None)
    if isinstance(owner, np.ufunc):  # np.add.outer, ...: described once (UFUNC_METHODS)
        return None
    module = getattr(obj, "__module__", None) or ""
    name = getattr(obj, "__name__", None)
    if name is None or module.startswith("zymase"):
        return None
    if module == "numpy.random.mtrand" or isinstance(owner, np.random.RandomState):
        module = "numpy.random"
    if module.startswith("scipy.special"):
        module = "scipy.special"
    for heading, form in MODULES:
        if module == heading or (heading == "numpy" and module.startswith("numpy")
                                 and not any(module == h for h, _ in MODULES[1:4])):
            return heading, form.format(name)
    return None


def supported() -> dict[str, list[str]]:
    """Module heading -> sorted names of what compiled code supports."""
    out: dict[str, set] = {h: set() for h, _ in MODULES}
    for obj in CALLS:
        got = _name(obj)
        if got is not None and got[0] not in LAZY_NAMES:
            out[got[0]].add(got[1])
    for module, names in LAZY_NAMES.items():  # (registered by name: the same list either way)
        form = dict(MODULES).get(module, module + ".{}")
        out.setdefault(module, set()).update(form.format(n) for n in names)
    return {h: sorted(v) for h, v in out.items() if v}


def _errors() -> list[tuple[str, str]]:
    """(call, the first line of the error compiling it gives) for ``UNSUPPORTED``."""
    import zymase  # lazy: the page generator runs the compiler; the frontend must not import it

    lines = ["import numpy as np", ""]
    for k, (call, arg) in enumerate(UNSUPPORTED):
        lines += [f"def f{k}({arg}):", f"    return {call}", ""]
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "unsupported_calls.py")
        with open(path, "w") as fh:
            fh.write("\n".join(lines))
        spec = importlib.util.spec_from_file_location("unsupported_calls", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        out = []
        for k, (call, arg) in enumerate(UNSUPPORTED):
            x = np.eye(3) if arg == "a" else np.arange(1.0, 4.0)
            try:
                zymase.jit(getattr(mod, f"f{k}"))(x)
                msg = "(compiles: remove it from UNSUPPORTED)"
            except Exception as e:  # noqa: BLE001 (the message is what the page shows)
                text = str(e).splitlines()[0]
                msg = f"{type(e).__name__}: " + text.split(": ", 1)[-1]
            out.append((call, msg))
    return out


def page() -> str:
    """The Markdown page ``docs/numpy.md``."""
    parts = ["# NumPy in compiled code", "",
             "Generated from zymase's registry (`python -m zymase.frontend.numpy.support`): every "
             "function and method below compiles, with NumPy's results (values, shapes, dtypes) "
             "and derivatives in forward and reverse mode where it is differentiable.  "
             "`scipy.special` functions are found once your program imports `scipy.special`.", ""]
    for heading, names in supported().items():
        parts += [f"## {heading} ({len(names)})", "", textwrap.fill(", ".join(
            f"`{n}`" for n in names), 100), ""]
        if heading == "numpy":
            parts += [textwrap.fill(UFUNC_METHODS, 100), "", "Index objects: `np.newaxis`, "
                      "`np.mgrid[...]`, `np.ogrid[...]`.  Dtypes: bool, int8/16/32/64, "
                      "uint8/16/32/64, float32/64, complex64/128.", ""]
    parts += [f"## ndarray methods ({len(METHODS)})", "",
              textwrap.fill(", ".join(f"`a.{n}`" for n in sorted(METHODS)), 100), ""]
    for t in STRUCT_METHODS:
        parts += [f"## {t.__module__}.{t.__name__}", "",
                  "Made in compiled code (`np.random.default_rng(seed)`); its methods: see "
                  "`zymase/frontend/numpy/random.py` (`random`, `standard_normal`, `normal`, "
                  "`uniform`, `integers`, `exponential`, `poisson`, `binomial`, `gamma`, `beta`, "
                  "`choice`, `permutation`, `shuffle`, ...).", ""]
    parts += ["## Not supported", "",
              "Common functions that compiled code refuses, and the error you see (with your "
              "file, line and column):", "", "| call | error |", "|---|---|"]
    for call, msg in _errors():
        parts.append(f"| `{call}` | {msg.replace('|', '/')} |")
    return "\n".join(parts) + "\n"


if __name__ == "__main__":
    sys.stdout.write(page())
