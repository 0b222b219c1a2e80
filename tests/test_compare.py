"""depthdyn compare: the table, its exports, the overlay figure and the command."""

import json

import matplotlib
import numpy as np
import pytest
import sympy as sp

matplotlib.use("Agg")

import depthdyn as dd  # noqa: E402
from depthdyn.cli import main  # noqa: E402
from depthdyn.compare import _disagreements, numeric_numbers, parse_spec, stability_facts  # noqa: E402
from depthdyn.errors import ParameterError, UnknownFamilyError  # noqa: E402
from depthdyn.style import PALETTE, family_label  # noqa: E402


@pytest.fixture(scope="module")
def table():
    return dd.compare("residual", "momentum:m=1/2", ("lm_resnet", {"k": 0}), "leapfrog", "rk4", n=61)


def test_rows_columns_and_filled_values(table):
    labels = [row.label for row in table.rows]
    assert labels == ["residual", "momentum:m=1/2", "lm_resnet:k=0", "leapfrog", "rk4"]
    assert [(row.order, row.state_size) for row in table.rows] == [(1, 1), (2, 2), (2, 2), (2, 2), (1, 1)]
    assert table.rows[1].filled == {"eta": 1} and table.rows[4].filled == {"h": 1}
    # polynomials: the families' own, at the values used
    assert sp.expand(table.rows[1].charpoly - dd.momentum(m="1/2", eta=1).charpoly()) == 0
    # areas: the residual's strict set is the unit disc about -1 (pi), leapfrog has none
    assert abs(table.rows[0].area - np.pi) < 0.3 and table.rows[3].area == 0
    assert table.rows[0].depth_limit == "exp(lam)" and table.rows[4].depth_limit == "exp(lam)"
    assert table.rows[3].depth_limit.startswith("no finite limit")


def test_numbers_exact_where_possible_and_cross_checked(table):
    res, mom, lm, leap, rk = (row.numbers for row in table.rows)
    assert res["method"].startswith("exact") and res["real_interval"] == [-2.0, 0.0]  # |1 + lam| < 1
    assert mom["real_interval"] == [-3.0, 0.0]  # -2(1 + m) < lam < 0 at m = 1/2
    assert leap["real_interval"] is None and leap["zero_stable"] is False  # (r - 1)^2 at lam = 0
    # R(z) is not linear in lam: exact all the same (stability_numbers of one-step recurrences)
    assert rk["method"].startswith("exact") and rk["accuracy_order"] == 4 and rk["a_alpha_degrees"] is None
    # |R(it)|^2 = 1 - t^6/72 + t^8/576 < 1 iff 0 < t^2 < 8: 0 itself (R = 1) is not in the set
    assert abs(rk["imag_interval"][1] - 2 * np.sqrt(2)) < 1e-12 and rk["imag_interval"][0] == -rk["imag_interval"][1]
    assert rk["imag_component"] == "adjacent to 0 on both sides"
    assert "(-2.828, 2.828) \\ {0}" in str(table)
    assert abs(rk["real_interval"][0] - _rk4_left_end()) < 1e-12 and rk["real_interval"][1] == 0
    for nb in (res, mom, lm, leap, rk):
        assert nb["grid_check"] == []


def _rk4_left_end() -> float:
    """Where |1 + x + x^2/2 + x^3/6 + x^4/24| reaches 1 on the negative axis: bisection in float64."""
    R = lambda x: abs(np.polyval([1 / 24, 1 / 6, 1 / 2, 1, 1], x))  # noqa: E731
    lo, hi = -3.0, -2.0  # R(-3) > 1 > R(-2)
    assert R(lo) > 1 > R(hi)
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if R(mid) > 1 else (lo, mid)
    return (lo + hi) / 2


def test_exact_axis_intervals_beyond_multistep_shapes():
    from depthdyn.compare import axis_intervals
    from depthdyn.families.literature import rk2

    real, imag = axis_intervals(rk2(h=1))
    assert str(real.component(0).lo) == "-2" and imag.is_empty  # |1 + it - t^2/2|^2 = 1 + t^4/4 > 1
    # mutation: a larger step halves the real interval, and still no imaginary one
    real2, _ = axis_intervals(rk2(h=2))
    assert real2.component(0).lo == -1


