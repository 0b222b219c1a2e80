"""Stability numbers of one-step (Runge-Kutta) blocks and of recurrences nonlinear in the parameter.

Reference values are derived here, independently of depthdyn: ``R(z)`` of RK4 is the
truncated exponential, ``|R(iy)|^2 = 1`` is solved by SymPy on that polynomial, interval
ends are cross-checked by a float64 scan of ``|R|`` on a fine grid, A-stability by
``|R| < 1`` at random points of the left half-plane, orders by the series of ``R - e^z``.
Mutants (a perturbed tableau coefficient, another ``gamma``) must change the answers.
"""

import numpy as np
import pytest
import sympy as sp

import depthdyn as dd
from depthdyn.errors import ParameterError
from depthdyn.families import adams_bashforth, bdf, nystrom, rk4, runge_kutta
from depthdyn.families.literature import TABLEAUX
from depthdyn.symbolic.butcher import rooted_trees, tableau_order
from depthdyn.symbolic.numbers import stability_numbers

Rat, S3, H = sp.Rational, sp.sqrt(3), sp.Rational(1, 2)
z = sp.Symbol("z")


def _sdirk(gamma):
    """Two-stage SDIRK, ``c = (gamma, 1 - gamma)``: order 3 for ``gamma = (3 +- sqrt 3)/6``, else 2."""
    return [[gamma, 0], [1 - 2 * gamma, gamma]], [H, H]


GAUSS2 = ([[Rat(1, 4), Rat(1, 4) - S3 / 6], [Rat(1, 4) + S3 / 6, Rat(1, 4)]], [H, H])
RADAU2 = ([[Rat(5, 12), -Rat(1, 12)], [Rat(3, 4), Rat(1, 4)]], [Rat(3, 4), Rat(1, 4)])
LOBATTO3C2 = ([[H, -H], [H, H]], [H, H])
SDIRK3 = _sdirk((3 + S3) / 6)


def _R(A, b):
    """R(z) = 1 + z b^T (I - z A)^(-1) 1, straight from the definition (independent of the package)."""
    A, b = sp.Matrix(A), sp.Matrix(b)
    return sp.cancel(1 + z * (b.T * (sp.eye(A.shape[0]) - z * A).inv() * sp.ones(A.shape[0], 1))[0, 0])


def _scan_end(f, lo, hi, n=200001):
    """The first grid point, walking from ``hi`` down to ``lo``, where ``f >= 1`` (float64)."""
    x = np.linspace(hi, lo, n)
    bad = np.flatnonzero(f(x) >= 1)
    return x[bad[0]] if bad.size else None


@pytest.fixture(scope="module")
def rk4_numbers():
    return stability_numbers(rk4(h=1))


def test_rk4_real_interval_exact_and_by_scan(rk4_numbers):
    iv = rk4_numbers.real_interval
    assert iv.hi == 0 and iv.lo.has(sp.CRootOf)  # an algebraic end, printed exactly
    R = sum(z**k / sp.factorial(k) for k in range(5))
    # the end is a root of R(z) = 1 (R = -1 has no real root: R >= 1/3 on the real line)
    mp, target = sp.Poly(sp.minimal_polynomial(iv.lo, z), z), sp.Poly(sp.numer(sp.together(R - 1)), z)
    assert target.rem(mp).is_zero
    scan = _scan_end(lambda x: np.abs(np.polyval([1 / 24, 1 / 6, 1 / 2, 1, 1], x)), -4.0, -1e-9)
    assert abs(float(iv.lo) - scan) < 1e-4 and abs(float(iv.lo) + 2.785293563) < 1e-8
    assert "CRootOf" in str(rk4_numbers) and "-2.78529356340528" in str(rk4_numbers)


