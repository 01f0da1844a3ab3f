"""The failure clocks of the event core: renewals of a group's own clock (random, replayed or
from failure streams), failure domains, and the failure class of each pending failure.

Group w's next failure time ``nf[w]`` is absolute. ``dist``: 0 Weibull and 1 exponential drawn
from the run's generator; 2 a replayed trace; 3 Weibull and 4 exponential from *failure
streams*: group w's j-th gap comes from a counter-based hash of (failure_seed, w, j)
(splitmix64), so every method and r given the same failure seed sees the same gap sequence per
group (common random numbers). With failure domains a group's next failure is the earlier of
its own clock and its domain's next event. With several failure classes (a failure mix,
:mod:`spare_lib.failures.mix`) the class of each pending failure is kept beside its time: a
replayed trace's class, a domain event's class, or a hash of (class seed, w, j) for the j-th
renewal of its own clock.

The clock tuple ``clk`` is ``(dist, shape, scale, tr_ptr, tr_times, tr_cur, fseed, fcnt, own,
dsize, dom_ptr, dom_times, dcur)``; the class tuple, passed beside it only where classes matter
(``multi``: more than one class), is ``cls = (detect_s, rejoin_s, group_cum, group_ids,
cur_class, own_class, dom_class, trace_class, class_count, class_seed)``: per class
its detection and rejoin time; the cumulative shares and ids of the group classes; per group the
class of its pending failure and of its own clock's; per domain event and per trace row their
class (−1: drawn); per group the class draws so far; the hash seed (a uint64 array of one).
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Failure-clock codes (``dist``) of the core.
DIST_WEIBULL, DIST_EXPONENTIAL, DIST_TRACE, DIST_WEIBULL_STREAM, DIST_EXPONENTIAL_STREAM = range(5)

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_ROUND = np.uint64(0xD1B54A32D192ED03)


@njit(cache=True)
def _mix64(z):  # pragma: no cover
    """splitmix64's finaliser (Steele, Lea and Flood 2014): a bijection of uint64."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def stream_uniform(fseed, w, j):  # pragma: no cover
    """Uniform on (0, 1] for gap j of group w under failure seed ``fseed`` (uint64)."""
    z = _mix64(fseed + np.uint64(w + 1) * _GOLDEN)
    z = _mix64(z + np.uint64(j + 1) * _ROUND)
    return (np.float64(z >> np.uint64(11)) + 1.0) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def _renew(w, t, dist, shape, scale, rng, tr_ptr, tr_times, tr_cur, fseed, fcnt):  # pragma: no cover
    """Next failure time of group w after a renewal at time t."""
    if dist == DIST_WEIBULL:
        return t + scale * rng.weibull(shape)
    if dist == DIST_EXPONENTIAL:
        return t + rng.exponential(scale)
    if dist == DIST_TRACE:
        c = tr_cur[w]
        end = tr_ptr[w + 1]
        while c < end and tr_times[c] <= t:
            c += 1
        tr_cur[w] = c
        if c < end:
            return tr_times[c]
        return np.inf
    u = stream_uniform(fseed, w, fcnt[w])
    fcnt[w] += 1
    if dist == DIST_WEIBULL_STREAM:
        return t + scale * (-np.log(u)) ** (1.0 / shape)
    return t - scale * np.log(u)


@njit(cache=True)
def _next_domain_failure(w, t, dsize, dom_ptr, dom_times, dcur):  # pragma: no cover
    """First domain event of group w's domain after time t (consumes the earlier ones; its
    index is left in ``dcur[w]``)."""
    d = w // dsize
    c = dcur[w]
    end = dom_ptr[d + 1]
    while c < end and dom_times[c] <= t:
        c += 1
    dcur[w] = c
    return dom_times[c] if c < end else np.inf


@njit(cache=True)
def _renew_domains(w, t, dist, shape, scale, rng, tr_ptr, tr_times, tr_cur, fseed, fcnt, own,
                   dsize, dom_ptr, dom_times, dcur):  # pragma: no cover
    """Failure domains: group w's failure is processed at time t. Its own clock renews only if
    it is what fired (own[w] ≤ t); domain events up to t are absorbed. Returns the next
    failure time, min(own clock, next domain event of its domain)."""
    if own[w] <= t:
        own[w] = _renew(w, t, dist, shape, scale, rng, tr_ptr, tr_times, tr_cur, fseed, fcnt)
    nd = _next_domain_failure(w, t, dsize, dom_ptr, dom_times, dcur)
    return own[w] if own[w] < nd else nd