def test_grid_check_flags_a_wrong_exact_number():
    rec = dd.residual()
    grid = numeric_numbers(rec)
    right = {"real_interval": [-2.0, 0.0], "imag_interval": None, "zero_stable": True}
    assert _disagreements(right, grid, 0.005) == []
    for key, wrong in (("real_interval", [-2.5, 0.0]), ("imag_interval", [None, None]), ("zero_stable", False)):
        assert _disagreements({**right, key: wrong}, grid, 0.005), key
    # an exact interval the grid contradicts is flagged in the table
    facts = stability_facts(dd.weighted(a="1/2"))  # lam = 0 strictly stable: the locus misses it
    assert facts["grid_check"] == [] and facts["imag_component"] == "contains 0"
    assert abs(facts["imag_interval"][1] - np.sqrt(3) / 2) < 1e-12  # |1/2 + i t| < 1 iff |t| < sqrt(3)/2
    assert facts["real_interval"] == [-1.5, 0.5]


def test_exports(table):
    md = table.to_markdown()
    assert md.splitlines()[0].startswith("| family | order | states | characteristic polynomial")
    assert md.count("\n| ") == len(table.rows) and "box Re lam in [-5, 1]" in md
    tex = table.to_latex()
    assert tex.startswith(r"\begin{tabular}") and tex.count(r"\\") == len(table.rows) + 1
    assert "lm\\_resnet:k=0" in tex and "$r^{2}" in tex
    data = json.loads(json.dumps(table.to_json()))
    assert data["box"] == [-5.0, 1.0, -3.5, 3.5] and len(data["rows"]) == 5
    assert {"order", "state_size", "charpoly", "real_interval", "imag_interval", "a_alpha_degrees",
            "zero_stable", "area", "depth_limit", "grid_check"} <= set(data["rows"][0])
    assert "family" in str(table) and "depth limit" in str(table)


def test_overlay_figure(table):
    ax = dd.plot.plot_comparison(table)
    assert len(ax.images) >= len(table.rows)  # one strict mask each (plus root-condition-only points)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    # typeset: "momentum, $m = 1/2$"; leapfrog has no strictly stable area, and the legend says so
    assert labels == [family_label(row.label) + (" (root condition only)" if row.area == 0 else "")
                      for row in table.rows]
    assert ax.get_aspect() == 1.0 and ax.get_xlim() == (-5.0, 1.0)
    assert (ax.get_xlabel(), ax.get_ylabel()) == (r"$\mathrm{Re}\,\lambda$", r"$\mathrm{Im}\,\lambda$")
    # each family's own colour of the house palette: the residual's fill is its first, with some transparency
    rgba = ax.images[0].cmap(1.0)
    assert rgba[3] < 1 and np.allclose(rgba[:3], matplotlib.colors.to_rgb(PALETTE[0]))


def test_spec_parsing():
    assert parse_spec("smooth:k=3,h=1/2") == ("smooth", ["k=3", "h=1/2"])
    assert parse_spec("hc_static:A_r=[[1, 0], [0, 1]],layer=1") == ("hc_static", ["A_r=[[1, 0], [0, 1]]", "layer=1"])
    with pytest.raises(ParameterError):
        parse_spec("  ")


@pytest.mark.parametrize("args, error", [
    (("resnet",), UnknownFamilyError),
    (("oscillator",), ParameterError),  # no lam
    (("residual:scaled=1",), ParameterError),  # L left open, no example for it
    (("momentum:m=2",), ParameterError),
    ((), ParameterError),
])
def test_bad_specifications(args, error):
    with pytest.raises(error):
        dd.compare(*args, n=21)


def test_bad_box_and_grid():
    with pytest.raises(ParameterError):
        dd.compare("residual", box=(1, -1, 0, 1))
    with pytest.raises(ParameterError):
        dd.compare("residual", n=5)


def test_command(tmp_path, capsys):
    out = tmp_path / "overlay.png"
    assert main(["compare", "residual", "momentum:m=1/2", "lm_resnet", "leapfrog", "rk4", "--json",
                 "--grid", "41", "--out", str(out)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [row["family"] for row in data["rows"]] == ["residual", "momentum:m=1/2", "lm_resnet", "leapfrog", "rk4"]
    assert data["figure"] == str(out) and out.read_bytes()[:4] == b"\x89PNG"
    assert main(["compare", "residual", "rk4", "--grid", "41", "--format", "markdown"]) == 0
    assert capsys.readouterr().out.startswith("| family |")
    assert main(["compare", "nope"]) == 2
    assert main(["compare", "residual", "--box", "0,1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and "Traceback" not in err
