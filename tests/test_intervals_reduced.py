"""Stability conditions in one real parameter reduced to exact intervals.

The expected sets come from a second method written here: the boundary locus
``lam(theta) = rho(e^{i theta}) / sigma(e^{i theta})`` on the real axis (``theta = 0, pi``)
with the textbook Adams-Bashforth coefficients, and a brute-force root check at rational
points on both sides of every interval end (roots at 50 digits with mpmath).
"""

from __future__ import annotations

import mpmath
import pytest
import sympy as sp

from depthdyn.errors import ParameterError
from depthdyn.families import adams_bashforth, bdf, from_lmm, momentum
from depthdyn.recurrence import r
from depthdyn.symbolic.intervals import Interval, IntervalUnion, reduced_conditions
from depthdyn.symbolic.solvefor import solve_for
from depthdyn.symbolic.stability import stability_conditions

# Adams-Bashforth k=3 as every textbook tabulates it (Hairer, Norsett & Wanner I, III.1):
# y_{n+3} - y_{n+2} = h (23 f_{n+2} - 16 f_{n+1} + 5 f_n) / 12
AB3_RHO = [1, -1, 0, 0]  # r^3 - r^2, highest power first
AB3_SIGMA = [0, sp.Rational(23, 12), sp.Rational(-16, 12), sp.Rational(5, 12)]


def _poly(coeffs, lam):
    return [sp.Rational(a) - lam * sp.Rational(b) for a, b in zip(AB3_RHO, coeffs, strict=True)]


def _largest_modulus(coeffs) -> float:
    with mpmath.workdps(50):
        return max(abs(z) for z in mpmath.polyroots([mpmath.mpf(sp.Rational(c).p) / sp.Rational(c).q
                                                     for c in coeffs], maxsteps=200, extraprec=100))


def _strictly_stable(charpoly, x, value) -> bool:
    coeffs = sp.Poly(sp.expand(charpoly.subs(x, value)), r).all_coeffs()
    return _largest_modulus(coeffs) < 1


NEAR = (sp.Rational(1, 100), sp.Rational(1, 10**6))


def _agrees(union: IntervalUnion, charpoly, x, deltas=NEAR) -> bool:
    """Brute force: at each finite end e, e - d and e + d are stable exactly when the union says so."""
    ends = {e for iv in union.intervals for e in (iv.lo, iv.hi) if e.is_finite}
    if not ends:
        return False
    for e in ends:
        for d in deltas:
            for point in (e - d, e + d):
                if union.contains(point) != _strictly_stable(charpoly, x, point):
                    return False
    return True


def test_adams_bashforth_3_by_the_boundary_locus():
    # theta = 0: rho(1) = 0 gives lam = 0; theta = pi: lam = rho(-1)/sigma(-1)
    rho_m1 = sum(c * (-1) ** (3 - j) for j, c in enumerate(AB3_RHO))
    sigma_m1 = sum(c * (-1) ** (3 - j) for j, c in enumerate(AB3_SIGMA))
    end = sp.Rational(rho_m1) / sigma_m1
    assert end == sp.Rational(-6, 11)
    sc = stability_conditions(adams_bashforth(k=3))
    assert sc.intervals.intervals == (Interval(end, sp.Integer(0)),)
    assert sc.intervals.inequalities() == "-6/11 < lam < 0"
    assert "-6/11 < lam < 0" in str(sc)
    assert sc.to_json()["set"] == "-6/11 < lam < 0"
    assert sc._latex() == r"|r_i| < 1 \iff \lambda \in \left(- \frac{6}{11}, 0\right)"



def test_derive_prints_the_set_of_one_real_parameter(capsys):
    from depthdyn.cli import main

    # the end from the boundary locus at r = -1, as above; the command prints the set, then its conditions
    rho_m1 = sum(c * (-1) ** (3 - j) for j, c in enumerate(AB3_RHO))
    sigma_m1 = sum(c * (-1) ** (3 - j) for j, c in enumerate(AB3_SIGMA))
    end = sp.Rational(rho_m1) / sigma_m1
    assert main(["derive", "adams_bashforth", "-p", "k=3"]) == 0
    block = capsys.readouterr().out.split("\nstability", 1)[1].splitlines()
    assert block[1].strip() == f"{end} < lam < 0"
    assert block[2].strip().startswith("from: ")
    # two parameters: no set line, the inequalities themselves
    assert main(["derive", "momentum"]) == 0
    block = capsys.readouterr().out.split("\nstability", 1)[1].splitlines()
    assert " < lam < " not in block[1] and block[1].strip().endswith("> 0")

