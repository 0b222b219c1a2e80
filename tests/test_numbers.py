"""Stability numbers of multistep methods against published tables and an independent scan.

Published values are comparison inputs, never the expected output of a computation:
every number is also checked against a numeric scan with ``numpy.roots`` (bisection on
the largest root modulus), which shares nothing with the exact boundary-locus code.

Sources of the published values (book and section; table numbers are given only where
they were checked):
* Adams-Bashforth / Adams-Moulton real intervals: Lambert, *Numerical Methods for
  Ordinary Differential Systems* (Wiley 1991), Chapter 3 (intervals of absolute stability
  of the Adams methods): AB k = 1..4: -2, -1, -6/11, -3/10; AM k = 1..4 (order k + 1):
  -oo, -6, -3, -90/49. Imaginary segments of AB3 (+-0.72) and AB4 (+-0.43), read off the
  stability-domain figures of Hairer, Norsett & Wanner, *Solving ODEs I*, §III.3.
* BDF stability angles: Hairer & Wanner, *Solving ODEs II*, §V.2 (A(alpha) angles of the
  BDF methods, to two decimals): 90, 90, 86.03, 73.35, 51.84, 17.84 degrees. Exact values:
  L. Loczi, "Optimal subsets in the stability regions of multistep methods", Numer.
  Algorithms (2020), arXiv:1901.08347 (tan(alpha) algebraic of degree 2, 2, 4, 2 for
  k = 3..6), and BIT Numer. Math., doi:10.1007/s10543-019-00796-x, which lists
  tan(alpha) = 329 sqrt(35)/135, 699 sqrt(6)/512, 45503 sqrt(195)/1974375 for k = 3, 4, 6.
"""

from __future__ import annotations

import json
from functools import cache

import numpy as np
import pytest
import sympy as sp

from depthdyn import momentum, solve_for, stability_conditions, stability_numbers
from depthdyn.cli import main
from depthdyn.errors import ParameterError
from depthdyn.families import adams_bashforth, adams_moulton, bdf, from_lmm, milne_simpson, nystrom
from depthdyn.families.multistep import lmm_coefficients, order_and_error_constant
from depthdyn.symbolic.intervals import Interval

FAMS = {"ab": adams_bashforth, "am": adams_moulton, "bdf": bdf}


@cache
def numbers(kind: str, k: int):
    return stability_numbers(FAMS[kind](k=k))


def _coeffs(kind, k):
    alpha, beta = lmm_coefficients(FAMS[kind](k=k))
    return np.array([float(v) for v in alpha][::-1]), np.array([float(v) for v in beta][::-1])


def _rmax(alpha, beta, lam) -> float:
    return float(np.max(np.abs(np.roots(alpha - lam * beta))))


def _rmax_batch(alpha, beta, lams: np.ndarray) -> np.ndarray:
    """Largest root modulus of ``alpha - lam beta`` (highest first) for many lam at once.

    Companion eigenvalues, vectorised; NaN where the leading coefficient (nearly) vanishes.
    """
    P = alpha[None, :] - np.asarray(lams)[:, None] * beta[None, :]
    drop = np.abs(P[:, 0]) < 1e-9
    P[drop, 0] = 1
    k = P.shape[1] - 1
    C = np.zeros((P.shape[0], k, k), dtype=complex)
    C[:, 0, :] = -P[:, 1:] / P[:, :1]
    C[:, np.arange(1, k), np.arange(k - 1)] = 1
    out = np.abs(np.linalg.eigvals(C)).max(axis=1)
    out[drop] = np.nan
    return out


def _bisect(stable, good: float, bad: float, steps: int = 60) -> float:
    for _ in range(steps):
        mid = (good + bad) / 2
        good, bad = (mid, bad) if stable(mid) else (good, mid)
    return (good + bad) / 2


def scan_real_left(kind, k, tol=1e-9) -> float:
    """Left end of the real stability interval: march left from 0 on a grid, then bisect."""
    alpha, beta = _coeffs(kind, k)
    stable = lambda x: _rmax(alpha, beta, x) < 1 - tol  # noqa: E731
    grid = -np.logspace(-4, 3, 1400)
    ok = [stable(x) for x in grid]
    if all(ok):
        return -np.inf
    first_bad = ok.index(False)
    return _bisect(stable, grid[first_bad - 1], grid[first_bad])


