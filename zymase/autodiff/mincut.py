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

``grad_function`` runs the transform once to learn which values each block needs, then again
with ``store`` (the chosen values) forced onto the tape.  ``disable={"mincut"}`` skips it.
"""

from __future__ import annotations

from collections import deque

from ..ir.ops import For
from ..ir.types import ArrayType
from . import cache

INF = float("inf")


def choose_stores(rt) -> set:
    """Values to store, from the needs ``rt`` (a finished ReverseTransform) recorded."""
    out: set = set()
    for block, needed in rt.needs.items():
        out |= _block_cut(rt, block, needed)
    return out


def _slots(v) -> int:
    return 2 if v.type.is_complex else 1


def _block_cut(rt, block, needed) -> set:
    """The values to store for ``block``: the per-element alternative to a snapshot of a buffer
    taken before each run of ``block``'s own loop when it stores at most one slot per iteration
    for each such buffer (the snapshot also costs a slot per element, and the adjoint would read
    several elements back where it now reads one: heat1d's ``u[i-1] - 2 u[i] + u[i+1]``), else the
    minimum cut when it beats the greedy choice."""
    alt = _cut(rt, block, needed, own_snapshots=True)
    if alt is not None:
        return alt
    return _cut(rt, block, needed, own_snapshots=False) or set()


def _loop_index(v) -> bool:
    """The index of an ``scf.for`` (the reverse loop has the same one)."""
    return v.op is None and v.index == 0 and isinstance(v.block.parent_op, For)


def _own_snapshot(rt, v, block):
    """The buffer whose snapshot before each run of ``block``'s loop serves ``v``, if any."""
    how = rt.how_static(v)
    if how == "snapshot":
        snap = rt.memory.snapshot_for(v.op)
    elif how == "carried":
        snap = rt.memory.snapshot_for(rt.memory.carried_load(v)[0])
    else:
        return None
    return snap[1] if snap is not None and snap[0] is block.parent_op else None


def _cut(rt, block, needed, own_snapshots: bool):
    """With ``own_snapshots``: values served by a snapshot taken before each run of ``block``'s
    loop count as sources, and the cut is returned when it takes at most one slot per such
    buffer (None otherwise).  Without: the minimum cut when strictly below greedy, else None."""
    kind: dict = {}  # value -> "free" | "source" | "cheap"
    snapped: set = set()

    def classify(v):
        if v in kind:
            return kind[v]
        kind[v] = "free"  # provisional (no cycles in SSA, but be safe)
        if v.block is not block or isinstance(v.type, ArrayType) or _loop_index(v):
            k = "free"
        else:
            how = rt.how_static(v)
            buf = _own_snapshot(rt, v, block) if own_snapshots else None
            if buf is not None:
                snapped.add(buf)
                how = "tape"
            if how in ("recompute", "reload", "snapshot", "induction", "carried"):
                k = "cheap" if how == "recompute" and v.op is not None else "free"
                if k == "cheap" and not rt.policy.recompute(v) and \
                        not isinstance(v.op, cache.ALWAYS_RECOMPUTE):
                    k = "free"  # an expensive op recomputed from free operands
            else:
                k = "source"
        kind[v] = k
        if k == "cheap":
            for x in v.op.operands:
                classify(x)
        return k

    for v in needed:
        classify(v)
    nodes = [v for v, k in kind.items() if k != "free"]
    if own_snapshots and not snapped:
        return None
    if not any(kind[v] == "source" for v in nodes):
        return None
    greedy = len(snapped) if own_snapshots else _greedy_cost(kind, needed)
    # vertex v -> (v, 0) in, (v, 1) out; edges with capacities
    cap: dict = {}
    adj: dict = {}

    def edge(a, b, c):
        cap[(a, b)] = cap.get((a, b), 0) + c
        cap.setdefault((b, a), 0)
        adj.setdefault(a, set()).add(b)
        adj.setdefault(b, set()).add(a)

    S, T = "S", "T"
    for v in nodes:
        edge((v, 0), (v, 1), _slots(v))
        if kind[v] == "source":
            edge(S, (v, 0), INF)
        else:
            for x in v.op.operands:
                if kind.get(x) in ("source", "cheap"):
                    edge((x, 1), (v, 0), INF)
    for v in needed:
        if kind.get(v) in ("source", "cheap"):
            edge((v, 1), T, INF)
    flow = _max_flow(cap, adj, S, T)
    if flow > greedy or (flow == greedy and not own_snapshots):
        return None
    # the cut nearest T: vertices that can still reach T in the residual graph
    near_t = {T}
    queue = deque([T])
    while queue:
        b = queue.popleft()
        for a in adj.get(b, ()):
            if a not in near_t and cap[(a, b)] > 0:
                near_t.add(a)
                queue.append(a)
    return {v for v in nodes if (v, 1) in near_t and (v, 0) not in near_t}


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
