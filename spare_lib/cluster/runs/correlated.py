"""Time-to-train under correlated failures (notebook 75): candidates, checkpoint intervals, runs, optima.

The failure model is the simulator's (:class:`~spare_lib.cluster.config.ClusterConfig`,
``domain_size`` D and ``domain_fault_share`` q): a share q of the failure events are domain events
that kill every live group of one domain of D consecutive groups. This module compares four
*candidates* under that model, each a method with a placement of its redundancy:

* ``spare-ruler``: SPARe+CKPT with the paper's Golomb-ruler layout;
* ``spare-domain-aware``: SPARe+CKPT with :func:`~spare_lib.stacking.domains.domain_aware_layout`
  (the r holders of every type in r distinct domains);
* ``rep-consecutive``: Rep+CKPT with replica sets of r consecutive groups (SPEC §5);
* ``rep-strided``: Rep+CKPT with replica sets of groups ⌈N/r⌉ apart (``rep_placement='strided'``),
  in r distinct domains whenever ⌈N/r⌉ ≥ D — the fair counterpart of the domain-aware layout.

Checkpoint intervals are analytic (:func:`checkpoint_plan`): C = round(T_c*/step) with
T_f = μ_q·m, μ_q the mean failure events to interruption of the candidate under the same event
model (:func:`failures_to_interruption`), so every candidate is checkpointed as well for
correlated failures as the paper's intervals are for independent ones.

Example
-------
>>> sets = interruption_sets("rep-strided", 12, 3, 4)
>>> sets.tolist()
[[0, 4, 8], [1, 5, 9], [2, 6, 10], [3, 7, 11]]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numba import njit

from spare_lib._util.rng import SeedLike, as_seed_sequence, chunk_generators
from spare_lib._util.validate import check_int, check_positive
from spare_lib.cluster.config import ClusterConfig, analytic_checkpoint_interval
from spare_lib.cluster.engine.methods.replication import make_rep_state
from spare_lib.cluster.runs.simulate import SimResult
from spare_lib.stacking.domains import check_domain_args, domain_aware_layout
from spare_lib.stacking.layout import ruler_layout
from spare_lib.theory import availability_opt
from spare_lib.theory.correlated import overhead_correlated


@dataclass(frozen=True)
class Candidate:
    """A method with a placement of its redundancy.

    Attributes
    ----------
    method : str
        'spare' or 'rep' (both with checkpoints).
    layout : str or None
        SPARe's layout family ('ruler' or 'domain-aware'); None for Rep.
    rep_placement : str
        Rep's replica sets ('consecutive' or 'strided'); ignored by SPARe.
    label : str
        Legend name.
    """

    method: str
    layout: str | None
    rep_placement: str
    label: str


#: The four candidates of notebook 75, in plotting order.
CANDIDATES: dict[str, Candidate] = {
    "spare-ruler": Candidate("spare", "ruler", "consecutive", "SPARe+CKPT, ruler"),
    "spare-domain-aware": Candidate("spare", "domain-aware", "consecutive",
                                    "SPARe+CKPT, domain-aware"),
    "rep-consecutive": Candidate("rep", None, "consecutive", "Rep+CKPT, consecutive sets"),
    "rep-strided": Candidate("rep", None, "strided", "Rep+CKPT, strided sets"),
}


def _candidate(name: str) -> Candidate:
    if name not in CANDIDATES:
        raise ValueError(f"candidate must be one of {tuple(CANDIDATES)}, got {name!r}")
    return CANDIDATES[name]


def spare_offsets(name: str, N: int, r: int, D: int) -> tuple[int, ...]:
    """Offsets of a SPARe candidate's layout (ValueError when it does not exist for N, r, D)."""
    cand = _candidate(name)
    if cand.method != "spare":
        raise ValueError(f"candidate {name!r} is not a SPARe layout")
    lay = ruler_layout(N, r) if cand.layout == "ruler" else domain_aware_layout(N, r, D)
    return tuple(int(o) for o in lay.offsets)


