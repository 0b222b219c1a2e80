"""``depthdyn meanfield`` as a user runs it: text, JSON, figures, and one line with exit 2 for bad input."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from reference_quadrature import expect1

from depthdyn.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _run(capsys, *argv):
    code = main(["meanfield", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_fixed_point_text_and_json(capsys):
    code, out, err = _run(capsys, "tanh", "--sw2", "2.5", "--sb2", "0.1")
    assert code == 0 and "chaotic" in out and err == ""
    code, out, _ = _run(capsys, "relu", "--sw2", "1", "--sb2", "0.5", "--json")
    data = json.loads(out)
    assert code == 0 and data["fixed_point"]["q_star"] == 1.0  # sb2 / (1 - sw2 E[relu(z)^2]) = 0.5 / 0.5
    assert data["fixed_point"]["phase"] == "ordered"


def test_critical_default_says_critical_and_inf(capsys):
    code, out, _ = _run(capsys, "erf", "--sb2", "0.3")
    assert code == 0 and "sw2 not given" in out and "critical" in out and "inf (critical)" in out
    code, out, _ = _run(capsys, "erf", "--sb2", "0.3", "--json")
    data = json.loads(out)
    assert data["fixed_point"]["xi_c"] == "inf" and data["fixed_point"]["phase"] == "critical"
    # the sw2 it chose: chi_1 = sw2 E[erf'(sqrt(q*) z)^2] = 1, by quadrature here
    q = data["fixed_point"]["q_star"]
    d2 = expect1(lambda u: (2 / math.sqrt(math.pi) * math.exp(-u * u)) ** 2, q)
    assert abs(data["sw2"] * d2 - 1) <= 1e-10


def test_iterate_plain_chain_json(capsys):
    code, out, _ = _run(capsys, "relu", "--depth", "100", "--json", "--c0", "0.2")
    data = json.loads(out)
    assert code == 0 and len(data["iterates"]["c"]) == 101 and len(data["iterates"]["q"]) == 101
    assert data["iterates"]["c"][0] == 0.2 and data["iterates"]["c"][-1] > 0.99  # ReLU at criticality: c -> 1


def test_residual_family_json(capsys):
    pytest.importorskip("depthdyn.meanfield.kernels")
    code, out, err = _run(capsys, "relu", "--family", "residual", "--depth", "100", "--json")
    assert code == 0, err
    it = json.loads(out)["iterates"]
    # at the plain chain's critical sw2 = 2 the residual stream doubles q per layer: the kernel
    # recurrence stops where q explodes and says so
    assert len(it["q"]) == len(it["c"]) == it["stopped_at"] + 1 and "exploding" in it["reason"]
    code, out, err = _run(capsys, "relu", "--family", "residual", "--sw2", "0.02", "--depth", "100", "--json")
    it = json.loads(out)["iterates"]
    assert code == 0 and len(it["q"]) == len(it["c"]) == 101 and it["stopped_at"] is None
    # q_{l+1} = q_l + sw2 E[relu(sqrt(q_l) z)^2] = (1 + sw2 / 2) q_l for the residual stream
    assert abs(it["q"][-1] - 1.01 ** 100) <= 1e-12 * 1.01 ** 100


def test_phase_figure_and_text(tmp_path, capsys):
    out_file = tmp_path / "phase.pdf"
    code, out, err = _run(capsys, "erf", "--phase", "--out", str(out_file), "--depth", "50")
    assert code == 0, err
    assert out_file.read_bytes()[:5] == b"%PDF-" and "order-to-chaos" in out and "trainable" in out


def test_correlation_figure(tmp_path, capsys):
    png = tmp_path / "c.png"
    code, _, err = _run(capsys, "erf", "--sw2", "2", "--sb2", "0.1", "--depth", "20", "--out", str(png))
    assert code == 0, err and png.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("argv, words", [
    (["tnah"], "did you mean 'tanh'"),
    (["relu", "--sw2", "0"], "sw2"),
    (["relu", "--sw2", "-2", "--sb2", "0.1"], "sw2"),
    (["relu", "--sw2", "nan"], "sw2"),
    (["relu", "--sb2", "-1", "--sw2", "1"], "sb2"),
    (["relu", "--depth", "-1"], "--depth"),
    (["leaky_relu", "-p", "alhpa=0.1"], "alpha"),
    (["relu", "-p", "alpha"], "NAME=VALUE"),
    (["tanh", "--phase", "--sw2", "1"], "--phase"),
    (["tanh", "--out", "x.png"], "--depth"),
    (["tanh", "--family", "nosuch", "--depth", "3"], "nosuch"),
    (["x*y", "--sw2", "1"], "unknown name 'y'"),
    (["tanh", "--q0", "-1"], "give --depth"),  # was ignored without --depth
    (["tanh", "--c0", "0.3", "--phase"], "give --depth"),
    (["tanh", "--q0", "-1", "--depth", "3"], "q0"),
    (["tanh", "--c0", "1.5", "--depth", "3"], "correlation"),
])
def test_bad_input_is_one_line_with_exit_2(argv, words, capsys):
    code, out, err = _run(capsys, *argv)
    assert code == 2 and err.count("\n") == 1 and words in err and "Traceback" not in err, err


def test_exploding_is_reported(capsys):
    code, out, _ = _run(capsys, "relu", "--sw2", "3", "--sb2", "0.1", "--json")
    data = json.loads(out)
    fp = data["fixed_point"]
    assert code == 0 and fp["phase"] == "exploding" and fp["q_star"] == "inf" and fp["growth"] == 1.5
    assert "nan" not in out.lower()


def test_the_command_as_the_readme_runs_it(tmp_path):
    result = subprocess.run([sys.executable, "-m", "depthdyn", "meanfield", "tanh", "--phase", "--out",
                             str(tmp_path / "phase.pdf")], capture_output=True, text=True, cwd=ROOT,
                            timeout=600, env={"PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg", "PATH": ""})
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "phase.pdf").read_bytes()[:5] == b"%PDF-"


def test_counts_and_fractions_on_the_command_line(capsys):
    # 4 streams and 6 lags are counts: the CLI must hand them over as integers
    code, out, err = _run(capsys, "relu", "--family", "hyper_connection", "-p", "n=4", "--sw2", "0.5",
                          "--depth", "5", "--json")
    assert code == 0, err
    code, out, err = _run(capsys, "relu", "--family", "dense", "-p", "k=6", "-p", "h=1/10", "--sw2", "0.5",
                          "--depth", "5", "--json")
    assert code == 0, err
    # h = 1/2 read exactly as 0.5: q grows by 1 + h^2 sw2 / 2 per layer for the ReLU residual stream
    code, out, err = _run(capsys, "relu", "--family", "residual", "-p", "h=1/2", "--sw2", "0.02",
                          "--depth", "10", "--json")
    q = json.loads(out)["iterates"]["q"]
    assert code == 0 and abs(q[-1] - 1.0025 ** 10) <= 1e-12
    # a non-integer count is still refused, in one line
    code, out, err = _run(capsys, "relu", "--family", "smooth", "-p", "k=2.5", "--depth", "5")
    assert code == 2 and "k must be an integer" in err and err.count("\n") == 1


def test_layer_norm_placement_on_the_command_line(capsys):
    """``-p norm=pre|post`` reaches the family (a word, not a number), as ``norm=`` does in the API."""
    from depthdyn.meanfield import get_activation
    from depthdyn.meanfield.kernels import iterate_family

    argv = ("selu", "--family", "residual", "--sw2", "1", "--sb2", "0.05", "--depth", "30", "--json")
    code, out, err = _run(capsys, *argv, "-p", "norm=post")
    assert code == 0, err
    post = json.loads(out)["iterates"]
    ref = iterate_family(get_activation("selu"), 1.0, 0.05, depth=30, q0=1.0, c0=0.5, family="residual",
                         norm="post")
    assert post["q"] == ref.q.tolist() and post["c"] == ref.c.tolist()
    code, out, err = _run(capsys, *argv, "-p", "norm=pre")
    assert code == 0, err
    assert json.loads(out)["iterates"]["q"] != post["q"]  # the placement matters
    code, out, err = _run(capsys, *argv, "-p", "norm=middle")
    assert code == 2 and err.count("\n") == 1 and "norm" in err, err
    # the plain chain too (a kernel map, not the fixed point, which has no LayerNorm)
    code, out, err = _run(capsys, "tanh", "-p", "norm=pre", "--sw2", "1.5", "--depth", "10", "--json")
    assert code == 0 and "fixed_point" not in json.loads(out), err
    code, out, err = _run(capsys, "tanh", "-p", "norm=pre", "--sw2", "1.5")
    assert code == 2 and "--depth" in err, err



def test_plain_chain_with_a_layer_norm_is_the_plain_family():
    from depthdyn.meanfield import get_activation, iterate
    from depthdyn.meanfield.kernels import iterate_family

    act = get_activation("tanh")
    pre = iterate(act, 1.5, 0.1, depth=8, family="plain", norm="pre")
    ref = iterate_family(act, 1.5, 0.1, depth=8, q0=1.0, c0=0.5, family="plain", norm="pre")
    assert pre.q.tolist() == ref.q.tolist() and pre.c.tolist() == ref.c.tolist()
    bare = iterate(act, 1.5, 0.1, depth=8, family="plain", norm=None)  # norm=None: the plain chain itself
    assert bare.q.tolist() == iterate(act, 1.5, 0.1, depth=8).q.tolist() != pre.q.tolist()


@pytest.mark.parametrize(
    "expression, says",
    [
        ("1/x", "the integrand is inf at u = 0 "),
        ("log(x)", "the integrand is inf at u = 0 "),
        ("sqrt(x)", "the integrand is nan at u = -"),
        ("exp(x**2)", "grows too fast"),
        ("x**200", "degree 200 is past the highest depthdyn takes, 170"),
        ("x**170", "overflows float64"),
    ],
)
def test_an_activation_past_float64_is_one_line_with_exit_2_and_no_warning(capsys, expression, says):
    """Where the moments cannot be taken the line says why (undefined at a point, growing too
    fast, a degree past the factorials' range), and no NumPy warning comes before it."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning on the way would be an internal error (exit 3)
        code, out, err = _run(capsys, expression, "--depth", "3", "-q")
    assert code == 2 and out == "" and err.count("\n") == 1 and says in err, err


def test_polynomials_without_a_slope_at_zero_fall_back_to_sw2_one(capsys):
    """x^2 has no order-to-chaos point at sb2 = 0 (q - E[phi^2] / E[phi'^2] = q / 4): the command says
    so and iterates at sw2 = 1, q_1 = E[(sqrt(q0) z)^4] = 3 (was an internal error)."""
    code, out, err = _run(capsys, "x**2", "--depth", "2", "--json", "-q")
    data = json.loads(out)
    assert code == 0 and "no order-to-chaos point" in data["note"] and data["sw2"] == 1.0
    assert data["iterates"]["q"][1] == pytest.approx(3.0, rel=1e-12)


def test_unbounded_variance_says_how_it_grows(capsys):
    """ReLU: q' = sw2 q / 2 + sb2, so at sw2 = 2 q grows by sb2 each layer, at sw2 = 3 by a factor 1.5."""
    code, out, _ = _run(capsys, "relu", "--sw2", "2", "--sb2", "0.1", "-q")
    assert code == 0 and "q*    = inf  (q grows by sb2 = 0.1 per layer)" in out
    code, out, _ = _run(capsys, "relu", "--sw2", "3", "--sb2", "0.1", "-q")
    assert code == 0 and "q*    = inf  (q grows by 1.5 per layer)" in out


def test_the_identity_and_its_multiples_are_homogeneous(capsys):
    """'x' is the expression of the identity (the named linear activation, not an unknown name), and
    a x is positively homogeneous: every q is a fixed point at sw2 = 1 / a^2, sb2 = 0."""
    code, out, _ = _run(capsys, "x", "-q")
    assert code == 0 and "linear" in out and "every q is a fixed point" in out
    code, out, _ = _run(capsys, "2*x", "--sw2", "0.25", "-q")
    assert code == 0 and "every q is a fixed point" in out and "critical" in out
    code, out, _ = _run(capsys, "2*x + 1", "--sw2", "0.2", "--sb2", "0.1", "-q")  # not homogeneous
    assert code == 0 and "every q" not in out and "q*    = 1.5" in out  # q = 0.2 (4 q + 1) + 0.1
