"""Activity analysis: which values and buffers can carry a derivative.

A scalar is *active* when it is **varied** (depends on an active input) and **useful** (can
influence an active output); only float and complex values are ever active.  Arrays are tracked
by the buffers they view (their *roots*: arguments and allocations, followed through views,
loop-carried values, branch merges and calls): a buffer is varied when an active argument is it
or a varied value is stored into it, and an array value is active when one of its roots is.
Active buffers get shadows; everything else (integer index math, inactive data) is skipped by
the transforms.  As in Enzyme, the analysis is conservative: it may call a value active that is
not, never the reverse.
"""

from __future__ import annotations

from ..errors import DifferentiationError
from ..ir.core import Func, Op, Value
from ..ir.ops import (
    Alloc,
    ArrayConst,
    AtomicAdd,
    Broadcast,
    Call,
    Condition,
    DataPtr,
    Dim,
    HostCall,
    Index,
    Load,
    Matmul,
    Offset,
    Relayout,
    Reshape,
    Return,
    Store,
    Stride,
    Subview,
    TapeMark,
    TapeNew,
    TapePop,
    TapePopRef,
    TapePush,
    TapePushRef,
    TapeRead,
    Transpose,
    Yield,
)
from ..ir.roots import array_roots, region_flows
from ..ir.types import ArrayType, ScalarType
from .rules import ZERO

# ops whose results are not differentiable values (indices, shapes, views, tape bookkeeping)
NOT_VALUES = (Dim, Stride, Index, Offset, DataPtr, Alloc, ArrayConst, Subview, Broadcast,
              Transpose, Reshape, Relayout, TapeNew, TapeMark, TapeRead, Yield, Condition, Return)


def is_float(v: Value) -> bool:
    t = v.type
    return isinstance(t, ScalarType) and t.kind in "fc"


def is_float_array(v: Value) -> bool:
    t = v.type
    return isinstance(t, ArrayType) and t.dtype.kind in "fc"


class Activity:
    """Activity of every value of ``func`` given active arguments and results.

    ``active_args``: indices of function arguments that are active (scalars: their value;
    arrays: their contents).  ``active_results``: indices of results that are differentiated.
    """

    def __init__(self, func: Func, active_args, active_results):
        self.func = func
        self.roots: dict[Value, set] = {}
        self.varied: set[Value] = set()
        self.varied_roots: set = set()
        self.useful: set[Value] = set()
        self.pushed = {op.attrs["pair"]: op for op in func.walk()
                       if isinstance(op, (TapePush, TapePushRef)) and "pair" in op.attrs}
        self.popped: dict = {}  # pair -> its pops (a while condition's values: two)
        for op in func.walk():
            if isinstance(op, (TapePop, TapePopRef)) and "pair" in op.attrs:
                self.popped.setdefault(op.attrs["pair"], []).append(op)
        self._find_roots()
        for i in active_args:
            a = func.args[i]
            if is_float(a):
                self.varied.add(a)
            elif is_float_array(a):
                self.varied_roots.add(a)
        self._propagate_varied()
        ret = func.body.terminator
        for i in active_results:
            self.useful.add(ret.operands[i])
        self._propagate_useful()

    # ------------------------------------------------------------------ queries
    def active(self, v: Value) -> bool:
        if is_float_array(v):
            return bool(self.roots.get(v, set()) & self.varied_roots)
        return is_float(v) and v in self.varied and v in self.useful

    def varied_value(self, v: Value) -> bool:
        if is_float_array(v):
            return self.active(v)
        return is_float(v) and v in self.varied

    # ------------------------------------------------------------------ roots
    def _find_roots(self):
        self.roots.update(array_roots(self.func))

    # ------------------------------------------------------------------ varied
    def _propagate_varied(self):
        changed = True
        while changed:
            changed = False
            for op in self.func.walk():
                changed |= self._varied_op(op)

    def _mark_varied(self, v: Value) -> bool:
        if is_float(v) and v not in self.varied:
            self.varied.add(v)
            return True
        return False

    def _varied_op(self, op: Op) -> bool:
        changed = False
        if isinstance(op, (Store, AtomicAdd)):
            if self.varied_value(op.operands[0]):
                changed |= self._vary_roots(op.operands[1])
        elif isinstance(op, Load):
            if self.active(op.operands[0]):
                changed |= self._mark_varied(op.result)
        elif isinstance(op, Matmul):
            if self.active(op.operands[0]) or self.active(op.operands[1]):
                changed |= self._vary_roots(op.operands[2])
        elif isinstance(op, HostCall):  # (the transforms refuse it then: check_host_call)
            if any(self.varied_value(v) for v in op.operands):
                for w in op.written():
                    changed |= self._vary_roots(w)
        elif isinstance(op, (TapePop, TapePopRef)) and "pair" in op.attrs:
            push = self.pushed.get(op.attrs["pair"])
            if push is not None and self.varied_value(push.operands[1]):
                changed |= self._mark_varied(op.result)
                if is_float_array(op.result):  # (an array kept by reference)
                    changed |= self._vary_roots(op.result)
        elif isinstance(op, Call):
            if any(self.varied_value(v) for v in op.operands):
                for v in op.operands:
                    if is_float_array(v):
                        changed |= self._vary_roots(v)
                for r in op.results:
                    changed |= self._mark_varied(r)
                    if is_float_array(r):  # (a new array the callee made: its own root)
                        changed |= self._vary_roots(r)
        elif op.name not in ZERO and not op.regions and not isinstance(op, NOT_VALUES):
            # an op with a rule, or without one (then the transforms refuse it by name)
            if any(self.varied_value(v) for v in op.operands):
                for r in op.results:
                    changed |= self._mark_varied(r)
        for dst, src in _scalar_flows(op):
            if self.varied_value(src):
                changed |= self._mark_varied(dst)
        return changed

    def _vary_roots(self, arr: Value) -> bool:
        new = self.roots.get(arr, set()) - self.varied_roots
        self.varied_roots |= new
        return bool(new)

    # ------------------------------------------------------------------ useful
    def _propagate_useful(self):
        changed = True
        ops = list(self.func.walk())
        while changed:
            changed = False
            for op in reversed(ops):
                changed |= self._useful_op(op)

    def _mark_useful(self, v: Value) -> bool:
        if is_float(v) and v in self.varied and v not in self.useful:
            self.useful.add(v)
            return True
        return False

    def _useful_op(self, op: Op) -> bool:
        changed = False
        if isinstance(op, (Store, AtomicAdd)):
            if self.active(op.operands[1]):
                changed |= self._mark_useful(op.operands[0])
        elif isinstance(op, Call):
            for v in op.operands:
                changed |= self._mark_useful(v)
        elif isinstance(op, (TapePush, TapePushRef)) and "pair" in op.attrs:
            if any(pop.result in self.useful for pop in self.popped.get(op.attrs["pair"], ())):
                changed |= self._mark_useful(op.operands[1])
        elif op.name not in ZERO and not op.regions and not isinstance(op, NOT_VALUES):
            if any(r in self.useful for r in op.results):
                for v in op.operands:
                    changed |= self._mark_useful(v)
        for dst, src in _scalar_flows(op):
            if dst in self.useful:
                changed |= self._mark_useful(src)
        return changed


