"""Fit time-between-failure and lifetime laws to fault traces, with right-censoring.

Laws (scipy.stats, location fixed at 0): ``exponential`` (``expon``, no shape), ``weibull``
(``weibull_min``, shape k), ``lognormal`` (``lognorm``, shape sigma, scale exp(mu)) and
``gamma`` (``gamma``, shape a). Point estimates are scipy's maximum likelihood with
``scipy.stats.CensoredData`` for right-censored observations, polished by a direct minimisation
of the same weighted log-likelihood (kept only if it is higher). Confidence intervals on the
shape come from a bootstrap (percentile, 95 %) or from the observed Fisher information
(``ci='fisher'``: Wald interval on log-shape, 95 %).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import optimize, special, stats

from spare_lib._util.rng import SeedLike, as_seed_sequence
from spare_lib._util.validate import check_int, check_positive
from spare_lib.failures.data import DATASETS, data_path
from spare_lib.failures.describe import instant_labels
from spare_lib.failures.trace import FaultTrace, _parse_numbers, _read_text_csv, _row_error

__all__ = ["DISTS", "fit_durations", "fit_interarrival", "fit_lifetimes", "load_lifetimes"]

#: law name -> (scipy distribution, has a shape parameter)
DISTS: dict[str, tuple[stats.rv_continuous, bool]] = {
    "exponential": (stats.expon, False),
    "weibull": (stats.weibull_min, True),
    "lognormal": (stats.lognorm, True),
    "gamma": (stats.gamma, True),
}
_DEFAULT_DISTS = ("exponential", "weibull", "lognormal", "gamma")
_Z95 = stats.norm.ppf(0.975)
_COLUMNS = ["dist", "shape", "scale", "mtbf_s", "aic", "ks", "shape_lo", "shape_hi", "shape_se", "loglik",
            "n_obs", "n_censored"]


class _Sample:
    """Observations as unique (value, censored) pairs with counts, and a bootstrap cluster per
    observation (the unit the bootstrap resamples)."""

    def __init__(self, values: np.ndarray, censored: np.ndarray, cluster: np.ndarray) -> None:
        self.values, self.censored = values, censored
        key = np.stack([values, censored.astype(np.float64)])
        uniq, self.inverse = np.unique(key, axis=1, return_inverse=True)
        self.inverse = self.inverse.ravel()
        self.x, self.is_cens = uniq[0], uniq[1].astype(bool)
        self.counts = np.bincount(self.inverse, minlength=self.x.size).astype(np.float64)
        self.obs_idx, self.cens_idx = np.flatnonzero(~self.is_cens), np.flatnonzero(self.is_cens)
        self.x_obs, self.x_cens = self.x[self.obs_idx], self.x[self.cens_idx]
        self.cluster_codes, self.cluster = np.unique(cluster, return_inverse=True)
        self.cluster = self.cluster.ravel()

    def weights_from_clusters(self, cluster_w: np.ndarray) -> np.ndarray:
        return np.bincount(self.inverse, weights=cluster_w[self.cluster], minlength=self.x.size)


def _params(theta: np.ndarray, has_shape: bool) -> tuple[tuple[float, ...], float]:
    if has_shape:
        return (float(np.exp(theta[0])),), float(np.exp(theta[1]))
    return (), float(np.exp(theta[0]))


def _logpdf_logsf(name: str, x: np.ndarray, shape: float, scale: float, need_pdf: bool = True,
                  need_sf: bool = True) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Log-density and log-survival of the law ``name`` (same parametrisation as scipy.stats,
    written out in NumPy to avoid scipy's per-call overhead inside the bootstrap)."""
    y = x / scale
    lpdf = lsf = None
    with np.errstate(all="ignore"):
        logy = np.log(y)
        if name == "exponential":
            lpdf, lsf = -y - np.log(scale), -y
        elif name == "weibull":
            z = np.exp(shape * logy)
            lsf = -z
            if need_pdf:
                lpdf = np.log(shape / scale) + (shape - 1.0) * logy - z
        elif name == "lognormal":
            u = logy / shape
            if need_pdf:
                lpdf = -0.5 * u * u - logy - np.log(scale * shape * np.sqrt(2.0 * np.pi))
            if need_sf:
                lsf = special.log_ndtr(-u)
        else:  # gamma
            if need_pdf:
                lpdf = (shape - 1.0) * logy - y - special.gammaln(shape) - np.log(scale)
            if need_sf:
                lsf = np.log(special.gammaincc(shape, y))
    return lpdf, lsf


