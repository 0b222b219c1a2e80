"""L-stability of linear multistep methods with any number of steps.

The expected verdicts are derived here by a second method, numerically: A-stability from
the boundary locus ``z(theta) = rho(e^{i theta}) / sigma(e^{i theta})`` (sampled; A-stable
iff it never enters the open left half-plane and one point there, ``z = -1``, is stable)
and from the roots on the imaginary axis (``numpy.roots`` at ``z = i y``); the limit
``h lam -> -oo`` from ``numpy.roots`` at ``z = -10^8`` (every root near 0, or one kept near
a root of ``sigma`` or escaping). Textbook facts: BDF1 and BDF2 are L-stable, the
trapezoidal rule (Adams-Moulton 1) is A-stable with ``|R(oo)| = 1``, BDF3..6 are not
A-stable. A mutant of BDF2 whose ``sigma`` gains a lower coefficient stays A-stable but
loses L-stability.
"""

import numpy as np
import pytest
import sympy as sp

import depthdyn as dd
from depthdyn.families import adams_bashforth, adams_moulton, bdf, from_lmm, milne_simpson, nystrom
from depthdyn.recurrence import r
from depthdyn.symbolic.multistep_numbers import damps_at_infinity, multistep_l_stable

Rat = sp.Rational
BDF2_ALPHA = [Rat(1, 2), -2, Rat(3, 2)]
# sigma = 11/10 r^2 - 1/10 r: sigma(1) = 1 = rho'(1) (consistent); Re(rho conj(sigma)) on the circle
# is (1 - c)(11/10 (1 - c) + 1/5) >= 0, so still A-stable, but one root tends to 1/11, not 0
MUTANT = from_lmm(alpha=BDF2_ALPHA, beta=[0, Rat(-1, 10), Rat(11, 10)])

FAMILIES = {
    **{f"bdf:k={k}": (lambda k=k: bdf(k=k)) for k in range(1, 7)},
    **{f"adams_moulton:k={k}": (lambda k=k: adams_moulton(k=k)) for k in (1, 2, 3)},
    **{f"adams_bashforth:k={k}": (lambda k=k: adams_bashforth(k=k)) for k in (1, 2, 3)},
    "milne_simpson:k=2": lambda: milne_simpson(k=2),
    "nystrom:k=2": lambda: nystrom(k=2),
    "lmm:bdf2": lambda: from_lmm(alpha=BDF2_ALPHA, beta=[0, 0, 1]),
    "lmm:trapezoidal": lambda: from_lmm(alpha=[-1, 1], beta=[Rat(1, 2), Rat(1, 2)]),
    "lmm:backward_euler": lambda: from_lmm(alpha=["-1", "1"], beta=["0", "1"]),
    "lmm:mutant": lambda: MUTANT,
}


def _rho_sigma(rec):
    """Float coefficients of rho and sigma (highest power first) from p(r) = rho(r) - lam sigma(r)."""
    lam = rec.lam_symbol
    p = sp.expand(rec.charpoly())
    rho = sp.Poly(p.xreplace({lam: 0}), r).all_coeffs()  # xreplace: lam may be a TexSymbol
    sigma = sp.Poly(-sp.diff(p, lam), r)
    k = sp.degree(p, r)
    sigma = [sigma.coeff_monomial(r**j) for j in range(k, -1, -1)]
    rho = [0] * (k + 1 - len(rho)) + rho
    return np.array(rho, dtype=float), np.array(sigma, dtype=float)


def _max_root(rho, sigma, zs):
    return np.array([np.abs(np.roots(rho - zz * sigma)).max() for zz in zs])


def _a_stable_by_sampling(rho, sigma) -> bool:
    w = np.exp(1j * np.linspace(0, 2 * np.pi, 4001))
    s = np.polyval(sigma, w)
    ok = np.abs(s) > 1e-9
    locus = np.polyval(rho, w[ok]) / s[ok]
    on_axis = _max_root(rho, sigma, 1j * np.concatenate([-np.logspace(-3, 4, 300), np.logspace(-3, 4, 300)]))
    return bool(locus.real.min() >= -1e-9 and _max_root(rho, sigma, [-1.0])[0] < 1
                and on_axis.max() <= 1 + 1e-7)