def _scalar_flows(op: Op):
    return [(d, s) for d, s in region_flows(op) if not isinstance(d.type, ArrayType)]


# ---------------------------------------------------------------------- region summaries


def relevant(op: Op, act) -> bool:
    """Does the adjoint sweep have anything to do inside region op ``op``?"""
    for inner in op.walk():
        if inner is op:
            continue
        if any(act.active(r) for r in inner.results):
            return True
        if isinstance(inner, (Store, AtomicAdd)) and act.active(inner.operands[1]):
            return True
        if isinstance(inner, (Call, Matmul)) and any(act.active(v) for v in inner.operands):
            return True
    return False


def free_active(op: Op, act) -> list[Value]:
    """Active scalars defined outside ``op`` and used inside it (their adjoints are threaded
    through the reverse region), in first-use order."""
    seen: dict[Value, None] = {}
    for inner in op.walk():
        if inner is op:
            continue
        for v in inner.operands:
            if v in seen or isinstance(v.type, type(None)) or not act.active(v):
                continue
            if getattr(v.type, "ndim", None) is not None:
                continue
            owner = v.op if v.op is not None else v.block.parent_op
            if owner is None or not op.is_ancestor_of(owner) or owner is op:
                if owner is not op:
                    seen[v] = None
    return list(seen)


def check_host_call(act: Activity, op: HostCall) -> None:
    """A call into Python (``np.random``, ``np.fft``, ``print``: ``host.call``) has no
    derivative: refuse one that reads or writes values carrying derivatives while writing an
    array (``print`` of such values is fine: it writes nothing)."""
    written = op.written()
    if not written or not (any(act.active(v) for v in op.operands)):
        return
    fn = op.attrs["fn"]
    if fn in ("rng", "np_random", "rng_shuffle"):
        raise DifferentiationError(
            "random samples are constants for derivatives, and this draw depends on values "
            "that carry derivatives (or shuffles an array that does): draw from fixed "
            "parameters and transform the sample (reparameterization: `mu + sigma * "
            "rng.standard_normal(n)`), or shuffle indices (`x[rng.permutation(len(x))]`)",
            op.loc)
    raise DifferentiationError(f"this call into NumPy ({fn}) has no derivative here", op.loc)
