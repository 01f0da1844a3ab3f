"""One branch per method for each hook: the only place the core's hooks are looked up.

numba cannot cache a core that takes functions as arguments or closes over them, so the core
calls these dispatchers with the method's integer code; each is a chain of ``if code == ...``
that LLVM reduces to a predictable branch. ``work``, called once per live group per attempt,
is inlined into the core (``inline="always"``) and takes only scalars: a hook called that often
with the state tuple or the generator as arguments made the core 2–8× slower.
"""

from __future__ import annotations

from numba import njit

from spare_lib.cluster.engine.methods._common import DEPTH
from spare_lib.cluster.engine.methods.elastic import (
    drop_resolve,
    drop_weight,
    drop_work,
    rebalance_delay,
    rebalance_notice,
    rebalance_rejoin,
    rebalance_reset,
    rebalance_resolve,
    rebalance_work,
)
from spare_lib.cluster.engine.methods.replication import rep_notice, rep_reset, rep_resolve, rep_work
from spare_lib.cluster.engine.methods.spare import (
    spare_notice,
    spare_rejoin,
    spare_reset,
    spare_resolve,
    spare_retry_plan,
    spare_sampled,
    spare_work,
)
from spare_lib.cluster.engine.methods.spare_mb import (
    spare_mb_delay,
    spare_mb_notice,
    spare_mb_rejoin,
    spare_mb_reset,
    spare_mb_resolve,
    spare_mb_weight,
    spare_mb_work,
)

SPARE = 0
REP = 1
DROP = 2
REBALANCE = 3
SPARE_MB = 4


@njit(cache=True, inline="always")
def work(code, retry, g_int, depth, mult, compute_s):  # pragma: no cover
    if code == SPARE:
        return spare_work(retry, g_int, depth, mult, compute_s)
    if code == REP:
        return rep_work(retry, g_int, depth, mult, compute_s)
    if code == DROP:
        return drop_work(retry, g_int, depth, mult, compute_s)
    if code == SPARE_MB:
        return spare_mb_work(retry, g_int, depth, mult, compute_s)
    return rebalance_work(retry, g_int, depth, mult, compute_s)


@njit(cache=True)
def delay(code, retry, fetch_s, ms):  # pragma: no cover
    if code == REBALANCE:
        return rebalance_delay(retry, fetch_s, ms)
    if code == SPARE_MB:
        return spare_mb_delay(retry, ms)
    return 0.0


@njit(cache=True)
def notice(code, w, retry, ms):  # pragma: no cover
    if code == SPARE:
        spare_notice(w, retry, ms)
    elif code == REP:
        rep_notice(w, retry, ms)
    elif code == REBALANCE:
        rebalance_notice(w, retry, ms)
    elif code == SPARE_MB:
        spare_mb_notice(w, retry, ms)


@njit(cache=True)
def sampled(code, ms):  # pragma: no cover
    """The core runs the sampled barrier (:mod:`spare_lib.cluster.engine.barrier`): called once at the
    start of the run, before any other hook."""
    if code == SPARE:
        spare_sampled(ms)


@njit(cache=True)
def retry_plan(code, ms):  # pragma: no cover
    """The patch of a retry in sparse form, for the sampled core: ``(k0, groups, n)`` = every
    live group computes k0 units except ``groups[:n]``, which compute ``group_i[w]``; n < 0:
    no sparse form, ask ``work`` of every group."""
    if code == SPARE:
        return spare_retry_plan(ms)
    return 0, ms[2], -1


@njit(cache=True)
def resolve(code, alive, n_alive, ms):  # pragma: no cover
    if code == SPARE:
        return spare_resolve(alive, n_alive, ms)
    if code == REP:
        return rep_resolve(alive, n_alive, ms)
    if code == DROP:
        return drop_resolve(alive, n_alive, ms)
    if code == SPARE_MB:
        return spare_mb_resolve(alive, n_alive, ms)
    return rebalance_resolve(alive, n_alive, ms)


@njit(cache=True)
def reset(code, ms):  # pragma: no cover
    if code == SPARE:
        spare_reset(ms)
    elif code == REP:
        rep_reset(ms)
    elif code == REBALANCE:
        rebalance_reset(ms)
    elif code == SPARE_MB:
        spare_mb_reset(ms)


@njit(cache=True)
def rejoin(code, alive, n_alive, ms):  # pragma: no cover
    if code == SPARE:
        spare_rejoin(alive, n_alive, ms)
    elif code == REBALANCE:
        rebalance_rejoin(alive, n_alive, ms)
    elif code == SPARE_MB:
        spare_mb_rejoin(alive, n_alive, ms)


@njit(cache=True)
def depth(code, ms):  # pragma: no cover
    """Stacks (shards) per live group of a committed step, for the overhead S̄: S for SPARe,
    r for Rep (its r shards are one unit of r·64 s), b units of 1/b shard for rebalance, the
    least makespan L*/b for SPARe-b."""
    if code == REBALANCE or code == REP or code == SPARE_MB:
        return ms[6][DEPTH] * ms[7][0]
    return float(ms[6][DEPTH])


@njit(cache=True)
def weight(code, n_alive, N, ms):  # pragma: no cover
    """Share of the global batch a commit processes (1 unless groups or types are dropped)."""
    if code == DROP:
        return drop_weight(n_alive, N)
    if code == SPARE_MB:
        return spare_mb_weight(n_alive, N, ms)
    return 1.0