def _loglik(theta: np.ndarray, name: str, s: _Sample, w: np.ndarray) -> float:
    has_shape = DISTS[name][1]
    args, scale = _params(theta, has_shape)
    shape = args[0] if has_shape else 1.0
    lpdf, _ = _logpdf_logsf(name, s.x_obs, shape, scale, need_sf=False)
    ll = float(w[s.obs_idx] @ lpdf)
    if s.cens_idx.size:
        _, lsf = _logpdf_logsf(name, s.x_cens, shape, scale, need_pdf=False)
        ll += float(w[s.cens_idx] @ lsf)
    return ll if np.isfinite(ll) else -np.inf


#: Decimals kept of the maximum-likelihood log-parameters (log shape, log scale) found by
#: Nelder-Mead (tolerance 1e-6): 1e-5 relative on shape and scale, far inside any fit's interval.
THETA_DECIMALS = 5


def _maximise(theta0: np.ndarray, name: str, s: _Sample, w: np.ndarray) -> tuple[np.ndarray, float]:
    if not DISTS[name][1]:  # exponential: closed form, total time / number of observed events
        theta = np.array([np.log((w @ s.x) / w[~s.is_cens].sum())])
        return theta, _loglik(theta, name, s, w)

    def nll(th: np.ndarray) -> float:
        v = -_loglik(th, name, s, w)
        return v if np.isfinite(v) else 1e300

    res = optimize.minimize(nll, theta0, method="Nelder-Mead", options={"xatol": 1e-6, "fatol": 1e-6})
    # Nelder-Mead stops within xatol of the optimum in log-parameters; the digits below that are
    # the optimiser's path (its start from scipy's fit, numpy's summation order), not the data,
    # and they differ between machines and library versions (by 2e-8 relative between two runs
    # of notebook 70). Rounded, a rerun elsewhere feeds the same law to the simulations.
    theta = np.round(res.x, THETA_DECIMALS)
    return theta, _loglik(theta, name, s, w)


def _scipy_fit(dist: stats.rv_continuous, has_shape: bool, s: _Sample) -> np.ndarray | None:
    unc, cen = s.values[~s.censored], s.values[s.censored]
    data = stats.CensoredData(uncensored=unc, right=cen) if cen.size else unc
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p = dist.fit(data, floc=0)
    except Exception:  # scipy FitError / optimizer trouble: fall back to our own start
        return None
    shape_scale = [p[0], p[-1]] if has_shape else [p[-1]]
    theta = np.log(np.asarray(shape_scale, dtype=np.float64))
    return theta if np.all(np.isfinite(theta)) else None


def _starts(has_shape: bool, s: _Sample) -> list[np.ndarray]:
    """Fallback starting points: shapes 0.5 and 1 with the scale matching the mean."""
    mean = s.values.sum() / max(1, int((~s.censored).sum()))
    if not has_shape:
        return [np.array([np.log(mean)])]
    return [np.array([np.log(k), np.log(mean)]) for k in (1.0, 0.5)]


def _fisher_se_log_shape(theta: np.ndarray, name: str, s: _Sample) -> float:
    """Standard error of log-shape from the observed information (central-difference Hessian)."""
    h = 1e-3
    def f(t: np.ndarray) -> float:
        return -_loglik(t, name, s, s.counts)
    H = np.empty((2, 2))
    e = np.eye(2) * h
    for i in range(2):
        for j in range(2):
            H[i, j] = (f(theta + e[i] + e[j]) - f(theta + e[i] - e[j]) - f(theta - e[i] + e[j])
                       + f(theta - e[i] - e[j])) / (4 * h * h)
    try:
        cov = np.linalg.inv(H)
    except np.linalg.LinAlgError:
        return float("nan")
    return float(np.sqrt(cov[0, 0])) if cov[0, 0] > 0 else float("nan")


