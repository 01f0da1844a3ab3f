"""Every step of the sympy derivations (spare_lib.theory.symbolic) is checked here, not only in notebooks."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from spare_lib import theory as th
from spare_lib.theory import symbolic as sy

DERIVATIONS = {
    "mu": sy.derive_mu,
    "r_star": sy.derive_r_star,
    "checkpoint_period": sy.derive_checkpoint_period,
    "ttt": sy.derive_ttt,
    "replication": sy.derive_replication,
}


@pytest.fixture(scope="module", params=sorted(DERIVATIONS))
def derivation(request):
    return DERIVATIONS[request.param]()


def test_every_check_passes(derivation):
    results = derivation.verify()
    assert results, f"{derivation.title} has no checks"
    failed = [label for label, ok in results.items() if not ok]
    assert not failed, f"{derivation.title}: failed checks {failed}"


def test_steps_are_equations_and_render(derivation):
    assert len(derivation.steps) >= 3
    for step in derivation.steps:
        assert isinstance(step.eq, sp.Equality), step.label
    md = derivation.markdown()
    assert derivation.title in md and "$$" in md
    with pytest.raises(KeyError):
        derivation["no such step"]


def test_a_false_check_fails():
    bad = sy.Check("wrong", sp.gamma(sy.r) - sp.gamma(1 + sy.r))
    assert not bad.passed()
    assert not sy.Check("wrong test", test=lambda: False).passed()


def test_mu_result_is_the_paper_closed_form():
    f = sp.lambdify((sy.N, sy.r), sy.derive_mu().result, "scipy")
    for N, r in ((200, 2), (600, 20), (1000, 7)):
        assert f(N, r) == pytest.approx(th.mu_closed(N, r), rel=1e-12)
    assert sy.lambdify_mu_closed()(600, 20) == pytest.approx(th.mu_closed(600, 20), rel=1e-12)


def test_r_star_result_matches_theory():
    res = sy.derive_r_star().result
    for N in (10, 200, 600, 1000, 12345, 10**5):
        assert int(sp.floor(res.subs(sy.N, N))) == th.r_star_closed(N)


def test_lambdified_availability_matches_theory():
    A = sy.lambdify_availability()
    Tc = sy.lambdify_checkpoint_period()
    Ts, Tf, Tr = 58.8, np.array([3e3, 3e4, 3e5]), 3600.0
    np.testing.assert_allclose(Tc(Ts, Tf, Tr), th.checkpoint_period_opt(Ts, Tf, Tr), rtol=1e-12)
    np.testing.assert_allclose(A(700.0, Ts, Tf, Tr), th.availability(700.0, Ts, Tf, Tr),
                               rtol=1e-12)


def test_lambdified_ttt_matches_theory():
    J = sy.lambdify_ttt()
    N, r = 600, 9
    mu = th.mu_closed(N, r)
    want = th.ttt_normalized(N, r)
    assert J(th.overhead_mean(N, r), mu, th.M_PAPER, th.T_S_PAPER, th.T_R_PAPER) == \
        pytest.approx(want, rel=1e-12)


def test_replication_result_matches_theory():
    f = sp.lambdify((sy.N, sy.r), sy.derive_replication().result, "scipy")
    for N, r in ((12, 3), (60, 2), (100, 5)):  # Γ(N/r) overflows floats beyond N/r ≈ 170
        assert f(N, r) == pytest.approx(th.replication_mu(N, r), rel=1e-10)
