"""from_rule: update rules in paper notation give the built-in families' recurrences.

Expected values come from a second route: the hand-derived families, or the characteristic
polynomial worked out by hand from the rule in the test's comment.
"""

import pytest
import sympy as sp

import depthdyn as dd
from depthdyn import from_rule
from depthdyn.families import bdf, leapfrog, rk2, runge_kutta
from depthdyn.recurrence import COMPLEXES, r
from depthdyn.rules.check import differences
from depthdyn.symbolic.statespace import realisation


def _same_up_to_unit(a, b) -> bool:
    pa = sp.expand(a.charpoly()).xreplace({s: sp.Symbol(s.name) for s in a.charpoly().free_symbols})
    pb = sp.expand(b.charpoly()).xreplace({s: sp.Symbol(s.name) for s in b.charpoly().free_symbols})
    ratio = sp.cancel(pa / pb)
    return not ratio.has(r) and ratio != 0


def test_momentum_rule_equals_momentum():
    rec = from_rule("v' = m*v + eta*f(x); x' = x + v'")
    assert _same_up_to_unit(rec, dd.momentum())
    assert rec.rule == "v' = m*v + eta*f(x); x' = x + v'"
    assert rec.lam == "lam" and rec.order * rec.dim == 2
    assert dd.similarity(rec, "companion", "rule").verified  # the rule's own states (v, x)
    assert realisation(rec, "rule").states == ("v", "x")


def test_a_wrong_momentum_rule_differs():
    # x' = x + v (the old velocity) is another discretisation: not the momentum block
    assert not _same_up_to_unit(from_rule("v' = m*v + eta*f(x); x' = x + v"), dd.momentum())


def test_lag_rule_equals_leapfrog_and_smooth():
    rec = from_rule("x[l+1] = 2*x[l] - x[l-1] + h**2*f(x[l])", params={"h": "positive"})
    assert differences(rec, leapfrog()) == []
    assert differences(rec, dd.smooth(k=2)) == []
    assert realisation(rec, "rule").states == ("x", "x[l-1]")


def test_implicit_rules_equal_bdf_and_backward_euler():
    # x' = x + f(x'): (1 - lam) x' = x, charpoly (1 - lam) r - 1
    rec = from_rule("x' = x + f(x')")
    assert sp.expand(rec.charpoly() - ((1 - rec.lam_symbol) * r - 1)) == 0
    assert differences(rec, bdf(k=1)) == []
    bdf2 = from_rule("y[n+2] - 4/3*y[n+1] + 1/3*y[n] = 2/3*f(y[n+2])")
    assert differences(bdf2, bdf(k=2)) == []
    stage = from_rule("k1 = f(x + h*k1); x' = x + h*k1", params={"h": "positive"})
    assert differences(stage, runge_kutta(tableau="backward_euler")) == []


def test_stream_rule_n2_equals_hyper_connection():
    # H_res doubly stochastic with one free entry, as hyper_connection(n=2) parametrises it
    matrices = {"H_res": [["hres_1_1", "1 - hres_1_1"], ["1 - hres_1_1", "hres_1_1"]],
                "H_pre": [["hpre_1", "hpre_2"]], "H_post": [["hpost_1", "hpost_2"]]}
    rec = from_rule("X' = H_res*X + H_post^T*f(H_pre*X)", n=2, matrices=matrices,
                    params={"hres_1_1": "[0, 1]"})
    assert differences(rec, dd.hyper_connection(n=2)) == []
    assert rec.dim == 2 and rec.order == 1
    # .T and @ read the same as ^T and *
    same = from_rule("X' = H_res @ X + H_post.T @ f(H_pre @ X)", n=2, matrices=matrices,
                     params={"hres_1_1": "[0, 1]"})
    assert same.coeffs == rec.coeffs
    # symbolic entries from a shape: H_pre of shape (1, 2) has entries H_pre_1_1, H_pre_1_2
    free = from_rule("X' = X + f(H_pre^T*H_pre*X)", n=2, matrices={"H_pre": (1, 2)})
    assert {"H_pre_1_1", "H_pre_1_2"} <= set(free.param_names)


def test_shared_and_separate_branch_modes():
    # x' = x + f(x) + g(x): with one mode the slope is 2 lam, with two modes lam + mu
    shared = from_rule("x' = x + f(x) + g(x)", branches={"f": "lam", "g": "lam"})
    assert sp.expand(shared.charpoly() - (r - 1 - 2 * shared.lam_symbol)) == 0
    separate = from_rule("x' = x + f(x) + g(x)", branches={"f": "lam", "g": "mu"})
    lam, mu = separate.symbols["lam"], separate.symbols["mu"]
    assert sp.expand(separate.charpoly() - (r - 1 - lam - mu)) == 0
    assert separate.param("mu").domain == COMPLEXES