def test_rk4_imaginary_end_is_two_sqrt_two(rk4_numbers):
    y = sp.Symbol("y", real=True)
    R = sum((sp.I * y) ** k / sp.factorial(k) for k in range(5))
    E = sp.expand(R * sp.conjugate(R)) - 1  # |R(iy)|^2 - 1 = y^6 (y^2 - 8) / 576
    ends = [v for v in sp.solve(E, y) if v.is_positive]
    assert ends == [2 * sp.sqrt(2)]
    iv = rk4_numbers.imag_interval
    assert iv.hi == ends[0] and iv.lo == -ends[0] and iv.component == "adjacent to 0 on both sides"
    scan = _scan_end(lambda t: np.abs(np.polyval([1 / 24, 1 / 6, 1 / 2, 1, 1], 1j * t)), 4.0, 1e-3)
    assert scan is not None  # walking down from 4: unstable until 2 sqrt 2
    assert rk4_numbers.order == 4 and rk4_numbers.error_constant == -Rat(1, 120)
    assert rk4_numbers.tableau_order == 4 and not rk4_numbers.a0_stable
    assert rk4_numbers.a_alpha_degrees is None


def test_step_size_scales_out_and_mutates_the_interval():
    free = stability_numbers(rk4())  # h left free: the numbers are in z = h lam
    assert free.variable == "h*lam" and free.real_interval == stability_numbers(rk4(h=1)).real_interval
    half = stability_numbers(rk4(h=2))  # mutant: h = 2 halves every end
    assert sp.simplify(2 * half.real_interval.lo - free.real_interval.lo) == 0
    assert sp.simplify(half.imag_interval.hi - sp.sqrt(2)) == 0


@pytest.mark.parametrize("tab, l_stable, order", [
    (GAUSS2, False, 4), (RADAU2, True, 3), (LOBATTO3C2, True, 2), (SDIRK3, False, 3)])
def test_a_stable_tableaux_give_exactly_90_degrees(tab, l_stable, order):
    sn = stability_numbers(runge_kutta(A=tab[0], b=tab[1], h=1))
    assert sn.a_stable and sn.a_alpha_exact == 90 and sn.a_alpha_degrees == 90.0
    assert sn.l_stable is l_stable and sn.order == order and sn.kind == "one-step"
    R = _R(*tab)
    # independent: |R| < 1 at random points of the open left half-plane, and R(oo) = 0 iff L-stable
    f = sp.lambdify(z, R, "numpy")
    rng = np.random.default_rng(0)
    pts = -rng.exponential(3, 4000) + 1j * rng.normal(0, 10, 4000)
    assert np.all(np.abs(f(pts)) < 1)
    assert (sp.limit(R, z, sp.oo) == 0) is l_stable
    # the order of R against e^z, by series
    ser = sp.series(R - sp.exp(z), z, 0, order + 2).removeO()
    assert sp.simplify(ser.coeff(z, order + 1) - sn.error_constant) == 0
    assert all(sp.simplify(ser.coeff(z, k)) == 0 for k in range(order + 1))


def test_not_a_stable_mutant_and_an_a_alpha_angle():
    # gamma = (3 - sqrt 3)/6: the same order 3, but R has a pole in the right half-plane and |R(oo)| > 1
    sn = stability_numbers(runge_kutta(A=_sdirk((3 - S3) / 6)[0], b=[H, H], h=1))
    assert not sn.a_stable and not sn.a0_stable and sn.order == 3
    assert sp.simplify(sn.real_interval.lo + 6 + 4 * S3) == 0  # R(x) = -1 there: checked below numerically
    f = sp.lambdify(z, _R(*_sdirk((3 - S3) / 6)), "numpy")
    assert abs(abs(f(float(sn.real_interval.lo))) - 1) < 1e-9
    # R = 1 / T3(-z) (T3 the cubic Taylor polynomial): poles in Re z > 0 only, |R(it)| > 1 for small t,
    # so A(alpha) with alpha < 90; the exact angle against a fine sector scan of |R|
    lam = sp.Symbol("lam")
    T3 = sum((-lam) ** k / sp.factorial(k) for k in range(4))
    sn = stability_numbers(dd.from_coefficients([T3, -1], ["lam"], lam="lam"))
    assert sn.a0_stable and not sn.a_stable and 80 < sn.a_alpha_degrees < 90 and sn.order == 3
    g = sp.lambdify(z, 1 / T3.subs(lam, z), "numpy")
    rho = np.logspace(-4, 4, 4000)
    below, above = np.radians(sn.a_alpha_degrees - 0.05), np.radians(sn.a_alpha_degrees + 0.05)
    assert np.all(np.abs(g(-rho * np.exp(1j * np.linspace(0, below, 200))[:, None])) < 1)
    assert np.any(np.abs(g(-rho * np.exp(1j * above))) >= 1)


