"""The ``zymase`` command.

    zymase demo          compile the shipped examples, check them against CPython, time both
    zymase explain FILE:FUNCTION ARGS...   (see ``zymase explain --help``)
"""

from __future__ import annotations

import argparse
import sys
import time


def _best(fn, args, budget=0.3, max_reps=1000):
    best, total, reps = float("inf"), 0.0, 0
    while total < budget and reps < max_reps:
        t0 = time.perf_counter()
        fn(*args)
        dt = time.perf_counter() - t0
        best, total, reps = min(best, dt), total + dt, reps + 1
    return best


def demo(argv=None) -> int:
    import numpy as np

    import zymase
    from zymase.demo.examples import EXAMPLES

    print("zymase demo: compiling plain Python examples and checking them against CPython\n")
    print(f"{'example':18s} {'compile':>9s} {'zymase':>11s} {'CPython':>11s} {'speedup':>8s}  check")
    failures = 0
    for name, fn, make in EXAMPLES:
        args = make()
        compiled = zymase.jit(fn)
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
    print(f"\n{len(EXAMPLES) - failures} passed, {failures} failed")
    return 1 if failures else 0


def _copies(args):
    import numpy as np
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="zymase", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("demo", help="compile and run the shipped examples")
    args = parser.parse_args(argv)
    if args.command == "demo":
        return demo()
    parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
