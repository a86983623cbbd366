"""The package's shape, checked on its source: no import circles inside ``zymase/``, imports
inside functions only where they carry a reason, and ops named by class, never by a text-name
string, outside ``ir/ops/`` (where the names are defined) and ``autodiff/rules/`` (rule tables).
"""

from __future__ import annotations

import ast
import pathlib
import re

import zymase
from zymase.ir.core import OPS

ROOT = pathlib.Path(zymase.__file__).parent
LAZY_REASON = re.compile(r"#\s*lazy:\s*\S")  # "# lazy: <why this import waits for a call>"


def _modules() -> dict[str, pathlib.Path]:
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _resolve(module: str, is_package: bool, node: ast.ImportFrom | ast.Import, known) -> list:
    """The zymase modules an import statement loads (a package's ``__init__`` only when the
    package itself is what is imported)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name in known]
    base = module if is_package else module.rsplit(".", 1)[0]
    if node.level:
        for _ in range(node.level - 1):
            base = base.rsplit(".", 1)[0]
        target = f"{base}.{node.module}" if node.module else base
    else:
        target = node.module or ""
    if not target.startswith("zymase"):
        return []
    out = []
    for a in node.names:
        sub = f"{target}.{a.name}"
        if sub in known:
            out.append(sub)
        elif target in known:
            out.append(target)
    return out


def _imports(module: str, path: pathlib.Path, known):
    """(target module, line, inside a function) for each zymase import of ``module``."""
    tree = ast.parse(path.read_text())
    is_package = path.name == "__init__.py"
    funcs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    inner = {id(n) for f in funcs for n in ast.walk(f) if n is not f}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for target in _resolve(module, is_package, node, known):
                if target != module:
                    yield target, node.lineno, id(node) in inner


def _graph():
    mods = _modules()
    return mods, {m: list(_imports(m, p, mods)) for m, p in mods.items()}


def _cycles(graph) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w, _, _ in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_no_import_circles():
    _, graph = _graph()
    assert _cycles(graph) == []


def test_imports_inside_functions_say_why():
    """An import of a zymase module inside a function hides an import circle or a slow import;
    each one that remains says why on its line (``# lazy: ...``)."""
    mods, graph = _graph()
    bad = []
    for m, edges in graph.items():
        lines = mods[m].read_text().splitlines()
        for target, line, inner in edges:
            if inner and not LAZY_REASON.search(lines[line - 1]):
                bad.append(f"{mods[m].relative_to(ROOT.parent)}:{line} imports {target}")
    assert bad == []


def _op_name_literals(path: pathlib.Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text())
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in OPS]


def test_ops_are_named_by_class():
    """Outside ``ir/ops/`` and ``autodiff/rules/``, code names an op by its class
    (``isinstance(op, For)``, ``b.op(MulF, x, y)``) or asks it for a trait; a text name in a
    string would go stale silently when an op is renamed."""
    allowed = (ROOT / "ir" / "ops", ROOT / "autodiff" / "rules")
    found = [f"{path.relative_to(ROOT.parent)}:{line}: {name!r}"
             for path in sorted(ROOT.rglob("*.py"))
             if not any(path.is_relative_to(a) for a in allowed)
             for line, name in _op_name_literals(path)]
    assert found == []


def test_the_checks_can_fail(tmp_path):
    """The detectors above find what they look for."""
    graph = {"a": [("b", 1, False)], "b": [("c", 1, True)], "c": [("a", 1, False)], "d": []}
    assert _cycles(graph) == [["a", "b", "c"]]
    f = tmp_path / "x.py"
    f.write_text('def g(op):\n    """scf.for loops"""\n    return op.name == "scf.for"\n')
    assert _op_name_literals(f) == [(3, "scf.for")]