def test_pre_normalisation_is_the_identity_in_the_mode():
    assert from_rule("x' = x + f(LN(x))").coeffs == from_rule("x' = x + f(x)").coeffs
    assert from_rule("x' = x + f(RMSNorm(x))").coeffs == dd.residual().coeffs


def test_nested_branches_and_stages_give_runge_kutta():
    nested = from_rule("x' = x + h*f(x + h/2*f(x))", params={"h": "positive"})
    assert differences(nested, rk2()) == []


def test_constants_list_input_values_and_domains():
    rec = from_rule(["c = 1/2", "x' = x + c*f(x)"])
    assert sp.expand(rec.charpoly() - (r - 1 - rec.lam_symbol / 2)) == 0
    num = from_rule("v' = m*v + eta*f(x); x' = x + v'", params={"m": "[0, 1)"}, m="1/2", eta=1)
    assert differences(num, dd.momentum(m="1/2", eta=1)) == []
    assert from_rule("x' = a*x", params={"a": "(0, oo)"}).param("a").domain == sp.Interval.open(0, sp.oo)


def test_index_letter_and_shifted_equations():
    a = from_rule("u[n+1] = u[n] + f(u[n])")
    b = from_rule("u[k] = u[k-1] + f(u[k-1])")  # shifted to end at k+1
    assert a.coeffs == b.coeffs == dd.residual().coeffs


def test_rule_is_shown():
    rec = from_rule("x' = a*x + f(x)")
    assert "rule: x' = a*x + f(x)" in str(rec)
    assert rec.subs(a=1).rule == rec.rule


# ------------------------------------------------------------------ properties and edges
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_coef = st.integers(-3, 3)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 3).flatmap(lambda p: st.tuples(st.lists(_coef, min_size=p + 1, max_size=p + 1),
                                                     st.lists(_coef, min_size=p + 2, max_size=p + 2))))
def test_random_multistep_rules_give_rho_minus_lam_sigma(coeffs):
    """x[l+1] = sum_j c_j x[l-j] + sum_j d_j f(x[l+1-j]) has charpoly rho(r) - lam sigma(r) up to a unit,
    rho = r^(p+1) - sum_j c_j r^(p-j), sigma = sum_j d_j r^(p+1-j) (written down, not solved)."""
    c, d = coeffs  # d[0] multiplies f(x[l+1]): an implicit rule, (1 - d_0 lam) x[l+1] = ...
    p = len(c) - 1
    terms = [f"({cj})*x[l-{j}]" for j, cj in enumerate(c)]
    terms += [f"({dj})*f(x[l+{1 - j}])" if j == 0 else f"({dj})*f(x[l-{j - 1}])" for j, dj in enumerate(d)]
    rec = from_rule("x[l+1] = " + " + ".join(terms))
    lam = sp.Symbol("lam")
    rho = r ** (p + 1) - sum(cj * r ** (p - j) for j, cj in enumerate(c))
    sigma = sum(dj * r ** (p + 1 - j) for j, dj in enumerate(d))
    got = rec.charpoly().xreplace({s: sp.Symbol(s.name) for s in rec.charpoly().free_symbols})
    ratio = sp.cancel(got / sp.expand(rho - lam * sigma))
    assert not ratio.has(r) and ratio != 0
    assert rec.order == p + 1


def test_vector_momentum_on_two_streams_squares_the_scalar_charpoly():
    # with H = I both streams follow the scalar momentum block: its charpoly squared
    rec = from_rule("V' = m*V + eta*f(H*X); X' = X + V'", n=2, matrices={"H": [[1, 0], [0, 1]]})
    assert rec.dim == 4 and rec.order == 1
    plain = {s: sp.Symbol(s.name) for s in rec.charpoly().free_symbols}
    scalar = from_rule("v' = m*v + eta*f(x); x' = x + v'").charpoly()
    scalar = scalar.xreplace({s: sp.Symbol(s.name) for s in scalar.free_symbols})
    assert sp.expand(rec.charpoly().xreplace(plain) - scalar**2) == 0


def test_values_for_unknown_parameters_are_refused():
    with pytest.raises(dd.errors.UnknownParameterError):
        from_rule("x' = a*x + f(x)", b=1)
    with pytest.raises(dd.errors.DomainError):
        from_rule("x' = a*x + f(x)", params={"a": "[0, 1]"}, a=2)


def test_cli_rule_with_values_and_branches(capsys):
    from depthdyn.cli import main

    assert main(["derive", "--rule", "x' = x + h*g(x)", "--branch", "g=mu", "-p", "h=1/2", "--json"]) == 0
    import json

    rep = json.loads(capsys.readouterr().out)
    assert rep["charpoly"] == "r - mu/2 - 1" and rep["lam"] == "mu"
