"""The plain format of a disk cache entry's body: one line of JSON, then the raw bytes it refers
to (machine code).  Loading it runs no code and imports nothing: types are parsed from their IR
text, source locations and Python classes (a namedtuple or dataclass the function returns) are
named, and a class whose module is not already imported makes the entry unusable (a miss).

    dumps(value) -> bytes        loads(bytes) -> value        (raise Unstorable / ValueError)

Values: None, bool, int, float, str, lists, tuples, dicts with string keys, bytes, IR types,
``Loc``, and classes.  Anything else cannot be stored (``Unstorable``: the entry is not kept).
"""

from __future__ import annotations

import json
import sys

from ..ir.core import Loc
from ..ir.types import Type, parse_type


class Unstorable(Exception):
    """A value the plain format has no form for."""


def dumps(value) -> bytes:
    blobs: list[bytes] = []
    head = json.dumps(_encode(value, blobs), separators=(",", ":"), allow_nan=True)
    return head.encode() + b"\n" + b"".join(blobs)


def loads(data: bytes):
    end = data.index(b"\n")
    return _decode(json.loads(data[:end]), memoryview(data)[end + 1:])


def _encode(x, blobs: list):
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    if isinstance(x, list):
        return [_encode(v, blobs) for v in x]
    if isinstance(x, tuple):
        return {"tuple": [_encode(v, blobs) for v in x]}
    if isinstance(x, dict) and all(isinstance(k, str) for k in x):
        return {"dict": {k: _encode(v, blobs) for k, v in x.items()}}
    if isinstance(x, bytes):
        start = sum(len(b) for b in blobs)
        blobs.append(x)
        return {"bytes": [start, len(x)]}
    if isinstance(x, Type):
        return {"type": str(x)}
    if isinstance(x, Loc):
        return {"loc": [x.file, x.line, x.col, x.func]}
    if isinstance(x, type):
        return {"class": [x.__module__, x.__qualname__]}
    raise Unstorable(type(x).__name__)


def _decode(x, blob: memoryview):
    if not isinstance(x, (list, dict)):
        return x
    if isinstance(x, list):
        return [_decode(v, blob) for v in x]
    (kind, v), = x.items()
    if kind == "tuple":
        return tuple(_decode(item, blob) for item in v)
    if kind == "dict":
        return {k: _decode(item, blob) for k, item in v.items()}
    if kind == "bytes":
        start, n = v
        if start < 0 or n < 0 or start + n > len(blob):
            raise ValueError("a blob reaches past the entry")
        return bytes(blob[start:start + n])
    if kind == "type":
        return parse_type(v)
    if kind == "loc":
        return Loc(*v)
    if kind == "class":
        return _named_class(*v)
    raise ValueError(f"unknown kind {kind!r}")


def _named_class(module: str, qualname: str) -> type:
    obj = sys.modules.get(module)  # only what is imported already: loading imports nothing
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    if not isinstance(obj, type):
        raise ValueError(f"{module}.{qualname} is not an imported class")
    return obj
