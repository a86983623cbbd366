"""Choosing what to store with a minimum cut (Enzyme's cache reduction).

The reverse transform obtains each primal value its adjoint needs by recomputing cheap
arithmetic from its operands, and stores what cannot be recomputed ("sources": loads from memory
that is overwritten, values carried by loops, results of expensive ops whose inputs are not at
hand, calls).  Recomputing greedily can store more than needed: if only ``s = a[i] + b[i]`` is
needed and both loads are overwritten, storing ``s`` costs one slot per iteration where storing
``a[i]`` and ``b[i]`` costs two.

For each block, the values needed there and the cheap ops between them and the sources form a
flow graph (each value a vertex whose capacity is its size in tape slots); a minimum vertex cut
between the sources and the needed values is a smallest set of values from which every needed
value can be recomputed.  The cut nearest the needed values is taken (among equal cuts it
recomputes least), and only where it is strictly smaller than the greedy choice.

``grad_function`` builds the derivative once to learn which values each block needs, asks
``choose_stores``, and builds again with a plan that stores the chosen values
(``Plan.storing``).  ``disable={"mincut"}`` skips it.
"""

from __future__ import annotations

from collections import deque

from ...ir.ops import For
from ...ir.types import ArrayType
from .policy import ALWAYS_RECOMPUTE
from .values import Here, Plan

INF = float("inf")


def choose_stores(needs: dict, plan: Plan, here: Here) -> set:
    """Values to store, from ``needs`` (primal block -> the values its adjoint asked for, as a
    first build recorded them); ``here``: what that build's adjoint held at its top level."""
    out: set = set()
    for block, needed in needs.items():
        out |= _block_cut(_Graph(plan, here, block), needed)
    return out


def _slots(v) -> int:
    return 2 if v.type.is_complex else 1


def _block_cut(g: _Graph, needed) -> set:
    """The values to store for ``g``'s block: the per-element alternative to a snapshot of a
    buffer taken before each run of the block's own loop when it stores at most one slot per
    iteration for each such buffer (the snapshot also costs a slot per element, and the adjoint
    would read several elements back where it now reads one: heat1d's ``u[i-1] - 2 u[i] +
    u[i+1]``), else the minimum cut when it beats the greedy choice."""
    alt = _cut(g, needed, own_snapshots=True)
    if alt is not None:
        return alt
    return _cut(_Graph(g.plan, g.here, g.block), needed, own_snapshots=False) or set()


def _loop_index(v) -> bool:
    """The index of an ``scf.for`` (the reverse loop has the same one)."""
    return v.op is None and v.index == 0 and isinstance(v.block.parent_op, For)


class _Graph:
    """The values of one block, classified "free" (at hand), "source" (stored unless cut) or
    "cheap" (recomputed from its operands)."""

    def __init__(self, plan: Plan, here: Here, block):
        self.plan, self.here, self.block = plan, here, block
        self.kind: dict = {}
        self.snapped: set = set()  # buffers whose own-loop snapshot serves a needed value

    def own_snapshot(self, v):
        """The buffer whose snapshot before each run of the block's loop serves ``v``, if any."""
        memory = self.plan.memory
        how = self.plan.how(v, self.here)
        if how == "snapshot":
            snap = memory.snapshot_for(v.op)
        elif how == "carried":
            snap = memory.snapshot_for(memory.carried_load(v)[0])
        else:
            return None
        return snap[1] if snap is not None and snap[0] is self.block.parent_op else None

    def classify(self, v, own_snapshots: bool) -> str:
        kind = self.kind
        if v in kind:
            return kind[v]
        kind[v] = "free"  # provisional (no cycles in SSA, but be safe)
        if v.block is not self.block or isinstance(v.type, ArrayType) or _loop_index(v):
            k = "free"
        else:
            k = self._kind(v, own_snapshots)
        kind[v] = k
        if k == "cheap":
            for x in v.op.operands:
                self.classify(x, own_snapshots)
        return k

    def _kind(self, v, own_snapshots: bool) -> str:
        how = self.plan.how(v, self.here)
        buf = self.own_snapshot(v) if own_snapshots else None
        if buf is not None:
            self.snapped.add(buf)
            how = "tape"
        if how not in ("recompute", "reload", "snapshot", "induction", "carried", "kept",
                       "stored"):
            return "source"
        k = "cheap" if how == "recompute" and v.op is not None else "free"
        if k == "cheap" and not self.plan.policy.recompute(v) and \
                not isinstance(v.op, ALWAYS_RECOMPUTE):
            k = "free"  # an expensive op recomputed from free operands
        return k


