"""The IR core: SSA values, ops with nested regions, blocks, functions and modules.

The design follows MLIR: an op has operands, results, attributes and regions; a region holds one
block (control flow is structured, so regions never need more); a block has arguments instead of
PHI nodes.  Every op carries a source location.  Op classes register themselves by their text
name (``arith.addf``) in ``OPS``; traits on the class say what passes may assume about them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from .types import ArrayType, Type

# Traits an op class may declare.
PURE = "pure"  # no memory effects, no side effects: may be CSE'd, hoisted, removed if unused
COMMUTATIVE = "commutative"
TERMINATOR = "terminator"
READS = "reads"  # reads array memory through its operands
WRITES = "writes"  # writes array memory through its operands
ALLOCATES = "allocates"  # returns a fresh buffer
MAY_RAISE = "may_raise"  # can stop the program with a user-visible error
VIEW = "view"  # result aliases its first operand's buffer
LOOP = "loop"  # runs its regions repeatedly (scf.for, scf.while)
EXPENSIVE = "expensive"  # costly to run again (transcendental math): reverse mode stores it

OPS: dict[str, type[Op]] = {}


@dataclass(frozen=True, slots=True)
class Loc:
    """A source location: the user's file, 1-based line and column, and the enclosing function."""

    file: str
    line: int
    col: int
    func: str = ""

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


UNKNOWN_LOC = Loc("<unknown>", 0, 0)


class Value:
    """An SSA value: the result of an op or the argument of a block."""

    __slots__ = ("type", "owner", "index", "uses", "hint")

    def __init__(self, type: Type, owner: Op | Block | None = None, index: int = 0, hint: str = ""):
        self.type = type
        self.owner = owner
        self.index = index
        self.uses: list[tuple[Op, int]] = []
        self.hint = hint

    @property
    def op(self) -> Op | None:
        """The op that defines this value, or None for a block argument."""
        return self.owner if isinstance(self.owner, Op) else None

    @property
    def block(self) -> Block | None:
        """The block this value is defined in."""
        return self.owner if isinstance(self.owner, Block) else (self.owner and self.owner.parent)

    def replace_all_uses_with(self, new: Value) -> None:
        for op, i in list(self.uses):
            op.set_operand(i, new)

    def __repr__(self) -> str:
        return f"<Value {self.hint or '?'}: {self.type}>"


class Op:
    """An operation.  Subclasses set ``name`` (text form) and ``traits``."""

    name: ClassVar[str] = ""
    traits: ClassVar[frozenset[str]] = frozenset()
    # operand positions written through (ops with WRITES); None: every array operand
    written_operands: ClassVar[tuple[int, ...] | None] = None
    __slots__ = ("operands", "results", "attrs", "regions", "loc", "parent")

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if cls.name:
            OPS[cls.name] = cls

    def __init__(
        self,
        operands: list[Value] = (),
        result_types: list[Type] = (),
        attrs: dict[str, Any] | None = None,
        regions: list[Region] = (),
        loc: Loc = UNKNOWN_LOC,
    ):
        self.operands: list[Value] = []
        for v in operands:
            self._add_operand(v)
        self.results = [Value(t, self, i) for i, t in enumerate(result_types)]
        self.attrs = dict(attrs or {})
        self.regions: list[Region] = []
        for r in regions:
            self.add_region(r)
        self.loc = loc
        self.parent: Block | None = None

    # ---- operands and regions
    def _add_operand(self, v: Value) -> None:
        if not isinstance(v, Value):
            raise TypeError(f"{self.name}: operand {v!r} is not an IR value")
        v.uses.append((self, len(self.operands)))
        self.operands.append(v)

    def set_operand(self, i: int, v: Value) -> None:
        old = self.operands[i]
        old.uses.remove((self, i))
        v.uses.append((self, i))
        self.operands[i] = v

    def set_operands(self, values: list[Value]) -> None:
        self.drop_operands()
        for v in values:
            self._add_operand(v)

    def drop_operands(self) -> None:
        for i, v in enumerate(self.operands):
            v.uses.remove((self, i))
        self.operands = []

    def add_region(self, r: Region) -> Region:
        r.parent = self
        self.regions.append(r)
        return r

    @property
    def result(self) -> Value:
        assert len(self.results) == 1, f"{self.name} has {len(self.results)} results"
        return self.results[0]

    def verify(self) -> None:
        """Check this op's local invariants (subclasses add checks; raise VerifyError)."""

    def has_trait(self, trait: str) -> bool:
        return trait in self.traits

    def written(self) -> list[Value]:
        """The operands this op writes through: its ``written_operands``, or every array
        operand of an op with WRITES that does not say which; none for other ops."""
        if WRITES not in self.traits:
            return []
        if self.written_operands is not None:
            return [self.operands[i] for i in self.written_operands]
        return [v for v in self.operands if isinstance(v.type, ArrayType)]

    @property
    def is_pure(self) -> bool:
        return PURE in self.traits

    # ---- structure
    def walk(self) -> Iterator[Op]:
        """This op and every op nested in its regions, in program order (pre-order).  A block's
        ops are listed when the walk reaches it.  (A stack, not recursion: the hottest loop of
        the passes, and a nested generator costs each op one step per level of nesting.)"""
        yield self
        if not self.regions:
            return
        stack = [_nested_ops(self)]
        while stack:
            op = next(stack[-1], None)
            if op is None:
                stack.pop()
                continue
            yield op
            if op.regions:
                stack.append(_nested_ops(op))

    def erase(self) -> None:
        """Remove from the parent block and drop all operand uses (recursively)."""
        for op in list(self.walk()):
            op.drop_operands()
        if self.parent is not None:
            self.parent.ops.remove(self)
            self.parent = None

    def detach(self) -> None:
        if self.parent is not None:
            self.parent.ops.remove(self)
            self.parent = None

    @property
    def parent_op(self) -> Op | None:
        b = self.parent
        return b.parent.parent if b is not None and b.parent is not None else None

    def is_ancestor_of(self, op: Op) -> bool:
        while op is not None:
            if op is self:
                return True
            op = op.parent_op
        return False

    def __repr__(self) -> str:
        return f"<{self.name} at {self.loc}>"