def test_tableau_order_conditions_and_mutants():
    assert [len(rooted_trees(n)) for n in range(1, 8)] == [1, 1, 2, 4, 9, 20, 48]  # OEIS A000081
    A4, b4 = TABLEAUX["rk4"]
    assert tableau_order(A4, b4).order == 4
    # mutant: move weight between b_1 and b_4 (sum b = 1 kept): sum b c = 1/2 fails, order 1
    assert tableau_order(A4, [b4[0] + Rat(1, 100), b4[1], b4[2], b4[3] - Rat(1, 100)]).order == 1
    # mutant: a_32 = 1/2 -> 1/2 + 1/10 with a_31 = -1/10 (c_3 kept): sum b a c = 1/6 fails, order 2
    Am = [row[:] for row in A4]
    Am[2] = [-Rat(1, 10), H + Rat(1, 10), 0, 0]
    assert tableau_order(Am, b4).order == 2
    assert tableau_order(*GAUSS2).order == 4 and tableau_order(*SDIRK3).order == 3
    assert tableau_order(*_sdirk(Rat(1, 4))).order == 2  # radical replaced: order drops
    assert tableau_order(*_sdirk((3 + sp.sqrt(2)) / 6)).order == 2
    with pytest.raises(ParameterError):
        tableau_order(A4, b4, max_order=0)


def test_oscillator_marginal_condition():
    sn = stability_numbers(dd.oscillator(), param="beta")  # L scales out: beta / L
    assert sn.variable == "beta/L" and sn.real_set.is_empty  # root product 1: never strict
    marg = sn.marginal_sets["real"]
    assert [(iv.lo, iv.hi, iv.lo_open, iv.hi_open) for iv in marg.intervals] == [(0, 2, True, True)]
    # independent: numpy roots of r^2 - (2 - b^2) r + 1 on a grid of b >= 0
    b = np.linspace(0, 3, 3001)
    on = np.array([np.all(np.abs(np.abs(np.roots([1, -(2 - v * v), 1])) - 1) < 1e-9)
                   and abs((2 - v * v) ** 2 - 4) > 1e-9 for v in b])
    assert b[on].min() > 0 and abs(b[on].max() - 2) < 2e-3 and on[(b > 0.01) & (b < 1.99)].all()


def test_sdirk_with_radicals_in_compare_exits_zero(capsys):
    from depthdyn.cli import main

    spec = "runge_kutta:A=[[(3+sqrt(3))/6,0],[-sqrt(3)/3,(3+sqrt(3))/6]],b=[1/2,1/2]"
    assert main(["compare", spec, "--grid", "41"]) == 0
    out = capsys.readouterr().out
    assert "90 deg (A-stable)" in out and "(!)" not in out


def test_plot_with_numbers_for_a_runge_kutta_block():
    import matplotlib

    matplotlib.use("Agg")
    from depthdyn.plot import plot_stability_region

    ax = plot_stability_region(rk4(h=1), x=("re(lam)", -3, 1, 31), y=("im(lam)", -3, 3, 31), numbers=True)
    labels = [line.get_label() for line in ax.lines]
    assert any("real interval" in lab for lab in labels) and any("imaginary" in lab for lab in labels)


@pytest.mark.parametrize("rec", [adams_bashforth(k=2), bdf(k=2), nystrom(k=2),
                                 dd.momentum(m="1/2", eta=1)], ids=["ab2", "bdf2", "leapfrog", "momentum"])
