"""Failure-law curves of the predictive model (:mod:`spare_lib.theory.predict`).

Per kind of cycle (first, steady, transient) and failure law: the τ grid, the fraction of groups
failed by τ (from the renewed clocks, conditioned on the restart windows), the quadrature nodes
over the restart's duration and the transient restart times; cached per failure law
(independent of the method and r) and filled lazily along τ. :mod:`.cycle` turns them
into one cycle's survival, step time and depth. Also the gradient/trapezoid coefficients shared
by both modules (numpy's arithmetic, computed once per grid).
"""

from __future__ import annotations

from functools import lru_cache
from types import SimpleNamespace
from typing import Any

import numpy as np

from spare_lib.theory.predict.terms import (
    Clock,
    RestartLaw,
    failed_fractions_many,
    restart_laws,
)


def _gradient_coefficients(x: np.ndarray) -> tuple:
    """Coefficients of ``np.gradient`` on the grid x (second order inside, first order at the
    ends): (dx, None) on a uniform grid, else (dx, (a, b, c)) with f'_i = a f_{i−1} + b f_i +
    c f_{i+1} inside, the same arithmetic as numpy's."""
    if x.size < 2:
        raise ValueError("need at least two points")
    dx = np.diff(x)
    if np.all(dx == dx[0]):
        return dx, None
    dx1, dx2 = dx[:-1], dx[1:]
    return dx, (-(dx2) / (dx1 * (dx1 + dx2)), (dx2 - dx1) / (dx1 * dx2),
                dx1 / (dx2 * (dx1 + dx2)))


def _gradient(f: np.ndarray, x: np.ndarray, coef: tuple | None = None) -> np.ndarray:
    """``np.gradient(f, x, axis=-1)`` without its per-call overhead (it runs in the warm path);
    ``coef`` from :func:`_gradient_coefficients` (x) when the grid is reused."""
    dx, abc = _gradient_coefficients(x) if coef is None else coef
    out = np.empty(np.shape(f))
    if abc is None:
        out[..., 1:-1] = (f[..., 2:] - f[..., :-2]) / (2.0 * dx[0])
    else:
        a, b, c = abc
        out[..., 1:-1] = a * f[..., :-2] + b * f[..., 1:-1] + c * f[..., 2:]
    out[..., 0] = (f[..., 1] - f[..., 0]) / dx[0]
    out[..., -1] = (f[..., -1] - f[..., -2]) / dx[-1]
    return out


_N_TAU = 96
_N_TAU_LOG = 160
#: Quadrature nodes over the law of the restart's duration (equal-probability bins).
_N_T_NODES = 5


def restart_end_nodes(restart: RestartLaw, N: int, n: int = _N_T_NODES):
    """(weight, T) nodes of the law of the restart's duration T = max over N groups: the
    lattice law F(t)^N split into n bins of equal probability, each at its conditional mean
    (:func:`restart_end_nodes_many` of one law)."""
    return restart_end_nodes_many([restart], N, n)[0]


def restart_end_nodes_many(restarts: list[RestartLaw], N: int, n: int = _N_T_NODES):
    """:func:`restart_end_nodes` of several restart laws on the same lattice, vectorised: the
    bins of every law are summed by one ``np.add.reduceat``. (A bin of one lattice cell has
    its T exactly on the lattice, as a one-term sum must:
    :func:`~spare_lib.theory.predict.terms.failed_fractions` floors T/h.)"""
    rows = []
    for rl in restarts:
        if getattr(rl, "n_groups", None) == N:
            rows.append(rl.cdf_max)  # the same expression, computed by restart_law
        else:
            rows.append(np.minimum(np.cumsum(rl.pmf_group), 1.0) ** N)
    cdf = np.stack(rows)  # (laws, L)
    K, L = cdf.shape
    pmf = np.diff(cdf, axis=1, prepend=0.0)
    t = restarts[0].h * np.arange(L)
    q = np.linspace(0.0, 1.0, n + 1)[1:-1]
    # bin starts: 0, then the first cell with cdf ≥ q (searchsorted, side='left')
    starts = np.concatenate((np.zeros((K, 1), dtype=np.intp),
                             (cdf[:, :, None] < q[None, None, :]).sum(1)), axis=1)
    flat = (starts + L * np.arange(K)[:, None]).ravel()
    stops = np.append(flat[1:], K * L)
    w = np.add.reduceat(pmf.ravel(), flat)
    wt = np.add.reduceat((pmf * t).ravel(), flat)
    w = np.where(stops > flat, w, 0.0).reshape(K, n)  # reduceat gives a[i] for empty bins
    wt = wt.reshape(K, n)
    out = []
    for k in range(K):
        ok = w[k] > 1e-12
        tot = float(w[k, ok].sum())
        out.append([(float(a) / tot, float(b) / float(a)) for a, b in zip(w[k, ok], wt[k, ok],
                                                                          strict=True)])
    return out


