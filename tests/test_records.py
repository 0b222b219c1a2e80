"""Records print through SymPy's printers: ``sympy.latex(record)``, ``\\lambda`` for ``lam``, one sign per term."""

import re
from dataclasses import dataclass

import sympy as sp

from depthdyn import depth_limit, momentum, residual, roots, stability_conditions, vieta
from depthdyn.symbolic.records import Record, tex, tex_sum


def _no_code_names(text: str) -> bool:
    return re.search(r"(?<![\\a-zA-Z])lam(?![a-z])", text) is None


def test_sympy_latex_of_stability_conditions():
    text = sp.latex(stability_conditions(momentum()))
    assert "\\lambda" in text and _no_code_names(text)
    assert text == stability_conditions(momentum())._latex()
    assert stability_conditions(momentum())._repr_latex_() == f"$\\displaystyle {text}$"


def test_every_record_prints_with_sympy_latex():
    rec = momentum()
    for record in (roots(rec), vieta(rec), stability_conditions(rec), depth_limit(residual(scaled=True), [1])):
        text = sp.latex(record)
        assert text and _no_code_names(text), text
        assert "+ -" not in text.replace(" ", " "), text


def test_depth_limit_writes_one_sign():
    text = sp.latex(depth_limit(residual(scaled=True), [1]))
    assert "+ -" not in text and " - \\frac{\\lambda^{2} e^{\\lambda}}{2 L}" in text


def test_tex_and_tex_sum():
    lam, eta = sp.Symbol("lam"), sp.Symbol("eta")
    assert tex(eta * lam) == "\\eta \\lambda"
    assert tex(sp.Symbol("lam_re")) == "\\lambda_{\\mathrm{re}}"
    assert tex(sp.Symbol("lambda_") + 1) != tex(lam + 1)  # only the ASCII name lam is renamed
    assert tex_sum(sp.Symbol("a"), -sp.Symbol("b")) == "a - b"
    assert tex_sum(sp.Symbol("a"), sp.Symbol("b")) == "a + b"


def test_a_subclass_latex_without_printer_argument_is_wrapped():
    @dataclass(frozen=True)
    class Tiny(Record):
        value: int

        def _text(self) -> str:
            return f"tiny {self.value}"

        def _latex(self) -> str:
            return f"\\text{{tiny}}\\ {self.value}"

    assert sp.latex(Tiny(3)) == "\\text{tiny}\\ 3"
    assert sp.sstr(Tiny(3)) == "tiny 3"
    assert Tiny(3)._latex() == "\\text{tiny}\\ 3"
