"""The disk cache (``jit(cache=True)``) cannot be fooled: a foreign entry, an entry of another
signature and damaged entries (bits flipped anywhere, the machine code included; truncated) are
misses that compile again, never a wrong answer or a crash; the directory is private; a cache
that cannot be made, read or written (a full disk, no permission) leaves calls working, with at
most one warning; processes writing one entry at once leave a valid one.  Each case runs in a
fresh process."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest

TESTS = os.path.dirname(__file__)
RUN = """
import sys, json
sys.path.insert(0, {tests!r})
import numpy as np
import resource_programs as R
import zymase
from zymase.driver import disk_cache
fn = getattr(R, {fn!r})
out = zymase.jit(fn, cache=True)(np.arange(4.0, dtype={dtype!r}), 2.0)
print(json.dumps([float(out), disk_cache.STATS["hits"], disk_cache.STATS["stores"]]))
"""
FLIPS = """
import sys, json, random, glob
sys.path.insert(0, {tests!r})
import numpy as np
import resource_programs as R
import zymase
from zymase.driver import disk_cache
path, = glob.glob({pattern!r})
good = open(path, "rb").read()
rng = random.Random({seed})
wrong, hits = 0, 0
for k in range({count}):
    data = bytearray(good)
    if k % 10 == 9:
        data = data[:rng.randrange(len(data))]            # truncated
    else:
        pos = rng.randrange(len(data))
        data[pos] ^= 1 << rng.randrange(8)                # one flipped bit
    open(path, "wb").write(bytes(data))
    before = disk_cache.STATS["hits"]
    out = zymase.jit(R.cached, cache=True)(np.arange(4.0), 2.0)
    hits += disk_cache.STATS["hits"] - before
    wrong += int(out != 12.0)
print(json.dumps([wrong, hits]))
"""


def _start(code: str, cache_dir, **fmt) -> subprocess.Popen:
    env = dict(os.environ, ZYMASE_CACHE_DIR=str(cache_dir))
    return subprocess.Popen([sys.executable, "-c", code.format(tests=TESTS, **fmt)], env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _result(proc: subprocess.Popen):
    """The JSON a script printed last; it must end well, with no traceback and at most one
    warning."""
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-2000:]
    assert "Traceback" not in err and err.count("Warning") <= 1, err[-2000:]
    return json.loads(out.split("\n")[-2])


def _run(code: str, cache_dir, **fmt):
    return _result(_start(code, cache_dir, **fmt))


def _only_entry(cache_dir):
    entries = [p for p in cache_dir.iterdir() if p.suffix == ".zyc"]
    assert len(entries) == 1, entries
    return entries[0]


def test_an_entry_of_another_function_or_signature_is_a_miss(tmp_path):
    own, other = tmp_path / "own", tmp_path / "other"
    assert _run(RUN, own, fn="cached", dtype="float64") == [12.0, 0, 1]
    mine = _only_entry(own)
    for fn, dtype in (("cached_other", "float64"), ("cached", "float32")):
        for p in other.glob("*") if other.exists() else ():
            p.unlink()
        _run(RUN, other, fn=fn, dtype=dtype)
        mine.write_bytes(_only_entry(other).read_bytes())   # a foreign entry under my name
        assert _run(RUN, own, fn="cached", dtype="float64") == [12.0, 0, 1]
    assert _run(RUN, own, fn="cached", dtype="float64") == [12.0, 1, 0]   # rewritten: a hit


@pytest.mark.parametrize("count", [pytest.param(1000, marks=pytest.mark.slow), 60])
def test_damaged_entries_are_misses_never_crashes(tmp_path, count):
    _run(RUN, tmp_path, fn="cached", dtype="float64")
    pattern = str(tmp_path / "*.zyc")
    wrong, hits = _run(FLIPS, tmp_path, pattern=pattern, seed=count, count=count)
    assert wrong == 0
    assert hits == 0  # every damaged entry was refused before its body was read


def test_the_cache_is_private(tmp_path):
    cache = tmp_path / "fresh"
    old = os.umask(0)
    try:
        _run(RUN, cache, fn="cached", dtype="float64")
    finally:
        os.umask(old)
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert stat.S_IMODE(_only_entry(cache).stat().st_mode) == 0o600


def test_a_cache_that_cannot_be_made_or_written_leaves_calls_working(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    assert _run(RUN, blocker, fn="cached", dtype="float64") == [12.0, 0, 0]
    readonly = tmp_path / "readonly"
    readonly.mkdir(mode=0o500)
    if os.access(readonly, os.W_OK):  # root writes anywhere: nothing to check there
        return
    assert _run(RUN, readonly, fn="cached", dtype="float64") == [12.0, 0, 0]


CRAFTED = """
import sys, json, glob, hashlib, pickle, os
sys.path.insert(0, {tests!r})
import numpy as np
import resource_programs as R
import zymase
from zymase.driver import disk_cache

class Evil:
    def __reduce__(self):
        return (os.system, ("touch " + {marker!r},))