def _cut(g: _Graph, needed, own_snapshots: bool):
    """With ``own_snapshots``: values served by a snapshot taken before each run of the block's
    loop count as sources, and the cut is returned when it takes at most one slot per such
    buffer (None otherwise).  Without: the minimum cut when strictly below greedy, else None."""
    for v in needed:
        g.classify(v, own_snapshots)
    kind = g.kind
    nodes = [v for v, k in kind.items() if k != "free"]
    if own_snapshots and not g.snapped:
        return None
    if not any(kind[v] == "source" for v in nodes):
        return None
    greedy = len(g.snapped) if own_snapshots else _greedy_cost(kind, needed)
    cap, adj = _flow_graph(kind, nodes, needed)
    flow = _max_flow(cap, adj, "S", "T")
    if flow > greedy or (flow == greedy and not own_snapshots):
        return None
    # the cut nearest T: vertices that can still reach T in the residual graph
    near_t = {"T"}
    queue = deque(["T"])
    while queue:
        b = queue.popleft()
        for a in adj.get(b, ()):
            if a not in near_t and cap[(a, b)] > 0:
                near_t.add(a)
                queue.append(a)
    return {v for v in nodes if (v, 1) in near_t and (v, 0) not in near_t}


def _flow_graph(kind, nodes, needed):
    """Capacities and adjacency: vertex v -> (v, 0) in, (v, 1) out, its size between them;
    sources hang off "S", needed values lead to "T"."""
    cap: dict = {}
    adj: dict = {}

    def edge(a, b, c):
        cap[(a, b)] = cap.get((a, b), 0) + c
        cap.setdefault((b, a), 0)
        adj.setdefault(a, set()).add(b)
        adj.setdefault(b, set()).add(a)

    for v in nodes:
        edge((v, 0), (v, 1), _slots(v))
        if kind[v] == "source":
            edge("S", (v, 0), INF)
        else:
            for x in v.op.operands:
                if kind.get(x) in ("source", "cheap"):
                    edge((x, 1), (v, 0), INF)
    for v in needed:
        if kind.get(v) in ("source", "cheap"):
            edge((v, 1), "T", INF)
    return cap, adj


def _greedy_cost(kind, needed) -> int:
    """Slots the current rule stores: needed sources, and sources reached by recomputing."""
    stored: set = set()
    seen: set = set()

    def visit(v):
        if v in seen:
            return
        seen.add(v)
        k = kind.get(v, "free")
        if k == "source":
            stored.add(v)
        elif k == "cheap":
            for x in v.op.operands:
                visit(x)

    for v in needed:
        visit(v)
    return sum(_slots(v) for v in stored)


def _max_flow(cap, adj, s, t) -> float:
    flow = 0
    while True:
        parent = {s: None}
        queue = deque([s])
        while queue and t not in parent:
            a = queue.popleft()
            for b in adj.get(a, ()):
                if b not in parent and cap[(a, b)] > 0:
                    parent[b] = a
                    queue.append(b)
        if t not in parent:
            return flow
        path, b = [], t
        while parent[b] is not None:
            path.append((parent[b], b))
            b = parent[b]
        push = min(cap[e] for e in path)
        if push == INF:
            return INF
        for a, b in path:
            cap[(a, b)] -= push
            cap[(b, a)] += push
        flow += push