def interruption_sets(name: str, N: int, r: int, D: int) -> np.ndarray:
    """The sets whose complete death interrupts a candidate's run, one row per set.

    SPARe: the r holders of every shard type (N rows); Rep: the ⌈N/r⌉ replica sets of the
    simulator (:func:`~spare_lib.cluster.engine.methods.replication.make_rep_state`), padded with −1
    where the last consecutive set is smaller.
    """
    N = check_int("N", N, lo=1)
    r = check_int("r", r, lo=1, hi=N)
    cand = _candidate(name)
    if cand.method == "spare":
        offs = np.asarray(spare_offsets(name, N, r, D), dtype=np.int64)
        return (np.arange(N, dtype=np.int64)[:, None] - offs[None, :]) % N
    set_of = np.asarray(make_rep_state(N, r, cand.rep_placement)[2], dtype=np.int64)
    n_sets = int(set_of.max()) + 1
    out = np.full((n_sets, int(np.bincount(set_of).max())), -1, dtype=np.int64)
    fill = np.zeros(n_sets, dtype=np.int64)
    for g, s in enumerate(set_of):
        out[s, fill[s]] = g
        fill[s] += 1
    return out


@njit(cache=True)
def _interruption_kernel(N, D, q, ptr, members, sizes, n_trials, rng, out):  # pragma: no cover
    """Events until some set has no live member; the event model of ``stacking.domains``."""
    n_dom = (N + D - 1) // D
    live = np.empty(N, dtype=np.int64)
    lpos = np.empty(N, dtype=np.int64)
    alive = np.empty(N, dtype=np.bool_)
    doms = np.empty(n_dom, dtype=np.int64)
    dpos = np.empty(n_dom, dtype=np.int64)
    dlive = np.empty(n_dom, dtype=np.int64)
    cnt = np.empty(sizes.shape[0], dtype=np.int64)
    for trial in range(n_trials):
        for g in range(N):
            live[g] = g
            lpos[g] = g
            alive[g] = True
        for d in range(n_dom):
            doms[d] = d
            dpos[d] = d
            dlive[d] = min(D, N - d * D)
        cnt[:] = sizes
        n_live, n_dlive, e, wiped = N, n_dom, 0, False
        while not wiped:
            e += 1
            if rng.random() < q:
                d = doms[int(rng.random() * n_dlive)]
                lo, hi = d * D, min(N, d * D + D)
            else:
                g0 = live[int(rng.random() * n_live)]
                lo, hi = g0, g0 + 1
            for g in range(lo, hi):
                if not alive[g]:
                    continue
                alive[g] = False
                n_live -= 1
                last = live[n_live]
                live[lpos[g]] = last
                lpos[last] = lpos[g]
                d = g // D
                dlive[d] -= 1
                if dlive[d] == 0:
                    n_dlive -= 1
                    lastd = doms[n_dlive]
                    doms[dpos[d]] = lastd
                    dpos[lastd] = dpos[d]
                for j in range(ptr[g], ptr[g + 1]):
                    s = members[j]
                    cnt[s] -= 1
                    if cnt[s] == 0:
                        wiped = True
        out[trial] = e