def _roots_vanish_at_infinity(rho, sigma) -> bool:
    return bool(_max_root(rho, sigma, [-1e8])[0] < 1e-3)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_l_stability_of_every_multistep_family(name):
    rec = FAMILIES[name]()
    rho, sigma = _rho_sigma(rec)
    a_stable = _a_stable_by_sampling(rho, sigma)
    expected = a_stable and _roots_vanish_at_infinity(rho, sigma)
    sn = dd.stability_numbers(rec)
    assert sn.kind == "multistep" and sn.a_stable is a_stable
    assert sn.l_stable is expected  # a bool for every number of steps, never None
    assert sn.to_json()["l_stable"] is expected


def test_textbook_verdicts():
    verdict = {name: (sn.a_stable, sn.l_stable) for name, sn in
               ((n, dd.stability_numbers(FAMILIES[n]())) for n in
                ("bdf:k=1", "bdf:k=2", "bdf:k=3", "adams_moulton:k=1", "lmm:mutant"))}
    assert verdict == {"bdf:k=1": (True, True), "bdf:k=2": (True, True), "bdf:k=3": (False, False),
                       "adams_moulton:k=1": (True, False), "lmm:mutant": (True, False)}
    assert "(L-stable)" in str(dd.stability_numbers(bdf(k=2)))
    assert "(A-stable)" in str(dd.stability_numbers(MUTANT))


def test_bdf2_independently():
    # locus: Re z(theta) = 3/2 - 2 cos(theta) + cos(2 theta)/2 = (1 - cos(theta))^2 >= 0, exactly
    th = sp.Symbol("theta", real=True)
    re_z = sp.Rational(3, 2) - 2 * sp.cos(th) + sp.cos(2 * th) / 2
    assert sp.simplify(sp.expand_trig(re_z) - (1 - sp.cos(th)) ** 2) == 0
    rho, sigma = _rho_sigma(bdf(k=2))
    assert np.allclose(sigma, [sigma[0], 0, 0]) and sigma[0] != 0  # sigma = beta_2 r^2
    assert _max_root(rho, sigma, [-1e8])[0] < 1e-3  # ~ 1e-4: both roots -> 0


def test_trapezoidal_rule_keeps_a_root_on_the_circle_at_infinity():
    rho, sigma = _rho_sigma(adams_moulton(k=1))
    # R(z) = (1 + z/2)/(1 - z/2) -> -1
    assert abs(_max_root(rho, sigma, [-1e8])[0] - 1) < 1e-6


def test_the_mutant_keeps_a_root_away_from_zero():
    rho, sigma = _rho_sigma(MUTANT)
    assert _a_stable_by_sampling(rho, sigma)
    roots = np.sort(np.abs(np.roots(rho + 1e8 * sigma)))
    assert abs(roots[-1] - 1 / 11) < 1e-6  # the root of sigma at r = 1/11
    assert dd.stability_numbers(MUTANT).a_stable and not dd.stability_numbers(MUTANT).l_stable


def test_damping_at_infinity_is_the_shape_of_sigma():
    h = Rat(1, 2)
    assert damps_at_infinity([0, 0, 0, Rat(6, 11)])  # BDF3's sigma
    assert not damps_at_infinity([0, Rat(1, 100), 1])  # a lower coefficient: a root -> -1/100
    assert not damps_at_infinity([1, 0])  # explicit: beta_k = 0, the root escapes
    assert not damps_at_infinity([h, h]) and not damps_at_infinity([])
    assert multistep_l_stable(True, [0, 1]) and not multistep_l_stable(False, [0, 1])
    assert not multistep_l_stable(True, [h, h])