@njit(cache=True)
def _next_failure(w, t, clk, rng):  # pragma: no cover
    """Group w's failure is processed at time t: its next failure time (own clock, trace or
    stream; with failure domains, the earlier of its own clock and its domain's next event)."""
    dist, shape, scale, tr_ptr, tr_times, tr_cur, fseed, fcnt, own, dsize, dom_ptr, dom_times, \
        dcur = clk
    if own.shape[0] > 0:
        return _renew_domains(w, t, dist, shape, scale, rng, tr_ptr, tr_times, tr_cur, fseed, fcnt,
                              own, dsize, dom_ptr, dom_times, dcur)
    return _renew(w, t, dist, shape, scale, rng, tr_ptr, tr_times, tr_cur, fseed, fcnt)


@njit(cache=True)
def _init_clock(w, clk, rng, nf):  # pragma: no cover
    """Group w's first failure time, drawn as the core always drew it."""
    dist, shape, scale, tr_ptr, tr_times, tr_cur, fseed, fcnt, own, dsize, dom_ptr, dom_times, \
        dcur = clk
    if own.shape[0] > 0:
        own[w] = _renew(w, -1.0, dist, shape, scale, rng, tr_ptr, tr_times, tr_cur, fseed, fcnt)
        dcur[w] = dom_ptr[w // dsize]
        nd = _next_domain_failure(w, -1.0, dsize, dom_ptr, dom_times, dcur)
        nf[w] = own[w] if own[w] < nd else nd
    else:
        nf[w] = _renew(w, -1.0, dist, shape, scale, rng, tr_ptr, tr_times, tr_cur, fseed, fcnt)


# ------------------------------------------------------------------ failure classes
# Only with several classes (``multi``): the paper world's clocks never touch ``cls``.

@njit(cache=True)
def _own_class(w, clk, cls):  # pragma: no cover
    """Failure class of group w's own clock's next failure, just renewed: the trace's class of
    that row if it gives one, else drawn by the group classes' shares from a counter-based hash
    of (class seed, w, j) for its j-th renewal (the same for every method: common numbers)."""
    dist, tr_ptr, tr_cur = clk[0], clk[3], clk[5]
    g_cum, g_ids, tr_cls, ccnt, cseed = cls[2], cls[3], cls[7], cls[8], cls[9][0]
    if dist == DIST_TRACE and tr_cls.shape[0] > 0:
        c = tr_cur[w]
        if c < tr_ptr[w + 1] and tr_cls[c] >= 0:
            return tr_cls[c]
    G = g_cum.shape[0]
    if G <= 1:
        return g_ids[0]
    u = stream_uniform(cseed, w, ccnt[w])
    ccnt[w] += 1
    for i in range(G - 1):
        if u <= g_cum[i]:
            return g_ids[i]
    return g_ids[G - 1]


@njit(cache=True)
def _own_time(w, clk):  # pragma: no cover
    """Group w's own clock with failure domains (NaN without: every renewal is its own)."""
    own = clk[8]
    return own[w] if own.shape[0] > 0 else np.nan


@njit(cache=True)
def _set_class(w, own_before, clk, cls):  # pragma: no cover
    """After group w's clock was renewed (or first drawn, ``own_before`` NaN): the class of its
    pending failure, its own clock's (drawn anew if that clock renewed) or, when its domain's
    next event comes first, that event's."""
    own = clk[8]
    if own.shape[0] == 0:
        cls[4][w] = _own_class(w, clk, cls)
        return
    if own[w] != own_before:
        cls[5][w] = _own_class(w, clk, cls)
    dsize, dom_ptr, dom_times, dcur = clk[9], clk[10], clk[11], clk[12]
    c = dcur[w]
    if c < dom_ptr[w // dsize + 1] and dom_times[c] <= own[w] and c < cls[6].shape[0]:
        cls[4][w] = cls[6][c]
    else:
        cls[4][w] = cls[5][w]


@njit(cache=True, inline="always")
def _renew_c(w, t, clk, cls, multi, rng):  # pragma: no cover
    """:func:`_next_failure`, and with several classes the class of the new pending failure."""
    if not multi:
        return _next_failure(w, t, clk, rng)
    before = _own_time(w, clk)
    x = _next_failure(w, t, clk, rng)
    _set_class(w, before, clk, cls)
    return x
