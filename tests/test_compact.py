"""Structured characteristic polynomials of matrix families, and compact derive output.

Expected values come from elsewhere: the expanded determinant (SymPy's own Berkowitz on the
plain matrix, not the structured path), numeric eigenvalues of the matrix at random
points, and the determinant lemma's own statement.
"""

import dataclasses
import random
import re

import numpy as np
import pytest
import sympy as sp

from depthdyn import entangled, hyper_connection
from depthdyn.cli import main
from depthdyn.families import kromhc, mhc, mhc_lite
from depthdyn.recurrence import r
from depthdyn.structure import structured_charpoly, term_bound
from depthdyn.symbolic.compact import (
    Speller,
    shorten,
    shorten_numbers,
    summary,
)


def _berkowitz(rec) -> sp.Expr:
    """det(r I - M) expanded by SymPy's Berkowitz on the plain matrix: an independent path."""
    M = -sp.Matrix(rec.coeffs[1])
    return sp.expand(M.charpoly(r).as_expr())


CASES = [
    hyper_connection(n=2),
    hyper_connection(n=3),
    hyper_connection(n=3, H_pre=[1, 1, 1], H_post=[1, 2, 3]),  # u off the all-ones vector, v along it
    kromhc(factors=1, H_pre=[1, 2], H_post=[3, 1]),
    kromhc(factors=2),
    mhc_lite(n=2),
    mhc(n=3),
    entangled(n=3),
    entangled(n=3, kind="orthogonal"),
]


@pytest.mark.parametrize("rec", CASES, ids=lambda rec: rec.description[:40])
def test_structured_form_multiplies_back_to_the_charpoly(rec):
    st = structured_charpoly(rec)
    assert st is not None
    assert sp.expand(st.expand() - _berkowitz(rec)) == 0
    if st.factors is not None:
        assert sp.expand(sp.Mul(*[f ** m for f, m in st.factors]) - _berkowitz(rec)) == 0


def _mutants(st):
    """Wrong versions of a structured form: one factor or piece changed."""
    if st.factors is not None:
        (f, m), rest = st.factors[0], st.factors[1:]
        wrong = ((f + 1, m),) + rest
        yield dataclasses.replace(st, form=sp.Mul(*[g ** k for g, k in wrong]), factors=wrong)
        if m == 1 and len(st.factors) > 1:  # a multiplicity off by one
            yield dataclasses.replace(st, form=st.form * f)
    for i, piece in enumerate(st.pieces):
        pieces = list(st.pieces)
        pieces[i] = dataclasses.replace(piece, value=piece.value + r)
        yield dataclasses.replace(st, pieces=tuple(pieces))
    lam = sp.Symbol("lam")
    yield dataclasses.replace(st, form=st.form.subs(lam, 2 * lam))  # the update's weight doubled


@pytest.mark.parametrize("rec", [hyper_connection(n=2), hyper_connection(n=3), kromhc(factors=2),
                                 entangled(n=3)],
                         ids=["hc2", "hc3", "kromhc2", "entangled3"])
def test_a_mutant_factor_fails_the_comparison(rec):
    st = structured_charpoly(rec)
    truth = _berkowitz(rec)
    mutants = list(_mutants(st))
    assert mutants
    for wrong in mutants:
        assert sp.expand(wrong.expand() - truth) != 0


def test_doubly_stochastic_update_along_ones_splits_its_eigenvalue():
    """Uniform gates: M 1 = H 1 + lam u (v . 1) = (1 + lam s) 1, so 1 + lam s is an eigenvalue."""
    rec = kromhc(factors=2)  # H_pre = 1/2, H_post = 1 on 4 streams: s = 4 * 2 / 4 = 2
    st = structured_charpoly(rec)
    lam = rec.lam_symbol
    assert (sp.expand(r - 1 - 2 * lam), 1) in st.factors
    M = -sp.Matrix(rec.coeffs[1])
    assert (M * sp.ones(4, 1) - (1 + 2 * lam) * sp.ones(4, 1)).applyfunc(sp.expand) == sp.zeros(4, 1)


def test_kronecker_factors_give_products_of_eigenvalues():
    rec = kromhc(factors=2)
    st = structured_charpoly(rec)
    assert all(sp.degree(f, r) == 1 for f, _ in st.factors)
    rng = random.Random(3)
    for _ in range(3):
        point = {s: sp.Rational(rng.randint(1, 99), 100) for s in rec.symbols.values()}
        exact = sorted(complex(sp.solve(f.subs(point), r)[0]).real for f, m in st.factors for _ in range(m))
        M = np.array((-sp.Matrix(rec.coeffs[1])).subs(point).evalf(), dtype=float)
        assert np.allclose(exact, sorted(np.linalg.eigvals(M).real), atol=1e-12)