def _km_ks(s: _Sample, dist: stats.rv_continuous, args: tuple[float, ...], scale: float) -> float:
    """Largest distance between the Kaplan-Meier CDF and the fitted CDF (the KS statistic when
    nothing is censored)."""
    t, inv = np.unique(s.x, return_inverse=True)
    d = np.bincount(inv, weights=s.counts * ~s.is_cens, minlength=t.size)
    all_w = np.bincount(inv, weights=s.counts, minlength=t.size)
    at_risk = all_w[::-1].cumsum()[::-1]
    surv = np.cumprod(1.0 - d / at_risk)
    f_km = 1.0 - surv
    f_km_before = np.concatenate([[0.0], f_km[:-1]])
    model = dist.cdf(t, *args, scale=scale)
    ev = d > 0
    if not ev.any():
        return float("nan")
    return float(max(np.abs(f_km[ev] - model[ev]).max(), np.abs(f_km_before[ev] - model[ev]).max()))


def _fit_sample(s: _Sample, dists: Sequence[str], ci: str | None, n_boot: int,
                seed: SeedLike) -> pd.DataFrame:
    rows = []
    children = as_seed_sequence(seed).spawn(len(dists))
    for name, child in zip(dists, children, strict=True):
        dist, has_shape = DISTS[name]
        starts = [_scipy_fit(dist, has_shape, s)] + _starts(has_shape, s)
        best = (np.full(len(starts[-1]), np.nan), -np.inf)
        for theta0 in starts:  # polished optimum from each start; scipy's own point kept only if
            if theta0 is None:  # clearly better (it is not, in practice)
                continue
            cand = _maximise(theta0, name, s, s.counts)
            if cand[1] > best[1]:
                best = cand
        if starts[0] is not None and (ll0 := _loglik(starts[0], name, s, s.counts)) > best[1] + 1e-6:
            best = (starts[0], ll0)
        theta, ll = best
        args, scale = _params(theta, has_shape)
        shape = args[0] if has_shape else np.nan
        lo = hi = se = np.nan
        if has_shape and ci == "fisher":
            se_log = _fisher_se_log_shape(theta, name, s)
            lo, hi, se = shape * np.exp(-_Z95 * se_log), shape * np.exp(_Z95 * se_log), shape * se_log
        elif has_shape and ci == "bootstrap":
            rng = np.random.default_rng(child)
            n_cl = s.cluster_codes.size
            draws = []
            for _ in range(n_boot):
                picks = rng.multinomial(n_cl, np.full(n_cl, 1.0 / n_cl)).astype(np.float64)
                w = s.weights_from_clusters(picks)
                if w[~s.is_cens].sum() <= 0:
                    continue
                th, llb = _maximise(theta, name, s, w)
                if np.isfinite(llb):
                    draws.append(np.exp(th[0]))
            if len(draws) >= 2:
                lo, hi = np.percentile(draws, [2.5, 97.5])
                se = float(np.std(draws, ddof=1))
        n_par = 2 if has_shape else 1
        rows.append({"dist": name, "shape": shape, "scale": scale,
                     "mtbf_s": float(dist.mean(*args, scale=scale)), "aic": 2 * n_par - 2 * ll,
                     "ks": _km_ks(s, dist, args, scale), "shape_lo": lo, "shape_hi": hi, "shape_se": se,
                     "loglik": ll, "n_obs": int((~s.censored).sum()), "n_censored": int(s.censored.sum())})
    return pd.DataFrame(rows, columns=_COLUMNS)


def _check_fit_args(dists: Sequence[str], ci: str | None, n_boot: int) -> tuple[str, ...]:
    if isinstance(dists, str):
        dists = (dists,)
    dists = tuple(dists)
    unknown = [d for d in dists if d not in DISTS]
    if not dists or unknown:
        raise ValueError(f"dists must be a non-empty subset of {list(DISTS)}, got {list(dists)}")
    if ci not in ("bootstrap", "fisher", None):
        raise ValueError(f"ci must be 'bootstrap', 'fisher' or None, got {ci!r}")
    if ci == "bootstrap":
        check_int("n_boot", n_boot, lo=2)
    return dists


