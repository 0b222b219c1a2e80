"""compare's columns checked against independent computations, and mutants that must be flagged."""

import importlib
import math

import numpy as np
import pytest
import sympy as sp

import depthdyn as dd
from depthdyn.families import bdf, leapfrog
from depthdyn.symbolic.scaled import check_depth_limit, principal_limit

cmp = importlib.import_module("depthdyn.compare")  # the module, not the function of that name


def _iterate(coeffs, lam, L):
    """x_L of sum_j c_j(lam / L) x_{n+p-j} = 0 from x_0 = ... = x_{p-1} = 1, float64 (written here)."""
    c = [complex(f(lam / L)) for f in coeffs]
    p = len(c) - 1
    x = [1.0 + 0j] * p
    for _ in range(L - p + 1):
        x.append(-sum(c[j] * x[-j] for j in range(1, p + 1)) / c[0])
        x.pop(0)
    return x[-1]


def test_bdf3_depth_limit_is_exp_lam_by_iteration():
    rec = bdf(k=3)
    text, limit = cmp._depth_limit(rec)
    assert text == "exp(lam)"
    r, lam = sp.Symbol("r"), rec.lam_symbol
    coeffs = [sp.lambdify(lam, c) for c in sp.Poly(rec.charpoly(), dd.recurrence.r).all_coeffs()]
    del r
    for v in (-1.0, 0.5j):
        x3, x4 = _iterate(coeffs, v, 1000), _iterate(coeffs, v, 10000)
        assert abs(x4 - np.exp(v)) < 2e-4 and abs(x4 - np.exp(v)) < abs(x3 - np.exp(v))  # O(1/L)


def test_depth_check_mutants():
    rec = bdf(k=3)
    lam = rec.lam_symbol
    assert check_depth_limit(rec, sp.exp(lam)) == ""
    assert "limit" in check_depth_limit(rec, sp.exp(2 * lam))       # a wrong limit
    assert "settles" in check_depth_limit(rec, None)               # the old "no finite limit"
    assert check_depth_limit(leapfrog(h=1), None) == ""         # modes like L^(-1/2): no limit indeed
    with pytest.raises(dd.errors.ParameterError):
        principal_limit(leapfrog(h=1))                          # (r - 1)^2 at lam = 0


def test_compare_flags_a_wrong_depth_column(monkeypatch):
    lam = dd.residual().lam_symbol
    monkeypatch.setattr(cmp, "_depth_limit", lambda rec: ("exp(2*lam)", sp.exp(2 * lam)))
    t = cmp.compare("residual", n=21)
    assert any(c.startswith("depth_limit") for c in t.rows[0].numbers["grid_check"])
    assert "(!)" in str(t)


def test_a_alpha_column_is_cross_checked():
    grid = {"real_interval": None, "imag_interval": None, "zero_stable": True}
    exact = {**grid, "a_alpha_degrees": 90.0}
    assert cmp._disagreements(exact, {**grid, "a_alpha_degrees": 89.75}, 0.005) == []
    assert cmp._disagreements(exact, {**grid, "a_alpha_degrees": 86.0}, 0.005)   # mutant: not A-stable
    assert cmp._disagreements(exact, {**grid, "a_alpha_degrees": None}, 0.005)


@pytest.mark.parametrize("spec, k", [("bdf:k=3", 3), ("adams_moulton:k=6", 6)])
def test_symmetric_imaginary_sets_show_both_pieces(spec, k):
    facts = cmp.stability_facts(cmp.resolve_spec(spec)[1])
    pieces = facts["imag_pieces"]
    assert len(pieces) >= 2 and facts["grid_check"] == []
    # symmetric in t (real coefficients): the pieces mirror each other
    mirrored = sorted([[None if b is None else -b, None if a is None else -a] for a, b in pieces],
                      key=lambda p: -math.inf if p[0] is None else p[0])
    assert all((a is None and b is None) or abs(a - b) < 1e-12 for p, q in zip(pieces, mirrored, strict=True)
               for a, b in zip(p, q, strict=True))
    cell = cmp._interval(facts["imag_interval"], facts["imag_component"], pieces)
    assert cell.count(" U ") == len(pieces) - 1


