"""IR functions -> LLVM IR text.  This is the only place where regions become a CFG.

Internal calling convention: ``define internal {i32, results...} @f(ptr %ctx, params...)``.  The
``i32`` is a status: 0 for success, 1 when an ``rt.assert`` (or a callee) raised; the raising site
stores its error id (and two i64 payloads) in the context, which the Python wrapper turns into the
user's exception.  Error blocks are emitted at the end of the function, marked cold.

Context layout (``ctx``): ``{i64 err_id, i64 err_a, i64 err_b, ptr arena, i64 len, i64 cap}``.

What a function frees itself (its buffers that do not escape, its tape) it also frees when it
raises: each sits in a stack slot, null outside its lifetime, that the ``fail`` block frees
(``FunctionEmitter.slot`` and ``unwind``).  The arena (escaping buffers) is the entry's to free.
"""

from __future__ import annotations

from ...ir.core import Func, Op, Value
from ...ir.ops import Call, Condition, Constant, For, If, Parallel, Return, While, Yield
from . import arrays, host, ops, tape  # noqa: F401  (each fills the emitter table)
from .alias import AliasScopes
from .matmul import blas_declarations, kernel_name, matmul_kernels
from .parallel import emit_parallel
from .runtime import int_runtime
from .table import OP_EMITTERS
from .target import GENERIC, Target
from .types import ltype

COLD = "!{!\"branch_weights\", i32 1048575, i32 1}"
COLD_CALL = "!{!\"branch_weights\", i32 1, i32 1048575}"


class ModuleEmitter:
    """Collects functions, globals, declarations and the error table of one LLVM module."""

    def __init__(self, fastmath: bool, counting: bool = False, target: Target = GENERIC,
                 deterministic: bool = False, vector_math: bool = True):
        self.fastmath = fastmath
        self.vector_math = vector_math  # log1p/expm1 from exp/log, which vectorize (ops.py)
        self.deterministic = deterministic  # parallel loops give the same bits for any threads
        self.target = target
        self.counting = counting  # count tape slots per push site (tape_report)
        self.sites: list = []  # op of each counted push site
        self.globals: list[str] = []
        self.declares: set[str] = set()
        self.errors: list[tuple] = []  # error id - 1 -> (kind, msg, loc)
        self.funcs: list[str] = []
        self.alias_md: list[str] = []  # "!N = ..." metadata nodes (alias.py)
        self.cold_loop: tuple | None = None  # (no vectorize, no unroll) loop properties
        self._kernels: set[str] = set()
        self._n = 0

    def metadata(self, node: str) -> int:
        """Number a module-level metadata node (!0 and !1 are the branch weights)."""
        k = len(self.alias_md) + 2
        self.alias_md.append(f"!{k} = {node}")
        return k

    def fresh_global(self, prefix: str) -> str:
        self._n += 1
        return f"@{prefix}.{self._n}"

    def error_id(self, kind: str, msg: str, loc) -> int:
        self.errors.append((kind, msg, loc))
        return len(self.errors)

    def declare(self, text: str) -> None:
        self.declares.add(text)

    def count_site(self, op) -> int | None:
        """The counter index of a tape push op (None when not counting)."""
        if not self.counting:
            return None
        self.sites.append(op)
        return len(self.sites) - 1

    def request_int_runtime(self, t) -> None:
        """Emit once the floor division/modulo/power functions of an int type other than i64
        and i32 (the runtime module has those two)."""
        name = f"int.{t}"
        if str(t) not in ("i64", "i32") and name not in self._kernels:
            self._kernels.add(name)
            self.funcs.append(int_runtime(t))

    def request_matmul(self, ranks: tuple[int, int], dtype: str, acc: bool) -> str:
        """The name of the matrix-product kernel for ``ranks`` and ``dtype`` (``acc``: adding to
        the output), emitted once with the helpers and BLAS declarations it needs."""
        for name, text in matmul_kernels(ranks, dtype, acc, self.target.blas).items():
            if name not in self._kernels:
                self._kernels.add(name)
                self.funcs.append(text)
        if dtype in self.target.blas:
            self.declares.update(blas_declarations(dtype))
        return kernel_name(ranks, dtype, acc)

    def text(self, runtime: str) -> str:
        if self.counting:
            self.globals.append(f"@zy.tape_counts = global [{max(1, len(self.sites))} x i64] "
                                "zeroinitializer")
        parts = [runtime, *sorted(self.declares), *self.globals, *self.funcs, *self.alias_md,
                 f"!0 = {COLD}", f"!1 = {COLD_CALL}"]
        return "\n".join(parts) + "\n"


