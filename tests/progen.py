"""Random programs for the differential test in ``test_random_programs.py``.

A program is the source text of ``def f(x, y, a, b, n)`` (x, y floats; a, b float64 arrays of
one length L in 3..12; n an int in -2..MAX_N), preceded by module constants ``C0``/``K0`` and the
helpers ``f`` calls: ``g(u, v)`` (scalars) and ``h(z, u)`` (writes into the array ``z``).  Every
choice comes from ``choose(k) -> 0..k-1``, so hypothesis drives the generator (and shrinks toward
choice 0, always the simplest option) and ``random.Random(seed).randrange`` can too.

Statements: assignments (plain, augmented, tuple, chained; swaps of scalars, of the arrays c and
d, of array elements), stores into the arrays, their copies and views (named or inline, reversed,
strided, n-dependent), if/elif/else (also binding a new name on both branches, or in a loop
on some trips only), ``for`` over
ranges (constant, n-based, negative steps), arrays and ``enumerate``, ``while`` (counted, with a
condition, ``while True``), break/continue/return at any depth, calls of g and h, and
comprehensions (``sum(... for w in a)``, filtered, ``max([...])``, ``any(...)``), and loops whose
carried name starts from a float the body reads too (``r = x; for ...: r = r * c + x``).
Whole-array NumPy statements (``numpy=True``, on for ``f``): an array renewed by a ``while``
loop with a data-dependent exit (``e = e * 0.5 + x * a`` while ``np.sum(e * e)`` stays small),
an array chosen by a branch (a new one from either side, or one of two arrays themselves), and
matrix products on an array a loop carries (``e = np.tanh(M @ e) + x * a``, sometimes with the
matrix renewed too).
Expressions: + - * / // % **, unary -, abs, min/max, math functions, conditional expressions,
and/or/not and comparison chains, int/float mixing (``s = 0`` then ``s += x``).

Every program runs under CPython without an exception on any such inputs:

- divisions are by ``(1.0 + z * z)`` or ``(1.0 + abs(z))`` (never zero, maybe inf or nan);
  ``%`` and ``//`` by nonzero constants (``inf % 1.5`` is nan, not an error);
- ``math.sqrt``/``math.log1p`` get ``abs(e) + 1.0``/``abs(e)``; ``math.exp``, ``sin``, ``fmod``,
  ``**`` and the like get ``min(max(e, -4.0), 4.0)`` (Python's min/max keep a nan, never an inf);
- an index is a constant valid for the shortest array of its length class, a loop variable that
  ranges over indices of that class, or ``(int expression) % len(z)``;
- loops are bounded: every range has at most 12 trips, a ``while`` counts up to a constant (the
  counter goes up first thing in the body, so ``continue`` cannot skip it), and the trip counts of
  nested loops multiply to at most ``TRIP_BUDGET``;
- integers stay small (Python's ints are unbounded, compiled ones wrap at 64 bits): int
  expressions are built from loop-bounded names and small constants; the scalars that may hold an
  int (``s`` and the helpers' parameters) only change by ``+=``/``-=`` of such an expression or a
  comparison, or become floats; and ``*`` never multiplies two possible ints except in a divisor
  ``1.0 + z * z`` of a leaf ``z``.

``AVOID`` names the known compiler bugs the generator steers around (each has an xfail
regression test in ``test_random_programs.py``); drop a name once its test passes.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from dataclasses import dataclass

AVOID: frozenset = frozenset()  # none open: the last one, 'fmod_of_nan_product', is fixed

# length class -> the shortest length an array of that class can have (L is at least 3)
CLASS_MIN = {"L": 3, "V": 1, "W": 2, "Z": 1, "H": 1}
# length class -> the longest (L is at most 12)
CLASS_MAX = {"L": 12, "V": 10, "W": 6, "Z": 12, "H": 12}
# the inline views of an L-class array usable anywhere: text suffix -> length class
INLINE_VIEWS = {"[::-1]": "L", "[1:-1]": "V", "[::2]": "W"}
# the views f may name in its prologue: name, suffix, length class
NAMED_VIEWS = (
    ("v", "[1:-1]", "V"),
    ("w", "[::2]", "W"),
    ("r", "[::-1]", "L"),
    ("z", "[n % L:]", "Z"),
)
FLOAT_CONSTS = ("0.5", "1.0", "2.0", "-1.5", "0.25", "3.0", "-0.75", "C0")
CMP = ("<", "<=", ">", ">=", "==", "!=")
MAX_N = 7  # n is drawn from -2..MAX_N
TRIP_BUDGET = 64
EXPR_DEPTH = 2  # operators nested in an expression (compile time grows with program size)


def clip(x: str) -> str:
    return f"min(max({x}, -4.0), 4.0)"


def index_classes(cls: str) -> frozenset:
    """The length classes an index below the length of a ``cls`` array is valid for."""
    return frozenset({cls} if cls == "H" else {cls, "L"})  # no class but H is longer than L


@dataclass(frozen=True)
class Arr:
    """An array expression: a name or an inline view such as ``c[::-1]``."""

    text: str
    cls: str
    writable: bool


@dataclass
class Program:
    source: str
    returns: int  # 1: f returns a float; 2: a pair

    def __repr__(self) -> str:  # hypothesis shows the source in a note
        return f"Program(<{self.source.count(chr(10))} lines>, returns={self.returns})"


class Gen:
    """Statements and expressions of one function body, given the variables it may use."""

    def __init__(self, choose: Callable[[int], int], *, floats, int_capable=(), ints=None,
                 arrays=(), helpers=(), returns=1, budget=TRIP_BUDGET, max_depth=3,
                 fmod=True, numpy=False):  # fmt: skip
        self.choose = choose
        self.floats = list(floats)  # assignable scalars
        self.int_capable = set(int_capable)  # those that may hold an int
        self.ints = dict(ints or {})  # int name -> the length classes it is a valid index for
        self.readonly: list[str] = []  # float loop variables (array elements)
        self.arrays = list(arrays)
        self.helpers = set(helpers)  # of "g", "h"
        self.returns = returns
        self.budget = budget  # trips left for loops nested here
        self.max_depth = max_depth
        self.loops = 0  # enclosing loops
        self.loop_var = None  # the variable of the for loop whose body this is (directly)
        self.fmod = fmod  # may it use float ``%`` (see AVOID)
        self.numpy = numpy  # may it use whole-array NumPy statements (``_s_renew`` ...)
        self.depth = 0  # enclosing compound statements
        self.serial = 0  # for fresh names
        self.lines: list[str] = []
        self.indent = 1

    # ------------------------------------------------------------------ choices
    def pick(self, weights: dict) -> str:
        """A key of ``weights`` (those with weight 0 are out), the first ones most simple."""
        items = [(k, int(w)) for k, w in weights.items() if w > 0]
        r = self.choose(sum(w for _, w in items))
        for k, w in items:
            if r < w:
                return k
            r -= w
        raise AssertionError("unreachable")

    def one(self, seq):
        return seq[self.choose(len(seq))]

    def fresh(self, prefix: str) -> str:
        self.serial += 1
        return f"{prefix}{self.serial - 1}"

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.indent + line)

    # ------------------------------------------------------------------ int expressions
    def int_expr(self, d: int = 1) -> str:
        """An int expression of magnitude at most about 2e4."""
        # fmt: off
        kind = self.pick({
            "leaf": 4, "add": d, "sub": d, "mul": d, "floordiv": d, "mod": d, "pow": d, "abs": d,
            "minmax": d
        })
        # fmt: on
        if kind == "leaf":
            names = list(self.ints)
            return self.one(names) if names and self.choose(3) else str(self.choose(4))
        x = self.int_expr(d - 1)
        if kind in ("add", "sub"):
            return f"({x} {'+' if kind == 'add' else '-'} {self.int_expr(d - 1)})"
        if kind == "abs":
            return f"abs({x})"
        if kind == "minmax":
            return f"{self.one(('min', 'max'))}({x}, {self.int_expr(d - 1)})"
        if kind == "pow":
            return f"({x} ** 2)"
        k = self.one((2, 3, -2, -3))
        return f"({x} {dict(mul='*', floordiv='//', mod='%')[kind]} {k})"

    # ------------------------------------------------------------------ arrays
    def writable(self) -> list[Arr]:
        return [a for a in self.arrays if a.writable]

    def array_ref(self, arrays: list[Arr]) -> Arr:
        arr = self.one(arrays)
        if arr.cls == "L" and arr.text.isidentifier() and self.choose(4) == 0:
            suffix = self.one(list(INLINE_VIEWS))
            return Arr(arr.text + suffix, INLINE_VIEWS[suffix], arr.writable)
        return arr

    def index(self, arr: Arr) -> str:
        loop_vars = [i for i, cls in self.ints.items() if arr.cls in cls]
        kind = self.pick(
            {"const": 2, "var": 3 if loop_vars else 0, "neg": 1 if loop_vars else 0, "mod": 2}
        )
        if kind == "const":
            m = CLASS_MIN[arr.cls]
            return str(self.one(list(range(m)) + list(range(-1, -m - 1, -1))))
        if kind == "var":
            return self.one(loop_vars)
        if kind == "neg":
            return f"-1 - {self.one(loop_vars)}"
        if arr.cls == "L" and "L" in self.ints and self.choose(2):
            return f"{self.int_expr(2)} % L"
        return f"{self.int_expr(2)} % len({arr.text})"

    def element(self, arrays: list[Arr]) -> str:
        arr = self.array_ref(arrays)
        return f"{arr.text}[{self.index(arr)}]"

    # ------------------------------------------------------------------ float expressions
    def leaf(self) -> tuple[str, bool]:
        """A float leaf: (text, whether it may be a Python int)."""
        kind = self.pick(
            {"var": 6, "const": 3, "elem": 4 if self.arrays else 0, "int": 1, "ratio": 1, "bool": 1}
        )
        if kind == "var":
            name = self.one(self.floats + self.readonly)
            return name, name in self.int_capable
        if kind == "const":
            return self.one(FLOAT_CONSTS), False
        if kind == "elem":
            return self.element(self.arrays), False
        if kind == "int":
            ie = self.int_expr(1)
            return (f"float({ie})" if self.choose(2) else f"({ie} * 0.5)"), False
        if kind == "ratio":  # int / int is a float
            ie = self.int_expr(1)
            if self.choose(2):
                return f"({ie} / {self.one((2, 3, -4))})", False
            return f"({ie} / (1 + abs({self.int_expr(1)})))", False
        x, y = self.atom(), self.atom()
        return f"float({x} {self.one(CMP)} {y})", False

    def atom(self) -> str:
        """A name, a constant or an array element (no recursion)."""
        kind = self.pick({"var": 2, "const": 1, "elem": 2 if self.arrays else 0})
        if kind == "var":
            return self.one(self.floats + self.readonly)
        return self.one(FLOAT_CONSTS) if kind == "const" else self.element(self.arrays)

    def expr(self, d: int = EXPR_DEPTH) -> tuple[str, bool]:
        """A float expression: (text, whether it may be a Python int)."""
        if d <= 0:
            return self.leaf()
        # fmt: off
        kind = self.pick({
            "leaf": 3, "add": 4, "mul": 3, "div": 2, "neg": 1, "abs": 1, "math": 3, "math2": 1,
            "pow": 2, "minmax": 1, "ifexp": 1, "fmod": 1,
            "g": 2 * ("g" in self.helpers), "h": "h" in self.helpers and bool(self.writable())
        })
        # fmt: on
        if kind == "leaf":
            return self.leaf()
        return getattr(self, "_e_" + kind)(d - 1)

    def _e_add(self, d):
        (x, xi), (y, yi) = self.expr(d), self.expr(d)
        return f"({x} {self.one('+-')} {y})", xi and yi

    def _e_mul(self, d):
        (x, xi), (y, yi) = self.expr(d), self.expr(d)
        op = self.one("+-") if xi and yi else "*"
        return f"({x} {op} {y})", xi and yi

    def _e_div(self, d):
        x, _ = self.expr(d)
        z, _ = self.leaf()
        guard = f"(1.0 + {z} * {z})" if self.choose(2) else f"(1.0 + abs({z}))"
        return f"({x} / {guard})", False

    def _e_neg(self, d):
        x, xi = self.expr(d)
        return f"(-{x})", xi

    def _e_abs(self, d):
        x, xi = self.expr(d)
        return f"abs({x})", xi

    def _e_math(self, d):
        x, _ = self.expr(d)
        fn = self.one(
            ("sqrt", "sin", "exp", "tanh", "log1p", "cos", "atan", "erf", "expm1", "cosh", "fabs")
        )
        # the others get clip(x)
        safe = {"sqrt": f"abs({x}) + 1.0", "log1p": f"abs({x})", "tanh": x, "atan": x, "erf": x,
                "fabs": x}  # fmt: skip
        arg = safe.get(fn, clip(x))
        return f"math.{fn}({arg})", False

    def _e_math2(self, d):
        x, y = self.expr(d)[0], self.expr(d)[0]
        fn = self.one(("hypot", "atan2", "copysign", "fmod", "pow"))
        if fn == "fmod":
            return f"math.fmod({clip(x)}, {self.one(('1.5', '-2.5'))})", False
        if fn == "pow":
            return f"math.pow({clip(x)}, {self.choose(4)})", False
        return f"math.{fn}({x}, {y})", False

    def _e_pow(self, d):
        x, xi = self.expr(d)
        form = self.choose(4)
        if form == 0:
            return f"({clip(x)} ** {self.choose(5)})", xi
        if form == 1:
            return f"((1.0 + abs({x})) ** -{1 + self.choose(3)})", False
        if form == 2:
            return f"pow({clip(x)}, {self.choose(4)})", xi
        return f"((1.0 + abs({x})) ** 0.5)", False

    def _e_minmax(self, d):
        args = [self.expr(d) for _ in range(2 + self.choose(2))]
        fn = self.one(("min", "max"))
        return f"{fn}({', '.join(a for a, _ in args)})", any(i for _, i in args)

    def _e_ifexp(self, d):
        c = self.cond(1)
        (x, xi), (y, yi) = self.expr(d), self.expr(d)
        return f"({x} if {c} else {y})", xi or yi

    def _e_fmod(self, d):
        x, _ = self.expr(d)
        if self.fmod and self.choose(2):
            return f"({x} % {self.one(('1.5', '-1.5'))})", False
        return f"({x} // {self.one(('2.0', '-2.0'))})", False

    def _e_g(self, d):
        (x, _), (y, _) = self.expr(d), self.expr(d)
        return f"g({x}, {y})", True  # g returns an int where it returns u or v

    def _e_h(self, d):
        arr = self.array_ref(self.writable())
        return f"h({arr.text}, {self.expr(d)[0]})", True

    def float_expr(self, d: int = EXPR_DEPTH) -> str:
        """An expression that is surely a float."""
        x, maybe_int = self.expr(d)
        return f"float({x})" if maybe_int else x

    def factor(self) -> str:
        """A multiplier of magnitude at most 1 (so repeated ``*=`` cannot overflow)."""
        kind = self.pick({"const": 1, "tanh": 2, "cos": 1})
        if kind == "const":
            return self.one(("0.5", "-0.75", "0.25"))
        x = self.float_expr(1)
        return f"math.tanh({x})" if kind == "tanh" else f"math.cos({clip(x)})"

    # ------------------------------------------------------------------ conditions
    def compare(self) -> str:
        """One comparison of two floats, two ints, or an int and a float."""
        kind = self.pick({"float": 4, "int": 2, "mixed": 1})
        x = self.int_expr(1) if kind != "float" else self.expr(1)[0]
        y = self.int_expr(1) if kind == "int" else self.expr(1)[0]
        return f"{x} {self.one(CMP)} {y}"

    def cond(self, d: int = 2) -> str:
        """A condition; the operands of and/or after the first, the comparisons of a chain after
        the first, and a while loop's condition (with break in the body) are lowered as values
        inside the branches of another conditional value."""
        # fmt: off
        kind = self.pick({
            "cmp": 5, "parity": 1, "and": d, "or": d, "not": d, "truth": 1, "chain": bool(d),
            "multi": d
        })
        # fmt: on
        if kind == "cmp":
            return self.compare()
        if kind == "parity":
            return f"{self.int_expr(1)} % 2 == 0"
        if kind == "chain":  # x < y < z: the comparisons after the first are nested
            x, y = self.expr(1)[0], self.expr(1)[0]
            rest = [f"{self.one(CMP)} {self.expr(1)[0]}" for _ in range(1 + self.choose(2))]
            return f"{x} {self.one(CMP)} {y} " + " ".join(rest)
        if kind in ("and", "or"):
            return f"({self.cond(d - 1)} {kind} {self.cond(d - 1)})"
        if kind == "multi":  # x and y and z: the operands after the first are nested
            return "(" + f" {self.one(('and', 'or'))} ".join(self.cond(0) for _ in range(3)) + ")"
        if kind == "not":
            return f"(not {self.cond(d - 1)})"
        return self.expr(1)[0]

    # ------------------------------------------------------------------ statements
    def block(self, max_stmts: int = 3) -> None:
        """One or more statements at ``self.indent``; stops after a jump (the rest is dead)."""
        for _ in range(1 + self.choose(max_stmts)):
            if self.stmt():
                return

    def nested(self, header: str, body: Callable[[], None]) -> None:
        """``header:`` and an indented body; the names the body binds stay inside it."""
        self.emit(header + ":")
        saved = (dict(self.ints), list(self.readonly), list(self.floats), self.loop_var,
                 list(self.arrays))
        self.loop_var = None
        self.indent += 1
        self.depth += 1
        body()
        self.depth -= 1
        self.indent -= 1
        self.ints, self.readonly, self.floats, self.loop_var, self.arrays = saved

    def stmt(self) -> bool:
        """Emit one statement; True when it was a jump (break, continue, return)."""
        nest = self.depth < self.max_depth
        swappable = len([n for n in self.floats if n not in self.int_capable]) >= 2
        # fmt: off
        kind = self.pick({
            "assign": 5, "aug": 4, "store": 4 * bool(self.writable()), "if": 3 * nest,
            "for": 3 * (nest and self.budget >= 2), "while": nest and self.budget >= 2,
            "jump": 2 * (self.depth > 0), "bare_jump": self.depth > 0,
            "swap": 2 * (swappable or bool(self.writable())), "pair": 1, "chained": 1,
            "ifdef": nest, "call": "h" in self.helpers and bool(self.writable()),
            "lastdef": nest and self.budget >= 4,
            "rebind": 2 * (self.loop_var is not None), "comp": self.budget >= 2,
            "seeded": nest and self.budget >= 4,
            "renew": nest and self.numpy and self.budget >= 2,
            "choose": nest and self.numpy, "matvec": nest and self.numpy and self.budget >= 2
        })
        # fmt: on
        if kind == "bare_jump":
            self.jump()
            return True
        getattr(self, "_s_" + kind)()
        return False

    def _s_assign(self):
        self.emit(f"{self.one(self.floats)} = {self.float_expr()}")

    def _s_pair(self):  # both right-hand sides are evaluated before either name is bound
        p, q = self.floats[0], self.one(self.floats[1:])
        self.emit(f"{p}, {q} = {self.float_expr()}, {self.float_expr()}")

    def _s_chained(self):
        p, q = self.floats[-1], self.one(self.floats[:-1])
        self.emit(f"{p} = {q} = {self.float_expr()}")

    def _s_aug(self):
        self.augassign(self.one(self.floats))

    def _s_store(self):
        args = [a for a in self.writable() if a.text in ("a", "b")]
        arr = self.array_ref(args if args and self.choose(3) == 0 else self.writable())
        self.augassign(f"{arr.text}[{self.index(arr)}]")

    def _s_if(self):
        self.nested(f"if {self.cond()}", self.block)
        for _ in range(self.choose(2)):
            self.nested(f"elif {self.cond()}", self.block)
        if self.choose(2):
            self.nested("else", self.block)

    def _s_ifdef(self):
        """A new name bound on both branches of an if, used after it."""
        name = self.fresh("q")

        def branch():
            self.emit(f"{name} = {self.float_expr()}")
            self.floats.append(name)
            if self.choose(2):
                self.block(2)

        self.nested(f"if {self.cond()}", branch)
        self.nested("else", branch)
        self.floats.append(name)

    def _s_lastdef(self):
        """A new name bound inside a loop, on its first trip and then only when a condition
        holds, and used after it: the trips that skip it keep an earlier trip's value."""
        name, var = self.fresh("q"), self.fresh("t")
        trips = 1 + self.choose(min(4, self.budget))

        def body():
            def bind():
                self.emit(f"{name} = {self.float_expr()}")

            self.nested(f"if {var} == 0 or {self.cond(1)}", bind)
            self.ints[var] = frozenset()
            if self.choose(2):
                self.loop_body(trips)

        self.nested(f"for {var} in range({trips})", body)
        self.floats.append(name)

    def _s_jump(self):
        self.nested(f"if {self.cond()}", self.jump)

    def _s_swap(self):
        swappable = [n for n in self.floats if n not in self.int_capable]
        names = {a.text for a in self.arrays}
        # fmt: off
        kind = self.pick({"arrays": {"c", "d"} <= names, "scalars": len(swappable) >= 2,
                          "elements": bool(self.writable())})
        # fmt: on
        if kind == "arrays":
            self.emit("c, d = d, c")
        elif kind == "scalars":
            p = self.one(swappable)
            q = self.one([n for n in swappable if n != p])
            self.emit(f"{p}, {q} = {q}, {p}")
        else:
            x, y = self.element(self.writable()), self.element(self.writable())
            self.emit(f"{x}, {y} = {y}, {x}")

    def _s_rebind(self):
        """``i += k`` in the body of ``for i in ...`` (the next trip rebinds i anyway)."""
        self.emit(f"{self.loop_var} {self.one(('+=', '-=', '*='))} {self.one((1, 2, 3))}")
        self.ints[self.loop_var] = frozenset()  # no longer a valid index
        self.loop_var = None

    def _s_call(self):
        arr = self.array_ref(self.writable())
        self.emit(f"h({arr.text}, {self.float_expr(1)})")

    def augassign(self, target: str) -> None:
        # fmt: off
        op = self.pick({
            "=": 2, "+=": 3, "-=": 2, "*=": 2, "/=": 1, "%=": self.fmod, "//=": 1,
            "int": 3 * (target in self.int_capable)
        })
        # fmt: on
        if op == "int":  # stays an int if it is one
            rhs = self.int_expr(2) if self.choose(3) else f"({self.compare()})"
            self.emit(f"{target} {self.one(('+=', '-='))} {rhs}")
        elif op == "*=":
            self.emit(f"{target} *= {self.factor()}")
        elif op == "/=":
            self.emit(f"{target} /= (1.0 + abs({self.float_expr(1)}))")
        elif op in ("%=", "//="):
            self.emit(
                f"{target} {op} {self.one(('1.5', '-1.25') if op == '%=' else ('0.75', '-2.0'))}"
            )
        else:
            self.emit(f"{target} {op} {self.float_expr() if op == '=' else self.float_expr()}")

    def jump(self) -> None:
        kind = self.pick(
            {"return": 1, "break": 2 * (self.loops > 0), "continue": 2 * (self.loops > 0)}
        )
        if kind != "return":
            self.emit(kind)
            return
        vals = [self.expr()[0] for _ in range(self.returns)]
        self.emit("return " + ", ".join(vals))

    # ------------------------------------------------------------------ loops
    def ranges(self) -> list[tuple[str, int, frozenset]]:
        """(range text, most trips, classes the loop variable is a valid index for)."""
        none = frozenset()
        out = [(f"range({k})", k, frozenset(c for c, m in CLASS_MIN.items() if m >= k))
               for k in range(1, 5)]  # fmt: skip
        out.append(("range(3, -2, -1)", 5, none))
        if "n" in self.ints:
            for text, trips in (("range(n)", MAX_N), ("range(n, -1, -1)", MAX_N + 1),
                                ("range(n + 2, 0, -2)", (MAX_N + 3) // 2),
                                ("range(2, n + 3)", MAX_N + 1)):  # fmt: skip
                out.append((text, trips, none))
        for arr in self.arrays:
            if arr.text.isidentifier():
                cls, top, n = index_classes(arr.cls), CLASS_MAX[arr.cls], f"len({arr.text})"
                for text, trips in ((f"range({n})", top), (f"range({n} - 1, -1, -1)", top),
                                    (f"range(1, {n} - 1)", top - 2),
                                    (f"range(0, {n}, 2)", (top + 1) // 2)):  # fmt: skip
                    out.append((text, trips, cls))
        return [r for r in out if r[1] <= self.budget]

    def loop_body(self, trips: int) -> None:
        """The body of a loop of at most ``trips`` trips."""
        self.loops += 1
        self.budget //= trips
        self.block()
        self.budget *= trips
        self.loops -= 1

    def _s_for(self):
        var, elem = "ijk"[min(self.loops, 2)], f"e{self.loops}"
        arrays = [a for a in self.arrays if CLASS_MAX[a.cls] <= self.budget]
        form = self.pick({"range": 6, "iter": bool(arrays), "enumerate": bool(arrays)})
        if form == "range":
            text, trips, cls = self.one(self.ranges())
            header, ints, floats = f"for {var} in {text}", {var: cls}, []
        else:
            arr = self.array_ref(arrays)
            trips, floats = CLASS_MAX[arr.cls], [elem]
            if form == "iter":
                header, ints = f"for {elem} in {arr.text}", {}
            else:
                header = f"for {var}, {elem} in enumerate({arr.text})"
                ints = {var: index_classes(arr.cls)}

        def body():
            self.ints.update(ints)
            self.readonly += floats
            self.loop_var = var if var in ints else None
            self.loop_body(trips)

        self.nested(header, body)

    def _s_seeded(self):
        """A new name started from a float that the loop after it also reads unchanged (``r =
        x; for ...: r = r * c + x``): reverse mode once dropped the adjoint of such a start."""
        name, var = self.fresh("r"), self.fresh("t")
        seed = self.one([f for f in self.floats if f not in self.int_capable] or self.floats)
        trips = 1 + self.choose(min(4, self.budget))
        self.emit(f"{name} = {seed}")
        self.floats.append(name)

        def body():
            self.ints[var] = frozenset()
            self.emit(f"{name} = {name} * {self.factor()} + {seed}")
            if self.choose(2):
                self.loop_body(trips)

        self.nested(f"for {var} in range({trips})", body)
        self.floats.append(name)

    # ------------------------------------------------------------------ whole arrays (NumPy)
    def long_array(self) -> str:
        """An array of the full length L (a name, or one reversed)."""
        arr = self.one([a for a in self.arrays if a.cls == "L"])
        return arr.text + ("[::-1]" if arr.text.isidentifier() and self.choose(4) == 0 else "")

    def _s_renew(self):
        """An array a ``while`` loop renews until a test on its values fails (``e = e * 0.5 +
        x * a`` while ``np.sum(e * e)`` stays small), or until a count; then used."""
        name, counter = self.fresh("arr"), self.fresh("m")
        trips = 1 + self.choose(min(4, self.budget))
        self.emit(f"{name} = {self.long_array()}{self.one(('.copy()', ' * 0.5'))}")
        self.emit(f"{counter} = 0")
        test = self.pick({"sum": 2, "element": 1, "count": 1})
        head = f"{counter} < {trips}"
        if test == "sum":
            head += f" and np.sum({name} * {name}) < {self.one(('4.0', '20.0'))}"
        elif test == "element":
            head += f" and {name}[{self.one(('0', '-1'))}] {self.one(CMP[:4])} {self.atom()}"

        def body():
            self.emit(f"{counter} += 1")
            self.ints[counter] = frozenset()
            step = self.pick({"affine": 2, "tanh": 1, "two": 1})
            other = self.long_array()
            if step == "affine":
                self.emit(f"{name} = {name} * {self.factor()} + {self.float_expr(1)} * {other}")
            elif step == "tanh":
                self.emit(f"{name} = np.tanh({name} + {self.factor()} * {other})")
            else:  # a second array made in the trip, then the renewal reads both
                tmp = self.fresh("tmp")
                self.emit(f"{tmp} = {name} * {other}")
                self.emit(f"{name} = {name} * 0.5 + {tmp} * {self.factor()}")
            if self.choose(3) == 0:
                self.nested(f"if {self.cond(1)}", lambda: self.emit("break"))

        self.nested(f"while {head}", body)
        self.ints[counter] = frozenset()
        self.arrays.append(Arr(name, "L", True))

    def _s_choose(self):
        """An array chosen by a branch: a new one from either side (then writable), or one of
        two arrays themselves (then only read through the new name)."""
        name = self.fresh("arr")
        form = self.pick({"ifexp": 2, "if": 2, "alias": 1})
        p, q = self.long_array(), self.long_array()
        if form == "ifexp":
            self.emit(f"{name} = {p} * {self.factor()} if {self.cond(1)} else {q}.copy()")
        elif form == "if":
            self.nested(f"if {self.cond(1)}",
                        lambda: self.emit(f"{name} = {p} + {self.float_expr(1)}"))
            self.nested("else", lambda: self.emit(f"{name} = {q} * {self.factor()}"))
        else:
            self.emit(f"{name} = {p} if {self.cond(1)} else {q}")
        self.arrays.append(Arr(name, "L", form != "alias"))

    def _s_matvec(self):
        """Matrix products on an array a ``for`` loop carries (``e = np.tanh(M @ e) + x * a``),
        sometimes with the matrix renewed too (``M = M + np.outer(e, e) * 0.1``)."""
        mat, name, var = self.fresh("M"), self.fresh("arr"), self.fresh("t")
        trips = 1 + self.choose(min(3, self.budget))
        self.emit(f"{mat} = np.outer({self.long_array()}, {self.long_array()}) * 0.1")
        self.emit(f"{name} = {self.long_array()}.copy()")
        renew_matrix = self.choose(3) == 0

        def body():
            self.ints[var] = frozenset()
            product = self.one((f"{mat} @ {name}", f"{name} @ {mat}", f"{mat}.T @ {name}"))
            self.emit(f"{name} = np.tanh({product}) + {self.factor()} * {self.long_array()}")
            if renew_matrix:
                self.emit(f"{mat} = {mat} * 0.5 + np.outer({name}, {self.long_array()}) * 0.1")

        self.nested(f"for {var} in range({trips})", body)
        self.arrays.append(Arr(name, "L", True))

    def _s_comp(self):
        """A comprehension's value assigned to a name: a sum, a filtered sum, the max of a list
        or any() of a generator, over an array or a range (its variable is the comprehension's
        own: it must not clobber a name of the same spelling outside)."""
        var = self.fresh("w")
        arrays = [a for a in self.arrays if CLASS_MAX[a.cls] <= self.budget]
        saved = dict(self.ints), list(self.readonly)
        if arrays and self.choose(2):
            clause = f"for {var} in {self.array_ref(arrays).text}"
            self.readonly.append(var)
        else:
            clause = f"for {var} in range({1 + self.choose(min(6, self.budget))})"
            self.ints[var] = frozenset()
        self.budget //= 2  # (helper calls in the element run once per element)
        form = self.pick({"sum": 3, "filter": 2, "max": 1, "any": 1})
        elt = self.float_expr(2)
        if form == "sum":
            value = f"sum({elt} {clause})"
        elif form == "filter":
            value = f"sum([{elt} {clause} if {self.cond(1)}])"
        elif form == "max":  # never empty: no filter
            value = f"max([{elt} {clause}])"
        else:
            value = f"float(any({self.cond(1)} {clause}))"
        self.budget *= 2
        self.ints, self.readonly = saved
        self.emit(f"{self.one(self.floats)} {self.one(('=', '+='))} {value}")

    def _s_while(self):
        trips = 1 + self.choose(min(4, self.budget))
        counter = self.fresh("m")
        self.emit(f"{counter} = 0")
        form = self.pick({"count": 2, "compound": 2, "true": 1})
        head = {"count": f"{counter} < {trips}", "true": "True"}.get(form)
        if form == "compound":
            head = f"{counter} < {trips} and {self.cond(1)}"

        def body():
            self.emit(f"{counter} += 1")
            if form == "true":
                self.nested(f"if {counter} > {trips}", lambda: self.emit("break"))
            self.ints[counter] = frozenset()
            self.loop_body(trips)

        self.nested(f"while {head}", body)
        self.ints[counter] = frozenset()


# ---------------------------------------------------------------------- whole programs
def helper(choose, name: str, k0_classes: frozenset, fmod: bool) -> str:
    """``def g(u, v)`` (scalars) or ``def h(z, u)`` (writes into the array z); no loop in either
    runs more than 12 trips, and f may call them in its loops."""
    is_g = name == "g"
    scalars, arrays = (["u", "v", "p"], []) if is_g else (["u", "p"], [Arr("z", "H", True)])
    ints = {"K0": k0_classes}
    gen = Gen(choose, floats=scalars, int_capable=set(scalars) - {"p"}, ints=ints, arrays=arrays,
              budget=12 - 4 * is_g, max_depth=2, fmod=fmod)  # fmt: skip
    gen.emit(f"p = {gen.one(('0.0', 'u', 'v * 0.5')) if is_g else '0.0'}")
    gen.block(3)
    gen.emit(f"return {gen.expr()[0]}")
    return f"def {name}({'u, v' if is_g else 'z, u'}):\n" + "\n".join(gen.lines) + "\n"


def program(choose: Callable[[int], int], nonfinite: bool = False,
            numpy: bool = True) -> Program:
    """A random program: ``import math``, module constants, the helpers, then ``f``.
    ``nonfinite``: it will run on inputs with infinities or nans; ``numpy``: ``f`` may use
    whole-array NumPy statements (``Gen._s_renew`` ...)."""
    fmod = not (nonfinite and "fmod_of_nan_product" in AVOID)
    helpers = {"g"} if choose(2) else set()
    if choose(3) == 0:
        helpers.add("h")
    mutates = ("", "a", "ab")[choose(3)]
    returns = 1 + choose(2)
    k0 = 1 + choose(2)
    k0_classes = frozenset(c for c, m in CLASS_MIN.items() if m > k0)
    parts = ["import math\n\nimport numpy as np\n\n"
             f"C0 = {('0.75', '-1.25', '2.5')[choose(3)]}\nK0 = {k0}\n"]
    parts += [helper(choose, name, k0_classes, fmod) for name in sorted(helpers)]
    arrays = [Arr("a", "L", "a" in mutates), Arr("b", "L", "b" in mutates), Arr("c", "L", True)]
    prologue = ["L = len(a)", "c = a.copy()"]
    if choose(2):
        prologue.append("d = b.copy()")
        arrays.append(Arr("d", "L", True))
    bases = ["c", "a"] if "a" in mutates else ["c"]
    for name, suffix, cls in NAMED_VIEWS:
        if choose(3) == 0:
            prologue.append(f"{name} = {bases[choose(len(bases))]}{suffix}")
            arrays.append(Arr(name, cls, True))
    prologue += ["s = 0", "t = 0.0", f"u = {('x', 'y * 0.5', '1.0')[choose(3)]}"]
    ints = {"n": frozenset(), "L": frozenset(), "K0": k0_classes}
    gen = Gen(choose, floats=["s", "t", "u", "x", "y"], int_capable={"s"}, ints=ints,
              arrays=arrays, helpers=helpers, returns=returns, fmod=fmod,
              numpy=numpy)  # fmt: skip
    for line in prologue:
        gen.emit(line)
    gen.block(5)
    gen.emit("return " + ", ".join(gen.expr()[0] for _ in range(returns)))
    parts.append("def f(x, y, a, b, n):\n" + "\n".join(gen.lines) + "\n")
    return Program("\n\n".join(parts), returns)


def random_program(seed: int, nonfinite: bool = False, numpy: bool = True) -> Program:
    """A program drawn by ``random.Random(seed)`` (for quick fuzzing outside hypothesis)."""
    return program(random.Random(seed).randrange, nonfinite, numpy)


_LOADED = itertools.count()


def load(prog: Program, directory: str, prefix: str):
    """A module of ``prog``'s source (written to a file in ``directory``: zymase reads source
    from files) plus ``F(x, y, a, b, n)``, a float-valued wrapper of ``f``."""
    import importlib.util
    import os

    wrap = ("def F(x, y, a, b, n):\n    r0, r1 = f(x, y, a, b, n)\n    return r0 + 0.5 * r1\n"
            if prog.returns == 2 else "def F(x, y, a, b, n):\n    return 1.0 * f(x, y, a, b, n)\n")
    name = f"{prefix}_{os.getpid()}_{next(_LOADED)}"
    path = os.path.join(directory, name + ".py")
    with open(path, "w") as fh:
        fh.write(prog.source + "\n\n" + wrap)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
