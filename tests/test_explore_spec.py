"""A recurrence compiled for the explorer: sliders from domains, generated code, refusals."""

from __future__ import annotations

import re

import pytest
import sympy as sp

from depthdyn import Param, Recurrence, momentum, periodic, residual
from depthdyn.errors import DomainError, ParameterError, UnknownParameterError
from depthdyn.explore import compile_recurrence, page
from depthdyn.explore.spec import domain_text, parameter_range, unicode_label


@pytest.mark.parametrize("domain, lo, hi, value, lo_open, hi_open", [
    (sp.Interval(0, 1), 0.0, 1.0, 1.0, False, False),            # closed: its own ends
    (sp.Interval.Ropen(0, 1), 0.0, 0.995, 0.5, False, True),     # 1 excluded: one step in, default mid
    (sp.Interval.open(0, sp.oo), 0.01, 4.0, 1.0, True, False),   # a half-line: four units, 0 excluded
    (sp.Interval(0, sp.oo), 0.0, 4.0, 1.0, False, False),
    (sp.Interval(-sp.oo, 0), -4.0, 0.0, -1.0, False, False),      # default: the middle of [-2, 0]
    (sp.S.Reals, -1.0, 3.0, 1.0, False, False),                  # two units either side of 1
])
def test_slider_ranges_come_from_the_domains(domain, lo, hi, value, lo_open, hi_open):
    r = parameter_range(Param("a", domain))
    assert (r["lo"], r["hi"], r["value"], r["min_open"], r["max_open"]) == (lo, hi, value, lo_open, hi_open)
    assert (r["hi"] - r["lo"]) / r["step"] >= 100  # fine enough to drag
    # every slider position lies in the domain
    for x in (r["lo"], r["hi"], r["value"]):
        assert domain.contains(sp.Rational(str(x))) is sp.true


def test_lam_and_a_given_start_widen_the_range():
    rec = momentum()
    assert parameter_range(rec.param("lam"), is_lam=True)["lo"] == -4.0
    r = parameter_range(rec.param("eta"), 7.0)
    assert r["hi"] == 14.0 and r["value"] == 7.0  # the start is on the slider


def test_labels_and_domains_read_as_typeset():
    assert [unicode_label(n) for n in ("lam", "eta", "hres_1_1", "w_1", "lam_re", "x_long")] == \
        ["λ", "η", "Hʳᵉˢ₁₁", "w₁", "λᵣₑ", "x_long"]
    assert domain_text(sp.Interval.Lopen(-1, 2)) == "(−1, 2]" and domain_text(sp.S.Reals) == "ℝ"


def _compiled_names(module: str) -> set[str]:
    return set(re.findall(r"[A-Za-z_]\w*", module)) - {"const", "COMPILED", "coefficients", "conditions",
                                                         "layers", "p", "return", "Math", "pow", "true",
                                                         "false", "sqrt"}


def test_generated_code_uses_only_its_own_names():
    """A parameter named like a browser global reaches the code only as P0, P1, ..."""
    rec = Recurrence([1, "-(1 + alert*fetch)"], params=[Param("alert"), Param("fetch")], lam="alert")
    spec = compile_recurrence(rec)
    assert _compiled_names(spec.module) == {"P0", "P1"}
    assert "alert" not in spec.module and "fetch" not in spec.module
    # and the data carries the names as data only (JSON, not code)
    html = page(rec)
    script = html.split('<script type="module">', 1)[1]
    assert "alert(" not in script and "fetch(" not in script


def test_the_compiled_conditions_are_the_exact_ones():
    spec = compile_recurrence(momentum())
    block = spec.module.split("conditions(p) {", 1)[1].split("},", 1)[0]
    assert "(P0*P2 + 2*P1 + 2) > 0" in block and "(-P0*P2) > 0" in block and "(1 - P1) > 0" in block
    assert [c["implied"] for c in spec.data["conditions"]] == [False, False, True]


def test_a_pattern_compiles_one_state_matrix_per_layer():
    a, b = sp.symbols("a b")
    spec = compile_recurrence(periodic(residual(lam=a), momentum(lam=b, m="1/2", eta=1)))
    layers = spec.module.split("layers(p) {", 1)[1]
    assert layers.count("[[") == 2 and spec.data["period"] == 2 and spec.data["state"] == 2
    assert spec.data["dim"] == 1


@pytest.mark.parametrize("kwargs, error, words", [
    ({"at": {"m": 2}}, DomainError, "outside its domain"),
    ({"at": {"mm": 0.5}}, UnknownParameterError, "no parameter 'mm'"),
    ({"x": "zz"}, UnknownParameterError, "no parameter 'zz'"),
    ({"x": "m", "y": "m"}, ParameterError, "two different parameters"),
    ({"depth": 0}, ParameterError, "depth"),
    ({"depth": 10**6}, ParameterError, "depth"),
    ({"depth": 2.5}, ParameterError, "depth"),
])
def test_bad_arguments_are_refused(kwargs, error, words):
    with pytest.raises(error, match=words):
        compile_recurrence(momentum(), **kwargs)


def test_complex_recurrences_are_refused():
    rec = Recurrence([1, "-I*a"], params=[Param("a")])
    with pytest.raises(ParameterError, match="complex"):
        compile_recurrence(rec)


_EVALUATES = re.compile(r"\beval\s*\(|\bFunction\s*\(|\bnew\s+Function\b"
                        r"|set(?:Timeout|Interval)\s*\(\s*['\"`]|\bimport\s*\(|document\.write\s*\(")


def _evaluating(js: str) -> list[str]:
    return _EVALUATES.findall(js)


def test_the_front_end_never_evaluates_text():
    from depthdyn.explore.page import front_end

    assert _evaluating(front_end()) == []
    assert _evaluating(page(momentum())) == []
    # the scan can fail
    assert _evaluating("const f = new Function('x', text);") and _evaluating("eval(box.value)")
    assert _evaluating("setTimeout('go()', 1)") and _evaluating("await import(url)")