def failures_to_interruption(sets: np.ndarray, N: int, domain_size: int, domain_prob: float,
                             n_trials: int, seed: SeedLike = None) -> np.ndarray:
    """Sample the failure events until some set of groups is entirely dead.

    Event model of :mod:`spare_lib.stacking.domains`: with probability q an event kills every
    live group of a uniformly chosen domain with a live group, otherwise one uniformly chosen
    live group. For SPARe the sets are the holders of each type (the law of
    :func:`~spare_lib.stacking.failures_to_wipeout` with ``domain_size``, ``domain_prob``; the
    tests compare them), for Rep the replica sets. O(r) per killed group; trials run in fixed
    chunks of 2048 with one child seed each.

    Parameters
    ----------
    sets : ndarray of int, shape (n_sets, width)
        Group ids per set, −1 as padding (:func:`interruption_sets`).
    N, domain_size, domain_prob : int, int, float
        Groups, D ∈ [1, N], q ∈ [0, 1].
    n_trials : int
        Samples.
    seed : int, SeedSequence, Generator or None
        Root seed.

    Returns
    -------
    ndarray of int64
        1-based index of the interrupting event per trial.
    """
    N = check_int("N", N, lo=1)
    D, q = check_domain_args(N, domain_size, domain_prob)
    n_trials = check_int("n_trials", n_trials, lo=1)
    sets = np.asarray(sets, dtype=np.int64)
    if sets.ndim != 2 or sets.size == 0 or sets.max() >= N:
        raise ValueError(f"sets must be a non-empty 2-d array of group ids in [0, {N}), padded "
                         f"with -1, got shape {sets.shape}")
    sid, col = np.nonzero(sets >= 0)
    grp = sets[sid, col]
    order = np.argsort(grp, kind="stable")
    members = sid[order].astype(np.int64)
    ptr = np.zeros(N + 1, dtype=np.int64)
    np.add.at(ptr, grp + 1, 1)
    ptr = np.cumsum(ptr)
    sizes = (sets >= 0).sum(axis=1).astype(np.int64)
    out = np.empty(n_trials, dtype=np.int64)
    for start, stop, rng in chunk_generators(seed, n_trials, 2048):
        _interruption_kernel(N, D, q, ptr, members, sizes, stop - start, rng, out[start:stop])
    return out


def checkpoint_plan(N: int, D: int, qs: Sequence[float], r_values: dict[str, Sequence[int]],
                    config: ClusterConfig, n_trials: int = 4000, seed: SeedLike = 2026
                    ) -> pd.DataFrame:
    """Analytic checkpoint interval and the Eq. 7 prediction per (q, candidate, r).

    μ_q from :func:`failures_to_interruption`; T_f = μ_q·m; S̄_q from
    :func:`~spare_lib.theory.correlated.overhead_correlated` for SPARe (r for Rep); step time
    S̄_q·compute + T_a; C = :func:`~spare_lib.cluster.config.analytic_checkpoint_interval`;
    J_q = S̄_q / A*(T_f) (Eq. 2, 7). A SPARe layout that does not exist for (N, r, D) is skipped.

    Returns
    -------
    DataFrame
        Columns q, candidate, r, mu_q, mu_q_se, s_bar, step_s, T_f_s, ckpt_steps, J_q.
    """
    N = check_int("N", N, lo=2)
    check_domain_args(N, D, 0.0)
    root = as_seed_sequence(seed)
    m, ts, tr = config.system_mtbf_s, config.checkpoint_s, config.restart_s
    rows = []
    for name, rs in r_values.items():
        cand = _candidate(name)
        for r in rs:
            try:
                sets = interruption_sets(name, N, int(r), D)
            except ValueError:
                continue
            for q in qs:
                ss = np.random.SeedSequence([root.entropy, int(r), int(round(1e4 * q)),
                                             list(CANDIDATES).index(name)])
                k = failures_to_interruption(sets, N, D, float(q), n_trials, ss)
                mu = float(k.mean())
                s_bar = overhead_correlated(N, D, float(q), mu) if cand.method == "spare" else float(r)
                step = s_bar * config.compute_per_stack_s + config.allreduce_s
                t_f = mu * m
                rows.append(dict(q=float(q), candidate=name, r=int(r), mu_q=mu,
                                 mu_q_se=float(k.std(ddof=1) / np.sqrt(k.size)), s_bar=s_bar,
                                 step_s=step, T_f_s=t_f,
                                 ckpt_steps=analytic_checkpoint_interval(t_f, step, config),
                                 J_q=s_bar / float(availability_opt(ts, t_f, tr))))
    return pd.DataFrame(rows)