def test_adams_bashforth_3_brute_force_both_sides_of_each_end():
    rec = adams_bashforth(k=3)
    lam = rec.lam_symbol
    x = stability_conditions(rec).intervals.variable
    assert x == "lam"
    union = stability_conditions(rec).intervals
    assert _agrees(union, rec.charpoly(), lam)
    # the textbook polynomial gives the same verdicts: the family is AB3
    mine = sp.Poly(sp.expand(rec.charpoly()), r).all_coeffs()
    book = [sp.expand(c) for c in _poly(AB3_SIGMA, lam)]
    assert [sp.expand(c * 12) for c in mine] == [sp.expand(c * 12) for c in book]


@pytest.mark.parametrize("wrong", [sp.Rational(-5, 11), sp.Rational(-7, 11),
                                   sp.Rational(-6, 11) + sp.Rational(1, 10**4)])
def test_a_wrong_end_fails_the_brute_force_check(wrong):
    rec = adams_bashforth(k=3)
    mutant = IntervalUnion((Interval(wrong, sp.Integer(0)),), "lam")
    assert not _agrees(mutant, rec.charpoly(), rec.lam_symbol,
                       deltas=NEAR + (sp.Rational(1, 10**3),))


def test_a_perturbed_coefficient_moves_the_end():
    sigma = list(AB3_SIGMA)
    sigma[1] = sp.Rational(24, 12)  # 23 -> 24: sigma(-1) = 2 + 16/12 + 5/12 = 45/12, rho(-1) = -2
    mutant = from_lmm(alpha=[0, 0, -1, 1], beta=list(reversed(sigma)))
    union = stability_conditions(mutant).intervals
    assert union.intervals == (Interval(sp.Rational(-2) / sp.Rational(45, 12), sp.Integer(0)),)
    assert _agrees(union, mutant.charpoly(), mutant.lam_symbol)
    assert not _agrees(stability_conditions(adams_bashforth(k=3)).intervals, mutant.charpoly(),
                       mutant.lam_symbol)


def test_only_the_needed_conditions_are_kept():
    sc = stability_conditions(adams_bashforth(k=3))
    # Lienard-Chipart gives four inequalities; two of them are implied by the other two
    assert len(sc.conditions) == 2
    x = sp.Symbol("lam", real=True)
    whole = solve_for(list(sc.conditions), "lam")
    assert whole.intervals == sc.intervals.intervals
    for i in range(len(sc.conditions)):  # none of the kept ones is implied by the rest
        rest = [c for j, c in enumerate(sc.conditions) if j != i]
        assert solve_for(rest, "lam").intervals != whole.intervals
    assert all(c.lhs.free_symbols == {x} for c in sc.conditions)


def test_a_union_of_intervals_bdf6():
    rec = bdf(k=6)
    union = stability_conditions(rec).intervals
    assert len(union.intervals) == 2 and union.intervals[0].lo == -sp.oo and union.intervals[1].hi == sp.oo
    assert " or " in union.inequalities()
    assert _agrees(union, rec.charpoly(), rec.lam_symbol)


def test_two_parameters_stay_inequalities():
    sc = stability_conditions(momentum())
    assert sc.intervals is None and sc.to_json()["set"] is None
    assert len(sc.conditions) == 2


def test_reduced_conditions_by_hand():
    x = sp.Symbol("x", real=True)
    union, kept = reduced_conditions([x + 1 > 0, x + 2 > 0, 3 - x > 0, x**2 + 1 > 0], x)
    assert kept == (x + 1 > 0, 3 - x > 0)
    assert union.inequalities() == "-1 < x < 3"
    union, kept = reduced_conditions([x > 1, x < 0], x)
    assert union.is_empty and union.inequalities() == "no real x"
    union, _ = reduced_conditions([x - 1 > 0], x, sp.Interval(0, 2))
    assert union.inequalities() == "1 < x <= 2"
    union, _ = reduced_conditions([x**2 - 2 >= 0], x)
    assert union.inequalities() == "x <= -sqrt(2) or x >= sqrt(2)"


def test_reduced_conditions_refuse_what_is_not_a_polynomial():
    x = sp.Symbol("x", real=True)
    with pytest.raises(ParameterError):
        reduced_conditions([sp.sin(x) > 0], x)
    with pytest.raises(ParameterError):
        reduced_conditions([x + sp.Symbol("y") > 0], x)
