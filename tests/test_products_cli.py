"""The ``depthdyn product`` verb: exact conditions, numbers at a point, the figure, exit codes."""

import json

import numpy as np
import pytest
import sympy as sp

from depthdyn.cli import main
from depthdyn.parse import parse_expr


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_conditions_and_numbers(capsys):
    code, out, _ = _run(capsys, "product", "residual:lam=a", "residual:lam=b", "--at", "a=1,b=-9/10",
                        "--json")
    assert code == 0
    rep = json.loads(out)
    assert rep["period"] == 2 and rep["parameters"] == ["a", "b"]
    assert rep["charpoly"] == "-a*b - a - b + r - 1"
    assert np.isclose(rep["spectral_radius"], 2 * 0.1)
    assert np.isclose(rep["exponents_per_layer"][0], np.log(0.2) / 2)
    conds = rep["conditions"]["conditions"]
    # the printed conditions decide |(1+a)(1+b)| < 1 on points either side
    cases = (((1.0, -0.9), True), ((1.0, -0.4), False), ((-2.5, -0.5), True), ((-2.5, -2.5), False))
    for (x, y), want in cases:
        syms = {"a": sp.Symbol("a"), "b": sp.Symbol("b")}
        point = {syms["a"]: sp.Rational(str(x)), syms["b"]: sp.Rational(str(y))}
        got = all(parse_expr(c.replace(" > 0", ""), syms).xreplace(point) > 0 for c in conds)
        assert got == want == (abs((1 + x) * (1 + y)) < 1)


def test_text_and_figure(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    out_file = tmp_path / "region.png"
    code, out, _ = _run(capsys, "product", "momentum:lam=a,m=1/2,eta=1", "momentum:lam=b,m=1/2,eta=1",
                        "--x", "a:-4:1:41", "--y", "b:-4:1:41", "--out", str(out_file))
    assert code == 0 and out_file.stat().st_size > 1000
    assert "strictly stable over the period iff" in out and "% strictly stable" in out


@pytest.mark.parametrize("argv", [
    ["product", "residual:lam=a", "entangled:n=2"],  # mismatched state dimensions
    ["product", "residual:lam=a,zz=1"],  # unknown parameter
    ["product", "nosuchfamily"],
    ["product", *["residual"] * 13],  # too long a period for exact work
    ["product", "residual:lam=a", "--x", "a:-1:1:11"],  # an axis without the other
])
def test_bad_input_exits_2_with_one_line(capsys, argv):
    code, out, err = _run(capsys, *argv)
    assert code == 2 and err.count("\n") == 1 and err.startswith("depthdyn: error:")
