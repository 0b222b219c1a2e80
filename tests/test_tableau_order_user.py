"""The order of a Runge-Kutta block built from a user's own Butcher tableau.

Expected orders come from two derivations written here, independent of depthdyn's tree
generator: the eight order conditions up to order 4 as the textbooks list them
(Hairer, Norsett & Wanner I, Table II.2.2: ``sum b = 1``, ``b.c = 1/2``, ``b.c^2 = 1/3``,
``b.Ac = 1/6``, ``b.c^3 = 1/4``, ``b.(c*Ac) = 1/8``, ``b.Ac^2 = 1/12``, ``b.AAc = 1/24``),
and the order of the stability function ``R(z) = 1 + z b^T (I - zA)^(-1) 1`` against
``e^z`` by its series. For the explicit textbook methods of order ``p = s <= 4`` both agree
(``R`` is then the degree-``p`` Taylor polynomial); a tableau that keeps ``R`` but breaks a
nonlinear condition shows that the tableau order is not ``R``'s.
"""

import math

import numpy as np
import pytest
import sympy as sp

import depthdyn as dd
from depthdyn.errors import ParameterError
from depthdyn.families import bdf, rk2, rk4, runge_kutta
from depthdyn.symbolic.butcher import recurrence_tableau_order, runge_kutta_tableau, tableau_order

Rat = sp.Rational
z = sp.Symbol("z")

# textbook tableaux that are not in the catalogue (Ralston is, but here it is given by A and b)
RALSTON2 = ([[0, 0], [Rat(2, 3), 0]], [Rat(1, 4), Rat(3, 4)])                                 # order 2
HEUN3 = ([[0, 0, 0], [Rat(1, 3), 0, 0], [0, Rat(2, 3), 0]], [Rat(1, 4), 0, Rat(3, 4)])       # order 3
THREE_EIGHTHS = ([[0, 0, 0, 0], [Rat(1, 3), 0, 0, 0], [-Rat(1, 3), 1, 0, 0], [1, -1, 1, 0]],
                 [Rat(1, 8), Rat(3, 8), Rat(3, 8), Rat(1, 8)])                                 # order 4
RADAU_IIA2 = ([[Rat(5, 12), -Rat(1, 12)], [Rat(3, 4), Rat(1, 4)]], [Rat(3, 4), Rat(1, 4)])     # order 3
LOBATTO_IIIA2 = ([[0, 0], [Rat(1, 2), Rat(1, 2)]], [Rat(1, 2), Rat(1, 2)])                     # order 2
GAUSS2 = ([[Rat(1, 4), Rat(1, 4) - sp.sqrt(3) / 6], [Rat(1, 4) + sp.sqrt(3) / 6, Rat(1, 4)]],
          [Rat(1, 2), Rat(1, 2)])                                                              # order 4
# the 3/8 rule with weight moved from b_1 to b_4 (sum b = 1 kept): b.c = 1/2 fails
MUTANT = (THREE_EIGHTHS[0], [Rat(1, 8) + Rat(1, 100), Rat(3, 8), Rat(3, 8), Rat(1, 8) - Rat(1, 100)])
# c = (0, 1/2, 1), b = (1/4, 1/2, 1/4), a_32 = 4/3: b.1 = 1, b.c = 1/2, b.Ac = 1/6 (R is the cubic
# Taylor polynomial) but b.c^2 = 3/8, not 1/3: tableau order 2 under an R of order 3
SAME_R = ([[0, 0, 0], [Rat(1, 2), 0, 0], [-Rat(1, 3), Rat(4, 3), 0]], [Rat(1, 4), Rat(1, 2), Rat(1, 4)])

CASES = {"ralston2": (RALSTON2, 2), "heun3": (HEUN3, 3), "three_eighths": (THREE_EIGHTHS, 4),
         "radau_iia2": (RADAU_IIA2, 3), "lobatto_iiia2": (LOBATTO_IIIA2, 2), "gauss2": (GAUSS2, 4),
         "mutant": (MUTANT, 1), "same_r": (SAME_R, 2)}