def scan_imag_top(kind, k) -> float:
    """Top of the imaginary segment (0 if none): march up from t = 0.1, then bisect.

    Near t = 0 the principal root has ``|r| = 1 + O(t^(p+1))``; from ``t = 0.1`` on the
    deviation is far above the ``1e-12`` margin for these orders (up to 7), and a root
    that stays on the circle (the trapezoidal rule) counts as not strictly stable.
    """
    alpha, beta = _coeffs(kind, k)
    stable = lambda t: _rmax(alpha, beta, 1j * t) < 1 - 1e-12  # noqa: E731
    grid = np.logspace(-1, 1.5, 1200)
    if not stable(grid[0]):
        return 0.0
    ok = [stable(t) for t in grid]
    first_bad = ok.index(False) if False in ok else None
    return np.inf if first_bad is None else _bisect(stable, grid[first_bad - 1], grid[first_bad])


def scan_alpha(kind, k) -> float:
    """Largest angle phi with the ray lam = -rho e^{i phi} stable for rho in [1e-3, 1e4] (degrees)."""
    alpha, beta = _coeffs(kind, k)
    rhos = np.logspace(-3, 4, 3000)

    def ray(phi):
        return bool(np.all(_rmax_batch(alpha, beta, -rhos * np.exp(1j * np.radians(phi))) < 1))

    if not ray(0.01):
        return 0.0
    if ray(89.99):
        return 90.0
    return _bisect(ray, 0.01, 89.99, steps=30)


def agrees(computed: float, published: float, digits: int) -> bool:
    """A published value rounded to ``digits`` decimals agrees with the computed one."""
    return abs(computed - published) <= 0.5 * 10 ** (-digits) + 1e-12


PUBLISHED_REAL = {("ab", 1): -2, ("ab", 2): -1, ("ab", 3): -6 / 11, ("ab", 4): -3 / 10,
                  ("am", 1): -np.inf, ("am", 2): -6, ("am", 3): -3, ("am", 4): -90 / 49}
PUBLISHED_ALPHA = {1: 90, 2: 90, 3: 86.03, 4: 73.35, 5: 51.84, 6: 17.84}


@pytest.mark.parametrize("kind,k", [(kd, k) for kd in ("ab", "am", "bdf") for k in range(1, 7)])
def test_real_interval_against_scan_and_table(kind, k):
    sn = numbers(kind, k)
    iv = sn.real_interval
    assert sn.zero_stable is True
    assert iv.hi == 0 and iv.hi_open and iv.lo_open
    scan = scan_real_left(kind, k)
    if np.isinf(scan):
        assert iv.lo == -sp.oo and sn.a0_stable
    else:
        assert abs(iv.lo_value - scan) < 1e-7, (iv, scan)
    if (kind, k) in PUBLISHED_REAL:
        pub = PUBLISHED_REAL[(kind, k)]
        assert (iv.lo == -sp.oo) if np.isinf(pub) else abs(iv.lo_value - pub) < 1e-12


@pytest.mark.parametrize("kind,k", [(kd, k) for kd in ("ab", "am", "bdf") for k in range(1, 7)])
def test_imaginary_interval_against_scan(kind, k):
    iv = numbers(kind, k).imag_interval
    top = scan_imag_top(kind, k)
    if top == 0.0:
        assert iv.is_empty or not iv.contains(sp.Rational(1, 10))
    elif np.isinf(top):
        assert iv.hi == sp.oo
    else:
        assert iv.component.startswith("adjacent to 0") and abs(iv.hi_value - top) < 1e-7, (iv, top)
        assert abs(iv.lo_value + iv.hi_value) < 1e-14  # the locus of a real method is symmetric


def test_published_imaginary_segments_of_ab3_ab4():
    assert agrees(numbers("ab", 3).imag_interval.hi_value, 0.72, 2)
    assert agrees(numbers("ab", 4).imag_interval.hi_value, 0.43, 2)
    assert numbers("ab", 3).imag_interval.hi == 12 * sp.sqrt(11) / 55  # exact surd