def correlated_tasks(plan: pd.DataFrame, N: int, D: int, config: ClusterConfig, trials: int,
                     failure_seed: int = 2026, max_wall_t0: float = 200.0
                     ) -> tuple[list[dict[str, Any]], pd.DataFrame]:
    """Simulation tasks for every row of ``plan`` and trial, with common random numbers.

    Trial i of every candidate, r and q uses ``failure_seed = failure_seed·1000 + i``, so all
    candidates of a trial see the same per-group failure-gap uniforms and the same domain-event
    process (the gaps scale with 1/(1 − q)); only the compute jitter differs (the task seed of
    :func:`~spare_lib.cluster.runs.simulate.simulate_many`). Runs stop at ``max_wall_t0``·T0.

    Returns
    -------
    (list of dict, DataFrame)
        Keyword arguments of :func:`~spare_lib.cluster.runs.simulate.simulate` and, row by row, the
        q, candidate and trial of each task.
    """
    trials = check_int("trials", trials, lo=1)
    check_positive("max_wall_t0", max_wall_t0)
    tasks, meta = [], []
    for row in plan.itertuples(index=False):
        cand = _candidate(row.candidate)
        cfg = config.with_(domain_size=D, domain_fault_share=float(row.q))
        kw: dict[str, Any] = {"method": cand.method, "N": N, "r": int(row.r),
                              "ckpt_steps": int(row.ckpt_steps), "config": cfg,
                              "max_wall_s": max_wall_t0 * cfg.t0_s()}
        if cand.method == "spare":
            kw["layout"] = spare_offsets(row.candidate, N, int(row.r), D)
        else:
            kw["rep_placement"] = cand.rep_placement
        for i in range(trials):
            tasks.append({**kw, "failure_seed": int(failure_seed) * 1000 + i})
            meta.append({"q": float(row.q), "candidate": row.candidate, "trial": i})
    return tasks, pd.DataFrame(meta)


def correlated_runs_frame(results: Sequence[SimResult], meta: pd.DataFrame) -> pd.DataFrame:
    """One row per run: the task's q, candidate and trial beside :meth:`SimResult.as_dict`."""
    runs = pd.DataFrame([r.as_dict() for r in results])
    return pd.concat([meta.reset_index(drop=True), runs], axis=1)


_METRICS = ("ttt_over_t0", "availability", "full_restarts", "overhead", "completed")


