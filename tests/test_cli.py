"""The command line: derive, --list, JSON output, and one-line errors with exit code 2."""

import json
import os
import re
import subprocess
import sys

import pytest
import sympy as sp

import depthdyn
from depthdyn.cli import main

FAMILY_ARGS = {
    "residual": [],
    "rezero": [],
    "weighted": [],
    "highway": [],
    "momentum": [],
    "oscillator": [],
    "smooth": ["-p", "k=3"],
    "dense": ["-p", "k=3"],
    "entangled": [],
    "hyper_connection": [],
    "general": ["--rho", "r**2 - r", "--sigma", "r"],
}


def parse(text, rep):
    """Parse a reported string; parameter names such as beta and gamma shadow SymPy functions."""
    names = {name: sp.Symbol(name) for name in [*rep["params"], "r"]}
    names.update({"lam_re": sp.Symbol("lam_re"), "lam_im": sp.Symbol("lam_im")})
    return sp.parse_expr(text, local_dict=names)


def run_json(capsys, *args):
    assert main(["derive", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_list_names_every_family(capsys):
    assert main(["derive", "--list"]) == 0
    out = capsys.readouterr().out
    for name in FAMILY_ARGS:
        assert any(line.startswith(name + " ") for line in out.splitlines()), name


@pytest.mark.parametrize("family", sorted(FAMILY_ARGS))
def test_json_keys_and_parsable_strings(capsys, family):
    rep = run_json(capsys, family, *FAMILY_ARGS[family])
    for key in ("charpoly", "roots", "vieta", "discriminant", "statespace", "stability"):
        assert key in rep
    r = sp.Symbol("r")
    assert parse(rep["charpoly"], rep).has(r)  # SymPy-parsable, in r
    assert sum(rt["multiplicity"] for rt in rep["roots"]) == rep["order"] * rep["dim"]
    assert all(isinstance(rt["root"], str) for rt in rep["roots"])
    assert all(v["holds"] for v in rep["vieta"])
    for A in rep["statespace"].values():
        assert len(A) == rep["order"] * rep["dim"] and all(isinstance(e, str) for row in A for e in row)
        sp.Matrix([[parse(e, rep) for e in row] for row in A])
    assert all(t["verified"] for t in rep["transforms"].values())
    for cond in rep["stability"]["conditions"]:
        parsed = parse(cond, rep)
        assert parsed in (sp.false, sp.true) or isinstance(parsed, sp.StrictGreaterThan | sp.StrictLessThan)


def test_momentum_matches_hand_derivation(capsys):
    rep = run_json(capsys, "momentum")
    lam, m, eta, r = sp.symbols("lam m eta r")
    assert sp.expand(sp.sympify(rep["charpoly"]) - (r**2 - (1 + m + eta * lam) * r + m)) == 0
    conds = {sp.sympify(c) for c in rep["stability"]["conditions"]}
    assert conds == {eta * lam + 2 * m + 2 > 0, -eta * lam > 0}


def test_exact_values_and_structural_parameters(capsys):
    rep = run_json(capsys, "momentum", "-p", "m=1/2", "-p", "eta=1")
    lam, r = sp.symbols("lam r")
    assert (
        sp.expand(sp.sympify(rep["charpoly"]) - (r**2 - (sp.Rational(3, 2) + lam) * r + sp.Rational(1, 2)))
        == 0
    )
    rep = run_json(capsys, "smooth", "-p", "k=4", "-p", "lam=0")
    assert rep["roots"] == [{"root": "1", "multiplicity": 4}]
    rep = run_json(capsys, "entangled", "-p", "Gamma=[[0, 1], [1, 0]]", "-p", "lam=1/2")
    assert sorted(rt["root"] for rt in rep["roots"]) == ["-1/2", "3/2"]


def test_text_output(capsys):
    assert main(["derive", "momentum"]) == 0
    out = capsys.readouterr().out
    assert "characteristic polynomial" in out and "stability" in out and "verified" in out


@pytest.mark.parametrize(
    "args",
    [
        ["derive", "nosuch"],
        ["derive", "momentum", "-p", "mu=1"],
        ["derive", "momentum", "-p", "m=3/2"],
        ["derive", "momentum", "-p", "m"],
        ["derive", "smooth", "-p", "k=0"],
        ["derive", "smooth", "-p", "k=1/2"],
        ["derive", "entangled", "-p", "Gamma=[[1,2,3],[4,5,6]]"],
        ["derive", "general", "--rho", "r**2 +"],
        ["derive", "general"],
        ["derive", "momentum", "--rho", "r"],
        ["derive"],
        ["frobnicate"],
    ],
)
def test_user_errors_exit_2_with_one_line(capsys, args):
    with pytest.raises(SystemExit) if args in (["frobnicate"],) else _nullcontext():
        code = main(args)
        assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("depthdyn: error:") and err.count("\n") == 1
    assert "Traceback" not in err


class _nullcontext:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_code_injection_is_rejected_and_nothing_runs(tmp_path):
    payload = "__import__('os').system('touch PWNED')"
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(depthdyn.__file__))}
    for args in (["--rho", payload], ["--rho", "r - 1", "--sigma", payload], ["-p", f"lam={payload}"]):
        family = "general" if "--rho" in args else "momentum"
        proc = subprocess.run(
            [sys.executable, "-m", "depthdyn", "derive", family, *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env=env,
        )
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith("depthdyn: error:") and "Traceback" not in proc.stderr
    assert not (tmp_path / "PWNED").exists()


def test_check_command(capsys):
    assert main(["check", "momentum", "--samples", "4", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["passed"] and {row["name"] for row in rep["rows"]} >= {"roots", "closed form"}
    assert main(["check", "momentum", "--samples", "0"]) == 2
    assert main(["check", "nosuch"]) == 2
    assert capsys.readouterr().err.count("depthdyn: error:") == 2


def test_check_exits_1_on_disagreement(capsys, monkeypatch):
    import depthdyn.numeric.spectra as spectra

    real_roots = spectra.roots
    monkeypatch.setattr(spectra, "roots", lambda coeffs, *a, **k: real_roots(coeffs, *a, **k) * 1.001)
    assert main(["check", "residual", "--samples", "4"]) == 1
    assert "FAIL" in capsys.readouterr().out


def test_verify_json(capsys):
    assert main(["verify", "--source", "000", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"claims", "not_checked", "coverage", "summary"}
    results = out["claims"]
    keys = {"id", "source", "section", "statement", "stated", "computed", "verdict", "method", "statement_key"}
    assert results and all(keys <= set(res) for res in results)
    assert all(res["source"].startswith("000") for res in results)
    assert {res["verdict"] for res in results} <= {"holds", "fails", "holds-with-caveat"}
    assert out["not_checked"] and all(u["source"] == "000" and u["reason"] for u in out["not_checked"])
    cov = out["coverage"]  # statements covered by claims plus those listed as not checked
    assert cov["statements"] == cov["covered"] + cov["not_checked"]
    assert cov["covered"] == len({res["statement_key"] for res in results}) < len(results)  # readings count once
    assert set(out["summary"]) == {"000"} and out["summary"]["000"]["total"] == cov["statements"]
    assert main(["verify", "--source", "nosuch"]) == 2


def test_verify_internal_failure_exits_3(capsys, monkeypatch):
    import depthdyn.claims as claims_pkg

    def broken(source=None):
        raise claims_pkg.ClaimError("claim 000-x crashed: boom")

    monkeypatch.setattr(claims_pkg, "run_claims", broken)
    assert main(["verify"]) == 3
    err = capsys.readouterr().err
    assert "internal error" in err and "--traceback" in err and err.count("\n") == 1


def test_region_json_and_figure(capsys, tmp_path):
    out = tmp_path / "f.png"
    args = ["region", "momentum", "--x", "re(lam):-5:1:120", "--y", "m:0:0.99:60", "-p", "eta=1"]
    assert main([*args, "--out", str(out), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    lam, m = sp.symbols("lam m")
    assert {sp.sympify(c) for c in rep["conditions"]["conditions"]} == {lam + 2 * m + 2 > 0, -lam > 0}
    # exact area of -2(1+m) < lam < 0 inside [-5, 1] x [0, 0.99], relative to the box
    exact = float(sp.integrate(2 * (1 + m), (m, 0, sp.Rational(99, 100))) / (6 * sp.Rational(99, 100)))
    assert abs(rep["stable_fraction"] - exact) < 0.02
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("axis", ["lam:-1:1", "m:1:0:10", "m:0:1:1", "m:0:1:x"])
def test_region_bad_axes(capsys, axis):
    assert main(["region", "momentum", "--x", axis, "--y", "eta:0:1:10"]) == 2
    assert capsys.readouterr().err.startswith("depthdyn: error:")


def test_verify_text_ends_with_per_source_statement_counts(capsys):
    from depthdyn.claims import NOT_CHECKED, run_claims, source_summary

    assert main(["verify", "--source", "004"]) == 0
    out = capsys.readouterr().out
    row = source_summary(run_claims("004"), [u for u in NOT_CHECKED if u.source == "004"])["004"]
    assert out.rstrip().splitlines()[-1] == (
        f"source 004: {row['total']} statements (each counted once, however many claims check it): "
        f"{row['holds']} hold, {row['fails']} fail, "
        f"{row['holds-with-caveat']} hold with a caveat, {row['not checked']} not checked")
    assert "source 000" not in out
    # the claims line names its unit too
    assert re.search(r"^\d+ claims \(one per reading or part of a source statement\): \d+ hold, ", out, re.M)