@pytest.mark.parametrize("k", range(1, 7))
def test_bdf_angles_against_table_and_scan(k):
    sn = numbers("bdf", k)
    assert agrees(sn.a_alpha_degrees, PUBLISHED_ALPHA[k], 2)
    assert abs(sn.a_alpha_degrees - scan_alpha("bdf", k)) < 0.05
    assert sn.a_stable == (k <= 2)
    exact = float(sp.N(sn.a_alpha_exact, 30))
    assert abs(exact - sn.a_alpha_degrees) < 1e-9


PUBLISHED_TAN = {3: 329 * sp.sqrt(35) / 135, 4: 699 * sp.sqrt(6) / 512, 6: 45503 * sp.sqrt(195) / 1974375}


@pytest.mark.parametrize("k", [3, 4, 5, 6])
def test_bdf_angles_exactly_against_published_surds(k):
    """tan(alpha) exactly: a surd for k = 3, 4, 6; of degree 4 for k = 5 (Loczi 2020)."""
    tan = next(iter(numbers("bdf", k).a_alpha_exact.atoms(sp.atan))).args[0]
    if k in PUBLISHED_TAN:
        assert sp.expand(tan**2 - PUBLISHED_TAN[k] ** 2) == 0 and tan.is_positive
        assert sp.expand(tan**2 - PUBLISHED_TAN[4 if k != 4 else 3] ** 2) != 0  # the comparison can fail
    else:
        assert sp.degree(sp.minimal_polynomial(tan, sp.Symbol("x"))) == 4


def test_explicit_methods_have_no_sector():
    for k in range(1, 7):
        sn = numbers("ab", k)
        assert sn.a_alpha_degrees is None and not sn.a0_stable and not sn.a_stable


def test_published_comparisons_can_fail():
    assert not agrees(numbers("bdf", 4).a_alpha_degrees, 73.53, 2)  # digits swapped
    assert not agrees(numbers("ab", 3).real_interval.lo_value, -0.5, 2)


def test_bdf7_is_not_zero_stable():
    sn = stability_numbers(bdf(k=7))
    assert sn.zero_stable is False and sn.real_interval.component.startswith("nearest")
    assert not sn.a0_stable and sn.a_alpha_degrees is None


def test_a_mutated_coefficient_changes_the_numbers():
    alpha, beta = lmm_coefficients(adams_bashforth(k=3))
    wrong = list(beta)
    wrong[0] += sp.Rational(1, 100)
    sn = stability_numbers(from_lmm(alpha=list(alpha), beta=wrong))
    assert sn.order == 0 and sn.real_interval != numbers("ab", 3).real_interval


def test_orders_and_error_constants_by_series():
    """rho(e^z) - z sigma(e^z) = C_{p+1} z^{p+1} + ...: an independent route to the order."""
    z = sp.Symbol("z")
    cases = [(adams_bashforth, range(1, 7), lambda k: k), (adams_moulton, range(1, 7), lambda k: k + 1),
             (bdf, range(1, 8), lambda k: k), (nystrom, range(2, 6), lambda k: k),
             (milne_simpson, [2], lambda k: 4)]
    for fam, ks, order in cases:
        for k in ks:
            alpha, beta = lmm_coefficients(fam(k=k))
            p = order(k)
            ez = [sum((j * z) ** m / sp.factorial(m) for m in range(p + 3)) for j in range(len(alpha))]  # e^{jz}
            ser = sp.expand(sum(a * e for a, e in zip(alpha, ez, strict=True)) - z * sum(b * e for b, e in zip(beta, ez, strict=True)))
            assert all(ser.coeff(z, q) == 0 for q in range(p + 1)), (fam.__name__, k)
            lead = ser.coeff(z, p + 1)
            o = order_and_error_constant(alpha, beta)
            assert o.order == p and o.error_constant == lead / sum(beta), (fam.__name__, k)


