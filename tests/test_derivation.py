"""One record of everything exact about a family, printed by `depthdyn derive` and by the report."""

import pytest
import sympy as sp

from depthdyn import hyper_connection, momentum, smooth
from depthdyn.derivation import PARTS, Derivation, derive
from depthdyn.errors import ParameterError
from depthdyn.recurrence import r
from depthdyn.report.families import report_families
from depthdyn.report.text import family_section


def test_critical_damping_has_a_double_root_and_the_json_spells_the_objects():
    # v' = m v + eta lam x, x' = x + v' at m = 1/4, eta = 1, lam = -1/4: r^2 - r + 1/4 = (r - 1/2)^2
    d = derive(momentum(m="1/4", eta=1, lam="-1/4"))
    assert isinstance(d, Derivation)
    assert sp.expand(d.results["charpoly"] - (r - sp.Rational(1, 2)) ** 2) == 0
    assert d.to_json()["roots"] == [{"root": "1/2", "multiplicity": 2}]
    assert d.to_json()["charpoly"] == sp.sstr(d.results["charpoly"])
    assert [str(x.coefficient) for x in d.results["vieta"].relations] == [
        c["coefficient"] for c in d.to_json()["vieta"]]
    # a wrong damping moves the roots apart: the record follows its recurrence
    apart = derive(momentum(m="1/4", eta=1, lam="-1/2")).to_json()["roots"]
    assert [x["multiplicity"] for x in apart] == [1, 1]


def test_the_symbolic_momentum_block_matches_a_hand_derivation():
    rec = momentum()
    lam, m, eta = (rec.symbols[name] for name in ("lam", "m", "eta"))
    d = derive(rec)
    # eliminating v: x_{l+2} = (1 + m + eta lam) x_{l+1} - m x_l
    assert sp.expand(d.results["charpoly"] - (r**2 - (1 + m + eta * lam) * r + m)) == 0
    assert sp.simplify(d.results["discriminant"] - ((1 + m + eta * lam) ** 2 - 4 * m)) == 0
    assert set(d.to_json()) >= {"statespace", "states", "transforms", *PARTS}


def test_parts_and_realisations_can_be_left_out():
    d = derive(smooth(k=2), parts=("roots",), realisations=False)
    assert "stability" not in d.to_json() and "statespace" not in d.to_json()
    assert d.results.get("stability") is None and d.to_json()["roots"]
    with pytest.raises(ParameterError, match="unknown parts"):
        derive(smooth(k=2), parts=("modes",))
    with pytest.raises(ParameterError, match="Recurrence"):
        derive("momentum")


def test_a_large_family_is_summarised_with_the_reason():
    d = derive(hyper_connection(n=4))
    assert d.to_json()["charpoly"] is None and "not expanded" in d.summarised["charpoly"]
    assert all(d.to_json()[key] is None and key in d.summarised for key in PARTS)
    assert d.results.get("roots") is None and d.to_json()["structure"]["form"]


def test_the_report_section_prints_what_derive_prints():
    fam = report_families()["momentum"]
    d = derive(momentum(), full=True, parts=("roots", "stability"), realisations=False)
    text = "\n".join(family_section("momentum", fam, d, []))
    assert f"charpoly:       {derive(momentum()).to_json()['charpoly']}" in text
    for root in derive(momentum()).to_json()["roots"]:
        assert f"r = {root['root']}  (multiplicity {root['multiplicity']})" in text
    assert "-eta*lam > 0" in text and "modes:" in text
    other = "\n".join(family_section("momentum", fam, derive(momentum(m="1/2"), parts=("roots",)), []))
    assert "3/2" in other and "stability:\n  not computed" in other  # a part left out says so
