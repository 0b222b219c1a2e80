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


# ---------------------------------------------------------------- a value that uses a substituted name
def test_a_value_that_uses_a_substituted_parameter_names_the_clash():
    from depthdyn.errors import ParameterError

    with pytest.raises(ParameterError, match=r"lam=a uses a, which is given a value itself \(a=1/2\)"):
        dd.weighted(lam="a", a="1/2")
    with pytest.raises(ParameterError, match="uses a, which is given a value itself"):
        dd.weighted(a="a + 1")
    # in two steps it is well defined: x' = (a + lam) x with lam = a = 1/2 has the root 1
    assert _root(dd.weighted(lam="a").subs(a="1/2")) == 1
    assert _root(dd.weighted(lam="1/3", a="1/2")) == sp.Rational(5, 6)


# ---------------------------------------------------------------- typed errors instead of raw ones
def test_periodic_reads_object_arrays_and_refuses_unprintable_products():
    from fractions import Fraction

    from depthdyn.errors import DegreeTooLargeError

    pattern = dd.periodic(np.array([[[1, Fraction(1, 2)], [3, 4]]], dtype=object))
    assert pattern.monodromy == sp.Matrix([[1, sp.Rational(1, 2)], [3, 4]])
    q = sp.Rational(10**300 + 7, 10**299 + 3)
    layer = [[q, 1], [2, q]]
    # twelve layers: entries of about 12 * 300 digits, the characteristic polynomial about twice that
    with pytest.raises(DegreeTooLargeError, match="digits"):
        dd.periodic(*[layer] * 12)
    # mutant: five layers print, and the product is the matrix power
    five = dd.periodic(*[layer] * 5)
    assert five.monodromy == sp.Matrix(layer) ** 5
    assert len(sp.sstr(five.charpoly())) > 3000
    scalar = dd.periodic(*[dd.residual(lam=q)] * 12)
    assert scalar.monodromy[0, 0] == (1 + q) ** 12
    assert str(scalar)


def test_bad_seeds_budgets_and_coefficients_are_typed_errors():
    from depthdyn.errors import ParameterError
    from depthdyn.numeric.masks import schur_cohn

    stack = np.array([np.diag([2.0, 0.5])] * 3)
    for seed in (-1, "x", 1.5, True):
        with pytest.raises(ParameterError, match="seed"):
            dd.lyapunov(stack, seed=seed)
    assert np.isfinite(dd.lyapunov(stack, seed=np.int64(3)).exponents).all()
    for seconds in (-1, "abc", 0, float("nan")):
        with pytest.raises(ParameterError, match="budget"):
            dd.budget(seconds)  # at the call, not only at `with`
    with dd.budget(5) as value:
        assert value == 5.0
    with pytest.raises(ParameterError, match="numeric"):
        schur_cohn(np.array(["a", "b"]))
    strict, marginal = schur_cohn([1, -0.5])  # mutant: numbers pass, r = 1/2 is inside
    assert bool(strict) and bool(marginal)


def test_modes_and_roots_take_parameter_values_as_keywords():
    # momentum at lam = 0: r^2 - (1 + m) r + m = (r - 1)(r - m), so the roots are 1 and m = 1/2
    rec = dd.momentum()
    found = {rt.value for rt in dd.roots(rec, m="1/2", eta=1, lam=0).roots}
    assert found == {1, sp.Rational(1, 2)}
    assert dd.roots(rec, m="1/2", eta=1, lam=0) == dd.roots(rec.subs(m="1/2", eta=1, lam=0))
    l = sp.Symbol("l", integer=True)  # noqa: E741
    c1, c2 = sp.symbols("c_1 c_2")
    general = dd.modes(rec, m="1/2", eta=1, lam=0).general_solution
    assert sp.simplify(general - (c1 + c2 * sp.Rational(1, 2) ** l)) == 0 or \
        sp.simplify(general - (c2 + c1 * sp.Rational(1, 2) ** l)) == 0


# ---------------------------------------------------------------- 002 §2.3: the dimension, eq. 9 as printed
def _claim(cid):
    from depthdyn.claims import claims

    (cl,) = [c for c in claims() if c.id == cid]
    return cl