def test_leapfrog_and_milne_simpson_marginal_segments():
    # leapfrog r^2 - 2 i t r - 1: roots i t +- sqrt(1 - t^2), on the circle for |t| <= 1, double at |t| = 1
    lf = stability_numbers(nystrom(k=2))
    assert lf.marginal_sets["imaginary"].intervals == (Interval(-1, 1, True, True),)
    assert lf.imag_set.is_empty and lf.real_set.is_empty  # never strictly stable
    # Simpson: (1 - z/3) r^2 - 4z/3 r - (1 + z/3); at z = i t the roots stay on the circle for t^2 < 3
    ms = stability_numbers(milne_simpson(k=2))
    assert ms.marginal_sets["imaginary"].intervals == (Interval(-sp.sqrt(3), sp.sqrt(3), True, True),)
    t = sp.Symbol("lam_im", real=True)
    cond = ms.marginal_conditions["imaginary"]
    assert [bool(cond.subs(t, v)) for v in (-sp.Rational(173, 100), sp.Rational(173, 100), sp.sqrt(3), 2)] == [
        True, True, False, False]
    # a wrong method (sigma of the trapezoid) moves the segment
    other = stability_numbers(from_lmm(alpha=[-1, 0, 1], beta=[sp.Rational(1, 2), 0, sp.Rational(1, 2)]))
    assert other.marginal_sets["imaginary"] != ms.marginal_sets["imaginary"]


def test_momentum_intervals_and_region_query():
    sn = stability_numbers(momentum(), m="1/2", eta=1)
    assert sn.real_interval == Interval(-3, 0, True, True, "adjacent to 0")
    # for which eta is m = 1/2 stable for every lam in [-4, 0)?  -2(1 + m)/eta < -4 iff eta < 3/4
    ans = solve_for(momentum(), "eta", m="1/2", for_all={"lam": sp.Interval.Ropen(-4, 0)})
    assert ans.intervals == (Interval(0, sp.Rational(3, 4), True, True),)
    assert solve_for(momentum(), "eta", m="1/2", for_all={"lam": (-4, 0)}).is_empty  # lam = 0: root 1
    assert solve_for(momentum(), "eta", m="1/2", for_all={"lam": (-2, -1)}).intervals[0].hi == sp.Rational(3, 2)
    # independent: companion eigenvalues of r^2 - (3/2 + eta lam) r + 1/2 on an (eta, lam) grid
    etas, lams = np.linspace(0.01, 1.5, 150), np.linspace(-4, -1e-3, 400)
    E, L = np.meshgrid(etas, lams, indexing="ij")
    rm = _rmax_batch(np.array([1.0, -1.5, 0.5]), np.array([0.0, 1.0, 0.0]), (E * L).ravel()).reshape(E.shape)
    good = np.all(rm < 1 - 1e-12, axis=1)
    clear = np.abs(etas - 0.75) > 0.01
    assert np.array_equal(good[clear], np.array([ans.contains(sp.Rational(str(e))) for e in etas[clear]]))


def test_region_query_at_irrational_critical_points():
    """Critical values that are surds are decided, not dropped (a compact lam-interval).

    x' = c x with c = a/4 + lam (a^2 - 2): for every lam in [-1/100, 1/100] stable iff
    |a|/4 + |a^2 - 2|/100 < 1, i.e. a^2 -+ 25 a - 102 < 0 on each side; a = +-sqrt(2)
    (the leading coefficient in lam vanishes there) is inside, with c = +-sqrt(2)/4.
    """
    from depthdyn.families import general

    J = {"lam": (-sp.Rational(1, 100), sp.Rational(1, 100))}
    ans = solve_for(general(rho="r - a/4", sigma="a**2 - 2"), "a", for_all=J)
    end = (sp.sqrt(1033) - 25) / 2
    assert ans.intervals == (Interval(-end, end),)
    # c = 1 - (a^2 - 2)^2 (1 + lam) on [0, 1]: 1 - c > 0 fails only at a^2 = 2, 1 + c > 0
    # iff (a^2 - 2)^2 < 1: the surd is an isolated bad point and must stay out
    rec = general(rho="r - 1 + (a**2 - 2)**2", sigma="-(a**2 - 2)**2")
    holed = solve_for(rec, "a", for_all={"lam": (0, 1)})
    s2, s3 = sp.sqrt(2), sp.sqrt(3)
    assert holed.intervals == (Interval(-s3, -s2), Interval(-s2, -1), Interval(1, s2), Interval(s2, s3))
    with pytest.raises(ParameterError, match="non-compact"):  # half-open: openness no longer applies
        solve_for(general(rho="r - a/4", sigma="a**2 - 2"), "a", for_all={"lam": sp.Interval.Ropen(0, 1)})


