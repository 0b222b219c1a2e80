"""Records print through SymPy's printers: ``sympy.latex(record)``, ``\\lambda`` for ``lam``, one sign per term."""

import re
from dataclasses import dataclass

import pytest
import sympy as sp

from depthdyn import depth_limit, momentum, residual, roots, stability_conditions, vieta
from depthdyn.printing import tex, tex_sum
from depthdyn.records import Record


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


def test_default_to_json_reads_the_fields():
    import json
    from dataclasses import dataclass, field

    import numpy as np

    from depthdyn.records import jsonable

    @dataclass(frozen=True)
    class Inner(Record):
        x: float

        def _text(self):
            return "inner"

        def _latex(self):
            return "inner"

    @dataclass(frozen=True)
    class Outer(Record):
        expr: object
        values: object
        inner: Inner
        hidden: int = field(default=0, repr=False)

        def _text(self):
            return "outer"

        def _latex(self):
            return "outer"

    a = sp.Symbol("a")
    out = Outer(a**2 / 3, np.array([1.0, np.inf, np.nan]), Inner(0.5), hidden=7)
    data = out.to_json()
    assert data == {"expr": "a**2/3", "values": [1.0, "inf", "nan"], "inner": {"x": 0.5}}
    json.dumps(data, allow_nan=False)  # strict JSON: no bare NaN or Infinity
    assert sp.parse_expr(data["expr"]) == a**2 / 3
    # a different value gives a different JSON (the conversion reads the fields, not the type)
    assert Outer(a, np.zeros(1), Inner(1.0)).to_json() != data
    assert jsonable({1: {2j}}) == {"1": [{"re": 0.0, "im": 2.0}]}


def test_to_json_needs_a_dataclass():
    class Loose(Record):
        def _text(self):
            return "loose"

    with pytest.raises(TypeError, match="not a dataclass"):
        Loose().to_json()
