"""The README's Python examples run as written (each block in its own module file, since zymase
reads source from files)."""

import importlib.util
import os
import re

import pytest

README = os.path.join(os.path.dirname(__file__), "..", "README.md")


def blocks():
    text = open(README).read()
    return re.findall(r"```python\n(.*?)```", text, re.S)


@pytest.mark.parametrize("k", range(len(blocks())))
def test_readme_block_runs(k, tmp_path, capsys):
    code = blocks()[k]
    if "..." in code.replace("...\n", ""):  # illustrative fragments, not programs
        pytest.skip("fragment")
    for name in ("torch", "jax"):  # optional dependencies (the interop examples)
        if re.search(rf"^import {name}\b", code, re.M):
            pytest.importorskip(name, reason=f"{name} is not installed")
    path = tmp_path / f"readme_block_{k}.py"
    prelude = "import math\nimport numpy as np\nimport zymase\n"
    if "Duplicated(" in code:
        prelude += "from zymase import *\n"
    path.write_text(prelude + code)
    spec = importlib.util.spec_from_file_location(f"readme_block_{k}", path)
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