@pytest.mark.parametrize("fam,k", [(adams_bashforth, k) for k in range(1, 6)] + [(adams_moulton, k) for k in (1, 2, 3)]
                         + [(bdf, k) for k in (1, 2, 3)])
def test_solve_for_on_schur_cohn_conditions_matches_the_locus(fam, k):
    """Two exact routes: Lienard-Chipart conditions reduced by solve_for, and the boundary locus."""
    sets = solve_for(stability_conditions(fam(k=k)), "lam")
    assert sets.intervals == stability_numbers(fam(k=k)).real_set.intervals


def test_solve_for_prunes_and_handles_nonlinear_conditions():
    K = sp.Symbol("K", real=True)
    res = solve_for([K > 0, 6321 - 2642 * K > 0, 27358 - 1037 * K > 0], "K")
    assert res.intervals == (Interval(0, sp.Rational(6321, 2642)),)
    res = solve_for([K**3 - 2 * K > 0, K < 2], "K")
    assert res.intervals == (Interval(-sp.sqrt(2), 0), Interval(sp.sqrt(2), 2))
    assert solve_for([(K - 1) ** 2 >= 0], "K").intervals == (Interval(-sp.oo, sp.oo),)
    assert solve_for([(K - 1) ** 2 > 0], "K").intervals == (Interval(-sp.oo, 1), Interval(1, sp.oo))
    with pytest.raises(ParameterError, match="give values"):
        solve_for([K * sp.Symbol("q") > 0], "K")
    with pytest.raises(ParameterError):
        solve_for([sp.sin(K) > 0], "K")


def test_errors():
    with pytest.raises(ParameterError, match="give values"):
        stability_numbers(momentum())
    with pytest.raises(ParameterError):
        stability_numbers(momentum(), m="1/2", eta=1, param="m")
    for fam in (nystrom, milne_simpson):  # integrate over two steps: k = 1 has no such method
        with pytest.raises(ParameterError, match="k >= 2"):
            fam(k=1)
        assert fam(k=2).order == 2


