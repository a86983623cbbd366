"""Text form of the IR, close to MLIR's generic syntax.  Every printed module parses back
(``zymase.ir.parser``) to an equivalent module.

    module := func*
    func   := "func.func" "@"NAME "(" [arg ("," arg)*] ")" "->" "(" [type ("," type)*] ")"
              [attrs] body [loc]
    arg    := VALUE ":" type
    op     := [VALUE ("," VALUE)* "="] OPNAME [VALUE ("," VALUE)*] [attrs]
              [":" type ("," type)*] region* [loc]
    region := "{" NL "^(" [arg ("," arg)*] "):" NL op* "}"
    attrs  := "{" KEY "=" attr ("," KEY "=" attr)* "}"
    attr   := INT | FLOAT | STRING | "true" | "false" | "@"NAME | "complex(" FLOAT "," FLOAT ")"
              | "type(" type ")" | "[" [attr ("," attr)*] "]"
              | "dense<" STRING "," "[" ints "]" "," "[" numbers "]" ">"
    loc    := "loc(" STRING ":" INT ":" INT ")"

Floats always print with a ``.``, an exponent, ``inf`` or ``nan``, so they never read as ints.
"""

from __future__ import annotations

import json
import math

import numpy as np

from .core import Block, Func, Module, Op, Value
from .types import Type

FUNC_ATTRS_IN_HEADER = ("sym_name", "result_types")


class Printer:
    def __init__(self, locs: bool = False):
        self.locs = locs
        self.names: dict[Value, str] = {}
        self.lines: list[str] = []

    def name(self, v: Value) -> str:
        n = self.names.get(v)
        if n is None:
            hint = v.hint if v.hint.isidentifier() else ""
            sep = "_" if hint and hint[-1].isdigit() else ""
            n = f"%{hint}{sep}{len(self.names)}"
            self.names[v] = n
        return n

    def loc(self, op: Op) -> str:
        if not self.locs or op.loc.line == 0:
            return ""
        return f" loc({json.dumps(op.loc.file)}:{op.loc.line}:{op.loc.col})"

    def func(self, f: Func, indent: str = "") -> None:
        args = ", ".join(f"{self.name(a)}: {a.type}" for a in f.args)
        res = ", ".join(str(t) for t in f.result_types)
        extra = {k: v for k, v in f.attrs.items() if k not in FUNC_ATTRS_IN_HEADER}
        attrs = f" {format_attrs(extra)}" if extra else ""
        self.lines.append(f"{indent}{f.name} @{f.sym_name}({args}) -> ({res}){attrs} {{")
        for op in f.body.ops:
            self.op(op, indent + "  ")
        self.lines.append(f"{indent}}}{self.loc(f)}")

    def op(self, op: Op, indent: str) -> None:
        if isinstance(op, Func):
            return self.func(op, indent)
        parts = [indent]
        if op.results:
            parts.append(", ".join(self.name(r) for r in op.results) + " = ")
        parts.append(op.name)
        if op.operands:
            parts.append(" " + ", ".join(self.name(v) for v in op.operands))
        if op.attrs:
            parts.append(" " + format_attrs(op.attrs))
        if op.results:
            parts.append(" : " + ", ".join(str(r.type) for r in op.results))
        if not op.regions:
            self.lines.append("".join(parts) + self.loc(op))
            return
        self.lines.append("".join(parts) + " {")
        for k, r in enumerate(op.regions):
            self.block(r.block, indent + "  ")
            closing = f"{indent}}}" + (" {" if k + 1 < len(op.regions) else self.loc(op))
            self.lines.append(closing)

    def block(self, b: Block, indent: str) -> None:
        args = ", ".join(f"{self.name(a)}: {a.type}" for a in b.args)
        self.lines.append(f"{indent[:-2]}^({args}):")
        for op in b.ops:
            self.op(op, indent)


def format_attr(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return _float(v)
    if isinstance(v, complex):
        return f"complex({_float(v.real)}, {_float(v.imag)})"
    if isinstance(v, Symbol):
        return f"@{v}"
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, Type):
        return f"type({v})"
    if isinstance(v, np.ndarray):
        vals = ", ".join(format_attr(x.item()) for x in v.ravel())
        dims = ", ".join(str(d) for d in v.shape)
        return f"dense<{json.dumps(v.dtype.name)}, [{dims}], [{vals}]>"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(format_attr(x) for x in v) + "]"
    raise TypeError(f"cannot print attribute {v!r}")


def format_attrs(attrs: dict) -> str:
    return "{" + ", ".join(f"{k} = {format_attr(v)}" for k, v in attrs.items()) + "}"


class Symbol(str):
    """A reference to a function by name (printed ``@name``)."""


def _float(x: float) -> str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    r = repr(x)
    return r if ("." in r or "e" in r) else r + ".0"


def print_func(f: Func, locs: bool = False) -> str:
    p = Printer(locs)
    p.func(f)
    return "\n".join(p.lines) + "\n"


def print_module(m: Module, locs: bool = False) -> str:
    out = []
    for f in m:
        p = Printer(locs)
        p.func(f)
        out.append("\n".join(p.lines))
    return "\n\n".join(out) + "\n"


def print_op(op: Op, locs: bool = False) -> str:
    p = Printer(locs)
    p.op(op, "")
    return "\n".join(p.lines) + "\n"
