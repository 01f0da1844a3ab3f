"""Monte Carlo of the least makespan L*(k) along failure sequences to wipe-out (issue 25).

Failures hit distinct groups in uniformly random order (as :func:`spare_lib.theory.montecarlo.overhead_mc`
for S*); after every failure the incremental micro-batch kernel
(:func:`spare_lib.rectlr.microbatch_inc.microbatch_kernel_inc`) gives the exact L*(k). The
averages are the paper's S̄ (Eq. 5, renewal–reward): every failure epoch of a restart cycle
weighs the same, so

    S̄_b = Σ_cycles Σ_{k<K} L*(k) / (b · Σ_cycles K),

with K the failures to wipe-out of the cycle (states k = 0..K−1, L*(0) = b). The same sums
with the global bound g_b(k) = ⌈N·b/(N − k)⌉ in place of L*(k), and the states where
L*(k) > g_b(k), say where chains of holders stop reaching the global bound.

This module holds the sampler (it needs the kernel, so it lives in ``rectlr``); the closed
forms and bounds it is checked against are in :mod:`spare_lib.theory.microbatch`, and
:func:`microbatch_validation_grid` joins the two (theory passed in as a function, so that
neither package imports the other).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numba import njit

from spare_lib._util.rng import SeedLike, as_seed_sequence, chunk_generators
from spare_lib._util.validate import check_int
from spare_lib.rectlr.microbatch import MB_WIPEOUT, check_microbatches, microbatch_workspace
from spare_lib.rectlr.microbatch_inc import (
    microbatch_inc_mode,
    microbatch_inc_notice,
    microbatch_kernel_inc,
)
from spare_lib.stacking.layout import Layout

#: Trials per independent random stream (fixed: results do not depend on how chunks are run).
MB_CHUNK_TRIALS = 256


@njit(cache=True)
def _makespan_kernel(stacks, b, n_trials, rng, K_out, sum_l_out, sum_g_out, n_gt_out,
                     first_gt_out, l_by_k, n_by_k, gt_by_k):  # pragma: no cover - compiled
    N = stacks.shape[0]
    ws = microbatch_workspace(stacks)
    st, iw = ws[6], ws[7]
    alive = np.ones(N, np.bool_)
    perm = np.arange(N)
    for trial in range(n_trials):
        alive[:] = True
        microbatch_inc_mode(st, True, True)
        microbatch_kernel_inc(stacks, alive, b, *ws)
        sum_l = b
        sum_g = b
        n_gt = 0
        first = -1
        l_by_k[0] += b
        n_by_k[0] += 1
        k = 0
        while True:
            j = k + int(rng.random() * (N - k))
            g = perm[j]
            perm[j] = perm[k]
            perm[k] = g
            k += 1
            alive[g] = False
            microbatch_inc_notice(g, st, iw)
            out, L, _ = microbatch_kernel_inc(stacks, alive, b, *ws)
            if out == MB_WIPEOUT:
                break
            gb = (N * b + (N - k) - 1) // (N - k)
            sum_l += L
            sum_g += gb
            l_by_k[k] += L
            n_by_k[k] += 1
            if L > gb:
                n_gt += 1
                gt_by_k[k] += 1
                if first < 0:
                    first = k
        K_out[trial] = k
        sum_l_out[trial] = sum_l
        sum_g_out[trial] = sum_g
        n_gt_out[trial] = n_gt
        first_gt_out[trial] = first


@dataclass(frozen=True)
class MakespanMC:
    """Result of :func:`makespan_mc` (arrays: one entry per failure sequence).

    Attributes
    ----------
    N, r, b : int
        Layout size and micro-batches per shard.
    K : ndarray
        Failures to wipe-out per sequence.
    sum_l, sum_g : ndarray
        Σ_{k<K} L*(k) and Σ_{k<K} g_b(k), g_b(k) = ⌈N·b/(N − k)⌉.
    n_gt : ndarray
        States k < K with L*(k) > g_b(k).
    first_gt : ndarray
        First k with L*(k) > g_b(k), -1 when the sequence reached the bound at every k < K.
    l_by_k, n_by_k, gt_by_k : ndarray (N + 1,)
        Σ L*(k), sequences still running at k, and how many had L*(k) > g_b(k).
    """

    N: int
    r: int
    b: int
    K: np.ndarray
    sum_l: np.ndarray
    sum_g: np.ndarray
    n_gt: np.ndarray
    first_gt: np.ndarray
    l_by_k: np.ndarray
    n_by_k: np.ndarray
    gt_by_k: np.ndarray

    @property
    def n_trials(self) -> int:
        return int(self.K.size)

    @property
    def s_bar_b(self) -> float:
        """S̄_b = Σ Σ_{k<K} L*(k) / (b Σ K) (time average of L*/b, renewal–reward)."""
        return float(self.sum_l.sum() / (self.b * self.K.sum()))

    @property
    def s_bar_b_se(self) -> float:
        """Standard error of :attr:`s_bar_b` (delta method for a ratio of means)."""
        n = self.K.size
        if n < 2:
            return float("nan")
        resid = self.sum_l / self.b - self.s_bar_b * self.K
        return float(resid.std(ddof=1) / np.sqrt(n) / self.K.mean())

    @property
    def g_bar_b(self) -> float:
        """The same average with the global bound g_b(k) in place of L*(k)."""
        return float(self.sum_g.sum() / (self.b * self.K.sum()))

    @property
    def frac_states_gt(self) -> float:
        """Fraction of states (sequence, k < K) with L*(k) > g_b(k)."""
        return float(self.n_gt.sum() / self.K.sum())

    @property
    def frac_sequences_gt(self) -> float:
        """Fraction of sequences with L*(k) > g_b(k) at some k before the wipe-out."""
        return float(np.mean(self.n_gt > 0))

    def p_gt_by_k(self) -> np.ndarray:
        """P(L*(k) > g_b(k) | no wipe-out after k failures), k = 0..N (nan where no data)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.n_by_k > 0, self.gt_by_k / np.maximum(self.n_by_k, 1), np.nan)