def symbol(func: Func) -> str:
    """The LLVM name of a user function (prefixed so it never collides with libm or libc)."""
    return f'@"zy.f.{func.sym_name}"'


def result_type(func: Func) -> str:
    rts = [ltype(t) for t in func.result_types]
    return "{" + ", ".join(["i32", *rts]) + "}"


class FunctionEmitter:
    """Emits one function.  ``vals`` maps IR values to LLVM operands (names or literals)."""

    def __init__(self, mod: ModuleEmitter, func: Func, module):
        self.mod = mod
        self.func = func
        self.module = module  # the IR module (for callee signatures)
        self.lines: list[str] = []
        self.cold: list[str] = []
        self.cold_depth = 0  # inside the checked copy of a versioned nest (_cold_loop)
        self.vals: dict[Value, str] = {}
        self.n = 0
        self.cur = "entry"
        self.ret_type = result_type(func)
        self.fm = "reassoc contract " if mod.fastmath else ""
        self.entry_allocas: list[str] = []
        self.unwind: list[str] = []  # the fail block's lines: free what the call still holds
        self.owned: dict[Value, str] = {}  # a buffer this function frees -> its slot
        self.tape_sets: str | None = None  # the slot heading its list of tape sets (tape.py)
        self.scopes = AliasScopes(mod, func)
        self.in_chunk = False  # emitting the outlined body of a parallel loop (parallel.py)

    def sibling(self) -> FunctionEmitter:
        """An emitter for another function made from this one's code (a parallel loop's
        chunk): same module, same alias scopes, nested parallel loops run serially."""
        ch = FunctionEmitter(self.mod, self.func, self.module)
        ch.scopes = self.scopes
        ch.in_chunk = True
        return ch

    # ---- helpers used by the op emitters
    def fresh(self, prefix: str = "v") -> str:
        self.n += 1
        return f"%{prefix}{self.n}"

    def label(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def emit(self, line: str) -> None:
        self.lines.append("  " + line)

    def assign(self, rhs: str, prefix: str = "v") -> str:
        name = self.fresh(prefix)
        self.emit(f"{name} = {rhs}")
        return name

    def start(self, label: str) -> None:
        self.lines.append(f"{label}:")
        self.cur = label

    def val(self, v: Value) -> str:
        return self.vals[v]

    def alias_md(self, op: Op, array: Value) -> str:
        """Alias metadata for a load/store through ``array`` (see alias.py)."""
        return self.scopes.of_array(array)

    def raise_if_not(self, ok: str, kind: str, msg: str, loc, a: str = "0", b: str = "0"):
        """Branch to a cold block that records error ``kind`` when ``ok`` (i1) is false."""
        eid = self.mod.error_id(kind, msg, loc)
        cont, err = self.label("ok"), self.label("raise")
        self.emit(f"br i1 {ok}, label %{cont}, label %{err}, !prof !0")
        self.cold += [f"{err}:", f"  store i64 {eid}, ptr %ctx",
                      f"  %pa{eid} = getelementptr i8, ptr %ctx, i64 8",
                      f"  store i64 {a}, ptr %pa{eid}",
                      f"  %pb{eid} = getelementptr i8, ptr %ctx, i64 16",
                      f"  store i64 {b}, ptr %pb{eid}", "  br label %fail"]
        self.start(cont)

    def slot(self, ty: str, init: str, prefix: str) -> str:
        """A stack slot of type ``ty`` holding ``init`` from the function's entry on, so the
        ``fail`` block can read it whichever raise reaches it."""
        p = self.fresh(prefix)
        self.entry_allocas += [f"  {p} = alloca {ty}, align 8", f"  store {ty} {init}, ptr {p}"]
        return p

    # ---- function
    def emit_function(self, linkage: str = "internal") -> str:
        params = ["ptr %ctx"] + [f"{ltype(a.type)} %a{k}" for k, a in enumerate(self.func.args)]
        for k, a in enumerate(self.func.args):
            self.vals[a] = f"%a{k}"
        self.start("entry")
        self.emit_block(self.func.body)
        self.lines[1:1] = self.entry_allocas
        fail = ["fail:", *self.unwind, f"  ret {self.ret_type} {self._status_value(1)}"]
        head = f"define {linkage} {self.ret_type} {symbol(self.func)}({', '.join(params)}) #0 {{"
        return "\n".join([head, *self.lines, *self.cold, *fail, "}"])

    def _status_value(self, status: int) -> str:
        rts = [ltype(t) for t in self.func.result_types]
        if not rts:
            return f"{{i32 {status}}}"
        return "{" + ", ".join([f"i32 {status}", *(f"{t} poison" for t in rts)]) + "}"

    def emit_block(self, block) -> list[str]:
        """Emit a block's ops; returns the operands of its terminator (yield/condition/return)."""
        for op in block.ops:
            if isinstance(op, (Yield, Condition)):
                return [self.val(v) for v in op.operands]
            if isinstance(op, Return):
                self._return(op)
                return []
            self.emit_op(op)
        return []

    def emit_op(self, op: Op) -> None:
        special = {For: self._for, Parallel: self._parallel, While: self._while, If: self._if,
                   Call: self._call}.get(type(op))
        if special is not None:
            results = special(op)
        else:
            fn = OP_EMITTERS.get(type(op))
            if fn is None:
                raise NotImplementedError(f"LLVM backend: no emitter for {op.name}")
            results = fn(self, op)
        for r, s in zip(op.results, results or []):
            self.vals[r] = s

    def _return(self, op):
        agg = "{i32 0" + "".join(f", {ltype(v.type)} poison" for v in op.operands) + "}"
        if len(op.operands) == 0:
            self.emit(f"ret {self.ret_type} {{i32 0}}")
            return
        cur = self.assign(f"insertvalue {self.ret_type} {agg}, i32 0, 0")
        for k, v in enumerate(op.operands):
            cur = self.assign(f"insertvalue {self.ret_type} {cur}, {ltype(v.type)} "
                              f"{self.val(v)}, {k + 1}")
        self.emit(f"ret {self.ret_type} {cur}")

    # ---- structured control flow
    def _phis_at(self, pos: int, phis: list[str]) -> None:
        self.lines[pos:pos] = phis

    def _for(self, op):
        lb, ub, step = (self.val(v) for v in op.operands[:3])
        inits = [self.val(v) for v in op.operands[3:]]
        body = op.regions[0].block
        pre, hdr, bod, ext = self.cur, self.label("for"), self.label("body"), self.label("done")
        self.emit(f"br label %{hdr}")
        self.start(hdr)
        pos = len(self.lines)
        iv = self.fresh("i")
        carried = [self.fresh("c") for _ in inits]
        cond = self._loop_cond(iv, ub, step, op.operands[2])
        self.emit(f"br i1 {cond}, label %{bod}, label %{ext}")
        self.start(bod)
        self.vals[body.args[0]] = iv
        for a, c in zip(body.args[1:], carried):
            self.vals[a] = c
        yields = self.emit_block(body)
        nxt = self.assign(f"add nsw i64 {iv}, {step}", "inext")
        latch = self.cur
        self.emit(f"br label %{hdr}" + self._cold_loop())
        phis = [f"  {iv} = phi i64 [{lb}, %{pre}], [{nxt}, %{latch}]"]
        for c, a, i, y in zip(carried, body.args[1:], inits, yields):
            phis.append(f"  {c} = phi {ltype(a.type)} [{i}, %{pre}], [{y}, %{latch}]")
        self._phis_at(pos, phis)
        self.start(ext)
        return carried

    def _parallel(self, op):
        return emit_parallel(self, op)

    def _cold_loop(self) -> str:
        """Loop metadata for a loop that runs only on the way to an IndexError (the checked
        copy of a versioned loop nest): not vectorized or unrolled, which is compile time."""
        if not self.cold_depth:
            return ""
        me = self.mod
        if me.cold_loop is None:
            me.cold_loop = (me.metadata('!{!"llvm.loop.vectorize.enable", i1 false}'),
                            me.metadata('!{!"llvm.loop.unroll.disable"}'))
        k = len(me.alias_md) + 2
        me.metadata(f"distinct !{{!{k}, !{me.cold_loop[0]}, !{me.cold_loop[1]}}}")
        return f", !llvm.loop !{k}"

    def _loop_cond(self, iv, ub, step, step_value):
        k = _const(step_value)
        if k is not None and k > 0:
            return self.assign(f"icmp slt i64 {iv}, {ub}")
        if k is not None and k < 0:
            return self.assign(f"icmp sgt i64 {iv}, {ub}")
        lt = self.assign(f"icmp slt i64 {iv}, {ub}")
        gt = self.assign(f"icmp sgt i64 {iv}, {ub}")
        pos = self.assign(f"icmp sgt i64 {step}, 0")
        return self.assign(f"select i1 {pos}, i1 {lt}, i1 {gt}")

    def _while(self, op):
        before, after = op.regions[0].block, op.regions[1].block
        inits = [self.val(v) for v in op.operands]
        pre, hdr, aft, ext = self.cur, self.label("while"), self.label("wbody"), self.label("wdone")
        self.emit(f"br label %{hdr}")
        self.start(hdr)
        pos = len(self.lines)
        args = [self.fresh("w") for _ in inits]
        for a, s in zip(before.args, args):
            self.vals[a] = s
        cond, *fwd = self.emit_block(before)
        self.emit(f"br i1 {cond}, label %{aft}, label %{ext}")
        self.start(aft)
        for a, s in zip(after.args, fwd):
            self.vals[a] = s
        yields = self.emit_block(after)
        latch = self.cur
        self.emit(f"br label %{hdr}")
        phis = [f"  {s} = phi {ltype(a.type)} [{i}, %{pre}], [{y}, %{latch}]"
                for s, a, i, y in zip(args, before.args, inits, yields)]
        self._phis_at(pos, phis)
        self.start(ext)
        return fwd

    def _if(self, op):
        cond = self.val(op.operands[0])
        thn, els, mrg = self.label("then"), self.label("else"), self.label("endif")
        self.emit(f"br i1 {cond}, label %{thn}, label %{els}")
        ends = []
        for label, block in ((thn, op.regions[0].block), (els, op.regions[1].block)):
            self.start(label)
            cold = label is els and op.attrs.get("bounds_guard") == "raises"
            self.cold_depth += cold
            ys = self.emit_block(block)
            self.cold_depth -= cold
            ends.append((self.cur, ys))
            self.emit(f"br label %{mrg}")
        self.start(mrg)
        out = []
        for k, r in enumerate(op.results):
            inc = ", ".join(f"[{ys[k]}, %{lbl}]" for lbl, ys in ends)
            out.append(self.assign(f"phi {ltype(r.type)} {inc}", "m"))
        return out

    def _call(self, op):
        callee = self.module[op.attrs["callee"]]
        rt = result_type(callee)
        args = ", ".join(["ptr %ctx"] + [f"{ltype(v.type)} {self.val(v)}" for v in op.operands])
        r = self.assign(f"call {rt} {symbol(callee)}({args})", "call")
        st = self.assign(f"extractvalue {rt} {r}, 0")
        bad = self.assign(f"icmp ne i32 {st}, 0")
        cont = self.label("ret")
        self.emit(f"br i1 {bad}, label %fail, label %{cont}, !prof !1")
        self.start(cont)
        return [self.assign(f"extractvalue {rt} {r}, {k + 1}") for k in range(len(op.results))]


def _const(v: Value):
    op = v.op
    if op is not None and isinstance(op, Constant):
        return op.attrs["value"]
    return None