def test_rank_one_form_is_the_determinant_lemma():
    """q(r) (r - 1 - lam s) - lam (r - 1) w(r) against det(rI - H) (1 - lam v^T (rI - H)^-1 u) at a point."""
    rec = hyper_connection(n=3)
    st = structured_charpoly(rec)
    rng = random.Random(7)
    point = {s: sp.Rational(rng.randint(-9, 9), rng.randint(1, 5)) for s in rec.symbols.values()}
    point[sp.Symbol("r")] = sp.Rational(7, 3)
    H = (-sp.Matrix(rec.coeffs[1])).subs(rec.lam_symbol, 0).subs(point)
    post = sp.Matrix([[rec.symbols[f"hpost_{i}"] for i in (1, 2, 3)]]).subs(point)
    pre = sp.Matrix([[rec.symbols[f"hpre_{i}"] for i in (1, 2, 3)]]).subs(point)
    R = point[sp.Symbol("r")] * sp.eye(3) - H
    lam = point[rec.lam_symbol]
    lemma = R.det() * (1 - lam * (pre * R.inv() * post.T)[0, 0])
    assert st.expand().subs(point) == lemma


def test_term_bound_bounds_the_expansion():
    for rec in (hyper_connection(n=2), hyper_connection(n=3), kromhc(factors=2)):
        M = -sp.Matrix(rec.coeffs[1])
        assert term_bound(M) >= len(sp.Add.make_args(_berkowitz(rec)))


def test_large_pieces_are_left_unexpanded_and_say_so():
    st = structured_charpoly(hyper_connection(n=3), limit=10)
    assert [p.value for p in st.pieces] == [None, None]
    with pytest.raises(ValueError, match="unexpanded"):
        st.expand()


def test_near_stochastic_sinkhorn_matrix_is_reported_not_factored():
    from depthdyn.mixing import sinkhorn

    K = sinkhorn(np.random.default_rng(0).normal(size=(3, 3)), 20)  # mhc(n=3)'s H_res, given raw
    raw = hyper_connection(H_res=K, H_pre=[0.5] * 3, H_post=[1.0] * 3, doubly_stochastic=False)
    st = structured_charpoly(raw)
    assert any("only to within" in fact for fact in st.facts)
    assert st.factors is None  # its row sums are 1 only to the float residual: no exact factor
    # the mhc family completes the same Sinkhorn output to exact row and column sums: factored
    st = structured_charpoly(mhc(n=3))
    assert not any("only to within" in fact for fact in st.facts)
    assert (sp.expand(r - 1 - sp.Rational(3, 2) * mhc(n=3).lam_symbol), 1) in st.factors


def test_shortening_numbers():
    big = sp.Rational(12178558398992939, 50000000000000000)
    lam = sp.Symbol("lam")
    short = shorten(big * lam + sp.Rational(1, 3))
    assert not re.search(r"\d{13}", sp.sstr(short)) and "1/3" in sp.sstr(short)
    assert shorten(lam + 1) == lam + 1
    spell = Speller(full=False)
    assert spell(lam + 1) == "lam + 1" and not spell.shortened
    spell(big)
    assert spell.shortened
    assert Speller(full=True)(big) == "12178558398992939/50000000000000000"
    # exponents and denominators of a product stay what they are
    assert shorten_numbers("r**2/100000000000000000") == ("r**2/1e+17", True)
    assert shorten_numbers("x**3/4 + 1/2") == ("x**3/4 + 1/2", False)
    assert summary("abc", 3) == "abc" and "4 characters" in summary("abcd", 3)


def _derive(argv, capsys):
    code = main(["derive", *argv])
    out = capsys.readouterr().out
    return code, out


@pytest.mark.parametrize("n", [4, 8])
def test_derive_hyper_connection_at_real_sizes_is_compact(n, capsys):
    code, out = _derive(["hyper_connection", "-p", f"n={n}"], capsys)
    assert code == 0
    assert len(out.encode()) < 20_000
    assert "structured form" in out and "q(r)" in out and "w(r)" in out
    assert "eigenvalue 1 on the all-ones vector" in out


def test_derive_mhc_has_no_long_integers_by_default(capsys):
    code, out = _derive(["mhc", "-p", "n=3"], capsys)
    assert code == 0
    assert not re.search(r"\d{13,}", out)
    assert "10 significant digits" in out
    # the check can fail: the exact values are there on request
    code, full = _derive(["mhc", "-p", "n=3", "--full"], capsys)
    assert code == 0 and re.search(r"\d{13,}", full)


def test_derive_json_stays_exact(capsys):
    code, out = _derive(["mhc", "-p", "n=3", "--json"], capsys)
    assert code == 0 and re.search(r"\d{13,}", out)


def test_derive_entangled_prints_its_factors(capsys):
    code, out = _derive(["entangled", "-p", "n=4"], capsys)
    assert code == 0
    assert "(r + gamma - lam - 1)**3" in out  # descending powers of r, r first
    assert "root r = lam + 1\n" in out and "root r = -gamma + lam + 1  (multiplicity 3)" in out
    assert "discriminant: 0 (a repeated factor" in out


def test_full_derive_at_n8_is_cut_by_the_budget(capsys):
    """--full expands everything; at n = 8 the expansion is interrupted by the budget, the rest
    is printed and one line names the part (it printed nothing for minutes before)."""
    code = main(["derive", "hyper_connection", "-p", "n=8", "--full", "--budget", "2"])
    out, err = capsys.readouterr()
    assert code == 2
    assert "characteristic polynomial: not computed" in out and "structured form" in out
    assert err.count("\n") == 1 and "characteristic polynomial" in err and "--budget" in err
