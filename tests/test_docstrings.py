"""Every public name of ``zymase`` keeps a complete docstring (Google style, as rendered by
mkdocstrings): a summary, an ``Args:`` section naming every parameter of its signature, type
hints, and an ``Examples:`` section whose ``>>>`` lines run here as doctests and print what they
claim.  (``Examples:``, plural: griffe's Google parser reads only that title as an examples
section, rendering its ``>>>`` lines as code; ``Example:`` would become an admonition.)"""

from __future__ import annotations

import doctest
import inspect
import re

import pytest

import zymase

PUBLIC = [
    "jit", "explain", "JitFunction", "grad", "value_and_grad", "jvp", "vjp", "jacfwd",
    "jacobian", "jacrev", "hessian", "hvp", "vmap", "tape_report", "autodiff", "Active", "Const",
    "Duplicated", "DuplicatedNoNeed", "BatchDuplicated", "Forward", "ForwardWithPrimal",
    "Reverse", "ReverseWithPrimal", "checkpoint", "custom_jvp", "custom_vjp", "prange",
    "to_jax", "to_torch", "release_memory", "set_tape_cache", "get_num_threads",
    "set_num_threads",
]
NEEDS = {"to_jax": "jax", "to_torch": "torch"}  # examples that import an optional package
SECTION = re.compile(r"^\s*(Args|Arguments|Returns|Yields|Raises|Example|Examples|Note|Notes|"
                     r"Attributes|See Also|Warning|Warnings):\s*$")
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _documented(name: str):
    """What carries the docstring of ``zymase.<name>``: the object, or for the mode constants
    (``zymase.Forward``, ...: instances) their class."""
    obj = getattr(zymase, name)
    return obj if callable(obj) else type(obj)


def _section(doc: str, title: str) -> str:
    """The lines of one section of a Google-style docstring (empty when it has none)."""
    lines = inspect.cleandoc(doc).splitlines()
    out, inside = [], False
    for line in lines:
        m = SECTION.match(line)
        if m:
            inside = m.group(1) == title
            continue
        if inside:
            out.append(line)
    return "\n".join(out)


def _parameters(obj) -> list[str]:
    """The parameter names to document, as written in ``Args:`` (``*args``, ``**options``)."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return []
    names = []
    for p in sig.parameters.values():
        if p.name in ("self", "cls"):
            continue
        star = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "")
        names.append(star + p.name)
    return names


@pytest.mark.parametrize("name", PUBLIC)
def test_docstring_is_complete(name):
    obj = _documented(name)
    doc = inspect.getdoc(obj)
    assert doc, f"zymase.{name} has no docstring"
    summary = doc.splitlines()[0]
    assert summary.strip() and not summary.startswith(">>>"), f"zymase.{name}: no summary line"
    assert ">>>" in _section(doc, "Examples"), f"zymase.{name}: no Examples: section with >>>"
    args = _section(doc, "Args")
    for param in _parameters(obj):
        entry = re.compile(rf"^\s+{re.escape(param)}\s*(\(.*\))?:", re.M)
        assert entry.search(args), f"zymase.{name}: parameter {param!r} is not in Args:"


def _has_return_annotation(obj) -> bool:
    if inspect.isclass(obj):
        return True  # (a class's call returns an instance of it)
    return inspect.signature(obj).return_annotation is not inspect.Signature.empty


@pytest.mark.parametrize("name", PUBLIC)
def test_signature_is_annotated(name):
    obj = _documented(name)
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return
    missing = [p.name for p in sig.parameters.values()
               if p.name not in ("self", "cls") and p.annotation is inspect.Parameter.empty]
    assert missing == [], f"zymase.{name}: parameters without a type hint: {missing}"
    assert _has_return_annotation(obj), f"zymase.{name}: no return type hint"


def _run_examples(names) -> doctest.TestResults:
    """The doctests of these public objects (and of their methods), each in fresh globals."""
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    seen: set[int] = set()
    for name in names:
        obj = _documented(name)
        if id(obj) in seen:  # (jacobian is jacrev)
            continue
        seen.add(id(obj))
        for test in finder.find(obj, f"zymase.{name}", module=inspect.getmodule(obj), globs={}):
            runner.run(test)
    return runner.summarize(verbose=False)


def test_examples_run():
    results = _run_examples([n for n in PUBLIC if n not in NEEDS])
    assert results.attempted > 0
    assert results.failed == 0


@pytest.mark.parametrize("name", sorted(NEEDS))
def test_interop_examples_run(name):
    pytest.importorskip(NEEDS[name])
    results = _run_examples([name])
    assert results.attempted > 0
    assert results.failed == 0
