"""Stability numbers of multistep methods against published tables and an independent scan.

Published values are comparison inputs, never the expected output of a computation:
every number is also checked against a numeric scan with ``numpy.roots`` (bisection on
the largest root modulus), which shares nothing with the exact boundary-locus code.

Sources of the published values:
* Adams-Bashforth / Adams-Moulton real intervals: Lambert, *Numerical Methods for
  Ordinary Differential Systems* (1991), §3.10, table of intervals of absolute stability
  of Adams methods (AB k = 1..4: -2, -1, -6/11, -3/10; AM k = 1..4, order k+1:
  -oo, -6, -3, -90/49); Hairer, Norsett & Wanner, *Solving ODEs I*, §III.3 (Fig. 3.1,
  3.2) for the imaginary segments of AB3 (+-0.72) and AB4 (+-0.43).
* BDF stability angles: Hairer & Wanner, *Solving ODEs II*, §V.2 (table of A(alpha)
  angles of the BDF methods): 90, 90, 86.03, 73.35, 51.84, 17.84 degrees.
"""

from __future__ import annotations

import json
from functools import cache

import numpy as np
import pytest
import sympy as sp

from depthdyn import (
    Interval,
    ParameterError,
    adams_bashforth,
    adams_moulton,
    bdf,
    from_lmm,
    milne_simpson,
    momentum,
    nystrom,
    solve_for,
    stability_conditions,
    stability_numbers,
)
from depthdyn.cli import main
from depthdyn.multistep import lmm_coefficients, order_and_error_constant

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
    """Largest root modulus for many lam at once (companion eigenvalues, vectorised)."""
    P = alpha[None, :] - lams[:, None] * beta[None, :]
    k = P.shape[1] - 1
    C = np.zeros((lams.size, k, k), dtype=complex)
    C[:, 0, :] = -P[:, 1:] / P[:, :1]
    C[:, np.arange(1, k), np.arange(k - 1)] = 1
    return np.abs(np.linalg.eigvals(C)).max(axis=1)


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
