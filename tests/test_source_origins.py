"""Functions defined outside a file compile wherever their text can be recovered (``python
-c``, ``exec`` of text registered in ``linecache``, an interactive prompt with ``readline``
history), and otherwise fail with the documented error that says what to do."""

import linecache
import os
import select
import subprocess
import sys
import time

import pytest

import zymase

PROGRAM = """\
import numpy as np, zymase
@zymase.jit
def f(x):
    return (x * x).sum() + 1.0
g = lambda y: y * 3.0
print("RESULT", f(np.arange(3.0)), zymase.grad(f)(np.arange(3.0)).tolist(), zymase.jit(g)(2.0))
"""


def _run(args, **kw):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=120,
                          **kw)


def test_python_dash_c():
    out = _run(["-c", PROGRAM])
    assert out.returncode == 0, out.stderr
    assert "RESULT 6.0 [0.0, 2.0, 4.0] 6.0" in out.stdout


def test_python_dash_c_errors_show_the_line():
    out = _run(["-c", "import zymase\ndef f(x):\n    return f'{x}'\nzymase.jit(f)(1.0)\n"])
    assert out.returncode == 1
    assert "<string>:3:12: f-strings are not supported" in out.stderr
    assert "    return f'{x}'" in out.stderr


def test_exec_of_text_registered_in_linecache():
    text = "def h(x):\n    return x ** 3\n"
    name = "<zymase-test-generated>"
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    try:
        ns = {}
        exec(compile(text, name, "exec"), ns)
        assert zymase.jit(ns["h"])(2.0) == 8.0 and zymase.grad(ns["h"])(2.0) == 12.0
    finally:
        linecache.cache.pop(name, None)


def test_exec_of_a_plain_string_says_what_to_do():
    ns = {}
    exec("def k(x):\n    return x + 1.0\n", ns)
    with pytest.raises(zymase.UnsupportedError) as e:
        zymase.jit(ns["k"])(1.0)
    msg = str(e.value)
    assert "cannot read the source of k()" in msg and "linecache.cache[name]" in msg
    assert "test_source_origins.py:" in msg


def test_a_program_piped_to_python_says_what_to_do():
    out = _run(["-"], input=PROGRAM)
    assert out.returncode == 1
    assert "cannot read the source of f()" in out.stderr and "<stdin>" in out.stderr
    assert "define it in a file" in out.stderr


def test_scripted_prompt_without_a_terminal_says_what_to_do():
    """``python -i`` fed through a pipe: the prompt keeps no history to read."""
    out = _run(["-i", "-q"], input="import zymase\ndef f(x):\n    return x * 2.0\n\n"
               "zymase.jit(f)(1.0)\n")
    assert "cannot read the source of f()" in out.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs a pseudo-terminal")
def test_interactive_prompt_with_readline_history():
    pytest.importorskip("readline", reason="the prompt's history needs readline")
    import pty

    lines = ["import zymase", "def f(x):", "    return x * x + 1.0", "",
             "print('R', zymase.jit(f)(3.0), zymase.grad(f)(3.0))",
             "g = lambda y: y * 2.0", "print('L', zymase.jit(g)(4.0))", "exit()"]
    leader, follower = pty.openpty()
    p = subprocess.Popen([sys.executable, "-i", "-q"], stdin=follower, stdout=follower,
                         stderr=follower, env={**os.environ, "TERM": "dumb"})
    os.close(follower)
    out = b""

    def drain(seconds):
        nonlocal out
        end = time.time() + seconds
        while time.time() < end:
            ready, _, _ = select.select([leader], [], [], 0.1)
            if ready:
                try:
                    out += os.read(leader, 65536)
                except OSError:
                    return

    try:
        for line in lines:
            drain(0.5)
            os.write(leader, (line + "\n").encode())
        deadline = time.time() + 60
        while p.poll() is None and time.time() < deadline:
            drain(0.5)
    finally:
        p.kill()
        os.close(leader)
    text = out.decode(errors="replace")
    assert "R 10.0 6.0" in text and "L 8.0" in text, text[-2000:]