def makespan_mc(layout: Layout, b: int, n_trials: int, seed: SeedLike = None) -> MakespanMC:
    """Monte Carlo of L*(k) along random failure sequences until wipe-out.

    Parameters
    ----------
    layout : Layout
        The stacking layout (any: ruler, consecutive, domain-aware, custom).
    b : int
        Micro-batches per shard, b ≥ 1 (b = 1: RECTLR's S*).
    n_trials : int
        Failure sequences, ≥ 1.
    seed : int, SeedSequence, Generator or None
        Root seed; trials in fixed chunks of ``MB_CHUNK_TRIALS`` with one child stream each, so
        the failure orders do not depend on b (common random numbers across b) nor on how the
        chunks are run.
    """
    if not isinstance(layout, Layout):
        raise ValueError(f"layout must be a spare_lib.stacking.Layout, got {type(layout).__name__}")
    b = check_microbatches(b)
    n_trials = check_int("n_trials", n_trials, lo=1)
    N = layout.N
    stacks = np.ascontiguousarray(layout.stacks, dtype=np.int64)
    arrs = [np.empty(n_trials, np.int64) for _ in range(5)]
    by_k = [np.zeros(N + 1, np.int64) for _ in range(3)]
    for start, stop, rng in chunk_generators(seed, n_trials, MB_CHUNK_TRIALS):
        _makespan_kernel(stacks, b, stop - start, rng, *(a[start:stop] for a in arrs), *by_k)
    return MakespanMC(N, layout.r, b, *arrs, *by_k)


#: The acceptance grid of issue 25 (ruler layout).
GRID_N = (200, 600, 1000)
GRID_R = (4, 8, 12)
GRID_B = (2, 8, 32)