#: Restart times t0 < t_eq at which the transient cycle is computed (then interpolated in log t0).
_N_TRANSIENT = 4


def transient_restart_times(clock: Clock) -> list[float]:
    """Restart start times t0 (seconds after the fresh start) of the transient cycles:
    _N_TRANSIENT log-spaced points in [0.05·M, t_eq), M the clock mean (memoised on the
    clock)."""
    memo = clock.__dict__.setdefault("_transient_times", {})
    if _N_TRANSIENT not in memo:
        memo[_N_TRANSIENT] = [float(t) for t in np.geomspace(
            0.05 * clock.mean_s, clock.t_equilibrium, _N_TRANSIENT + 1)[:-1]]
    return list(memo[_N_TRANSIENT])


#: Points of the τ grid computed at a time when a cycle needs more of a lazy curve.
_TAU_CHUNK = 24
_TAU_FIRST = 144
#: The steady and transient cycles end a few τ points after the first cycle (fresh clocks fail
#: sooner); their sources start there plus this margin (+ _TAU_CHUNK when it is not enough).
_TAU_MARGIN = 16


class _XSource:
    """Failed fractions x of several curves (rows) on a τ grid, filled lazily from τ = 0 in
    chunks (every τ is independent of the others, so a prefix holds the values of the whole
    grid): a cycle drops the τ beyond the first point where no layout survives (P_x ≤ 1e-9),
    usually past half the grid, so only the prefix some cycle of the cluster needed is
    computed. The curves of one failure law share a source: one batched evaluation."""

    def __init__(self, tau: np.ndarray, rows: int, xfun) -> None:  # noqa: ANN001 - callable
        self.tau, self._xfun = tau, xfun
        self._x = np.empty((rows, 0))
        #: τ points to compute at first (cycles keep 55–145 of the 255 points; one more chunk
        #: when a cycle needs more), then the most some cycle of this law needed.
        self.hint = _TAU_FIRST
        self.used = False  # has a cycle set the hint?
        self._hz: tuple | None = None
        self._grid: tuple | None = None

    @property
    def filled(self) -> int:
        """τ points computed so far."""
        return self._x.shape[1]

    def hz_prefix(self, n: int) -> np.ndarray:
        """Hazards x'/(1 − x) on the first n points: the gradient of −log(1 − x) over the
        filled prefix, which reaches at least n + 1 points, so the first n values are those of
        the whole grid; computed for every row at once and kept until the prefix grows."""
        self.prefix(min(n + 1, self.tau.size))
        if self._hz is None or self._hz[0] != self.filled:
            hz = np.maximum(_gradient(-np.log(np.maximum(1.0 - self._x, 1e-300)),
                                      self.tau[: self.filled]), 0.0)
            self._hz = (self.filled, hz)
        return self._hz[1][:, :n]

    def grid_prefix(self, n: int) -> tuple | None:
        """:func:`_gradient_coefficients` of the first n points of the τ grid, sliced from
        those of the whole grid (the same values: each uses its two neighbouring spacings);
        None (compute afresh) when the prefix is too short or uniform."""
        if self._grid is None:
            self._grid = _gradient_coefficients(self.tau)
        dx, abc = self._grid
        if n < 3 or abc is None or np.all(dx[: n - 1] == dx[0]):
            return None
        return dx[: n - 1], tuple(a[: n - 2] for a in abc)

    def prefix(self, n: int) -> np.ndarray:
        """x on the first n points of the τ grid (computed in chunks of ``_TAU_CHUNK``, the
        first fill at least ``hint`` points)."""
        n = min(n, self.tau.size)
        if n > self._x.shape[1]:
            a = self._x.shape[1]
            b = min(max(n, a + _TAU_CHUNK, self.hint if a == 0 else 0), self.tau.size)
            self._x = np.concatenate((self._x, self._xfun(self.tau[a:b])), axis=1)
            self._x.setflags(write=False)
        return self._x[:, :n]