def test_bdf3_imaginary_threshold_by_root_scan():
    rec = bdf(k=3)
    sn = dd.stability_numbers(rec)
    assert sn.imag_interval.component.startswith("nearest")
    ends = sorted([e for iv in sn.imag_set.intervals for e in (iv.lo, iv.hi) if e.is_finite], key=float)
    assert len(ends) == 2 and sp.simplify(ends[0] + ends[1]) == 0
    # independent: largest root modulus of 11/6 r^3 - 3 r^2 + 3/2 r - 1/3 - i t r^3 on a grid of t
    t = np.linspace(0.01, 4, 4000)
    rad = np.array([np.abs(np.roots([11 / 6 - 1j * v, -3, 1.5, -1 / 3])).max() for v in t])
    first = t[np.argmax(rad < 1)]
    assert abs(first - float(ends[1])) < 2e-3
    assert "U" in str(sn).splitlines()[2]  # the text shows the whole set


def test_momentum_huge_eta_real_interval():
    m, eta = sp.Rational(1, 2), sp.Integer(10) ** 300
    sn = dd.stability_numbers(dd.momentum(), m="1/2", eta=10**300)
    # Jury for r^2 + a r + b: |b| < 1 and |a| < 1 + b, with a, b read off the characteristic polynomial
    lam = sp.Symbol("lam", real=True)
    P = sp.Poly(dd.momentum(m=m, eta=eta).charpoly().subs(dd.momentum().lam_symbol, lam), dd.recurrence.r)
    a, b = P.all_coeffs()[1] / P.LC(), P.all_coeffs()[2] / P.LC()
    assert abs(b) < 1
    ends = sorted(sp.solve(a - (1 + b), lam) + sp.solve(a + (1 + b), lam))
    assert (sn.real_interval.lo, sn.real_interval.hi) == (ends[0], ends[1]) == (-3 / eta, 0)


def test_errors_are_typed():
    lam = sp.Symbol("lam")
    with pytest.raises(dd.errors.ParameterError):
        dd.stability_numbers(dd.from_coefficients([1, -sp.exp(lam)], ["lam"], lam="lam"))
    with pytest.raises(dd.errors.ParameterError):
        dd.stability_numbers(dd.from_coefficients([1, -1 - sp.pi * lam**2], ["lam"], lam="lam"))


_GAUSS2 = "runge_kutta:A=[[1/4,1/4-sqrt(3)/6],[1/4+sqrt(3)/6,1/4]],b=[1/2,1/2]"
_RADAU2 = "runge_kutta:A=[[5/12,-1/12],[3/4,1/4]],b=[3/4,1/4]"
_LOBATTO3C = "runge_kutta:A=[[1/2,-1/2],[1/2,1/2]],b=[1/2,1/2]"


def test_a_stable_tableaux_read_90_degrees_in_compare():
    t = cmp.compare(_GAUSS2, _RADAU2, _LOBATTO3C, "rk4", n=21)
    cells = t.cells()
    assert [c[6] for c in cells] == ["90 deg (A-stable)", "90 deg (L-stable)", "90 deg (L-stable)", "none"]
    for row in t.rows[:3]:
        nb = row.numbers
        assert nb["a_alpha_exact"] == "90" and nb["grid_check"] == []
        assert 89.5 <= numeric_a_alpha(row.recurrence) <= 90  # the grid's own estimate stays just below
    assert [row.numbers["tableau_order"] for row in t.rows] == [4, 3, 2, 4]
    assert [row.numbers["accuracy_order"] for row in t.rows] == [4, 3, 2, 4]


def numeric_a_alpha(rec):
    return cmp.numeric_numbers(rec, n=401)["a_alpha_degrees"]


def test_tableau_order_column_mutants(monkeypatch):
    # a perturbed coefficient (b_1 + 1/100, b_4 - 1/100) lowers the tableau order to 1
    spec = "runge_kutta:A=[[0,0,0,0],[1/2,0,0,0],[0,1/2,0,0],[0,0,1,0]],b=[1/6+1/100,1/3,1/3,1/6-1/100]"
    row = cmp.compare(spec, n=21).rows[0]
    assert row.numbers["tableau_order"] == 1 and row.numbers["accuracy_order"] == 1
    # a tableau order above the order of R(z) is impossible: a wrong order function is flagged
    from depthdyn.symbolic import butcher

    real = butcher.tableau_order
    monkeypatch.setattr(butcher, "tableau_order", lambda A, b: real(A, b, 6).__class__(5, 6, (), 0))
    row = cmp.compare("rk4", n=21).rows[0]
    assert any(c.startswith("order: tableau 5") for c in row.numbers["grid_check"])