def fit_durations(observed_s: np.ndarray, censored_s: np.ndarray | None = None, *,
                  dists: Sequence[str] = _DEFAULT_DISTS, ci: str | None = "bootstrap", n_boot: int = 200,
                  seed: SeedLike = 0) -> pd.DataFrame:
    """Fit laws to durations, some of them right-censored.

    Parameters
    ----------
    observed_s : array of float > 0
        Durations that ended with an event (failure).
    censored_s : array of float >= 0, optional
        Durations still running at the end of observation (the event is later than this).
        Zero-length ones carry no information and are ignored.
    dists : sequence of {'exponential', 'weibull', 'lognormal', 'gamma'}
    ci : {'bootstrap', 'fisher', None}
        95 % interval on the shape: percentile bootstrap over observations (``n_boot`` refits),
        or Wald on log-shape with the observed Fisher information (fast, asymptotic), or none.
    n_boot : int, default 200
    seed : int, SeedSequence or Generator

    Returns
    -------
    pandas.DataFrame
        One row per law: ``dist, shape, scale, mtbf_s`` (the law's mean), ``aic`` (2p - 2 log L),
        ``ks`` (sup distance between the Kaplan-Meier and fitted CDFs), ``shape_lo, shape_hi``
        (95 % CI), ``shape_se``, ``loglik``, ``n_obs``, ``n_censored``. Shape is NaN for the
        exponential.

    Notes
    -----
    The standard error of a Weibull shape estimated from n complete observations is
    asymptotically ``sqrt(6 / pi**2 / n) * k`` (about ``0.78 k / sqrt(n)``).
    """
    dists = _check_fit_args(dists, ci, n_boot)
    obs = np.asarray(observed_s, dtype=np.float64).ravel()
    cen = np.zeros(0) if censored_s is None else np.asarray(censored_s, dtype=np.float64).ravel()
    if obs.size < 2 or not np.all(np.isfinite(obs)) or np.any(obs <= 0):
        raise ValueError(f"observed_s must hold at least 2 finite durations > 0, got {obs.size} values "
                         f"(min {obs.min() if obs.size else 'n/a'})")
    if not np.all(np.isfinite(cen)) or np.any(cen < 0):
        raise ValueError("censored_s must be finite and >= 0")
    cen = cen[cen > 0]
    values = np.concatenate([obs, cen])
    s = _Sample(values, np.r_[np.zeros(obs.size, bool), np.ones(cen.size, bool)], np.arange(values.size))
    return _fit_sample(s, dists, ci, n_boot, seed)