class _Curves:
    """Failure law of one kind of cycle on the cluster's τ grid (independent of method and r):
    quadrature nodes over the restart's duration, stacked: weights ``w`` (n,), failed fractions
    ``x`` (n, τ) and per-live-group hazards ``hz`` = x'/(1 − x) (n, τ); x is the ``rows`` of a
    lazily filled :class:`_XSource` (:meth:`x_prefix`)."""

    def __init__(self, tau: np.ndarray, w: np.ndarray, source: _XSource,
                 rows: slice | None = None) -> None:
        self.tau, self.w, self.source = tau, w, source
        self.rows = slice(0, w.size) if rows is None else rows
        w.setflags(write=False)

    @property
    def hint(self) -> int:
        return self.source.hint

    @hint.setter
    def hint(self, n: int) -> None:
        self.source.hint = n

    def x_prefix(self, n: int) -> np.ndarray:
        """x on the first n points of the τ grid."""
        return self.source.prefix(n)[self.rows]

    def hz_prefix(self, n: int) -> np.ndarray:
        """Hazards on the first n points (:meth:`_XSource.hz_prefix`)."""
        return self.source.hz_prefix(n)[self.rows]

    @property
    def x(self) -> np.ndarray:
        return self.x_prefix(self.tau.size)

    @property
    def hz(self) -> np.ndarray:
        return self.hz_prefix(self.tau.size)

    @property
    def nodes(self) -> list[tuple[float, np.ndarray, np.ndarray]]:
        """(weight, x, hazard) per node, on the whole grid."""
        return [(float(w), x, hz) for w, x, hz in zip(self.w, self.x, self.hz, strict=True)]


def _tau_grid(clock: Clock, cfg: Any) -> np.ndarray:
    """τ grid shared by every cycle of a cluster: 0, then log-spaced points from a quarter step
    to the time where a fresh clock has failed with probability 1 − 1e-6 (no layout survives
    that), plus uniform points for the bulk."""
    t_step = cfg.compute_per_stack_s + cfg.allreduce_s
    t_hi = clock.fresh_quantile(1.0 - 1e-6) + 4.0 * clock.mean_s
    t_lo = min(0.25 * t_step, t_hi / 1e4)
    return np.unique(np.concatenate(([0.0], np.geomspace(t_lo, t_hi, _N_TAU_LOG),
                                     np.linspace(0.0, t_hi, _N_TAU)[1:])))


@lru_cache(maxsize=256)
def _tau_grid_cached(dist: str, mean_s: float, shape: float, t_step: float) -> np.ndarray:
    tau = _tau_grid(_clock(dist, mean_s, shape),
                    SimpleNamespace(compute_per_stack_s=t_step, allreduce_s=0.0))
    tau.setflags(write=False)
    return tau


@lru_cache(maxsize=64)
def _clock(dist: str, mean_s: float, shape: float) -> Clock:
    """One group's clock, shared by every cluster with the same failure law (its renewal
    measure and transient tables are memoised on the instance)."""
    return Clock(dist, mean_s, shape)


_CFG_FIELDS = ("compute_per_stack_s", "jitter_sigma", "jitter_min", "allreduce_s",
               "allreduce_fail_factor", "restart_s", "shrink_s", "checkpoint_s", "failure_dist",
               "weibull_shape", "system_mtbf_s")


class _Cfg:
    """Hashable snapshot of the config fields the model reads (besides ``steps``)."""

    def __init__(self, key: tuple) -> None:
        for name, v in zip(_CFG_FIELDS, key, strict=True):
            setattr(self, name, v)


#: Accepted spellings of a field (the stall per reconfiguration was called ``shrink_s``).
_ALIASES = {"shrink_s": ("stall_s", "shrink_s")}


def _cfg_key(config: Any) -> tuple:
    """The config fields the model reads, as a hashable tuple (validated)."""
    if float(getattr(config, "domain_fault_share", 0.0) or 0.0) > 0.0:
        raise ValueError("config.domain_fault_share must be 0: the model has independent group "
                         "clocks only (failure domains are not modelled)")
    out = []
    for name in _CFG_FIELDS:
        names = _ALIASES.get(name, (name,))
        found = [n for n in names if hasattr(config, n)]
        if not found:
            raise ValueError(f"config must have attribute {names[0]!r} (see ClusterLike)")
        v = getattr(config, found[0])
        out.append(v if isinstance(v, str) else float(v))
    return tuple(out)


