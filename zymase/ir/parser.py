"""Parser for the IR text form written by ``zymase.ir.printer`` (its docstring has the grammar).

``parse_module``, ``parse_func`` and ``parse_op`` turn text back into IR.  Ops are created through
their registered classes in ``zymase.ir.core.OPS``; result types come from the ``: types`` list;
attributes become Python values (``@g`` a ``printer.Symbol``, ``type(f64)`` a ``Type``,
``complex(a, b)`` a ``complex``, ``dense<..>`` a NumPy array of the named dtype and shape).

Beyond what the printer writes, the parser accepts ``//`` line comments, a region without its
``^():`` header, and regions with several blocks.  Value names are scoped per top-level function and
may be used before their definition anywhere in it, so dominance errors (a use of a later value or
of a value from a sibling region) reach the verifier (``zymase.ir.verify``) instead of stopping
here.
A name the printer made from a hint (``%x12``: hint ``x``, number 12) gives the hint back, so
print -> parse -> print is the identity.

The tokenizer is one regular expression; token positions are only recomputed to report an error.
Every error is a ``ParseError`` whose message starts with ``file:line:col``.
"""

from __future__ import annotations

import gc
import json
import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from . import ops as _ops  # noqa: F401  (registers every op class in OPS)
from .core import OPS, UNKNOWN_LOC, Block, Func, Loc, Module, Op, Region, Value
from .printer import FUNC_ATTRS_IN_HEADER, Symbol
from .types import SCALARS, Type, parse_type

_STR = r'"(?:[^"\\\n]|\\.)*"'
_TOKEN = re.compile(  # the most frequent tokens first; "\s*" skips blanks fast
    rf"""\s*(
      [%@][\w.$]+                           # value name or symbol
    | [,=:(){{}}\[\]^]                       # punctuation
    | loc\({_STR}:\d+:\d+\)                 # a location as the printer writes it: one token
    | {_STR}                                # string
    | //[^\n]*                              # comment (dropped)
    | array<[^<>\n]*>                       # array type
    | dense<
    | -?\d+(?:\.\d*)?(?:[eE][+-]?\d+)? | -inf\b
    | [^\W\d][\w.$]*                        # word: op name, scalar type, keyword, attribute key
    | ->
    | \S                                    # a stray character
    )""",
    re.VERBOSE,
)
_EOF = "\0"
_KEYWORDS: dict[str, Any] = {"true": True, "false": False, "nan": math.nan, "inf": math.inf}
_TYPES: dict[str, Type] = dict(SCALARS)  # text -> type, grows with the array types seen


class ParseError(Exception):
    """Malformed IR text; the message starts with ``file:line:col``."""

    def __init__(self, msg: str, filename: str, line: int, col: int):
        super().__init__(f"{filename}:{line}:{col}: {msg}")
        self.msg = msg
        self.filename = filename
        self.line = line
        self.col = col


def parse_module(text: str, filename: str = "<ir>") -> Module:
    """Parse a module: any number of ``func.func`` definitions."""
    with _no_gc():
        return _Parser(text, filename).module()


def parse_func(text: str, filename: str = "<ir>") -> Func:
    """Parse text that holds exactly one ``func.func``."""
    p = _Parser(text, filename)
    with _no_gc():
        m = p.module()
    if len(m.funcs) != 1:
        raise p.error(f"expected exactly one function, found {len(m.funcs)}", 0)
    return next(iter(m))


def parse_op(text: str, values: dict[str, Value] | None = None, filename: str = "<ir>") -> Op:
    """Parse one op (with its regions).  Names it uses but does not define are looked up in
    ``values`` (keys with or without the ``%``).  The op is returned outside any block."""
    p = _Parser(text, filename)
    for k, v in (values or {}).items():
        p.values[k if k.startswith("%") else "%" + k] = v
    holder = Block()
    with _no_gc():
        op = p.op(holder)
    if p.i < p.n:
        raise p.error(f"expected end of input after the op, found {p.describe()}")
    p.check_pending()
    op.detach()
    return op


@contextmanager
def _no_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector: IR objects form cycles (parent links), and collections
    triggered by allocating thousands of them cost a third of the parse time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _hint(name: str, index: int) -> str:
    """The hint the printer used for ``name``, given that it was the ``index``-th name printed."""
    body = name[1:]
    suffix = str(index)
    if body.endswith(suffix):
        prefix = body[: -len(suffix)]
        if not prefix or prefix.isidentifier():
            return prefix
    stripped = body.rstrip("0123456789")
    return stripped if stripped.isidentifier() else ""


def _is_number(tok: str) -> bool:
    c = tok[0]
    return c.isdigit() or (c == "-" and (tok[1:2].isdigit() or tok == "-inf"))