path, = glob.glob({pattern!r})
body = pickle.dumps({{"key": "x", "payload": Evil()}})
data = disk_cache.MAGIC + hashlib.sha256(body).hexdigest().encode() + b"\\n" + body
open(path, "wb").write(data)                 # a well-formed entry whose body is a pickle
out = zymase.jit(R.cached, cache=True)(np.arange(4.0), 2.0)
print(json.dumps([float(out), disk_cache.STATS["hits"], disk_cache.STATS["stores"]]))
"""


def test_reading_an_entry_runs_no_code(tmp_path):
    cache = tmp_path / "cache"
    _run(RUN, cache, fn="cached", dtype="float64")
    marker = tmp_path / "ran"
    assert _run(CRAFTED, cache, pattern=str(cache / "*.zyc"), marker=str(marker)) == [12.0, 0, 1]
    assert not marker.exists()


def test_the_plain_format_round_trips_and_refuses_what_it_cannot_hold():
    import collections

    from zymase.driver import entry_format
    from zymase.ir.core import Loc
    from zymase.ir.types import F32, F64, ArrayType

    value = {"types": [F64, ArrayType(F32, 2, "C")], "loc": Loc("f.py", 3, 4, "g"),
             "code": b"\x00\x01\n\xff" * 5, "nested": (1, 2.5, None, True, ["a", (b"x",)]),
             "cls": collections.OrderedDict, "nan": float("nan")}
    back = entry_format.loads(entry_format.dumps(value))
    assert back["types"] == value["types"] and back["loc"] == value["loc"]
    assert back["code"] == value["code"] and back["nested"] == value["nested"]
    assert back["cls"] is collections.OrderedDict and back["nan"] != back["nan"]
    with pytest.raises(entry_format.Unstorable):
        entry_format.dumps({"x": object()})
    with pytest.raises(ValueError, match="not an imported class"):
        entry_format.loads(b'{"class":["no_such_module_xyz","C"]}\n')
    with pytest.raises(ValueError, match="past the entry"):
        entry_format.loads(b'{"bytes":[0,100]}\nabc')


PAIR = """
import sys, json
sys.path.insert(0, {tests!r})
import numpy as np
import resource_programs as R
import zymase
from zymase.driver import disk_cache
total, pair = zymase.jit(R.cached_pair, cache=True)(R.Pair(np.arange(4.0), 2.0))
assert type(pair) is R.Pair and pair.scale == 2.0, pair
print(json.dumps([float(total), disk_cache.STATS["hits"], disk_cache.STATS["stores"]]))
"""


def test_a_returned_namedtuple_is_kept_and_rebuilt(tmp_path):
    assert _run(PAIR, tmp_path) == [12.0, 0, 1]
    assert _run(PAIR, tmp_path) == [12.0, 1, 0]


DERIVATIVES = """
import sys, json
sys.path.insert(0, {tests!r})
import numpy as np
import resource_programs as R
import zymase
from zymase.driver import disk_cache
a = np.arange(4.0)
opts = dict(cache=True, disable={{"licm", "cse"}})
g = zymase.grad(R.cached, argnums=(0, 1), **opts)(a, 2.0)
v, g2 = zymase.value_and_grad(R.cached, **opts)(a, 2.0)
_, t = zymase.jvp(R.cached, (a, 2.0), (np.ones(4), 0.0), **opts)
y, pullback = zymase.vjp(R.cached, a, 2.0, **opts)
da, ds = pullback(1.0)
got = [list(g[0]), g[1], v, list(g2), t, y, list(da), ds]
print(json.dumps([got, disk_cache.STATS["hits"], disk_cache.STATS["stores"]]))
"""


def test_derivatives_are_kept_on_disk_too(tmp_path):
    want = [[2.0] * 4, 6.0, 12.0, [2.0] * 4, 8.0, 12.0, [2.0] * 4, 6.0]
    got, hits, stores = _run(DERIVATIVES, tmp_path)
    assert got == want and hits == 0 and stores >= 4
    got, hits, stores = _run(DERIVATIVES, tmp_path)
    assert got == want and stores == 0 and hits >= 4


# RUN, waiting after its imports for a line on stdin (so that two of them call at once)
WRITER = RUN.replace("out = ", 'print("ready", flush=True)\nsys.stdin.readline()\nout = ', 1)


@pytest.mark.parametrize("attempt", range(3))
def test_processes_writing_one_entry_at_once_leave_a_valid_one(tmp_path, attempt):
    cache = tmp_path / "cache"  # both make it, then miss, compile and store at once
    writers = [_start(WRITER, cache, fn="cached", dtype="float64") for _ in range(2)]
    for w in writers:
        assert w.stdout.readline() == "ready\n", w.communicate()[1][-2000:]
    for w in writers:
        w.stdin.write("go\n")
        w.stdin.flush()
    assert [_result(w)[0] for w in writers] == [12.0, 12.0]
    assert _run(RUN, cache, fn="cached", dtype="float64") == [12.0, 1, 0]
    assert [p.suffix for p in cache.iterdir()] == [".zyc"]  # no temporary file left


# RUN on a disk that fills up: writing the entry fails part way (write(2) fails with EFBIG at
# the file size limit, as it fails with ENOSPC on a full disk)
FULL = """
import resource, signal
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (1000, resource.RLIM_INFINITY))
""" + RUN


def test_a_full_disk_leaves_calls_working_and_no_partial_entry(tmp_path):
    assert _run(FULL, tmp_path, fn="cached", dtype="float64") == [12.0, 0, 0]
    assert list(tmp_path.iterdir()) == []
    assert _run(RUN, tmp_path, fn="cached", dtype="float64") == [12.0, 0, 1]  # space again


def test_an_unreadable_entry_or_cache_and_a_read_only_cache_leave_calls_working(tmp_path):
    probe = tmp_path / "probe"
    probe.touch(mode=0)
    if os.access(probe, os.R_OK):
        pytest.skip("this user reads files without permission (root)")
    cache = tmp_path / "cache"
    _run(RUN, cache, fn="cached", dtype="float64")
    _only_entry(cache).chmod(0)
    try:
        assert _run(RUN, cache, fn="cached", dtype="float64") == [12.0, 0, 1]  # rewritten
        cache.chmod(0o500)  # read-only: its entries are still used
        assert _run(RUN, cache, fn="cached", dtype="float64") == [12.0, 1, 0]
        cache.chmod(0)
        assert _run(RUN, cache, fn="cached", dtype="float64") == [12.0, 0, 0]
    finally:
        cache.chmod(0o700)
