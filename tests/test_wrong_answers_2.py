"""Regression tests for answers that used to be silently wrong or inputs that got through:
post-norm rules, L-stability and tableau order of one-step methods, Lyapunov exponents of
rank-deficient products, non-finite numbers and dunder names in the parser, and more."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

import depthdyn as dd
from depthdyn.errors import RuleError
from depthdyn.families import deepnet


# ---------------------------------------------------------------- post-norm (DeepNorm) rules
def _root(rec, **values):
    (root,) = sp.solve(rec.subs(values).charpoly(), sp.Symbol("r"))
    return sp.nsimplify(sp.simplify(root))


def test_deepnorm_rule_as_printed_gives_the_deepnet_root():
    # LN(alpha x + lam x) with a unit-scale x: the skip term alpha x sets the scale, so one mode
    # follows x' = (alpha + lam) / alpha x.  N = 8: alpha = (2*8)^(1/4) = 2, lam = -1/2: 3/4.
    N, lam = 8, sp.Rational(-1, 2)
    alpha = sp.Integer(2 * N) ** sp.Rational(1, 4)
    expected = (alpha + lam) / alpha
    assert expected == sp.Rational(3, 4)
    rule = dd.from_rule("alpha = (2*N)^(1/4); x' = LN(alpha*x + f(x))")
    assert _root(rule, N=N, lam=lam) == expected
    assert _root(deepnet(), N=N, lam=lam) == expected
    # mutant: the norm read as the identity gives alpha + lam = 3/2, outside the unit circle
    assert _root(dd.from_rule("alpha = (2*N)^(1/4); x' = alpha*x + f(x)"), N=N, lam=lam) == alpha + lam
    assert abs(expected) < 1 < abs(alpha + lam)  # 'stable' against 'unstable'


def test_post_norm_divides_by_the_skip_scale_and_pre_norm_stays_the_identity():
    assert _root(dd.from_rule("x' = LN(3*x + f(x))"), lam=1) == sp.Rational(4, 3)
    assert _root(dd.from_rule("x' = LN(-2*x + f(x))"), lam=1) == sp.Rational(-1, 2)  # scale |c|
    assert _root(dd.from_rule("x' = x + f(LN(x))"), lam=1) == 2


@pytest.mark.parametrize("rule", ["x' = LN(f(x))", "v' = m*v + f(x); x' = LN(x + v')"])
def test_post_norm_without_a_single_skip_term_is_refused(rule):
    with pytest.raises(RuleError, match="post-norm"):
        dd.from_rule(rule)


# ---------------------------------------------------------------- L-stability and tableau order
def _R(A, b):
    """R(z) = 1 + z b^T (I - z A)^-1 1, from the tableau (independent of the library)."""
    z = sp.Symbol("z")
    A = sp.Matrix(A)
    s = A.shape[0]
    return z, sp.simplify(1 + z * (sp.Matrix([b]) * (sp.eye(s) - z * A).inv() * sp.ones(s, 1))[0])


def _order(A, b):
    """The order from the conditions on trees up to order 3 (enough for these methods)."""
    A, b = sp.Matrix(A), sp.Matrix([b])
    c = A * sp.ones(A.shape[0], 1)
    conds = {1: [(b * sp.ones(A.shape[0], 1))[0] - 1],
             2: [(b * c)[0] - sp.Rational(1, 2)],
             3: [(b * c.applyfunc(lambda v: v**2))[0] - sp.Rational(1, 3),
                 (b * A * c)[0] - sp.Rational(1, 6)]}
    p = 0
    for k in (1, 2, 3):
        if any(sp.simplify(e) != 0 for e in conds[k]):
            break
        p = k
    return p


_HALF = sp.Rational(1, 2)
TABLEAUX = {"euler": ([[0]], [1]), "backward_euler": ([[1]], [1]),
            "implicit_midpoint": ([[_HALF]], [1])}
LOBATTO_IIIA_2 = ([[0, 0], [_HALF, _HALF]], [_HALF, _HALF])


@pytest.mark.parametrize("name", sorted(TABLEAUX))
def test_named_one_step_methods_have_l_stability_and_tableau_order(name):
    from depthdyn.families import runge_kutta

    A, b = TABLEAUX[name]
    z, R = _R(A, b)
    at_infinity = sp.limit(R, z, sp.oo)
    sn = dd.stability_numbers(runge_kutta(tableau=name))
    assert sn.tableau_order == _order(A, b)
    if sn.a_stable:
        assert sn.l_stable is (at_infinity == 0)
    else:
        assert sn.l_stable is False
    assert (name, sn.a_stable) != ("backward_euler", False)


def test_backward_euler_is_l_stable_and_lobatto_iiia_2_is_not():
    from depthdyn.families import runge_kutta

    z, R_be = _R(*TABLEAUX["backward_euler"])
    z, R_lob = _R(*LOBATTO_IIIA_2)
    assert sp.limit(R_be, z, sp.oo) == 0 and sp.limit(R_lob, z, sp.oo) == -1
    be = dd.stability_numbers(runge_kutta(A=TABLEAUX["backward_euler"][0], b=TABLEAUX["backward_euler"][1]))
    lob = dd.stability_numbers(runge_kutta(A=LOBATTO_IIIA_2[0], b=LOBATTO_IIIA_2[1]))
    assert (be.a_stable, be.l_stable) == (True, True)
    assert (lob.a_stable, lob.l_stable) == (True, False)
    assert "L-stable" in str(be) and "L-stable" not in str(lob)
    assert _order(*LOBATTO_IIIA_2) == lob.order == 2


# ---------------------------------------------------------------- Lyapunov exponents and rank loss
RANK_ONE = [np.full((3, 3), 1e300), np.ones((2, 2)), np.array([[1.0, 2.0], [2.0, 4.0]])]


@pytest.mark.parametrize("layer", RANK_ONE)
def test_lyapunov_reports_rank_loss_relative_to_the_scale(layer):
    from depthdyn.products.lyapunov import SingularProductError

    stack = np.array([layer] * 60)
    # rank one: A = u v^T, so A^L = (v^T u)^(L-1) u v^T; the top exponent is log|v^T u| = log|trace A|,
    # every other one is -inf (the product has rank one)
    assert np.linalg.matrix_rank(layer / np.abs(layer).max()) == 1
    with pytest.raises(SingularProductError, match="-inf"):
        dd.lyapunov(stack)
    # the start vector only enters the first layer: the growth over layers 31..60 is exact
    top60, top30 = (dd.lyapunov(stack[:L], k=1).exponents[0] * L for L in (60, 30))
    assert abs((top60 - top30) / 30 - np.log(abs(np.trace(layer)))) < 1e-9


def test_lyapunov_keeps_small_but_resolvable_contractions():
    # mutant of the above: full rank, with a contraction QR resolves (1e-12 >> n eps)
    stack = np.array([np.diag([1.0, 1e-12])] * 20)
    e20, e10 = (dd.lyapunov(stack[:L]).exponents * L for L in (20, 10))
    assert np.allclose((e20 - e10) / 10, [0.0, np.log(1e-12)], atol=1e-9)


# ---------------------------------------------------------------- bad input through the parser and the CLI
def _cli(argv, capsys):
    from depthdyn.cli import main

    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("argv", [
    ["derive", "--rule", "x' = nan*x"],
    ["derive", "--rule", "x' = inf*x"],
    ["derive", "--rule", "x' = zoo*x"],
    ["derive", "--rule", "x' = x + f(x)", "--branch", "f=nan"],
    ["derive", "--rule", "x' = A@x", "--matrix", "A=[[inf]]"],
    ["product", "residual:lam=nan"],
    ["product", "residual:lam=zoo*a"],
    ["derive", "--rule", "x[__import__] = x"],
    ["derive", "--rule", "x__p = x"],
    ["product", "residual:lam=a,lam=b"],
    ["product", "residual:lam=a", "--at", "a=1,a=2"],
    ["product", "residual:lam=a", "--at", "a=1e400"],
    ["derive", "--rule", "x' = " + "-" * 3000 + "x"],
])
def test_bad_input_is_refused_in_one_line(argv, capsys):
    code, out, err = _cli(argv, capsys)
    assert code == 2, (out, err)
    assert err.count("\n") == 1 and "error:" in err


def test_non_finite_names_never_become_parameters():
    from depthdyn.errors import ParseError
    from depthdyn.parse import free_names, parse_expr

    for name in ("nan", "inf", "zoo", "Infinity"):
        with pytest.raises(ParseError, match="not a number"):
            free_names(f"2*{name}")
        with pytest.raises(ParseError, match="not a number"):
            parse_expr(name, {name: sp.Symbol(name)})
    with pytest.raises(RuleError, match="double underscore"):
        dd.from_rule("x__p = x")
    # mutant: a finite name still is a parameter, and x' still reads as the new state
    assert free_names("2*nab") == {"nab"}
    assert dd.from_rule("x' = x").charpoly() == sp.Symbol("r") - 1


def test_a_huge_exact_number_in_a_rule_prints(capsys):
    # x' = 10^999 x: the root is 10^999 exactly, far outside the unit circle
    code, out, err = _cli(["derive", "--rule", "x' = x*1e999"], capsys)
    assert code == 0, err
    assert "1e+999" in out
    from depthdyn.symbolic.compact import shorten_numbers

    assert shorten_numbers("3/1" + "0" * 500) == ("3e-500", True)
    assert shorten_numbers("2" + "0" * 400 + "/3") == ("6.666666667e+399", True)
    assert shorten_numbers("1/3") == ("1/3", False)  # mutant: short numbers stay exact
