"""Results print lam as \\lambda in LaTeX, stay equal to expressions built with Symbol("lam"), and behave as
SymPy objects where natural (indexing roots, sympify)."""

import pickle

import numpy as np
import pytest
import sympy as sp

import depthdyn as dd
import depthdyn.numeric  # noqa: F401 - dd.numeric below (a submodule is an attribute once imported)
from depthdyn.numeric import batch_coefficients
from depthdyn.printing import TexSymbol, symbol


def bare_lam(text: str) -> bool:
    """``lam`` written as a code name (not inside ``\\lambda``)."""
    return "lam" in text.replace("\\lambda", "")


def test_latex_of_charpoly_prints_lambda():
    text = sp.latex(dd.charpoly(dd.momentum()))
    assert "\\lambda" in text and not bare_lam(text)
    assert bare_lam(sp.latex(sp.Symbol("lam") + 1))  # the check can fail: a plain Symbol prints its name


def test_every_result_prints_lambda():
    mom = dd.momentum()
    results = [dd.charpoly(mom), dd.roots(mom), dd.roots(mom)[0], dd.vieta(mom), dd.discriminant(mom),
               dd.modes(mom), dd.closed_form(dd.residual(), [1]), dd.stability_conditions(mom),
               dd.stability_conditions(mom).conditions[0], dd.stability_numbers(dd.momentum(m="1/2", eta=1))]
    for res in results:
        text = sp.latex(res)
        assert "\\lambda" in text and not bare_lam(text), (type(res).__name__, text)
        if hasattr(res, "_repr_latex_"):
            assert "\\lambda" in res._repr_latex_()


def test_equal_to_user_symbols():
    mom = dd.momentum()
    s = mom.symbols
    lam, r = sp.Symbol("lam"), sp.Symbol("r")
    built = r**2 - (1 + s["m"] + s["eta"] * lam) * r + s["m"]
    cp = dd.charpoly(mom)
    assert sp.expand(cp - built) == 0 and sp.expand(cp) == sp.expand(built)
    assert hash(sp.expand(cp)) == hash(sp.expand(built))
    assert s["lam"] == lam and lam == s["lam"] and hash(s["lam"]) == hash(lam)
    assert not (s["lam"] != lam)
    assert lam in cp.free_symbols
    assert sp.expand(cp.subs(lam, 2) - built.subs(lam, 2)) == 0
    assert sp.expand(cp.xreplace({lam: 0}) - built.xreplace({lam: 0})) == 0 and cp.xreplace({lam: 0}).has(lam) is False
    assert sp.Poly(cp, lam).degree() == 1
    f = sp.lambdify((lam, s["m"], s["eta"], r), cp)
    assert f(1.0, 0.5, 1.0, 2.0) == pytest.approx(4 - (1 + 0.5 + 1.0) * 2 + 0.5)
    assert pickle.loads(pickle.dumps(cp)) == cp
    assert s["lam"] != sp.Symbol("lam", real=True)  # assumptions still count, as for any Symbol
    assert s["lam"] != sp.Symbol("eta")


def test_symbol_factory():
    assert isinstance(symbol("lam"), TexSymbol) and isinstance(symbol("lam_re", real=True), TexSymbol)
    assert sp.latex(symbol("lam_re", real=True)) == "\\lambda_{\\mathrm{re}}"
    assert type(symbol("eta")) is sp.Symbol


def test_roots_index_and_sympify():
    rts = dd.roots(dd.momentum(m="1/4", eta=1, lam="-1/4"))  # a double root 1/2
    assert rts[0].value == sp.Rational(1, 2) and rts[0].multiplicity == 2
    assert rts[-1] is rts[0] and rts[0:1] == (rts[0],)
    assert sp.sympify(rts[0]) == sp.Rational(1, 2)
    assert sp.sympify(rts) == sp.Tuple(sp.Rational(1, 2))
    assert sp.S(1) + rts[0] == sp.Rational(3, 2)
    with pytest.raises(IndexError):
        rts[1]
    general = dd.roots(dd.momentum())
    assert len(sp.sympify(general)) == 2 == len(general)
    total = sp.sympify(general[0]) + sp.sympify(general[1])
    s = dd.momentum().symbols
    assert sp.simplify(total - (1 + s["m"] + s["eta"] * s["lam"])) == 0  # Vieta, from the indexed roots


def test_numeric_paths_keep_working_with_the_symbol():
    rho = dd.numeric.spectral_radius(batch_coefficients(dd.momentum(m="1/2", eta=1), lam=np.array([-1.0])))
    assert rho[0] == pytest.approx(np.sqrt(0.5))