def _number(tok: str) -> int | float:
    if tok == "-inf":
        return -math.inf
    if "." in tok or "e" in tok or "E" in tok:
        return float(tok)
    return int(tok)


def _is_key(tok: str) -> bool:
    c = tok[0]
    return c == '"' or c == "_" or c.isalpha()


class _Parser:
    """Recursive descent over the token list; ``i`` indexes the next token."""

    def __init__(self, text: str, filename: str):
        self.text = text
        self.filename = filename
        toks = _TOKEN.findall(text)
        if "//" in text:
            toks = [t for t in toks if not t.startswith("//")]
        self.n = len(toks)
        self.toks = toks + [_EOF] * 3  # lookahead never runs off the end
        self.i = 0
        self.locs: dict[str, Loc] = {}
        self.new_scope()

    # ---- errors and small helpers
    def error(self, msg: str, at: int | None = None) -> ParseError:
        """A ParseError located at token ``at`` (the current token by default)."""
        pos = self._offset(self.i if at is None else at)
        line = self.text.count("\n", 0, pos) + 1
        col = pos - self.text.rfind("\n", 0, pos)
        return ParseError(msg, self.filename, line, col)

    def _offset(self, k: int) -> int:
        n = 0
        for m in _TOKEN.finditer(self.text):
            if m.group(1).startswith("//"):
                continue
            if n == k:
                return m.start(1)
            n += 1
        return len(self.text)

    def describe(self, at: int | None = None) -> str:
        k = self.i if at is None else at
        return "end of input" if k >= self.n else repr(self.toks[k])

    def expect(self, tok: str) -> None:
        if self.toks[self.i] != tok:
            raise self.error(f"expected {tok!r}, found {self.describe()}")
        self.i += 1

    def value_name(self) -> str:
        tok = self.toks[self.i]
        if tok[0] != "%":
            raise self.error(f"expected a value name (%name), found {self.describe()}")
        self.i += 1
        return tok

    # ---- value names
    def new_scope(self) -> None:
        self.values: dict[str, Value] = {}
        self.hints: dict[str, str] = {}  # every name seen, in order of first appearance
        self.pending: dict[str, int] = {}  # names used before their definition -> first use

    def note(self, name: str) -> None:
        if name not in self.hints:
            self.hints[name] = _hint(name, len(self.hints))

    def forward(self, name: str, at: int) -> Value:
        """A placeholder for a value used before its definition."""
        self.note(name)
        v = Value(None, None, 0, self.hints[name])
        self.values[name] = v
        self.pending[name] = at
        return v

    def define(self, name: str, v: Value, at: int) -> None:
        old = self.values.get(name)
        if old is not None:
            if old.owner is not None or name not in self.pending:
                raise self.error(f"value {name} is defined twice", at)
            del self.pending[name]
            old.replace_all_uses_with(v)
        v.hint = self.hints.get(name, "")
        self.values[name] = v

    def check_pending(self) -> None:
        if self.pending:
            name, at = min(self.pending.items(), key=lambda kv: kv[1])
            raise self.error(f"use of undefined value {name}", at)

    # ---- functions and modules
    def module(self) -> Module:
        m = Module()
        while self.i < self.n:
            at = self.i
            if self.toks[at] != Func.name:
                raise self.error(f"expected '{Func.name}', found {self.describe()}")
            self.i += 1
            self.new_scope()
            f = self.func()
            self.check_pending()
            if f.sym_name in m.funcs:
                raise self.error(f"function @{f.sym_name} is defined twice", at)
            m.add(f)
        return m

    def func(self) -> Func:
        """``@name(args) -> (types) [attrs] { ops } [loc]`` after the ``func.func`` token."""
        tok = self.toks[self.i]
        if tok[0] != "@":
            raise self.error(f"expected a function name (@name), found {self.describe()}")
        self.i += 1
        self.expect("(")
        args = self.typed_names(")")
        self.expect("->")
        results = self.func_results()
        attrs_at = self.i
        attrs = self.attr_dict() if self.at_attr_dict() else {}
        for key in FUNC_ATTRS_IN_HEADER:
            if key in attrs:
                raise self.error(f"attribute {key!r} belongs in the function header", attrs_at)
        f = Func(tok[1:], [t for _, _, t in args], results, **attrs)
        for (name, at, _), v in zip(args, f.args):
            self.define(name, v, at)
        self.expect("{")
        self.block_ops(f.body)
        self.expect("}")
        f.loc = self.opt_loc()
        return f

    def func_results(self) -> list[Type]:
        if self.toks[self.i] != "(":
            return [self.type()]
        self.i += 1
        if self.toks[self.i] == ")":
            self.i += 1
            return []
        types = self.types()
        self.expect(")")
        return types

    def typed_names(self, close: str) -> list[tuple[str, int, Type]]:
        """``%a: T, %b: U`` up to and including ``close``; the names are noted, not defined."""
        out = []
        if self.toks[self.i] != close:
            while True:
                at = self.i
                name = self.value_name()
                self.note(name)
                self.expect(":")
                out.append((name, at, self.type()))
                if self.toks[self.i] != ",":
                    break
                self.i += 1
        self.expect(close)
        return out

    # ---- ops, regions, blocks
    def op(self, block: Block) -> Op:
        """Parse one op and append it to ``block`` (the hot path: keep it lean)."""
        toks = self.toks
        results = self.result_names() if toks[self.i][0] == "%" else ()
        name_at = self.i
        name = toks[name_at]
        cls = OPS.get(name)
        self.i += 1
        if cls is None or cls is Func:
            if cls is Func and not results:
                return block.append(self.func())
            raise self.error(self._bad_op_name(name, name_at, cls), name_at)
        operands = self.operands() if toks[self.i][0] == "%" else []
        attrs = self.attr_dict() if toks[self.i] == "{" and self.at_attr_dict() else None
        types = self.result_types() if toks[self.i] == ":" else []
        if len(types) != len(results):
            msg = f"{name} names {len(results)} results but lists {len(types)} types"
            raise self.error(msg, name_at)
        regions = []
        while toks[self.i] == "{":
            regions.append(self.region())
        loc = self.opt_loc() if toks[self.i][0] == "l" else UNKNOWN_LOC
        op = cls(operands, types, attrs, regions, loc)
        block.append(op)
        values, hints = self.values, self.hints
        for (rname, at), v in zip(results, op.results):
            if rname in values:
                self.define(rname, v, at)
            else:
                v.hint = hints[rname]
                values[rname] = v
        return op

    def _bad_op_name(self, name: str, at: int, cls: type | None) -> str:
        if at >= self.n:
            return "unexpected end of input: expected an op"
        if cls is Func:
            return "func.func defines no values"
        return f"unknown op {name!r}"

    def result_names(self) -> list[tuple[str, int]]:
        """``%a, %b =``: the names are noted (for their hints), defined once the op exists."""
        toks, hints, out = self.toks, self.hints, []
        while True:
            at = self.i
            name = toks[at]
            if name[0] != "%":
                raise self.error(f"expected a value name (%name), found {self.describe()}")
            if name not in hints:
                hints[name] = _hint(name, len(hints))
            out.append((name, at))
            self.i = at + 1
            if toks[at + 1] != ",":
                break
            self.i += 1
        self.expect("=")
        return out

    def operands(self) -> list[Value]:
        toks, i, values = self.toks, self.i, self.values
        out: list[Value] = []
        if toks[i][0] != "%":
            return out
        while True:
            tok = toks[i]
            if tok[0] != "%":
                self.i = i
                raise self.error(f"expected a value name (%name), found {self.describe()}")
            v = values.get(tok)
            out.append(v if v is not None else self.forward(tok, i))
            i += 1
            if toks[i] != ",":
                break
            i += 1
        self.i = i
        return out

    def region(self) -> Region:
        """``{ ^(args): ops [^(args): ops ...] }``; the first header may be left out."""
        self.i += 1
        blocks = []
        while True:
            block = self.block_header() if self.toks[self.i] == "^" else Block()
            blocks.append(block)
            self.block_ops(block)
            if self.toks[self.i] != "^":
                break
        self.expect("}")
        return Region(blocks)

    def block_header(self) -> Block:
        self.i += 1
        self.expect("(")
        args = self.typed_names(")")
        self.expect(":")
        block = Block([t for _, _, t in args])
        for (name, at, _), v in zip(args, block.args):
            self.define(name, v, at)
        return block

    def block_ops(self, block: Block) -> None:
        toks = self.toks
        while toks[self.i] != "}" and toks[self.i] != "^":
            if self.i >= self.n:
                raise self.error("unexpected end of input: a '}' is missing")
            self.op(block)

    def opt_loc(self) -> Loc:
        tok = self.toks[self.i]
        if tok[:4] == "loc(":
            self.i += 1
            loc = self.locs.get(tok)
            if loc is None:
                file, line, col = tok[4:-1].rsplit(":", 2)
                file = file[1:-1] if "\\" not in file else self.string(file, self.i - 1)
                loc = self.locs[tok] = Loc(file, int(line), int(col))
            return loc
        if tok == "loc":
            return self.spaced_loc()
        return UNKNOWN_LOC

    def spaced_loc(self) -> Loc:
        """``loc ( "file" : line : col )`` written with spaces (hand-written text)."""
        self.i += 1
        self.expect("(")
        file = self.string(self.toks[self.i], self.i)
        self.i += 1
        parts = []
        for _ in range(2):
            self.expect(":")
            tok = self.toks[self.i]
            if not tok.isdigit():
                raise self.error(f"expected a line or column number, found {self.describe()}")
            parts.append(int(tok))
            self.i += 1
        self.expect(")")
        return Loc(file, parts[0], parts[1])

    # ---- types
    def type(self) -> Type:
        tok = self.toks[self.i]
        t = _TYPES.get(tok)
        if t is None:
            if tok.startswith("array<"):
                try:
                    t = parse_type(tok)
                except (ValueError, KeyError):
                    pass
            if t is None:
                raise self.error(f"expected a type, found {self.describe()}")
            _TYPES[tok] = t
        self.i += 1
        return t

    def result_types(self) -> list[Type]:
        """``: T, U`` (with a fast path for the usual single scalar type)."""
        toks, i = self.toks, self.i
        t = _TYPES.get(toks[i + 1])
        if t is not None and toks[i + 2] != ",":
            self.i = i + 2
            return [t]
        self.i += 1
        return self.types()

    def types(self) -> list[Type]:
        out = [self.type()]
        while self.toks[self.i] == ",":
            self.i += 1
            out.append(self.type())
        return out

    # ---- attributes
    def at_attr_dict(self) -> bool:
        """Is the ``{`` here an attribute dict (not a region or body)?  An empty ``{}`` is one
        only when a ``{`` or ``:`` follows it."""
        toks, i = self.toks, self.i
        if toks[i] != "{":
            return False
        if toks[i + 1] == "}":
            return toks[i + 2] in ("{", ":")
        return _is_key(toks[i + 1]) and toks[i + 2] == "="

    def attr_dict(self) -> dict[str, Any]:
        self.i += 1
        attrs: dict[str, Any] = {}
        while self.toks[self.i] != "}":
            at = self.i
            key = self.toks[at]
            key = self.string(key, at) if key[0] == '"' else key
            if key in attrs:
                raise self.error(f"attribute {key!r} is given twice", at)
            self.i += 1
            self.expect("=")
            attrs[key] = self.attr()
            if self.toks[self.i] != ",":
                break
            self.i += 1
        self.expect("}")
        return attrs

    def attr(self) -> Any:
        tok = self.toks[self.i]
        if tok[0] == '"':
            self.i += 1
            return self.string(tok, self.i - 1)
        if _is_number(tok):
            self.i += 1
            return _number(tok)
        if tok in _KEYWORDS:
            self.i += 1
            return _KEYWORDS[tok]
        if tok[0] == "@" and len(tok) > 1:
            self.i += 1
            return Symbol(tok[1:])
        compound = _COMPOUND.get(tok)
        if compound is None:
            raise self.error(f"expected an attribute value, found {self.describe()}")
        return compound(self)

    def string(self, tok: str, at: int) -> str:
        if tok[0] != '"':
            raise self.error(f"expected a string, found {self.describe(at)}", at)
        if len(tok) < 2 or tok[-1] != '"':
            raise self.error("unterminated string", at)
        try:
            return json.loads(tok)
        except ValueError as e:
            raise self.error(f"bad string {tok}: {e}", at) from None

    def list_attr(self) -> list:
        self.i += 1
        out = []
        while self.toks[self.i] != "]":
            out.append(self.attr())
            if self.toks[self.i] != ",":
                break
            self.i += 1
        self.expect("]")
        return out

    def real(self) -> float:
        """A float for a complex part: a number, ``nan``, ``inf`` or ``-inf``."""
        tok = self.toks[self.i]
        if _is_number(tok):
            value = _number(tok)
        elif tok in ("nan", "inf"):
            value = _KEYWORDS[tok]
        else:
            raise self.error(f"expected a number, found {self.describe()}")
        self.i += 1
        return float(value)

    def complex_attr(self) -> complex:
        self.i += 1
        self.expect("(")
        re_part = self.real()
        self.expect(",")
        im_part = self.real()
        self.expect(")")
        return complex(re_part, im_part)

    def type_attr(self) -> Type:
        self.i += 1
        self.expect("(")
        t = self.type()
        self.expect(")")
        return t

    def dense_attr(self) -> np.ndarray:
        """``dense<"dtype", [dims], [values]>`` -> a NumPy array."""
        start = self.i
        self.i += 1
        name = self.string(self.toks[self.i], self.i)
        self.i += 1
        self.expect(",")
        shape = self.list_attr()
        self.expect(",")
        values = self.list_attr()
        self.expect(">")
        if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
            raise self.error("dense: the shape must be a list of non-negative ints", start)
        try:
            return np.array(values, dtype=np.dtype(name)).reshape(shape)
        except (TypeError, ValueError, OverflowError) as e:
            raise self.error(f"dense: {e}", start) from None


_COMPOUND = {
    "[": _Parser.list_attr,
    "complex": _Parser.complex_attr,
    "type": _Parser.type_attr,
    "dense<": _Parser.dense_attr,
}