def test_eq9_as_printed_is_a_residual_network_with_d_states():
    """Second method: solve eq. 9's k rows numerically with random per-layer weights; every
    solution window is a residual trajectory x^(l+1-n) = (1 + h w_(l-n)) x^(l-n), fixed by its
    oldest entry, so a first-order state needs d numbers, not k d."""
    from depthdyn.claims import hauser

    rng = np.random.default_rng(0)
    for k in (2, 3, 4):
        w, h, oldest = rng.normal(size=k), 0.1, rng.normal()
        # rows, oldest first: x^(l+1-n) = sum_{j=n}^{k-1} h w_j x^(l-j) + x^(l+1-k)
        X = {k: oldest}
        for n in range(k - 1, -1, -1):
            X[n] = sum(h * w[j] * X[j + 1] for j in range(n, k)) + X[k]
        for n in range(k):
            assert np.isclose(X[n] - X[n + 1], h * w[n] * X[n + 1])  # a residual step
        assert hauser._eq9_printed_dimension(k, 1) == 1
        assert hauser._eq9_printed_dimension(k, 2) == 2
        assert hauser._eq9_dimension(k, 2) == 2 * k  # mutant: the n = 0 row alone needs k d
    printed, reading = _claim("002-s2.3-dimension-printed"), _claim("002-s2.3-dimension-reading")
    assert printed.statement_key == reading.statement_key == "002-s2.3-dimension"
    assert (printed.run().verdict, reading.run().verdict) == ("fails", "holds")
    assert printed.mutated().run().verdict == "holds"  # stated d: the printed system agrees


def test_solve_prints_the_closed_form_under_the_budget(capsys):
    # smooth(k=12) at lam = 1/3 has twelve RootOf modes; SymPy orders the printed terms by their
    # numeric values, which refines every RootOf: that part now runs under the budget too
    argv = ["solve", "--budget", "8", "smooth", "-p", "k=12", "-p", "h=1", "-p", "lam=1/3",
            "--initial", ",".join(["1"] * 12)]
    code, out, err = _cli(argv, capsys)
    assert code == 2 and err.count("\n") == 1
    assert "printing the closed form: past the exact-work budget" in err  # the closed form itself fits


def test_vieta_of_roots_of_very_different_sizes():
    # 1e-300 r^3 + 1e-300 r^2 - 2e-300 r - 1: roots near 1e100 and its complex partners; their sum
    # is -a_2/a_3 = -1 and the sum of pairwise products a_1/a_3 = -2, exactly, by Vieta
    import random

    from depthdyn.symbolic import polynomial as P

    rho = "1e-300*r**3 + 1e-300*r**2 - 2e-300*r - 1"
    rec = dd.general(rho=rho)
    v = P.vieta(rec)
    assert v.holds and [rel.coefficient for rel in v.relations] == [-1, -2, sp.Integer(10) ** 300]
    points = P._vieta_points(rec, 1, 40, random.Random(0))
    assert P._numeric_vieta(points, 1, sp.Integer(-1), 40)
    assert not P._numeric_vieta(points, 1, sp.Rational(-999, 1000), 40)  # mutant: off by 1e-3
    assert not P._numeric_vieta(points, 2, sp.Rational(-2001, 1000), 40)


def test_shortened_roots_keep_their_digits(capsys):
    # r^2 + r + 1e-300: the roots multiply to 1e-300 and add to -1, so the small one is
    # -1e-300 / (1 - 1e-300 + ...) = -1e-300 to far more than 10 digits (mpmath at 700 digits agrees)
    import mpmath

    from depthdyn.symbolic.compact import shorten

    with mpmath.workdps(700):
        small = (-1 + mpmath.sqrt(1 - 4 * mpmath.mpf(10) ** -300)) / 2
        assert abs(small / mpmath.mpf(10) ** -300 + 1) < mpmath.mpf(10) ** -290
    exact = -sp.Rational(1, 2) + sp.sqrt(sp.Rational(1, 4) - sp.Rational(1, 10**300))
    assert abs(shorten(exact) / sp.Float("-1e-300", 30) - 1) < 1e-9
    code, out, err = _cli(["derive", "general", "--rho", "r**2 + r + 1e-300"], capsys)
    assert code == 0 and "r = -1.000000000e-300" in out, out
    # mutant: a piece without cancellation is shortened as before, rational by rational
    lam = sp.Symbol("lam")
    assert str(shorten(sp.Rational(12178558398992939, 50000000000000000) * lam + sp.Rational(1, 3))) == \
        "0.243571168*lam + 1/3"
