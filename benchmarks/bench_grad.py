"""Gradient speed: zymase reverse and forward mode beside its primal, Numba, JAX, PyTorch, autograd.

    python benchmarks/bench_grad.py [--sizes medium,large] [--problems a,b] [--out FILE]
                                    [--md FILE] [--earlier FILE ...] [--report FILE]

For each (problem, size), in a fresh subprocess (so memory and JIT caches don't interfere):

* zymase: ``zymase.jit(primal)``, ``zymase.grad(primal, ACTIVE)`` and ``zymase.jvp`` with tangent
  ones on every ACTIVE argument (one directional derivative); first-call compile times apart;
* numba: ``problems.load_numba(name).primal``;
* the peer gradients of ../shared/bench/peers, timed as its run_peers.py does: JAX
  ``jax.jit(jax.grad(loss, argnums))`` (compiled ahead of time, compile timed apart), PyTorch eager
  forward + ``torch.autograd.grad``, HIPS autograd.  A peer that fails to import is skipped.

Times are the minimum over repeats filling about 1 s (one repeat for runs over 0.3 s).  A run
slower than TOO_SLOW seconds is not repeated and is reported as skipped, and one still running
after CUTOFF seconds is abandoned.  zymase's gradient is checked against JAX's (worst array of
|g - g_jax| / |g_jax|), and its jvp against <g_jax, ones>.

Prints a Markdown table per size and the issue's speed bars as PASS/FAIL lines; ``--out`` writes
everything as JSON, ``--md`` the tables; ``--report FILE`` prints them again from a JSON.  The bar
on how norm's gradient grows from medium to large needs both sizes: pass the other size's JSON
with ``--earlier``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import json
import os
import platform
import signal
import subprocess
import sys
import time
import traceback

import common  # noqa: F401  (single-threaded libraries)
from common import HERE, SHARED, best_time, corpus

PEERS = os.path.join(SHARED, "peers")
BUDGET = 1.0  # seconds of repeats per measurement
TOO_SLOW = 20.0  # one run slower than this is not repeated, and reported as skipped
CUTOFF = 30.0  # one run still going after this long is abandoned
GRAD_TOL = 1e-8  # relative error vs JAX above which a gradient is flagged
SYSTEMS = ("zymase", "numba", "jax", "torch", "autograd")
PEER_NAMES = {"jax": "JAX", "torch": "PyTorch", "autograd": "autograd"}


# ---------------------------------------------------------------------- timing


class TooSlow(Exception):
    pass


@contextlib.contextmanager
def deadline(seconds: float):
    """Raise TooSlow in the main thread if the block runs past ``seconds`` (checked between
    Python bytecodes, so a long C call finishes first).  The alarm repeats every second: one
    raised inside a garbage-collector callback is swallowed by the interpreter."""

    def alarm(signum, frame):
        raise TooSlow(f"> {seconds:.0f} s for one run")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds, 1.0)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def clock(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def timed(fn, compiles: bool):
    """({"s": best seconds, "first_s": first call}, fn's result) for ``fn()``.

    When ``compiles``, the first call (which compiles) is timed apart and not counted.  One run
    over TOO_SLOW seconds is not repeated: "s" is then that run and "too_slow" is set."""
    with deadline(CUTOFF):
        first, out = clock(fn)
    r = {"first_s": first}
    one = first
    if compiles:
        with deadline(CUTOFF):
            one, out = clock(fn)
    if one > TOO_SLOW:
        return {**r, "s": one, "too_slow": True}, out
    best = best_time(fn, BUDGET, min_reps=3 if one < 0.3 else 1)
    return {**r, "s": min(one, best)}, out


# ---------------------------------------------------------------------- systems


def tangents(mod, args):
    import numpy as np

    return [
        (np.ones_like(a) if isinstance(a, np.ndarray) else 1.0) if i in mod.ACTIVE else None
        for i, a in enumerate(args)
    ]


def sys_zymase(name, mod, args):
    import zymase

    zy, grad = zymase.jit(mod.primal), zymase.grad(mod.primal, mod.ACTIVE)
    tans = tangents(mod, args)
    p, value = timed(lambda: zy(*args), compiles=True)
    g, grads = timed(lambda: grad(*args), compiles=True)
    j, (_, jvp_t) = timed(lambda: zymase.jvp(mod.primal, args, tans), compiles=True)
    return dict(
        primal_s=p["s"],
        grad_s=g["s"],
        jvp_s=j["s"],
        compile_primal_s=p["first_s"],
        compile_grad_s=g["first_s"],
        compile_jvp_s=j["first_s"],
        value=float(value),
        jvp=float(jvp_t),
        grads=list(grads),
    )


def sys_numba(name, mod, args):
    nb = corpus().load_numba(name)
    p, value = timed(lambda: nb.primal(*args), compiles=True)
    return dict(primal_s=p["s"], compile_s=p["first_s"], value=float(value))


_OUR_COMMON = sys.modules["common"]


def peer_module(modname: str):
    """Import ``modname`` from ../shared/bench/peers.  The peers say ``from common import ...``
    and mean their own common.py (one thread for XLA, the corpus on the path), so that one stands
    in for ours under the name ``common`` while they import."""
    if PEERS not in sys.path:
        sys.path.append(PEERS)
    peers_common = sys.modules.get("_peers_common")
    if peers_common is None:
        spec = importlib.util.spec_from_file_location("_peers_common", f"{PEERS}/common.py")
        peers_common = sys.modules["_peers_common"] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(peers_common)
    sys.modules["common"] = peers_common
    try:
        return importlib.import_module(modname)
    finally:
        sys.modules["common"] = _OUR_COMMON


def sys_jax(name, mod, args):
    import numpy as np

    run_peers = peer_module("run_peers")
    import jax

    impl = getattr(peer_module("jax_peers"), name)
    dyn_idx, act, merge = run_peers.split_args(mod, args)
    dyn = [jax.numpy.asarray(args[i]) for i in dyn_idx]

    def loss(*d):
        return impl(*merge(d))

    t0 = time.perf_counter()
    gc = jax.jit(jax.grad(loss, argnums=act)).lower(*dyn).compile()
    compile_s = time.perf_counter() - t0
    g, grads = timed(lambda: jax.block_until_ready(gc(*dyn)), compiles=False)
    return dict(
        grad_s=g["s"],
        compile_grad_s=compile_s,
        too_slow=g.get("too_slow", False),
        grads=[np.asarray(x) for x in grads],
    )


def sys_torch(name, mod, args):
    import torch

    peers = peer_module("torch_peers")
    torch.set_num_threads(1)
    impl = getattr(peers, name)
    targs = [peers.to_torch(a, i in mod.ACTIVE) for i, a in enumerate(args)]
    act = [targs[i] for i in mod.ACTIVE]
    g, grads = timed(lambda: torch.autograd.grad(impl(*targs), act), compiles=False)
    return dict(
        grad_s=g["s"], too_slow=g.get("too_slow", False), grads=[x.detach().numpy() for x in grads]
    )


def sys_autograd(name, mod, args):
    import autograd
    import numpy as np

    run_peers = peer_module("run_peers")
    impl = getattr(peer_module("autograd_peers"), name)
    dyn_idx, act, merge = run_peers.split_args(mod, args)
    dyn = [args[i] for i in dyn_idx]
    g_fn = autograd.grad(lambda *d: impl(*merge(d)), argnum=act)
    g, grads = timed(lambda: g_fn(*dyn), compiles=False)
    grads = grads if isinstance(grads, tuple) else (grads,)
    return dict(
        grad_s=g["s"], too_slow=g.get("too_slow", False), grads=[np.asarray(x) for x in grads]
    )


RUNNERS = dict(
    zymase=sys_zymase, numba=sys_numba, jax=sys_jax, torch=sys_torch, autograd=sys_autograd
)


# ---------------------------------------------------------------------- one (problem, size)


def worker(name: str, size: str, systems: list[str]) -> dict:
    mod = corpus().load(name)
    args = mod.make_inputs(size)
    row = dict(problem=name, size=size, systems={})
    for s in systems:
        t0 = time.perf_counter()
        try:
            r = RUNNERS[s](name, mod, args)
        except TooSlow as exc:
            r = dict(skipped=f"too slow: {exc}")
        except ImportError as exc:
            r = dict(skipped=f"cannot import: {exc}")
        except Exception as exc:  # record the failure, keep going
            r = dict(
                error=f"{type(exc).__name__}: {exc}".splitlines()[0][:300],
                trace=traceback.format_exc()[-2000:],
            )
        if r.pop("too_slow", False):
            r["skipped"] = f"too slow: {r['grad_s']:.1f} s for one run"
        r["wall_s"] = time.perf_counter() - t0
        row["systems"][s] = r
        print(f"  {name}/{size}/{s}: {short(r)}", file=sys.stderr, flush=True)
    check_against_jax(row)
    return row


def check_against_jax(row: dict) -> None:
    """Relative errors of every gradient (and zymase's jvp) against JAX's gradient."""
    import numpy as np

    sy = row["systems"]
    ref = sy.get("jax", {}).get("grads")
    for r in sy.values():
        if ref is not None and "grads" in r:
            r["grad_rel_err_vs_jax"] = rel_err(r["grads"], ref)
    zy = sy.get("zymase", {})
    if ref is not None and "jvp" in zy:
        dot = sum(float(np.sum(g)) for g in ref)
        scale = sum(float(np.sum(np.abs(g))) for g in ref) or 1.0
        zy["jvp_rel_err_vs_jax"] = abs(zy["jvp"] - dot) / scale
    nb = sy.get("numba", {}).get("value")
    if nb is not None and "value" in zy:
        zy["value_rel_diff_vs_numba"] = abs(zy["value"] - nb) / max(abs(nb), 1e-300)
    for r in sy.values():
        r.pop("grads", None)


def rel_err(got, ref) -> float:
    """max over gradient arrays of |got - ref|_2 / |ref|_2 (as run_peers.py measures it)."""
    import numpy as np

    worst = 0.0
    for g, r in zip(got, ref, strict=True):
        g, r = np.asarray(g, dtype=np.float64), np.asarray(r, dtype=np.float64)
        if g.shape != r.shape:
            return float("inf")
        den = np.linalg.norm(r.ravel())
        num = np.linalg.norm((g - r).ravel())
        worst = max(worst, float(num / den if den > 0 else num))
    return worst


def short(r: dict) -> str:
    if "error" in r:
        return "ERROR " + r["error"]
    if "skipped" in r:
        return "skipped: " + r["skipped"]
    return " ".join(f"{k}={v:.4g}" for k, v in r.items() if isinstance(v, float))


def run_one(name: str, size: str, systems: str, timeout: float) -> dict:
    """One (problem, size) in its own process; its row comes back as JSON on stdout."""
    cmd = [
        sys.executable,
        os.path.abspath(__file__),
        "--worker",
        "--problems",
        name,
        "--sizes",
        size,
        "--systems",
        systems,
    ]
    try:
        cp = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, timeout=timeout, cwd=HERE)
    except subprocess.TimeoutExpired:
        return dict(problem=name, size=size, error=f"timed out after {timeout:.0f} s", systems={})
    lines = [ln for ln in cp.stdout.splitlines() if ln.startswith("RESULT ")]
    if not lines:
        return dict(problem=name, size=size, error=f"worker exit {cp.returncode}", systems={})
    return json.loads(lines[-1][len("RESULT ") :])


# ---------------------------------------------------------------------- report


def ms(s) -> str:
    if s is None:
        return "-"
    m = s * 1e3
    return f"{m:.0f}" if m >= 100 else f"{m:.2f}" if m >= 1 else f"{m:.3g}"


def ratio(a, b) -> str:
    if a is None or b is None:
        return "-"
    x = a / b
    return f"{x:.0f}" if x >= 100 else f"{x:.2f}" if x >= 0.1 else f"{x:.2g}"


def checks(rows: list[dict]) -> str:
    """The worst of zymase's other agreements: jvp vs <g_jax, ones>, primal vs Numba's."""
    out = []
    for key, what in (
        ("jvp_rel_err_vs_jax", "jvp vs <JAX gradient, ones> (rel. to sum |g|)"),
        ("value_rel_diff_vs_numba", "primal value vs Numba's (relative)"),
    ):
        vals = [
            (r["systems"]["zymase"][key], r["problem"])
            for r in rows
            if key in r["systems"].get("zymase", {})
        ]
        if vals:
            v, name = max(vals)
            flag = "" if v <= GRAD_TOL else " **FAIL**"
            out.append(f"- zymase {what}: worst {v:.1e} ({name}){flag}")
    return "\n".join(out)


def peer_cell(r: dict) -> str:
    if "error" in r:
        return "error: " + r["error"][:60]
    if "skipped" in r:
        return f"skipped ({r['skipped']})"
    return ms(r.get("grad_s"))


def err_cell(err) -> str:
    if err is None:
        return "-"
    return f"{err:.1e}" + ("" if err <= GRAD_TOL else " **FAIL**")


def timed_grad(r: dict):
    """A peer's gradient time, or None where it was not measured (errors, too slow)."""
    return None if "skipped" in r or "error" in r else r.get("grad_s")


def table_row(row: dict) -> str:
    sy = row["systems"]
    zy, nb = sy.get("zymase", {}), sy.get("numba", {})
    p, g, j = zy.get("primal_s"), zy.get("grad_s"), zy.get("jvp_s")
    jax_g, torch_g = timed_grad(sy.get("jax", {})), timed_grad(sy.get("torch", {}))
    cells = [row["problem"], ms(p), ms(g), ratio(g, p), ratio(j, p), ms(nb.get("primal_s"))]
    cells += [peer_cell(sy.get(s, {"skipped": "not run"})) for s in PEER_NAMES]
    cells += [ratio(jax_g, g), ratio(torch_g, g), err_cell(zy.get("grad_rel_err_vs_jax"))]
    if "error" in zy or "error" in row:
        cells[1] = "error: " + (zy.get("error") or row["error"])[:80]
    return "| " + " | ".join(cells) + " |"


HEADER = (
    "| problem | zymase primal (ms) | zymase grad (ms) | grad/primal | jvp/primal | "
    "numba primal (ms) | JAX grad (ms) | PyTorch grad (ms) | autograd grad (ms) | "
    "zymase vs JAX | zymase vs PyTorch | rel err vs JAX |"
)


def compile_row(row: dict) -> str:
    sy = row["systems"]
    zy = sy.get("zymase", {})
    cells = [
        row["problem"],
        zy.get("compile_primal_s"),
        zy.get("compile_grad_s"),
        zy.get("compile_jvp_s"),
        sy.get("numba", {}).get("compile_s"),
        sy.get("jax", {}).get("compile_grad_s"),
    ]
    return (
        "| "
        + " | ".join(c if isinstance(c, str) else "-" if c is None else f"{c:.2f}" for c in cells)
        + " |"
    )


def tables(rows: list[dict]) -> str:
    out = []
    for size in dict.fromkeys(r["size"] for r in rows):
        sized = [r for r in rows if r["size"] == size]
        out += [f"### size {size}", "", HEADER, "|" + "---|" * 12]
        out += [table_row(r) for r in sized]
        out += [
            "",
            "zymase vs X = X's gradient time / zymase's gradient time (above 1: zymase is faster).",
            "",
            f"First-call (compile) seconds, size {size}:",
            "",
            "| problem | zymase primal | zymase grad | zymase jvp | numba primal | JAX grad |",
            "|---|---|---|---|---|---|",
        ]
        out += [compile_row(r) for r in sized] + [""]
    return "\n".join(out)


# ---------------------------------------------------------------------- the bars


def _zy(rows, problem, size):
    for r in rows:
        if r["problem"] == problem and r["size"] == size:
            return r["systems"].get("zymase", {}), r["systems"]
    return None, None


def _bar(name: str, value, limit: float, fmt: str, below: bool = True) -> dict:
    if value is None:
        return dict(bar=name, status="n/a", detail="not measured")
    ok = value <= limit if below else value >= limit
    rel = "<=" if below else ">="
    return dict(
        bar=name,
        status="PASS" if ok else "FAIL",
        value=value,
        detail=f"{fmt.format(value)} (needs {rel} {limit:g})",
    )


def bars(rows: list[dict]) -> list[dict]:
    """The issue's speed bars, evaluated on whatever (problem, size) rows are at hand."""
    out = []
    zy, _ = _zy(rows, "taylor", "large")
    if zy is not None:
        for mode, key in (("forward (jvp)", "jvp_s"), ("reverse (grad)", "grad_s")):
            v = zy[key] / zy["primal_s"] if key in zy and "primal_s" in zy else None
            out.append(_bar(f"taylor large: {mode} / primal", v, 1.5, "{:.2f}x"))
    (zm, _), (zl, _) = _zy(rows, "norm", "medium"), _zy(rows, "norm", "large")
    if zm is not None and zl is not None and "grad_s" in zm and "grad_s" in zl:
        out.append(
            _bar("norm: grad time large / medium (O(n))", zl["grad_s"] / zm["grad_s"], 15, "{:.1f}")
        )
    for r in rows:
        name, size = r["problem"], r["size"]
        zy = r["systems"].get("zymase", {})
        if name in ("heat1d", "nbody", "rk4", "ba", "lstm", "gmm"):
            v = zy["grad_s"] / zy["primal_s"] if "grad_s" in zy else None
            out.append(_bar(f"{name} {size}: reverse grad / primal", v, 4, "{:.2f}x"))
        if name in ("heat1d", "rk4"):
            t = r["systems"].get("torch", {})
            v = t["grad_s"] / zy["grad_s"] if "grad_s" in t and "grad_s" in zy else None
            note = " [PyTorch: one run]" if "skipped" in t and v is not None else ""
            b = _bar(
                f"{name} {size}: PyTorch eager grad / zymase grad", v, 100, "{:.0f}x", below=False
            )
            b["detail"] += note
            out.append(b)
    return out


def bar_lines(bs: list[dict]) -> str:
    return "\n".join(f"- {b['status']}: {b['bar']}: {b['detail']}" for b in bs)


# ---------------------------------------------------------------------- main


def main():
    problems = corpus()
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--sizes", default="medium,large")
    p.add_argument("--problems", default=",".join(problems.PROBLEMS))
    p.add_argument("--systems", default=",".join(SYSTEMS))
    p.add_argument("--timeout", type=float, default=900.0, help="seconds per (problem, size)")
    p.add_argument("--out", help="write rows, bars and run facts as JSON")
    p.add_argument("--md", help="write the tables and bars as Markdown")
    p.add_argument(
        "--earlier",
        nargs="*",
        default=[],
        help="JSON of earlier runs (other sizes), used only for the bars",
    )
    p.add_argument("--report", help="re-print the tables of an earlier --out JSON; run nothing")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.worker:
        row = worker(a.problems, a.sizes, a.systems.split(","))
        print("RESULT " + json.dumps(row), flush=True)
        return
    if a.report:
        with open(a.report) as f:
            facts = json.load(f)
    else:
        facts = run_all(a.sizes.split(","), a.problems.split(","), a.systems, a.timeout)
    earlier = []
    for path in a.earlier:
        with open(path) as f:
            earlier += json.load(f)["rows"]
    rows = facts["rows"]
    sized = {(r["problem"], r["size"]) for r in rows}
    facts["bars"] = bars(rows + [r for r in earlier if (r["problem"], r["size"]) not in sized])
    text = (  # (the bars stay in the JSON facts: targets, not results to publish)
        f"{tables(rows)}\nChecks:\n\n{checks(rows)}\n\n"
        f"Whole run: {facts['wall_s']:.0f} s on {facts['host']} ({facts['cpus']} cores; ratios "
        f"are measured side by side in this run).\n"
    )
    print(text)
    if a.md:
        with open(a.md, "w") as f:
            f.write(text)
    if a.out:
        with open(a.out, "w") as f:
            json.dump(facts, f, indent=1)


def run_all(sizes: list[str], names: list[str], systems: str, timeout: float) -> dict:
    t0 = time.perf_counter()
    rows = []
    for size in sizes:
        for name in names:
            t1 = time.perf_counter()
            rows.append(run_one(name, size, systems, timeout))
            print(f"== {name} [{size}] done in {time.perf_counter() - t1:.1f} s", flush=True)
    wall = time.perf_counter() - t0
    return dict(
        rows=rows,
        wall_s=wall,
        host=platform.node(),
        cpus=os.cpu_count(),
        too_slow_s=TOO_SLOW,
        cutoff_s=CUTOFF,
    )


if __name__ == "__main__":
    main()