def test_cli_stability(capsys):
    assert main(["stability", "bdf", "-p", "k=3"]) == 0
    out = capsys.readouterr().out
    assert "86.03236" in out and "zero-stable:        True" in out
    assert main(["stability", "adams_bashforth", "-p", "k=3", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["real_interval"]["lo"] == {"exact": "-6/11", "value": -6 / 11}
    for key in ("imag_interval", "a_alpha_degrees", "a_stable", "zero_stable", "conditions", "marginal_conditions"):
        assert key in rep
    assert main(["stability", "bdf", "-p", "k=7"]) == 0 and "zero-stable:        False" in capsys.readouterr().out
    assert main(["stability", "momentum"]) == 2
    assert "give values" in capsys.readouterr().err


def test_cli_solve(capsys):
    assert main(["solve", "residual", "-p", "lam=1", "--initial", "1", "--forcing", "2**l", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["terms"][:4] == [{"l": 0, "x": "1"}, {"l": 1, "x": "3"}, {"l": 2, "x": "8"}, {"l": 3, "x": "20"}]
    assert main(["solve", "residual", "-p", "lam=1", "--initial", "1,3", "--forcing", "2**l"]) == 0
    assert main(["solve", "residual", "-p", "lam=1", "--initial", "1,4", "--forcing", "2**l"]) == 2
    assert "contradicts" in capsys.readouterr().err
    assert main(["solve", "residual", "--forcing", "l**l"]) == 2


# ----------------------------------------------------------------- blocks where lam = 0 is strictly stable
def _scan_left_end(alpha, beta, start: float, stop: float = -50.0, step: float = 1e-3) -> float:
    """Left end of the strict set reached from ``start``: a vectorised grid, then bisection."""
    grid = np.arange(start, stop, -step)
    ok = _rmax_batch(alpha, beta, grid) < 1 - 1e-12
    assert ok[0] and not ok.all(), "the grid must start stable and leave the stable set"
    first_bad = int(np.argmin(ok))
    return _bisect(lambda x: _rmax(alpha, beta, x) < 1 - 1e-12, grid[first_bad - 1], grid[first_bad])


def test_weighted_half_intervals_exact():
    """x' = (1/2 + lam) x: stable iff |1/2 + lam| < 1; on lam = i t iff 1/4 + t^2 < 1."""
    from depthdyn.families import weighted

    sn = stability_numbers(weighted(a="1/2"))
    assert sn.real_interval == Interval(sp.Rational(-3, 2), sp.Rational(1, 2), True, True, "contains 0")
    assert sn.imag_interval == Interval(-sp.sqrt(3) / 2, sp.sqrt(3) / 2, True, True, "contains 0")
    assert sn.real_set.intervals == (Interval(sp.Rational(-3, 2), sp.Rational(1, 2)),)
    # the closed disc |1/2 + lam| <= 1 is the root-condition set (one simple root)
    closed = Interval(sp.Rational(-3, 2), sp.Rational(1, 2), False, False)
    assert sn.marginal_sets["real"].intervals == (closed,)
    # mutation: another skip weight moves both intervals (|1/3 + lam| < 1)
    other = stability_numbers(weighted(a="1/3"))
    assert other.real_interval != sn.real_interval and other.imag_interval != sn.imag_interval
    assert other.real_interval.lo == sp.Rational(-4, 3) and other.imag_interval.hi == 2 * sp.sqrt(2) / 3
    # the values given to stability_numbers act like the constructor's
    assert stability_numbers(weighted(), a="1/2").imag_interval == sn.imag_interval


def test_antisymmetric_with_diffusion_intervals_exact():
    """Chang et al.'s block at eps = gamma = 1/2: x' = (3/4 + lam/2) x, |3/4 + lam/2| < 1."""
    from depthdyn.families.literature import antisymmetric

    rec = antisymmetric(eps=sp.Rational(1, 2), gamma=sp.Rational(1, 2))
    assert sp.expand(rec.charpoly() - (sp.Symbol("r") - sp.Rational(3, 4) - rec.param("lam").symbol / 2)) == 0
    sn = stability_numbers(rec)
    assert (sn.real_interval.lo, sn.real_interval.hi) == (sp.Rational(-7, 2), sp.Rational(1, 2))
    assert (sn.imag_interval.lo, sn.imag_interval.hi) == (-sp.sqrt(7) / 2, sp.sqrt(7) / 2)  # 9/16 + t^2/4 < 1
    assert sn.real_interval.component == sn.imag_interval.component == "contains 0"


def test_momentum_half_against_numpy_scan():
    """r^2 - (3/2 + lam) r + 1/2: the real interval ends at a root -1, lam = 0 has the root 1."""
    alpha, beta = np.array([1.0, -1.5, 0.5]), np.array([0.0, 1.0, 0.0])  # m = 1/2, eta = 1
    sn = stability_numbers(momentum(), m="1/2", eta=1)
    iv = sn.real_interval
    assert iv.hi == 0 and iv.component == "adjacent to 0"
    assert abs(iv.lo_value - _scan_left_end(alpha, beta, -1e-3)) < 1e-9
    # imaginary axis: every t != 0 on a wide grid has a root outside, and t = 0 a root on the circle
    ts = np.concatenate([np.logspace(-3, 2, 400), -np.logspace(-3, 2, 400)])
    assert np.all(_rmax_batch(alpha, beta, 1j * ts) > 1)
    assert sn.imag_set.is_empty and sn.imag_interval.is_empty
    # mutation: a larger eta shrinks the real interval by 1/eta (lam enters as eta lam)
    assert stability_numbers(momentum(), m="1/2", eta=2).real_interval.lo == iv.lo / 2


def test_bdf2_imaginary_axis_all_but_zero():
    """BDF2 is A-stable: every lam = i t, t != 0, is strictly stable; t = 0 keeps the root 1.

    The documented component for such a set is the union of the two pieces that touch 0,
    marked ``adjacent to 0 on both sides``; the strict set itself excludes 0.
    """
    sn = numbers("bdf", 2)
    assert sn.imag_set.intervals == (Interval(-sp.oo, 0), Interval(0, sp.oo))
    assert not sn.imag_set.contains(0)
    iv = sn.imag_interval
    assert (iv.lo, iv.hi, iv.component) == (-sp.oo, sp.oo, "adjacent to 0 on both sides")
    alpha, beta = _coeffs("bdf", 2)
    ts = np.concatenate([np.logspace(-2, 3, 50), -np.logspace(-2, 3, 50)])
    assert np.all(_rmax_batch(alpha, beta, 1j * ts) < 1)
    assert abs(_rmax(alpha, beta, 0) - 1) < 1e-12
    # mutation: AB2 (not A-stable) has no such set
    assert numbers("ab", 2).imag_set != sn.imag_set


# ----------------------------------------------------------------- a factor common to rho and sigma
def test_common_factor_on_the_circle():
    """rho = (r + 1)(r - 1/2), sigma = r + 1: the root -1 never moves, the other is 1/2 + lam.

    Never strictly stable; the root condition holds iff |1/2 + lam| <= 1 and 1/2 + lam != -1,
    i.e. lam in (-3/2, 1/2] on the real axis and t in [-sqrt(3)/2, sqrt(3)/2] on lam = i t.
    """
    from depthdyn.families import general

    sn = stability_numbers(general(rho="(r + 1)*(r - 1/2)", sigma="r + 1"))
    assert sn.real_set.is_empty and sn.imag_set.is_empty
    half = sp.Rational(1, 2)
    assert sn.marginal_sets["real"].intervals == (Interval(-3 * half, half, True, False),)
    segment = Interval(-sp.sqrt(3) / 2, sp.sqrt(3) / 2, False, False)
    assert sn.marginal_sets["imaginary"].intervals == (segment,)
    # mutation: move the common root inside, (r + 1/3)(r - 1/2) / (r + 1/3): then strictly stable
    moved = stability_numbers(general(rho="(r + 1/3)*(r - 1/2)", sigma="r + 1/3"))
    assert moved.real_set.intervals == (Interval(-3 * half, half),)


def test_common_factor_with_a_degenerate_locus():
    """rho = (r + 1)(r^2 - 11 r/6 + 1), sigma = (r + 1)(2 r^2/3 + 13 r/3 + 2/3), both palindromic.

    The reduced locus at z = e^{i theta} is real, lam = (12 c - 11)/(8 c + 26) with
    c = cos(theta), increasing from -23/18 (c = -1) to 1/34 (c = 1). Inside, the reduced
    pair of roots e^{+-i theta} is on the circle and simple (the fixed root -1 apart);
    at the ends it is a double root; outside it is a real pair z, 1/z.
    """
    from depthdyn.families import general

    rho, sigma = "r**3 - 5*r**2/6 - 5*r/6 + 1", "2*r**3/3 + 5*r**2 + 5*r + 2/3"
    sn = stability_numbers(general(rho=rho, sigma=sigma))
    assert sn.real_set.is_empty
    assert sn.marginal_sets["real"].intervals == (Interval(sp.Rational(-23, 18), sp.Rational(1, 34)),)
    alpha, beta = np.array([1, -5 / 6, -5 / 6, 1]), np.array([2 / 3, 5, 5, 2 / 3])
    assert np.all(_rmax_batch(alpha, beta, np.array([-1.3, -5.0, 0.04, 3.0])) > 1 + 1e-6)
    assert np.allclose(_rmax_batch(alpha, beta, np.array([-1.2, -0.5, 0.0, 0.029])), 1)


# ----------------------------------------------------------------- random recurrences against a numpy scan
def _random_pair(rng, k: int, mode: int):
    """Rational ``(alpha, beta)`` (highest coefficient first) of order ``k``.

    mode 0: random coefficients; 1: rho with roots in (-1, 1), so lam = 0 is strictly
    stable; 2: one root of rho at 1 (consistent: lam = 0 only marginal); 3 / 4:
    anti-palindromic / palindromic rho and palindromic sigma (the locus lies on the
    imaginary / real axis). sigma may have lower degree (explicit methods).
    """
    def q():
        return sp.Rational(int(rng.integers(-6, 7)), int(rng.integers(1, 4)))

    x = sp.Symbol("x")
    while True:
        a, b = [q() for _ in range(k + 1)], [q() for _ in range(k + 1)]
        if mode in (1, 2):
            roots = [sp.Rational(int(rng.integers(-5, 6)), 6) for _ in range(k)]
            roots[0] = 1 if mode == 2 else roots[0]
            a = sp.Poly(sp.prod([x - v for v in roots]), x).all_coeffs()
        if mode in (3, 4):
            sign = -1 if mode == 3 else 1
            a = [a[j] if 2 * j <= k else sign * a[k - j] for j in range(k + 1)]
            if mode == 3 and k % 2 == 0:
                a[k // 2] = 0
            b = [b[j] if 2 * j <= k else b[k - j] for j in range(k + 1)]
        elif rng.random() < 0.5:
            b[0] = 0
        if a[0] != 0 and any(b):
            return a, b


def _disagreements(sets, alpha, beta, axis: str) -> int:
    """Grid points where an exact strict / root-condition set contradicts companion eigenvalues.

    Only clear points count: farther than 1e-6 from every endpoint, no degree drop, and
    the largest modulus farther than 1e-7 from 1 (strict set), or clearly inside / outside
    (root-condition set; on-circle points are the exact side's business).
    """
    grid = np.linspace(-20, 20, 40001)
    lams = grid if axis == "real" else 1j * grid
    with np.errstate(all="ignore"):
        rm = _rmax_batch(alpha, beta, lams)
    bad = 0
    for union, is_strict in zip(sets, (True, False), strict=True):
        member = np.zeros(grid.shape, bool)
        clear = np.isfinite(rm)
        for iv in union.intervals:
            lo, hi = float(sp.N(iv.lo, 20)), float(sp.N(iv.hi, 20))
            member |= (grid > lo) & (grid < hi)
            clear &= ~np.isclose(grid, lo, rtol=0, atol=1e-6) & ~np.isclose(grid, hi, rtol=0, atol=1e-6)
        inside, outside = rm < 1 - 1e-7, rm > 1 + 1e-7
        if is_strict:
            bad += int(np.sum(clear & (inside | outside) & (member != inside)))
        else:
            bad += int(np.sum(clear & ((inside & ~member) | (outside & member))))
    return bad


@pytest.mark.parametrize("case", range(20))
def test_random_recurrences_against_companion_scan(case):
    from depthdyn.families import general
    from depthdyn.symbolic.numbers import axis_sets

    rng = np.random.default_rng(1000 + case)
    a, b = _random_pair(rng, k=1 + case % 3, mode=case % 5)
    x = sp.Symbol("r")
    rec = general(rho=str(sum(c * x ** (len(a) - 1 - j) for j, c in enumerate(a))),
                  sigma=str(sum(c * x ** (len(b) - 1 - j) for j, c in enumerate(b))))
    alpha, beta = np.array([float(v) for v in a]), np.array([float(v) for v in b])
    for axis in ("real", "imaginary"):
        assert _disagreements(axis_sets(rec, axis), alpha, beta, axis) == 0, (rec, axis)


def test_random_cases_cover_both_situations_and_the_scan_can_fail():
    """The cases above include lam = 0 strictly stable and only marginal; a wrong set is caught."""
    from depthdyn.families import weighted
    from depthdyn.symbolic.numbers import axis_sets

    kinds = set()
    for case in range(20):
        a, b = _random_pair(np.random.default_rng(1000 + case), k=1 + case % 3, mode=case % 5)
        at0 = np.abs(np.roots(np.array([float(v) for v in a]))).max()
        kinds.add("strict" if at0 < 1 - 1e-9 else "marginal" if at0 < 1 + 1e-9 else "unstable")
    assert {"strict", "marginal"} <= kinds
    # the exact sets of x' = (1/3 + lam) x against the scan of x' = (1/2 + lam) x
    wrong = axis_sets(weighted(a="1/3"), "real")
    assert _disagreements(wrong, np.array([1.0, -0.5]), np.array([0.0, 1.0]), "real") > 0
    right = axis_sets(weighted(a="1/2"), "real")
    assert _disagreements(right, np.array([1.0, -0.5]), np.array([0.0, 1.0]), "real") == 0


def test_text_names_the_variable_and_consistency():
    from depthdyn.families import momentum

    sn = stability_numbers(momentum(), param="eta", m="1/2", lam=-1)
    text = str(sn)
    assert "eta in (0, 3)" in text and "lam in" not in text  # r^2 - (3/2 - eta) r + 1/2: |3/2 - eta| < 3/2
    assert "order 0: not consistent" in text
    assert sp.latex(sn).startswith("\\eta \\in")
    ab2 = str(numbers("ab", 2))
    assert "lam in (-1, 0)" in ab2 and "order 2, error constant 5/12" in ab2