class Block:
    """A list of ops with block arguments; the last op of a block in a region is its terminator."""

    __slots__ = ("args", "ops", "parent")

    def __init__(self, arg_types: list[Type] = ()):
        self.args = [Value(t, self, i) for i, t in enumerate(arg_types)]
        self.ops: list[Op] = []
        self.parent: Region | None = None

    def add_arg(self, t: Type, hint: str = "") -> Value:
        v = Value(t, self, len(self.args), hint)
        self.args.append(v)
        return v

    def erase_arg(self, i: int) -> None:
        assert not self.args[i].uses, "erasing a used block argument"
        del self.args[i]
        for j, a in enumerate(self.args):
            a.index = j

    def append(self, op: Op) -> Op:
        op.parent = self
        self.ops.append(op)
        return op

    def insert(self, index: int, op: Op) -> Op:
        op.parent = self
        self.ops.insert(index, op)
        return op

    def insert_before(self, anchor: Op, op: Op) -> Op:
        return self.insert(self.ops.index(anchor), op)

    @property
    def terminator(self) -> Op | None:
        return self.ops[-1] if self.ops and self.ops[-1].has_trait(TERMINATOR) else None

    @property
    def parent_op(self) -> Op | None:
        return self.parent.parent if self.parent is not None else None

    def walk(self) -> Iterator[Op]:
        for op in list(self.ops):
            yield from op.walk()


def _nested_ops(op: Op) -> Iterator[Op]:
    for r in op.regions:
        for b in r.blocks:
            yield from list(b.ops)


class Region:
    """A region of a structured op: in zymase always exactly one block."""

    __slots__ = ("blocks", "parent")

    def __init__(self, blocks: list[Block] | None = None):
        self.blocks: list[Block] = []
        self.parent: Op | None = None
        for b in blocks or [Block()]:
            self.add_block(b)

    def add_block(self, b: Block) -> Block:
        b.parent = self
        self.blocks.append(b)
        return b

    @property
    def block(self) -> Block:
        return self.blocks[0]


class Func(Op):
    """A function: one region whose block arguments are the parameters.

    Attributes: ``sym_name`` (str), ``result_types`` (list of types), and optional flags such as
    ``entry`` (called from Python), ``noalias`` (array arguments never overlap), ``arg_names``.
    Its text name (``func.func``) and its entry in ``OPS`` are set in ``ir/ops/func.py``.
    """


    def __init__(self, sym_name: str, arg_types, result_types, loc: Loc = UNKNOWN_LOC, **attrs):
        super().__init__(
            regions=[Region([Block(list(arg_types))])],
            attrs={"sym_name": sym_name, "result_types": list(result_types), **attrs},
            loc=loc,
        )

    @property
    def sym_name(self) -> str:
        return self.attrs["sym_name"]

    @property
    def body(self) -> Block:
        return self.regions[0].block

    @property
    def args(self) -> list[Value]:
        return self.body.args

    @property
    def arg_types(self) -> list[Type]:
        return [a.type for a in self.body.args]

    @property
    def result_types(self) -> list[Type]:
        return self.attrs["result_types"]


class Module:
    """A set of functions, one of which is usually the entry called from Python."""

    def __init__(self, funcs: list[Func] = ()):
        self.meta: dict = {}  # side information passes and transforms leave (not printed)
        self.funcs: dict[str, Func] = {}
        for f in funcs:
            self.add(f)

    def add(self, f: Func) -> Func:
        self.funcs[f.sym_name] = f
        return f

    def __getitem__(self, name: str) -> Func:
        return self.funcs[name]

    def __iter__(self) -> Iterator[Func]:
        return iter(list(self.funcs.values()))

    def walk(self) -> Iterator[Op]:
        for f in self:
            yield from f.walk()