#: Config fields the failure-law curves depend on (the τ grid needs the nominal step).
_LAW_FIELDS = ("failure_dist", "weibull_shape", "system_mtbf_s", "restart_s",
               "compute_per_stack_s", "allreduce_s")


def _law_key(key: tuple, mech: tuple[str, ...]) -> tuple:
    """The part of a config key (and of the mechanisms) that the failure-law curves read."""
    cfg = _Cfg(key)
    return (tuple(getattr(cfg, f) for f in _LAW_FIELDS)
            + ("failure_law" in mech, "restart_windows" in mech))


def restart_law_at(N: int, mech: tuple[str, ...], key: tuple, t0: float | None) -> Any:
    """The :class:`~spare_lib.theory.predict.terms.RestartLaw` of a restart that starts t0 after
    the fresh start (None: at equilibrium ages), as :func:`_curves` uses it; None when the
    restart windows are switched off (a restart lasts exactly T_r)."""
    return _law_curves(N, _law_key(key, mech))[0].get(("restart", t0))


def _curves(N: int, mech: tuple[str, ...], key: tuple, kind: str, t0: float | None) -> tuple:
    """(curves, restart mean) of a cycle kind: 'first' (fresh clocks from t = 0), 'steady'
    (after a restart starting at t0: None = equilibrium ages) or 'none' (no restart windows).
    Cached per failure law (:func:`_law_key`), so clusters that differ only in compute,
    jitter, all-reduce or checkpoint costs share them."""
    return _law_curves(N, _law_key(key, mech))[0][(kind, t0)]


@lru_cache(maxsize=128)
def _law_curves(N: int, law: tuple) -> tuple[dict, RestartLaw | None]:
    """Every cycle kind of one failure law: ({(kind, t0): (curves, restart mean)}, the
    equilibrium restart law or None). The steady and transient kinds (restarts at equilibrium
    ages and at the t0 of :func:`transient_restart_times`) are computed together: one batch of
    restart laws (:func:`~spare_lib.theory.predict.terms.restart_laws`) and one lazily filled
    source of failed fractions for all their nodes
    (:func:`~spare_lib.theory.predict.terms.failed_fractions_many`)."""
    dist, shape, mtbf, restart_s, cs, ta, failure_law, restart_windows = law
    clock = _clock(dist, N * mtbf, shape)
    tau = _tau_grid_cached(dist, N * mtbf, shape, cs + ta)
    R = float(restart_s)
    one = np.ones(1)

    def single(xfun) -> _Curves:  # noqa: ANN001 - callable
        return _Curves(tau, one.copy(), _XSource(tau, 1, xfun))

    def x_exp(t: np.ndarray) -> np.ndarray:  # equilibrium exponential clocks
        return (1.0 - np.exp(-t / clock.mean_s))[None, :]

    if failure_law:
        out = {("first", None): (single(lambda t: (1.0 - clock.survival(t))[None, :]), R)}
    else:
        out = {("first", None): (single(x_exp), R)}
    if not restart_windows:
        out[("none", None)] = (single(
            (lambda t: (1.0 - clock.eq_survival(t))[None, :]) if failure_law else x_exp), R)
        return out, None
    t0s: list[float | None] = [None]
    if failure_law and clock.shape != 1.0:
        t0s += transient_restart_times(clock)
    laws = restart_laws(clock, N, restart_s,
                        ["equilibrium" if t0 is None else t0 for t0 in t0s])
    if not failure_law:
        out[("steady", None)] = (single(x_exp), laws[0].mean_s)
        out[("restart", None)] = laws[0]
        return out, laws[0]
    # mixture over the restart's duration T (it sets how long the groups wait at the barrier,
    # hence the pre-failures)
    nodes = restart_end_nodes_many(laws, N)
    ends = [[T for _, T in nd] for nd in nodes]

    def xfun(t: np.ndarray) -> np.ndarray:
        return np.concatenate(failed_fractions_many(clock, t, laws, ends, restart_s=restart_s))

    source = _XSource(tau, sum(len(e) for e in ends), xfun)
    a = 0
    for t0, rl, nd in zip(t0s, laws, nodes, strict=True):
        w = np.array([x for x, _ in nd])
        out[("steady", t0)] = (_Curves(tau, w, source, slice(a, a + w.size)), rl.mean_s)
        out[("restart", t0)] = rl
        a += w.size
    return out, laws[0]
