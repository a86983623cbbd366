"""The ``zymase`` command.

    zymase demo          compile the shipped examples, check them against CPython, time both;
                         then their gradients, checked against central differences
    zymase explain FILE:FUNCTION ARG...   print the IR after each stage for these arguments;
                         each ARG is a Python expression (``np`` is NumPy), e.g.
                         zymase explain model.py:loss "np.ones(4)" 3 --stage frontend
                         (--transform grad --argnums 0: the gradient's stages)
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time

import numpy as np

from .api.grad import grad
from .api.jit import EXPLAINED, explain, jit
from .demo.examples import EXAMPLES, GRADIENTS
from .errors import ZymaseError
from .version import __version__


def _best(fn, args, budget=0.3, max_reps=1000):
    best, total, reps = float("inf"), 0.0, 0
    while total < budget and reps < max_reps:
        t0 = time.perf_counter()
        fn(*args)
        dt = time.perf_counter() - t0
        best, total, reps = min(best, dt), total + dt, reps + 1
    return best


def demo(argv=None) -> int:
    print("zymase demo: compiling plain Python examples and checking them against CPython\n")
    print(f"{'example':18s} {'compile':>9s} {'zymase':>11s} {'CPython':>11s} "
          f"{'speedup':>8s}  check")
    failures = 0
    jitted = {}
    for name, fn, make in EXAMPLES:
        args = make()
        compiled = jitted[fn] = jit(fn)
        t0 = time.perf_counter()
        got = compiled(*_copies(args))
        compile_s = time.perf_counter() - t0
        want = fn(*_copies(args))
        ok = bool(np.allclose(got, want, rtol=1e-12, atol=0))
        failures += not ok
        tz = _best(compiled, _copies(args))
        tp = _best(fn, _copies(args), budget=0.5, max_reps=5)
        print(f"{name:18s} {compile_s * 1e3:7.0f}ms {tz * 1e6:9.1f}us {tp * 1e6:9.0f}us "
              f"{tp / tz:7.0f}x  {'ok' if ok else 'MISMATCH'}")
    failures += _demo_gradients(jitted)
    total = len(EXAMPLES) + len(GRADIENTS)
    print(f"\n{total - failures} passed, {failures} failed")
    return 1 if failures else 0


def _demo_gradients(jitted: dict) -> int:
    """Reverse-mode gradients of the examples, checked against central differences of CPython
    along a random direction; timed against the compiled primal."""
    print("\nreverse-mode gradients, checked against central differences of CPython\n")
    print(f"{'gradient':18s} {'compile':>9s} {'grad':>11s} {'grad/primal':>12s}  check")
    failures = 0
    rng = np.random.default_rng(1)
    for name, fn, make, argnums, options in GRADIENTS:
        args = make()
        nums = (argnums,) if isinstance(argnums, int) else argnums
        grad_fn = grad(fn, argnums, **options)
        t0 = time.perf_counter()
        g = grad_fn(*_copies(args))
        compile_s = time.perf_counter() - t0
        gs = (g,) if isinstance(argnums, int) else g
        dirs = [rng.standard_normal(np.shape(args[k])) for k in nums]
        along = sum(float(np.sum(gk * d)) for gk, d in zip(gs, dirs))
        h = 1e-6

        def shifted(s, args=args, nums=nums, dirs=dirs):
            out = list(_copies(args))
            for k, d in zip(nums, dirs):
                out[k] = args[k] + s * d
            return tuple(out)

        fd = (fn(*shifted(h)) - fn(*shifted(-h))) / (2 * h)
        ok = bool(abs(along - fd) <= 1e-5 * (abs(fd) + 1e-3))
        failures += not ok
        tg = _best(grad_fn, _copies(args))
        tp = _best(jitted.get(fn) or jit(fn), _copies(args))
        print(f"{name:18s} {compile_s * 1e3:7.0f}ms {tg * 1e6:9.1f}us {tg / tp:11.2f}x  "
              f"{'ok' if ok else f'MISMATCH ({along!r} vs {fd!r})'}")
    return failures


def _copies(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def explain_command(target: str, arg_exprs, stages, llvm: bool, transform: str = "jit",
                    argnums=(0,), backend=None) -> int:
    """``zymase explain FILE:FUNCTION ARG...``: load FILE, evaluate each ARG, print the IR."""
    path, sep, name = target.rpartition(":")
    if not sep or not path or not name:
        print(f"zymase explain: expected FILE:FUNCTION, got {target!r}", file=sys.stderr)
        return 2
    if not os.path.isfile(path):
        print(f"zymase explain: no such file: {path}", file=sys.stderr)
        return 2
    spec = importlib.util.spec_from_file_location(
        os.path.splitext(os.path.basename(path))[0], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fn = getattr(module, name, None)
    if fn is None:
        print(f"zymase explain: {path} defines no {name!r}", file=sys.stderr)
        return 2
    values = []
    for text in arg_exprs:
        try:
            values.append(eval(text, {"np": np, "numpy": np}))  # noqa: S307 - user's own CLI input
        except Exception as e:  # noqa: BLE001 - report any bad expression the same way
            print(f"zymase explain: cannot evaluate argument {text!r}: {e}", file=sys.stderr)
            return 2
    try:
        explain(fn, *values, stages=stages, llvm=llvm, transform=transform, argnums=argnums,
                backend=backend)
    except ZymaseError as e:
        print(str(e), file=sys.stderr)
        return 1
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="zymase", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"zymase {__version__}")
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("demo", help="compile and run the shipped examples")
    ex = sub.add_parser("explain", help="print a function's IR after each compiler stage")
    ex.add_argument("target", metavar="FILE:FUNCTION")
    ex.add_argument("args", nargs="*", metavar="ARG",
                    help="argument expressions, evaluated with numpy imported as np")
    ex.add_argument("--stage", action="append", dest="stages",
                    help="only this stage (frontend, a pass name, lifetime); repeatable")
    ex.add_argument("--llvm", action="store_true", help="also print the LLVM IR")
    ex.add_argument("--transform", default="jit", choices=sorted(EXPLAINED),
                    help="what to compile: the function (jit) or a derivative of it")
    ex.add_argument("--argnums", default="0",
                    help="the arguments a derivative is taken with respect to, e.g. 0,1")
    ex.add_argument("--backend", default=None,
                    help="compile for this backend (xla: also print how each loop was "
                         "lowered and the StableHLO)")
    args = parser.parse_args(argv)
    if args.command == "demo":
        return demo()
    if args.command == "explain":
        return explain_command(args.target, args.args, args.stages, args.llvm, args.transform,
                               tuple(int(k) for k in args.argnums.split(",")), args.backend)
    parser.print_help(sys.stderr)  # (no command: a usage error, as argparse's own exit 2)
    return 2


if __name__ == "__main__":
    sys.exit(main())