@pytest.mark.parametrize("spec", ["nystrom:k=2", "milne_simpson:k=2"])
def test_simple_parasitic_root_on_the_circle_still_has_a_depth_limit(spec):
    """rho = r^2 - 1: the mode r ~ -1 has weight O(1/L), so x_L -> exp(lam) (was "no finite limit")."""
    rec = cmp.resolve_spec(spec)[1]
    text, limit = cmp._depth_limit(rec)
    assert text == "exp(lam)"
    lam = rec.lam_symbol
    coeffs = [sp.lambdify(lam, c) for c in sp.Poly(rec.charpoly(), dd.recurrence.r).all_coeffs()]
    errs = [abs(_iterate(coeffs, -1.0, L) - math.exp(-1)) for L in (1000, 10000)]
    assert errs[1] < 1e-3 and errs[1] < errs[0] / 5  # O(1/L)


def test_grid_reach_does_not_flag_an_end_beyond_it():
    rec = cmp.resolve_spec("momentum_sander")[1]  # gamma = 9/10: -38 < lam < 0 (Jury: |a| < 1 + b)
    facts = cmp.stability_facts(rec)
    assert facts["real_interval"] == [-38.0, 0.0] and facts["grid_check"] == []
    grid = cmp.numeric_numbers(rec)
    assert grid["real_interval"][0] is None  # the grid (reach 20) sees no end
    wrong = {**facts, "real_interval": [-10.0, 0.0]}  # mutant: an end the grid would have seen
    assert cmp._disagreements(wrong, grid, 40.0 / 8000)


def test_axis_intervals_with_radicals_is_a_typed_error():
    rec = cmp.resolve_spec("runge_kutta:A=[[(3+sqrt(3))/6,0],[-sqrt(3)/3,(3+sqrt(3))/6]],b=[1/2,1/2]")[1]
    with pytest.raises(dd.errors.ParameterError, match="stability_numbers"):
        cmp.axis_intervals(rec)  # was a raw DomainError
    assert dd.stability_numbers(rec).a_stable  # the route that handles them


@pytest.mark.parametrize("eta", [10**400, 10**1000])
def test_momentum_interval_below_float_range(eta):
    """Ends below the float range (3/10^400 underflows to 0.0) are ordered and kept apart exactly."""
    iv = dd.stability_numbers(dd.momentum(), m="1/2", eta=eta).real_interval
    assert iv.lo == sp.Rational(-3, eta) and iv.hi == 0 and iv.contains(sp.Rational(-1, eta))


def test_a_series_sympy_cannot_expand_gives_an_honest_cell(monkeypatch):
    import depthdyn.symbolic.solve as solve

    def unexpandable(*args, **kwargs):
        raise NotImplementedError  # what SymPy's nseries raises on smooth:k=3's cube-root modes

    monkeypatch.setattr(solve, "depth_limit", unexpandable)
    # BDF2: the principal root still gives the limit, exp(lam) (r1 = 1 + lam/L + O(L^-2))
    text, limit = cmp._depth_limit(bdf(k=2))
    assert limit == sp.exp(sp.Symbol("lam")) and text == "exp(lam)"
    # smooth k=3: r = 1 is a triple root at lam = 0, so neither method decides; no "no finite limit"
    text, limit = cmp._depth_limit(dd.smooth(k=3, h=1))
    assert limit is None and text.startswith(cmp.NOT_AVAILABLE) and "NotImplementedError" in text
    assert cmp._depth_check(dd.smooth(k=3, h=1), text, limit) == []  # nothing claimed, nothing checked


@pytest.mark.parametrize("bad", [{}, [], "stability_facts"])
def test_numbers_must_be_a_function(bad):
    from depthdyn.errors import ParameterError

    with pytest.raises(ParameterError, match="numbers must be a function"):
        cmp.compare("residual", n=41, numbers=bad)