def microbatch_validation_grid(theory: Callable[[int, int, int, str], float], *,
                               Ns: Sequence[int] = GRID_N, rs: Sequence[int] = GRID_R,
                               bs: Sequence[int] = GRID_B, kind: str = "ruler",
                               n_trials: int = 2000, seed: SeedLike = 2026,
                               make_layout: Callable[[int, int, str], Layout] | None = None):
    """S̄_b by theory and by Monte Carlo on a grid, one row per (N, r, b) (a pandas DataFrame).

    ``theory(N, r, b, kind)`` is the closed form to check, e.g.
    :func:`spare_lib.theory.microbatch.sbar_b_theory`. One seed per (N, r), shared by every b
    (common random numbers). Columns: N, r, b, layout, sbar_theory, sbar_mc, sbar_mc_se,
    rel_err (theory/MC − 1), gbar_mc (the global bound on the MC's own cycles), frac_states_gt,
    frac_sequences_gt, median_first_gt (median first k with L* > g_b among the sequences that
    had one, nan if none), mu_mc, n_trials.
    """
    import pandas as pd

    from spare_lib.stacking.layout import make_layout as _default_make

    mk = make_layout or (lambda n, r, k: _default_make(n, r, k))
    root = as_seed_sequence(seed)
    rows = []
    for N in Ns:
        for r in rs:
            lay = mk(int(N), int(r), kind)
            state = root.spawn(1)[0].generate_state(4)  # one stream per (N, r), reused for each b
            for b in bs:
                mc = makespan_mc(lay, int(b), n_trials, seed=np.random.SeedSequence(state))
                th = float(theory(int(N), int(r), int(b), kind))
                firsts = mc.first_gt[mc.first_gt >= 0]
                rows.append(dict(
                    N=int(N), r=int(r), b=int(b), layout=kind, sbar_theory=th,
                    sbar_mc=mc.s_bar_b, sbar_mc_se=mc.s_bar_b_se, rel_err=th / mc.s_bar_b - 1.0,
                    gbar_mc=mc.g_bar_b, frac_states_gt=mc.frac_states_gt,
                    frac_sequences_gt=mc.frac_sequences_gt,
                    median_first_gt=float(np.median(firsts)) if firsts.size else float("nan"),
                    mu_mc=float(mc.K.mean()), n_trials=mc.n_trials))
    return pd.DataFrame(rows)