def _node_segments(trace: FaultTrace, tol: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per node: gaps between consecutive faults (window start as a renewal point), the censored
    tail to the window end, and faultless nodes censored at the window. Returns values, censored
    flags, cluster (node) ids and the per-node fault counts (faults within ``tol`` merged)."""
    codes, _ = trace.node_codes()
    start = trace.faults["start_s"].to_numpy()
    order = np.lexsort((start, codes))
    c, t = codes[order], start[order]
    new_node = np.r_[True, c[1:] != c[:-1]]
    merged = ~new_node & (np.r_[np.inf, np.diff(t)] <= tol)
    c, t, new_node = c[~merged], t[~merged], new_node[~merged]
    gaps = np.where(new_node, t, np.r_[0.0, np.diff(t)])
    keep = gaps > 0  # a zero leading segment (origin defined by this fault) carries nothing
    last = np.r_[c[1:] != c[:-1], True]
    tails = trace.window_s - t[last]
    n_seen = int(c.max()) + 1 if c.size else 0
    n_quiet = trace.n_nodes - n_seen
    values = np.concatenate([gaps[keep], tails, np.full(n_quiet, trace.window_s)])
    censored = np.r_[np.zeros(int(keep.sum()), bool), np.ones(tails.size + n_quiet, bool)]
    cluster = np.concatenate([c[keep], c[last], n_seen + np.arange(n_quiet)])
    counts = np.r_[np.bincount(c, minlength=n_seen), np.zeros(n_quiet, np.int64)]
    return values, censored, cluster, counts


def fit_interarrival(trace: FaultTrace, level: str = "system", dists: Sequence[str] = _DEFAULT_DISTS,
                     n_boot: int = 200, seed: SeedLike = 0, *, tolerance_s: float = 1.0,
                     ci: str | None = "bootstrap") -> pd.DataFrame:
    """Fit laws to the times between faults of a trace.

    Parameters
    ----------
    trace : FaultTrace
    level : {'system', 'node'}
        ``'system'``: gaps between consecutive fault *instants* of the whole cluster (faults
        within ``tolerance_s`` count as one event), the time from the window start to the first
        instant as a gap, and the time from the last instant to the window end right-censored.
        ``'node'``: the same per node, pooled over nodes, faultless nodes censored at the window
        length; the bootstrap resamples whole nodes.
    dists, n_boot, seed, ci
        As in :func:`fit_durations`.
    tolerance_s : float, default 1.0

    Returns
    -------
    pandas.DataFrame
        Columns of :func:`fit_durations` plus ``mtbf_node_hours`` and ``mtbf_gpu_hours`` (NaN if
        GPUs per node is unknown). At system level the node MTBF is
        ``mtbf_s * n_nodes / mean instant size``. ``df.attrs`` holds ``level``, ``tolerance_s``,
        ``n_nodes``, ``window_s``, ``mean_instant_size`` and, at node level, ``rate_dispersion``
        (variance / mean of per-node fault counts; 1 for a Poisson process with equal rates) and
        ``dispersion_pvalue`` (chi-square dispersion test, ``sum (c - m)^2 / m`` on n - 1 degrees
        of freedom).

    Notes
    -----
    The window start is treated as a renewal point (exact for a Poisson process); with this
    choice the exponential MLE reproduces the empirical MTBF exactly. A leading gap of length 0
    (window defined by the first fault, as for LANL) is dropped.
    """
    if level not in ("system", "node"):
        raise ValueError(f"level must be 'system' or 'node', got {level!r}")
    dists = _check_fit_args(dists, ci, n_boot)
    tol = check_positive("tolerance_s", tolerance_s, allow_zero=True)
    start = trace.faults["start_s"].to_numpy()
    attrs: dict[str, object] = {"level": level, "tolerance_s": tol, "n_nodes": trace.n_nodes,
                                "window_s": trace.window_s, "ci": ci,
                                "n_boot": n_boot if ci == "bootstrap" else 0}
    if level == "system":
        labels = instant_labels(start, tol)
        first = np.r_[True, labels[1:] != labels[:-1]]
        t = start[first]
        gaps = np.diff(np.r_[0.0, t])
        gaps = gaps[gaps > 0]
        tail = trace.window_s - t[-1] if t.size else trace.window_s
        values = np.r_[gaps, [tail] if tail > 0 else []]
        censored = np.r_[np.zeros(gaps.size, bool), np.ones(values.size - gaps.size, bool)]
        cluster = np.arange(values.size)
        mean_size = len(start) / max(1, t.size)
    else:
        values, censored, cluster, counts = _node_segments(trace, tol)
        mean_size = 1.0
        m = counts.mean()
        attrs["rate_dispersion"] = float(counts.var(ddof=1) / m) if m > 0 else float("nan")
        chi2 = float(((counts - m) ** 2).sum() / m) if m > 0 else float("nan")
        attrs["dispersion_pvalue"] = float(stats.chi2.sf(chi2, counts.size - 1))
    if int((~censored).sum()) < 2:
        raise ValueError(f"trace has fewer than 2 gaps between faults at level={level!r}; nothing to fit")
    s = _Sample(values, censored, cluster)
    out = _fit_sample(s, dists, ci, n_boot, seed)
    scale_to_node = trace.n_nodes / mean_size if level == "system" else 1.0
    out["mtbf_node_hours"] = out["mtbf_s"] * scale_to_node / 3600.0
    out["mtbf_gpu_hours"] = out["mtbf_node_hours"] * (trace.gpus_per_node or np.nan)
    attrs["mean_instant_size"] = float(mean_size)
    out.attrs.update(attrs)
    return out


def load_lifetimes(path: str | Path = "titan-gpu-life") -> pd.DataFrame:
    """Per-GPU lifetimes from Titan's ``gc_summary_loc.csv``.

    Parameters
    ----------
    path : str or Path
        The file, its folder, or the dataset name ``'titan-gpu-life'``.

    Returns
    -------
    pandas.DataFrame
        Columns ``SN``, ``time_s`` (time in service, s), ``dead`` (bool: the GPU failed; else it
        is right-censored at ``time_s``) and, when present, ``batch`` (old/new).
    """
    if isinstance(path, str) and path in DATASETS and not Path(path).exists():
        path = data_path(path)
    p = Path(path)
    if p.is_dir():
        p = p / "gc_summary_loc.csv"
    if not p.is_file():
        raise FileNotFoundError(f"path does not exist: {p}")
    if p.stat().st_size == 0:
        raise ValueError(f"{p.name}: file is empty")
    df = _read_text_csv(p, ("SN", "time", "dead"))
    time_s = _parse_numbers(p, df["time"], "time", allow_empty=False)
    dead = df["dead"].str.upper()
    bad = ~dead.isin(["TRUE", "FALSE"])
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise _row_error(p, i + 2, "dead", f"expected TRUE/FALSE, got {df['dead'].iloc[i]!r}")
    if np.any(time_s <= 0):
        i = int(np.flatnonzero(time_s <= 0)[0])
        raise _row_error(p, i + 2, "time", f"lifetime must be > 0, got {df['time'].iloc[i]!r}")
    out = pd.DataFrame({"SN": df["SN"], "time_s": time_s, "dead": (dead == "TRUE").to_numpy()})
    if "batch" in df.columns:
        out["batch"] = df["batch"].to_numpy()
    return out


def fit_lifetimes(data: FaultTrace | pd.DataFrame | str | Path = "titan-gpu-life",
                  dists: Sequence[str] = ("weibull",), n_boot: int = 200, seed: SeedLike = 0, *,
                  ci: str | None = "bootstrap", by: str | None = None) -> pd.DataFrame:
    """Censored fit of unit lifetimes (time to first failure), e.g. Titan's GPUs.

    Parameters
    ----------
    data : FaultTrace, DataFrame, path or dataset name
        A DataFrame with ``time_s`` (or ``time``, seconds in service) and ``dead`` (bool; False
        means right-censored at that time), such as :func:`load_lifetimes`
        returns; a path / ``'titan-gpu-life'`` (reads ``gc_summary_loc.csv``); or a FaultTrace,
        where each node's lifetime is the time to its first fault and faultless nodes are
        censored at the window end.
    dists, n_boot, seed, ci
        As in :func:`fit_durations`; default a Weibull with a bootstrap CI.
    by : str, optional
        Column to split by (e.g. ``'batch'``, Titan's old/new GPUs); one fit per value plus one
        for all, named in the ``group`` column.

    Returns
    -------
    pandas.DataFrame
        The columns of :func:`fit_durations` plus ``group``; ``mtbf_s`` is the mean lifetime.

    Notes
    -----
    The SPARe paper uses a Weibull shape k = 0.78 for GPU failures; this fits the shape of
    per-GPU lifetimes on Titan for comparison (k < 1: failure rate falling with age, k > 1: wear-out).
    """
    dists = _check_fit_args(dists, ci, n_boot)
    if isinstance(data, FaultTrace):
        codes, _ = data.node_codes()
        first = pd.Series(data.faults["start_s"].to_numpy()).groupby(codes).min().to_numpy()
        n_quiet = data.n_nodes - first.size
        df = pd.DataFrame({"time_s": np.r_[first, np.full(n_quiet, data.window_s)],
                           "dead": np.r_[np.ones(first.size, bool), np.zeros(n_quiet, bool)]})
        df = df[df["time_s"] > 0]
    elif isinstance(data, pd.DataFrame):
        df = data.rename(columns={"time": "time_s"}) if "time_s" not in data.columns else data
        if "time_s" not in df.columns or "dead" not in df.columns:
            raise ValueError(f"data must have columns 'time_s' (or 'time') and 'dead', "
                             f"got {list(data.columns)}")
    else:
        df = load_lifetimes(data)
    if by is not None and by not in df.columns:
        raise ValueError(f"by must be a column of data, one of {list(df.columns)}, got {by!r}")
    groups: list[tuple[str, pd.DataFrame]] = [("all", df)]
    if by is not None:
        groups += [(str(k), g) for k, g in df.groupby(by, sort=True)]
    outs = []
    for name, g in groups:
        time_s = g["time_s"].to_numpy(dtype=np.float64)
        dead = g["dead"].to_numpy(dtype=bool)
        res = fit_durations(time_s[dead], time_s[~dead], dists=dists, ci=ci, n_boot=n_boot, seed=seed)
        res.insert(0, "group", name)
        outs.append(res)
    return pd.concat(outs, ignore_index=True)
