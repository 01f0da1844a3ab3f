"""A plain SciPy/NetworkX reference of RECTLR (the oracle of the numba kernels), and Fig. 3's example.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

import numpy as np

from spare_lib.rectlr._inputs import _validate_inputs
from spare_lib.rectlr.controller import Plan, _frozen, rectlr
from spare_lib.stacking.layout import Layout


def rectlr_reference(stacks: np.ndarray, alive: np.ndarray, depth: int) -> Plan:
    """The three phases done the straightforward way, with SciPy and NetworkX (for benchmarks).

    Phase 0 by NumPy coverage, Phase 1 by SciPy's ``maximum_bipartite_matching`` on SPEC §4's
    slot graph (types × slots (w, p < S)) for S = depth, depth+1, ..., Phase 2 by NetworkX
    ``min_cost_flow`` (network simplex) on the slot network with demand N. Same Plan semantics
    as :func:`rectlr` (moved-in shards take the slot the flow picked; ``patch_exact`` alike).
    """
    import networkx as nx
    import scipy.sparse as sp
    from scipy.sparse.csgraph import maximum_bipartite_matching

    st, al, S = _validate_inputs(stacks, alive, depth)
    st = st.copy()
    N, r = st.shape
    times = {"phase0": 0.0, "phase1": 0.0, "phase2": 0.0}
    zeros = np.zeros(N, np.int64)
    t0 = time.perf_counter()
    pref = st[al, :S]
    owner = np.repeat(np.flatnonzero(al), S)
    cov = np.full(N, -1, np.int64)
    cov[pref.ravel()[::-1]] = owner[::-1]
    times["phase0"] = time.perf_counter() - t0
    if np.all(cov >= 0):
        return Plan("fixed", S, _frozen(st), _frozen(cov), 0, zeros, zeros.copy(), times)
    t0 = time.perf_counter()
    ws = np.flatnonzero(al)
    s_star = 0
    for s in range(S, r + 1):
        # edge t -> slot (w, p) for every live holder w of t and p < s
        tt = np.repeat(st[ws], s, axis=0).ravel()
        slot = (np.repeat(ws, s * r) * r + np.tile(np.repeat(np.arange(s), r), ws.size))
        g = sp.csr_matrix((np.ones(tt.size), (tt, slot)), shape=(N, N * r))
        m = maximum_bipartite_matching(g, perm_type="column")
        if np.all(m >= 0):
            s_star = s
            break
    times["phase1"] = time.perf_counter() - t0
    if s_star == 0:
        return Plan("wipeout", 0, _frozen(st), _frozen(np.full(N, -1, np.int64)), 0, zeros,
                    zeros.copy(), times)
    t0 = time.perf_counter()
    G = nx.DiGraph()
    G.add_node("s", demand=-N)
    G.add_node("z", demand=N)
    G.add_edges_from((("s", ("t", t)) for t in range(N)), capacity=1, weight=0)
    G.add_edges_from(((("w", int(w), p), "z") for w in ws for p in range(s_star)), capacity=1,
                     weight=0)
    G.add_edges_from((("t", int(t)), ("w", int(w), p), {"capacity": 1, "weight": int(st[w, p] != t)})
                     for w in ws for p in range(s_star) for t in st[w])
    flow = nx.min_cost_flow(G)  # network simplex; flow value N is feasible after Phase 1
    assign = np.full(N, -1, np.int64)
    old = st.copy()
    put: dict[int, dict[int, int]] = {}
    for t in range(N):
        for (_, w, p), f in flow[("t", t)].items():
            if f:
                assign[t] = w
                if old[w, p] != t:
                    put.setdefault(w, {})[p] = t
    patch_exact = np.zeros(N, np.int64)
    moved = 0
    for w in ws:
        new = old[w].copy()
        for p, t in put.get(w, {}).items():
            new[p] = t
        head = set(new[:s_star].tolist())
        tail = [t for t in old[w] if t not in head]
        new[s_star:] = tail
        st[w] = new
        moved += int(np.count_nonzero(new[:s_star] != old[w, :s_star]))
        patch_exact[w] = sum(1 for p in range(s_star) if p >= S or new[p] != old[w, p])
    times["phase2"] = time.perf_counter() - t0
    return Plan("reordered", s_star, _frozen(st), _frozen(assign), moved,
                _frozen(np.minimum(patch_exact, 1)), _frozen(patch_exact), times)


def worked_example(layout: Layout, failed: Iterable[int], depth: int = 1) -> dict:
    """Everything the reorder illustration draws, for one failure event on ``layout``.

    Returns a dict with ``stacks`` (before), ``alive``, ``depth``, ``uncovered`` (types Phase 0
    finds missing from the survivors' first S positions), ``plan`` (:class:`Plan`) and
    ``phase1_edges`` (type, group) pairs of the Phase 1 graph at S*.
    """
    stacks = np.array(layout.stacks, dtype=np.int64)
    alive = np.ones(layout.N, bool)
    alive[list(failed)] = False
    plan = rectlr(stacks, alive, depth)
    cov = np.zeros(layout.N, bool)
    cov[stacks[alive, :depth].ravel()] = True
    edges = [(int(t), int(w)) for w in np.flatnonzero(alive) for t in stacks[w]]
    return {"stacks": stacks, "alive": alive, "depth": depth,
            "uncovered": np.flatnonzero(~cov), "plan": plan, "phase1_edges": edges}