def _textbook_order(A, b) -> int:
    """The largest p <= 4 with the textbook conditions of orders 1..p met (exact)."""
    A, b = sp.Matrix(A), sp.Matrix(b).T
    one = sp.ones(A.shape[0], 1)
    c = A * one
    sq = lambda v: v.multiply_elementwise(v)  # noqa: E731
    conds = {1: [(b * one)[0] - 1],
             2: [(b * c)[0] - Rat(1, 2)],
             3: [(b * sq(c))[0] - Rat(1, 3), (b * A * c)[0] - Rat(1, 6)],
             4: [(b * sq(c).multiply_elementwise(c))[0] - Rat(1, 4),
                 (b * c.multiply_elementwise(A * c))[0] - Rat(1, 8),
                 (b * A * sq(c))[0] - Rat(1, 12), (b * A * A * c)[0] - Rat(1, 24)]}
    p = 0
    for k in (1, 2, 3, 4):
        if any(sp.simplify(e) != 0 for e in conds[k]):
            break
        p = k
    return p


def _r_order(A, b) -> int:
    """Order of R(z) = 1 + z b^T (I - zA)^(-1) 1 against e^z, from the series of the difference."""
    A, b = sp.Matrix(A), sp.Matrix(b)
    s = A.shape[0]
    R = 1 + z * (b.T * (sp.eye(s) - z * A).inv() * sp.ones(s, 1))[0, 0]
    series = sp.series(R - sp.exp(z), z, 0, 2 * s + 3).removeO()
    return min(k for k in range(2 * s + 3) if sp.simplify(series.coeff(z, k)) != 0) - 1


@pytest.mark.parametrize("name", sorted(CASES))
def test_tableau_order_matches_the_textbook_conditions(name):
    (A, b), known = CASES[name]
    assert _textbook_order(A, b) == known  # the textbook fact, derived here
    found = tableau_order(A, b)
    assert found.order == known and not found.at_least and found.tolerance is None


@pytest.mark.parametrize("name", sorted(CASES))
def test_user_tableau_order_is_reported_by_stability_numbers(name):
    (A, b), known = CASES[name]
    rec = runge_kutta(A=A, b=b)
    sn = dd.stability_numbers(rec)
    assert sn.tableau_order == known and sn.to_json()["tableau_order"] == known
    assert f"Runge-Kutta order {known} " in str(sn)
    assert sn.order == _r_order(A, b)  # the stability function's own order, derived here
    assert sn.tableau_order <= sn.order  # a method of order p has R(z) = e^z + O(z^(p+1))


@pytest.mark.parametrize("name", ["ralston2", "heun3", "three_eighths", "mutant"])
def test_explicit_low_order_methods_agree_with_the_stability_function(name):
    (A, b), known = CASES[name]
    assert _r_order(A, b) == known == recurrence_tableau_order(runge_kutta(A=A, b=b))


def test_a_tableau_with_the_same_stability_function_has_a_lower_order():
    assert _r_order(*SAME_R) == 3 == _r_order(*HEUN3)
    sn = dd.stability_numbers(runge_kutta(A=SAME_R[0], b=SAME_R[1]))
    assert (sn.order, sn.tableau_order) == (3, 2)


def test_the_mutant_lowers_the_order():
    assert recurrence_tableau_order(runge_kutta(A=THREE_EIGHTHS[0], b=THREE_EIGHTHS[1])) == 4
    assert recurrence_tableau_order(runge_kutta(A=MUTANT[0], b=MUTANT[1])) == 1
    found = tableau_order(*MUTANT)
    # b.c - 1/2 = (1/100) c_1 - (1/100) c_4 with c_1 = 0, c_4 = 1
    assert found.first_failure == ((),) and found.residual == -Rat(1, 100)


