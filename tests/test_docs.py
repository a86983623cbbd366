"""The documentation: the site builds with ``mkdocs build --strict``, every Python example in
``docs/*.md`` and ``README.md`` runs as written, every error class is documented, and every public
name has an API entry.

A page's ```` ```python ```` blocks run in order in one module namespace (a later block may use
what an earlier one defined), each block from a file of its own, since zymase reads source from
files.  A block preceded by ``<!-- fragment -->`` is an illustration and is not run.  A block that
imports torch, jax or scipy is skipped, with the rest of its page, when that package is missing."""

import ast
import importlib.util
import os
import re
import subprocess
import sys
import types

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), ".."))
DOCS = os.path.join(ROOT, "docs")
README = os.path.join(ROOT, "README.md")

BLOCK = re.compile(r"(<!--\s*fragment\s*-->[ \t]*\n)?```python\n(.*?)```", re.S)
OPTIONAL = re.compile(r"^\s*(?:import|from) (torch|jax|scipy)\b", re.M)


def pages() -> list:
    names = sorted(n for n in os.listdir(DOCS) if n.endswith(".md"))
    return [os.path.join(DOCS, n) for n in names] + [README]


def blocks(path: str) -> list:
    """The runnable Python blocks of a page, in order (fragments left out)."""
    with open(path) as f:
        text = f.read()
    return [code for fragment, code in BLOCK.findall(text) if not fragment]


def page_id(path: str) -> str:
    return os.path.relpath(path, ROOT)


RUNNABLE = [p for p in pages() if blocks(p)]


@pytest.mark.parametrize("path", RUNNABLE, ids=[page_id(p) for p in RUNNABLE])
def test_examples_run(path, tmp_path):
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0].lower())
    name = f"docs_{stem}"
    module = types.ModuleType(name)
    module.__file__ = str(tmp_path / f"{stem}.py")
    sys.modules[name] = module  # (dataclasses look their module up)
    x64 = jax_x64()
    try:
        for k, code in enumerate(blocks(path)):
            for package in sorted(set(OPTIONAL.findall(code))):
                pytest.importorskip(package, reason=f"{package} is not installed")
            file = tmp_path / f"{stem}_block{k}.py"
            file.write_text(code)
            exec(compile(code, str(file), "exec"), module.__dict__)
    finally:
        del sys.modules[name]
        if x64 is None:  # (JAX was imported by the page: its default)
            x64 = os.environ.get("JAX_ENABLE_X64", "").lower() in ("1", "true", "yes", "on")
        if jax_x64() not in (None, x64):  # a page may enable float64 in JAX: not for later tests
            sys.modules["jax"].config.update("jax_enable_x64", x64)


def jax_x64():
    jax = sys.modules.get("jax")
    return None if jax is None else bool(jax.config.jax_enable_x64)


def test_docs_build_strict(tmp_path):
    pytest.importorskip("mkdocs", reason="mkdocs is not installed (pip install -e '.[docs]')")
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site"),
         "--config-file", os.path.join(ROOT, "mkdocs.yml")],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert os.path.exists(tmp_path / "site" / "api" / "index.html")


def error_classes() -> list:
    spec = importlib.util.find_spec("zymase.errors")
    import zymase.errors as errors

    with open(spec.origin) as f:
        tree = ast.parse(f.read())
    defined = [n.name for n in tree.body if isinstance(n, ast.ClassDef)]
    return [n for n in defined if issubclass(getattr(errors, n), errors.ZymaseError)]


def test_every_error_class_is_documented():
    with open(os.path.join(DOCS, "errors.md")) as f:
        text = f.read()
    missing = [n for n in error_classes() if not re.search(rf"\b{n}\b", text)]
    assert not missing, f"docs/errors.md does not name {missing}"


def public_names() -> list:
    with open(os.path.join(ROOT, "zymase", "__init__.py")) as f:
        tree = ast.parse(f.read())
    return sorted(a.asname or a.name for n in tree.body if isinstance(n, ast.ImportFrom)
                  for a in n.names if not (a.asname or a.name).startswith("_"))


def test_every_public_name_has_an_api_entry():
    with open(os.path.join(DOCS, "api.md")) as f:
        text = f.read()
    entries = set(re.findall(r"^::: zymase(?:\.\w+)*\.(\w+)\s*$", text, re.M))
    missing = [n for n in public_names() + error_classes() if n not in entries]
    assert not missing, f"docs/api.md has no `::: zymase...` entry for {missing}"


def test_readme_is_short_and_links_resolve():
    with open(README) as f:
        text = f.read()
    n = len(text.splitlines())
    assert n <= 150, f"README.md has {n} lines; move detail into docs/"
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        if "://" not in target:
            assert os.path.exists(os.path.join(ROOT, target)), f"README links to {target}"


def test_ci_runs_the_readme_commands():
    with open(README) as f:
        setup = re.search(r"```bash\n(.*?)```", f.read(), re.S).group(1)
    commands = [line.split("#")[0].strip() for line in setup.splitlines()]
    assert "pip install -e '.[test]'" in commands and "python -m pytest" in commands
    assert "about 13-16 minutes on 2 cores" in setup
    with open(os.path.join(ROOT, ".ci", "run")) as f:
        ci = [line.strip() for line in f]
    assert ci[-1] == "python -m pytest"
    assert any(line.startswith("python -m pip install") and line.endswith("-e '.[test]'")
               for line in ci)