def summarize_correlated(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean, min and max over trials per (q, candidate, r) of TTT/T0, availability, restarts.

    ``completed`` is the share of runs that finished before the wall-time cap (a capped run's
    TTT/T0 is a lower bound).
    """
    df = runs.assign(completed=runs["completed"].astype(float))
    g = df.groupby(["q", "candidate", "r"], sort=True)
    out = g[list(_METRICS)].mean()
    for fn in ("min", "max"):
        part = g[["ttt_over_t0", "availability"]].agg(fn)
        part.columns = [f"{c}_{fn}" for c in part.columns]
        out = out.join(part)
    out["ckpt_steps"] = g["ckpt_steps"].first()
    out["trials"] = g.size()
    return out.reset_index()


def correlated_optima(summary: pd.DataFrame) -> pd.DataFrame:
    """The optimum r (lowest mean TTT/T0) per (q, candidate) and SPARe's gain over each Rep.

    Returns
    -------
    DataFrame
        One row per (q, candidate): r, ttt_over_t0 (with _min, _max), availability,
        full_restarts, ckpt_steps, completed, and for SPARe rows gain_vs_<rep candidate>
        = 1 − TTT/TTT(Rep optimum) at the same q.
    """
    idx = summary.groupby(["q", "candidate"], sort=False)["ttt_over_t0"].idxmin()
    best = summary.loc[idx].reset_index(drop=True)
    reps = [c for c in CANDIDATES if CANDIDATES[c].method == "rep"]
    for rep in reps:
        ref = best[best.candidate == rep].set_index("q")["ttt_over_t0"]
        gain = 1.0 - best["ttt_over_t0"] / best["q"].map(ref)
        best[f"gain_vs_{rep}"] = np.where(best["candidate"].str.startswith("spare"), gain, np.nan)
    order = {c: i for i, c in enumerate(CANDIDATES)}
    return best.sort_values(["q", "candidate"], key=lambda s: s.map(order) if s.name == "candidate"
                            else s).reset_index(drop=True)


def paired_ratio(runs: pd.DataFrame, q: float, a: tuple[str, int], b: tuple[str, int]
                 ) -> dict[str, float]:
    """TTT(a)/TTT(b) per trial (same failure stream) at q: mean, min, max over trials.

    ``a`` and ``b`` are (candidate, r) pairs.
    """
    sel = runs[np.isclose(runs.q, q)]

    def pick(c: tuple[str, int]) -> pd.Series:
        s = sel[(sel.candidate == c[0]) & (sel.r == c[1])].set_index("trial")["ttt_over_t0"]
        if s.empty:
            raise ValueError(f"no runs for candidate={c[0]!r}, r={c[1]} at q={q}")
        return s

    ratio = (pick(a) / pick(b)).dropna()
    return {"mean": float(ratio.mean()), "min": float(ratio.min()), "max": float(ratio.max()),
            "trials": int(ratio.size)}


def correlation_cost(optima: pd.DataFrame, q: float, q0: float = 0.0,
                     summary: pd.DataFrame | None = None) -> dict[str, float]:
    """What correlated failures cost SPARe+CKPT and what the domain-aware layout wins back.

    Two readings. *Re-optimised*: each layout at its own optimum r under q. *Deployed at the
    q0 optimum*: both layouts at r0, the ruler's optimum at q0 (what a cluster tuned for
    independent failures runs), from ``summary``.

    Returns
    -------
    dict
        ttt_ruler_q0 and r_ruler_q0 (the ruler optimum at q0); ttt_ruler_q, r_ruler_q,
        ttt_domain_aware_q, r_domain_aware_q (the optima at q);
        lost = TTT_ruler(q)/TTT_ruler(q0) − 1, lost_domain_aware = TTT_da(q)/TTT_ruler(q0) − 1,
        won_back = (TTT_ruler(q) − TTT_da(q)) / (TTT_ruler(q) − TTT_ruler(q0)), the share of the
        loss recovered. With ``summary`` also ttt_ruler_q_at_r0, ttt_domain_aware_q_at_r0,
        lost_at_r0, lost_domain_aware_at_r0 and won_back_at_r0, the same at r = r0.
    """
    def get(cand: str, qq: float) -> pd.Series:
        s = optima[(optima.candidate == cand) & np.isclose(optima.q, qq)]
        if s.empty:
            raise ValueError(f"no optimum for candidate={cand!r} at q={qq}")
        return s.iloc[0]

    def share(lost_ruler: float, lost_da: float) -> float:
        return (lost_ruler - lost_da) / lost_ruler if lost_ruler != 0 else float("nan")

    r0, rq, dq = get("spare-ruler", q0), get("spare-ruler", q), get("spare-domain-aware", q)
    t0, tq, td = float(r0.ttt_over_t0), float(rq.ttt_over_t0), float(dq.ttt_over_t0)
    out = {"q": float(q), "ttt_ruler_q0": t0, "r_ruler_q0": int(r0.r), "ttt_ruler_q": tq,
           "r_ruler_q": int(rq.r), "ttt_domain_aware_q": td, "r_domain_aware_q": int(dq.r),
           "lost": tq / t0 - 1.0, "lost_domain_aware": td / t0 - 1.0,
           "won_back": share(tq / t0 - 1.0, td / t0 - 1.0)}
    if summary is not None:
        at = summary[np.isclose(summary.q, q) & (summary.r == int(r0.r))].set_index("candidate")
        if not {"spare-ruler", "spare-domain-aware"} <= set(at.index):
            raise ValueError(f"summary has no SPARe runs at r={int(r0.r)}, q={q}")
        a, b = float(at.loc["spare-ruler", "ttt_over_t0"]), float(at.loc["spare-domain-aware",
                                                                             "ttt_over_t0"])
        out.update({"ttt_ruler_q_at_r0": a, "ttt_domain_aware_q_at_r0": b,
                    "lost_at_r0": a / t0 - 1.0, "lost_domain_aware_at_r0": b / t0 - 1.0,
                    "won_back_at_r0": share(a / t0 - 1.0, b / t0 - 1.0)})
    return out


__all__ = [
    "CANDIDATES", "Candidate", "checkpoint_plan", "correlated_optima", "correlated_runs_frame",
    "correlated_tasks", "correlation_cost", "failures_to_interruption", "interruption_sets",
    "paired_ratio", "spare_offsets", "summarize_correlated",
]
