"""One branch per method for each hook: the only place the core's hooks are looked up.

numba cannot cache a core that takes functions as arguments or closes over them, so the core
calls these dispatchers with the method's integer code; each is a chain of ``if code == ...``
that LLVM reduces to a predictable branch. ``work``, called once per live group per attempt,
is inlined into the core (``inline="always"``) and takes only scalars: a hook called that often
with the state tuple or the generator as arguments made the core 2–8× slower.
"""

from __future__ import annotations

from numba import njit

from spare_lib.cluster.methods.replication import rep_notice, rep_reset, rep_resolve, rep_work
from spare_lib.cluster.methods.spare import spare_reset, spare_resolve, spare_work

SPARE = 0
REP = 1


@njit(cache=True, inline="always")
def work(code, retry, g_int, depth, mult, compute_s):  # pragma: no cover
    if code == SPARE:
        return spare_work(retry, g_int, depth, mult, compute_s)
    return rep_work(retry, g_int, depth, mult, compute_s)


@njit(cache=True)
def notice(code, w, ms):  # pragma: no cover
    if code == REP:
        rep_notice(w, ms)


@njit(cache=True)
def resolve(code, alive, ms):  # pragma: no cover
    if code == SPARE:
        return spare_resolve(alive, ms)
    return rep_resolve(alive, ms)


@njit(cache=True)
def reset(code, ms):  # pragma: no cover
    if code == SPARE:
        spare_reset(ms)
    else:
        rep_reset(ms)