def test_general_path_agrees_with_the_boundary_locus(rec):
    """Two algorithms on the same linear-in-lam recurrences: Cayley resultants vs the boundary locus."""
    from depthdyn.symbolic.numbers import axis_sets
    from depthdyn.symbolic.onestep import general_axis_sets, general_shape

    num, den, lam = general_shape(rec, "lam")
    for axis, var in (("real", "lam"), ("imaginary", "lam_im")):
        locus, general = axis_sets(rec, axis), general_axis_sets(num, den, lam, axis, var)
        assert locus[0].as_set() == general[0].as_set() and locus[1].as_set() == general[1].as_set()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_explicit_tableaux_real_interval_by_scan(seed):
    """Random explicit 3-stage tableaux (small rationals): the exact real interval against a scan of |R|."""
    rng = np.random.default_rng(seed)
    q = lambda: Rat(int(rng.integers(-4, 5)), int(rng.integers(1, 5)))  # noqa: E731
    A = [[0, 0, 0], [q(), 0, 0], [q(), q(), 0]]
    b = [q(), q(), 1 - Rat(1, 3)]
    b[0] = 1 - b[1] - b[2]  # consistent: sum b = 1, so R(z) = 1 + z + ...
    sn = stability_numbers(runge_kutta(A=A, b=b, h=1))
    coeffs = [float(c) for c in sp.Poly(_R(A, b), z).all_coeffs()]
    iv = sn.real_interval
    assert iv.hi == 0 and iv.component.startswith("adjacent")
    scan = _scan_end(lambda x: np.abs(np.polyval(coeffs, x)), -40.0, -1e-6, n=400001)
    if iv.lo == -sp.oo:  # impossible for a polynomial R: it grows without bound
        pytest.fail("explicit RK with an unbounded real interval")
    assert abs(float(iv.lo) - scan) < 2e-4


def test_rational_coefficients_and_a_tangential_touch():
    lam = sp.Symbol("lam")
    # x' = x / (1 - lam) (backward Euler written with a denominator) against the tableau's own path
    general = stability_numbers(dd.from_coefficients([1, -1 / (1 - lam)], ["lam"], lam="lam"))
    tableau = stability_numbers(runge_kutta(tableau="backward_euler", h=1))
    assert general.kind == "one-step" and tableau.kind == "multistep"
    assert general.real_set.as_set() == tableau.real_set.as_set() == sp.Union(
        sp.Interval.open(-sp.oo, 0), sp.Interval.open(2, sp.oo))  # |1 - x| > 1
    assert general.l_stable and general.order == 1
    # r^3 + (lam^2 - 1) r^2 + lam r + 1/4: p(1) = (lam + 1/2)^2, so at lam = -1/2 a root touches r = 1
    # and goes back inside: the strict set loses that one point, the root condition keeps it
    sn = stability_numbers(dd.from_coefficients([1, lam**2 - 1, lam, Rat(1, 4)], ["lam"], lam="lam"))
    assert not sn.real_set.contains(Rat(-1, 2)) and sn.marginal_sets["real"].contains(Rat(-1, 2))
    for x in (-0.51, -0.49):
        assert np.abs(np.roots([1, x * x - 1, x, 0.25])).max() < 1 and sn.real_set.contains(sp.nsimplify(x))
    with pytest.raises(ParameterError, match="not rational"):
        stability_numbers(dd.from_coefficients([1, -sp.exp(lam)], ["lam"], lam="lam"))


def test_cli_stability_rk4_and_the_oscillator(capsys):
    from depthdyn.cli import main

    assert main(["stability", "rk4"]) == 0
    out = capsys.readouterr().out
    assert "h*lam in (2*CRootOf(" in out and "~ -2.78529356340528" in out and "(-2*sqrt(2), 2*sqrt(2))" in out
    assert "Runge-Kutta order 4" in out
    assert main(["stability", "oscillator", "--variable", "beta"]) == 0
    assert "root condition, real axis:      beta/L in (0, 2)" in capsys.readouterr().out