def test_the_tableau_is_read_back_exactly_from_the_block():
    rec = runge_kutta(A=GAUSS2[0], b=GAUSS2[1], h=1)
    A, b = runge_kutta_tableau(rec)
    assert sp.Matrix(A) == sp.Matrix(GAUSS2[0]) and list(b) == GAUSS2[1]
    assert runge_kutta_tableau(runge_kutta(A=[["2/3"]], b=["3/2"])) == ([[Rat(2, 3)]], [Rat(3, 2)])
    # named tableaux and the rk2/rk4 blocks keep working
    assert [recurrence_tableau_order(f) for f in (rk4(), rk2(), runge_kutta(tableau="rk3"))] == [4, 2, 3]
    # not a Runge-Kutta block, or a description that was replaced: no tableau, no order
    assert runge_kutta_tableau(bdf(k=2)) is None and dd.stability_numbers(bdf(k=2)).tableau_order is None
    from dataclasses import replace

    assert runge_kutta_tableau(replace(rec, description="something else")) is None
    broken = replace(rec, description="Runge-Kutta block (A = [[1/2, b = [1]): x' = R(h lam) x")
    assert runge_kutta_tableau(broken) is None


def test_the_order_bound_makes_the_answer_exact():
    A4, b4 = THREE_EIGHTHS
    found = tableau_order(A4, b4)
    assert (found.order, found.bound, found.first_failure, found.at_least) == (4, 4, None, False)
    # the tall tree of s + 1 nodes has weight b^T A^(s-1) c = 0 for an explicit tableau: order <= s
    tall = sp.Matrix(b4).T * sp.Matrix(A4) ** 3 * sp.Matrix(A4) * sp.ones(4, 1)
    assert tall[0] == 0 != Rat(1, math.factorial(5))
    partial = tableau_order(A4, b4, max_order=2)
    assert partial.order == 2 and partial.at_least
    assert tableau_order(*GAUSS2).bound == 4 and tableau_order(*RADAU_IIA2).first_failure is not None


# ---------------------------------------------------------------- float entries
def test_float_entries_are_decided_to_a_stated_tolerance():
    A, b = [[0.0, 0.0], [2 / 3, 0.0]], [0.25, 0.75]
    found = tableau_order(A, b)
    assert (found.order, found.tolerance) == (2, 1e-12)
    # read exactly, 2/3 in float64 is 0.6666666666666666: b.c = 1/2 - 1/(4 10^16), order 1
    assert tableau_order(A, b, tol=0).order == 1
    assert tableau_order(np.array(A), np.array(b)).order == 2
    three = [[float(v) for v in row] for row in THREE_EIGHTHS[0]]
    assert tableau_order(three, [float(v) for v in THREE_EIGHTHS[1]]).order == 4
    # a perturbation far above the tolerance is not forgiven (the float mutant)
    assert tableau_order(A, [0.25 + 1e-6, 0.75 - 1e-6]).order == 1
    # a tolerance can be asked of exact entries too
    assert tableau_order(*MUTANT, tol=0.01).order >= 2 and tableau_order(*MUTANT).order == 1


def test_float_blocks_report_the_order_of_the_numbers_they_read():
    rec = runge_kutta(A=[[0.0, 0.0], [2 / 3, 0.0]], b=[0.25, 0.75])
    sn = dd.stability_numbers(rec)
    A, b = runge_kutta_tableau(rec)
    assert sn.tableau_order == tableau_order(A, b, tol=0).order <= sn.order  # exact on what was read


@pytest.mark.parametrize("tol", [-1e-3, float("nan"), float("inf"), "1e-12", True])
def test_bad_tolerances_raise(tol):
    with pytest.raises(ParameterError):
        tableau_order(*RALSTON2, tol=tol)


@pytest.mark.parametrize("max_order", [0, 9, 2.0, True])
def test_bad_max_orders_raise(max_order):
    with pytest.raises(ParameterError):
        tableau_order(*RALSTON2, max_order=max_order)


def test_compare_reports_the_order_of_a_user_tableau():
    from depthdyn.compare import compare

    spec = "runge_kutta:A=[[0,0,0],[1/3,0,0],[0,2/3,0]],b=[1/4,0,3/4]"
    rows = compare(spec, runge_kutta(A=SAME_R[0], b=SAME_R[1], h=1), n=21).rows
    assert [row.numbers["tableau_order"] for row in rows] == [3, 2]
    assert [row.numbers["accuracy_order"] for row in rows] == [3, 3]
    assert all(not any(c.startswith("order:") for c in row.numbers["grid_check"]) for row in rows)
