"""The cycle laws of a run's chain, packed into the arrays of the batch kernel (cached).

:func:`~spare_lib.theory.predict.predict_batch` runs the chain over the checkpoint lattice
(:mod:`spare_lib.theory.predict.blocks`) on every cycle law of (method, N, r): the first cycle,
the transient ones and the equilibrium one. Their τ grids, survivals and step times are
concatenated once per (method, N, r, cluster) and kept, so that a second search over C on a
cluster already seen runs the kernel only. :func:`spare_lib.theory.predict.clear_caches` forgets
them with the rest of the model's memos.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from spare_lib.theory.predict.cycle import NoTrainingCycle, _cycles
from spare_lib.theory.predict.jobwide import chain_restart_laws, laws_with_job_failures
from spare_lib.theory.predict.rejoin import REJOIN_METHODS
from spare_lib.theory.predict.rejoin_model import rejoin_laws


def chain_laws(method: str, N: int, r: int, key: tuple, rcfg: tuple, steps: int, layout: str,
               mech: tuple[str, ...]) -> list:
    """The chain's cycle laws of (method, N, r) on the cluster, (t0, restart mean, cycle) each
    (cached by the model): ``key`` the config key (:func:`~.curves._cfg_key`), ``rcfg`` the
    rejoin key (:func:`~.rejoin_model.rejoin_key`; () for the paper's methods), ``mech`` the
    mechanisms of the paper's methods."""
    if method in REJOIN_METHODS:
        if method == "spare+repair" and rcfg[0] == math.inf:
            method = "spare"
        else:
            return rejoin_laws(method, N, r, key, rcfg, steps, layout)[0]
    R, _w, _p, first, ss, transient, t_eq = _cycles(method, N, r, layout, mech, key)
    return [(0.0, 0.0, first)] + transient + [(t_eq, R, ss)]


@lru_cache(maxsize=4096)
def packed_laws(method: str, N: int, r: int, key: tuple, rcfg: tuple, steps: int, layout: str,
                nu: float, detect: float, mech: tuple[str, ...]) -> tuple | None:
    """The kernel's arrays of (method, N, r) on the cluster (:func:`chain_laws`, under job-wide
    failures at rate ``nu`` with detection ``detect`` when nu > 0): the laws' grids, survivals
    and step times concatenated, their offsets, delays, restart means and start times (read-only);
    None when the cluster never trains."""
    try:
        laws = chain_laws(method, N, r, key, rcfg, steps, layout, mech)
    except NoTrainingCycle:
        return None
    if nu > 0.0:
        laws = laws_with_job_failures(laws, nu, detect, chain_restart_laws(laws, N, mech, key))[0]
    cyc = [c for _, _, c in laws]
    out = (np.concatenate([c.tau for c in cyc]), np.concatenate([c.G for c in cyc]),
           np.concatenate([c.step for c in cyc]),
           np.cumsum([0] + [c.tau.size for c in cyc]).astype(np.int64),
           np.array([float(c.delay) for c in cyc]), np.array([float(R) for _, R, _ in laws]),
           np.array([float(t) for t, _, _ in laws]))
    for arr in out:
        arr.setflags(write=False)
    return out