def write_validation_csv(df, path: str | Path) -> Path:  # noqa: ANN001 - a pandas DataFrame
    """Write a table of :func:`microbatch_validation_grid` (floats to 6 significant digits)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(p, index=False, float_format="%.6g")
    return p


def chain_reach_table(layouts: Sequence[tuple[str, Layout]], bs: Sequence[int], *,
                      n_trials: int = 2000, seed: SeedLike = 2026):
    """Where chains of holders stop reaching the global bound, measured (a pandas DataFrame).

    For every (layout, b): μ, the fraction of states and of cycles with L*(k) > g_b(k), the
    median first such k, and the first k at which P(L*(k) > g_b(k) | no wipe-out) reaches 1 %,
    10 % and 50 % (nan if never, among the k still reached by at least 50 sequences), also as
    a fraction of μ. One stream per layout, shared by every b.
    """
    import pandas as pd

    root = as_seed_sequence(seed)
    rows = []
    for name, lay in layouts:
        state = root.spawn(1)[0].generate_state(4)
        for b in bs:
            mc = makespan_mc(lay, int(b), n_trials, seed=np.random.SeedSequence(state))
            p = mc.p_gt_by_k()
            ok = mc.n_by_k >= 50
            row = dict(layout=name, N=lay.N, r=lay.r, b=int(b), mu_mc=float(mc.K.mean()),
                       frac_states_gt=mc.frac_states_gt, frac_sequences_gt=mc.frac_sequences_gt)
            firsts = mc.first_gt[mc.first_gt >= 0]
            row["median_first_gt"] = float(np.median(firsts)) if firsts.size else float("nan")
            for q in (0.01, 0.1, 0.5):
                hit = np.flatnonzero(ok & (p >= q))
                k = float(hit[0]) if hit.size else float("nan")
                row[f"k_p{int(q * 100)}"] = k
                row[f"k_p{int(q * 100)}_over_mu"] = k / row["mu_mc"]
            rows.append(row)
    return pd.DataFrame(rows)


#: Files written by :func:`write_microbatch_results` (under ``data/results/``).
RESULT_FILES = {"ruler": "microbatch_sbar_ruler.csv", "layouts": "microbatch_sbar_layouts.csv",
                "chains": "microbatch_chains.csv"}
#: Failure-domain size of the domain-aware layouts in these tables.
DOMAIN_SIZE = 10


def _layout_maker(kind: str) -> Callable[[int, int, str], Layout]:
    from spare_lib.stacking import domain_aware_layout, make_layout

    if kind == "domain-aware":
        return lambda n, r, _k: domain_aware_layout(n, r, DOMAIN_SIZE)
    return lambda n, r, k: make_layout(n, r, k)


def _with_theory(df, theory: Callable[..., float], global_bound_fn: Callable[..., float]):  # noqa: ANN001, ANN202
    """Fill (or refill) the theory columns of a validation table from its MC columns."""
    th, gl = [], []
    for n, r, b, kind in zip(df.N, df.r, df.b, df.layout, strict=True):
        lay = _layout_maker(kind)(int(n), int(r), kind)
        th.append(float(theory(int(n), int(r), int(b), lay)))
        gl.append(float(global_bound_fn(int(n), int(r), int(b), lay)))
    df = df.copy()
    df["sbar_theory"] = th
    df["rel_err"] = df.sbar_theory / df.sbar_mc - 1.0
    df["sbar_global"] = gl
    return df


def _no_theory(N: int, r: int, b: int, kind: str) -> float:
    return float("nan")


def refresh_theory_columns(path: str | Path, theory: Callable[..., float],
                           global_bound_fn: Callable[..., float]) -> Path:
    """Recompute the theory columns of a written validation CSV, keeping its Monte Carlo."""
    import pandas as pd

    return write_validation_csv(_with_theory(pd.read_csv(path), theory, global_bound_fn), path)


def write_microbatch_results(out_dir: str | Path, theory: Callable[..., float],
                             global_bound_fn: Callable[..., float], *, n_trials: int = 2000,
                             seed: int = 2026, tables: Sequence[str] = ("ruler", "layouts", "chains"),
                             layout_grid: tuple = ((200, 600), (4, 8)),
                             chain_cases: tuple = ((200, 4), (600, 8))) -> dict[str, Path]:
    """Run the tables of issue 25 once and write the CSVs of :data:`RESULT_FILES`.

    ``theory(N, r, b, layout)`` and ``global_bound_fn(N, r, b, layout)`` are
    :func:`spare_lib.theory.microbatch.sbar_b_theory` and ``sbar_b_global`` (passed in: this
    package does not import ``theory``; they receive a :class:`Layout`). The ruler table is the
    acceptance grid (:data:`GRID_N` × :data:`GRID_R` × :data:`GRID_B`); the layout table
    repeats it for the consecutive and domain-aware (D = :data:`DOMAIN_SIZE`) layouts on
    ``layout_grid`` (N, r); the chain table measures where L* leaves the global bound
    (:func:`chain_reach_table`). Full size: about an hour on one shared core.
    """
    import pandas as pd

    out = Path(out_dir)
    paths = {}
    if "ruler" in tables:
        df = microbatch_validation_grid(_no_theory, n_trials=n_trials, seed=seed)
        paths["ruler"] = write_validation_csv(_with_theory(df, theory, global_bound_fn),
                                              out / RESULT_FILES["ruler"])
    if "layouts" in tables:
        parts = [microbatch_validation_grid(_no_theory, Ns=layout_grid[0], rs=layout_grid[1],
                                            kind=kind, n_trials=n_trials, seed=seed,
                                            make_layout=_layout_maker(kind))
                 for kind in ("consecutive", "domain-aware")]
        df = _with_theory(pd.concat(parts, ignore_index=True), theory, global_bound_fn)
        paths["layouts"] = write_validation_csv(df, out / RESULT_FILES["layouts"])
    if "chains" in tables:
        cases = [(kind, _layout_maker(kind)(N, r, kind)) for N, r in chain_cases
                 for kind in ("ruler", "consecutive", "domain-aware")]
        ch = chain_reach_table(cases, GRID_B, n_trials=n_trials, seed=seed)
        paths["chains"] = write_validation_csv(ch, out / RESULT_FILES["chains"])
    return paths


def sbar_table_markdown(df) -> str:  # noqa: ANN001 - a pandas DataFrame
    """The S̄_b table of ``docs/microbatch.md`` from a validation CSV (4 decimals)."""
    lines = ["| N | r | b | S̄_b theory | S̄_b MC (± s.e.) | theory/MC − 1 | global bound | "
             "states with L* > g_b |", "|---|---|---|---|---|---|---|---|"]
    for row in df.itertuples(index=False):
        lines.append(f"| {row.N} | {row.r} | {row.b} | {row.sbar_theory:.4f} | "
                     f"{row.sbar_mc:.4f} ± {row.sbar_mc_se:.4f} | {row.rel_err:+.4f} | "
                     f"{row.sbar_global:.4f} | {row.frac_states_gt:.4f} |")
    return "\n".join(lines)


def layouts_table_markdown(df) -> str:  # noqa: ANN001 - a pandas DataFrame
    """The consecutive / domain-aware S̄_b table of ``docs/microbatch.md``."""
    lines = ["| layout | N | r | b | S̄_b theory | S̄_b MC (± s.e.) | theory/MC − 1 | global bound |",
             "|---|---|---|---|---|---|---|---|"]
    for row in df.itertuples(index=False):
        lines.append(f"| {row.layout} | {row.N} | {row.r} | {row.b} | {row.sbar_theory:.4f} | "
                     f"{row.sbar_mc:.4f} ± {row.sbar_mc_se:.4f} | {row.rel_err:+.4f} | "
                     f"{row.sbar_global:.4f} |")
    return "\n".join(lines)


def chains_table_markdown(df) -> str:  # noqa: ANN001 - a pandas DataFrame
    """The chain-reach table of ``docs/microbatch.md`` (k where P(L* > g_b) reaches 1/10/50 %)."""
    def k(v: float) -> str:
        return "never" if np.isnan(v) else f"{v:.0f}"

    lines = ["| layout | N | r | b | μ (MC) | cycles leaving g_b | k at 1 % | k at 10 % | k at 50 % |",
             "|---|---|---|---|---|---|---|---|---|"]
    for row in df.itertuples(index=False):
        lines.append(f"| {row.layout} | {row.N} | {row.r} | {row.b} | {row.mu_mc:.1f} | "
                     f"{row.frac_sequences_gt:.3f} | {k(row.k_p1)} | {k(row.k_p10)} | "
                     f"{k(row.k_p50)} |")
    return "\n".join(lines)


DOC_BLOCKS = {"microbatch-sbar-ruler": ("ruler", sbar_table_markdown),
              "microbatch-sbar-layouts": ("layouts", layouts_table_markdown),
              "microbatch-chains": ("chains", chains_table_markdown)}


def render_doc_tables(doc_text: str, results_dir: str | Path) -> str:
    """``doc_text`` with every ``<!-- NAME:start -->…<!-- NAME:end -->`` block of
    :data:`DOC_BLOCKS` replaced by the table rendered from its CSV in ``results_dir``."""
    import re

    import pandas as pd

    for name, (key, render) in DOC_BLOCKS.items():
        table = render(pd.read_csv(Path(results_dir) / RESULT_FILES[key]))
        pat = re.compile(rf"(<!-- {name}:start -->\n).*?(<!-- {name}:end -->)", re.S)
        doc_text = pat.sub(lambda m, t=table: m.group(1) + t + "\n" + m.group(2), doc_text)
    return doc_text
