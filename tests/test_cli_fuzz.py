"""Fuzz the command line: malformed arguments end with status 0, 1 or 2, never 3 or a traceback.

Each example calls :func:`depthdyn.cli.main` in-process (argparse's own errors end in
``SystemExit(2)``). The pools hold what a careless or hostile user types: NaN, inf, 1e400,
10**10000, empty and unicode text, unknown and duplicated names, out-of-domain values,
non-polynomial and degree-200 ``rho``, a 1 MB string, grids with N = 0 or 10**9, huge exact
expressions, sizes past any sensible limit and unusable output paths. The hypothesis
deadline bounds the time of every example.
"""

import datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from depthdyn.cli import main

BAD_VALUES = [
    "nan", "NaN", "inf", "-inf", "1e400", "-1e400", "10**10000", "", " ", "é", "λ", "\u202e1",
    "1/0", "0/0", "oo", "zoo", "2", "-1", "1", "sin(1)**2+cos(1)**2", "((2**999)**999)**999",
    "binomial(10**100, 10**50)", "exp(exp(exp(10)))", "x" * 1_000_000, "__import__('os')", "[1, 2]",
    "I", "1e-400", "0.99999999999999999999", "1" * 5000, "r", "l", "lam", "m**2",
]
NAMES = ["m", "eta", "lam", "k", "beta", "L", "a", "g", "h", "gamma", "n", "form", "nosuch", "l", "r", "",
         "é"]
FAMILIES = ["residual", "rezero", "weighted", "highway", "momentum", "oscillator", "smooth", "dense",
            "general", "nosuch", "", "Momentum"]
RHOS = ["r**2 - r", "r**200", "sin(r)", "1/r", "r**(1/2)", "", "r - l", "r**2 - a*r + b", "x" * 3000,
        "(r - 1)**3", "nan", "r**2 - 1e400"]
AXES = ["re(lam):-3:1:0", "re(lam):-3:1:1", "m:0:1:1000000000", "m:nan:1:10", "re(lam):1e400:2:10",
        "m:0:((2**999)**999)**999:10", "m:1:0:10", ":::", "m:0:0.9:10", "re(lam):-3:1:12",
        "nosuch:0:1:10", "m:0:1", "m:0:1:10**9", "im(lam):-1:1:8", "eta:0:2:6"]
PATHS = ["/proc/depthdyn/f.png", ".", "f.pdf", ".png", "x" * 300 + ".png", "", "f.png/"]

FUZZ = settings(max_examples=25, deadline=datetime.timedelta(seconds=60), derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _status(argv, capsys) -> int:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse: usage errors
        code = exc.code
    err = capsys.readouterr().err
    assert code in (0, 1, 2), f"{argv!r:.300} -> {code}: {err[:500]}"
    assert "Traceback" not in err, f"{argv!r:.300}: {err[:2000]}"
    if code == 2:
        assert err.count("\n") <= 2 and len(err) < 5000, err[:500]  # argparse adds its usage line
    return code


assignments = st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(BAD_VALUES)), max_size=3).map(
    lambda pairs: [a for name, value in pairs for a in ("-p", f"{name}={value}")]
)


@FUZZ
@given(family=st.sampled_from(FAMILIES), params=assignments, rho=st.sampled_from([None, *RHOS]),
       sigma=st.sampled_from([None, "r", "nan", "r**2"]), json_out=st.booleans())
def test_derive(family, params, rho, sigma, json_out, capsys):
    argv = ["derive", family, *params]
    if family == "smooth" or family == "dense":
        argv += ["-p", "k=2"]  # the k given in params (if any) makes a duplicate: also bad input
    argv += ["--rho", rho] if rho is not None else []
    argv += ["--sigma", sigma] if sigma is not None else []
    _status(argv + (["--json"] if json_out else []), capsys)


@FUZZ
@given(family=st.sampled_from(FAMILIES), params=assignments,
       samples=st.sampled_from(["0", "-1", "2", "1000000000", "nan", "1e3", ""]),
       seed=st.sampled_from(["0", "-5", "99999999999999999999999", "x"]))
def test_check(family, params, samples, seed, capsys):
    argv = ["check", family, *params, "--samples", samples, "--seed", seed]
    if family == "general":
        argv += ["--rho", "r**2 - r", "--sigma", "r"]
    _status(argv, capsys)


@FUZZ
@given(family=st.sampled_from(["momentum", "residual", "general", "highway", "nosuch"]), params=assignments,
       x=st.sampled_from(AXES), y=st.sampled_from(AXES), out=st.sampled_from([None, *PATHS]))
def test_region(family, params, x, y, out, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    argv = ["region", family, *params, "--x", x, "--y", y]
    argv += ["--rho", "r**2 - r", "--sigma", "r"] if family == "general" else []
    argv += ["--out", out] if out is not None else []
    _status(argv, capsys)
    assert not (tmp_path / ".png").exists()


@FUZZ
@given(source=st.sampled_from(["nosuch", "", "é", "x" * 10000, "../000"]))
def test_verify(source, capsys):
    assert _status(["verify", "--source", source], capsys) == 2


@FUZZ
@given(out=st.sampled_from(["/proc/depthdyn-report", "x" * 300, "{file}", "{file}/sub", "", "."]))
def test_report(out, capsys, tmp_path, monkeypatch):
    # paths that cannot be used even by root (which may create any missing directory)
    monkeypatch.chdir(tmp_path)  # "" and "." name this directory: not empty, not a report's
    (tmp_path / "file").write_text("not a directory")
    assert _status(["report", "--out", out.replace("{file}", str(tmp_path / "file"))], capsys) == 2


@settings(FUZZ, max_examples=15)
@given(family=st.sampled_from(["smooth", "momentum", "hyper_connection", "lstm", ""]),
       task=st.sampled_from(["separation-1d", "cubic", "blobs", "nosuch"]),
       flag=st.sampled_from([["--layers", "99999999999999999999"], ["--layers", "0"], ["--steps", "10**9"],
                             ["--steps", "1000000000"], ["--steps", "-3"], ["-p", "k=1000000"],
                             ["-p", "n=100000"], ["--lr", "nan"], ["--lr", "inf"], ["--lr", "-1"],
                             ["--step", "nan"], ["-p", "k=nan"], ["-p", "="],
                             ["--out", "/proc/depthdyn-train"],
                             ["--device", "tpu"], ["--seed", "-1"]]))
def test_train(family, task, flag, capsys, tmp_path):
    pytest.importorskip("torch")
    argv = ["train", family, "--task", task, "--out", str(tmp_path / "o"), *flag]
    if "--steps" not in flag:
        argv += ["--steps", "1", "--layers", "2"] if "--layers" not in flag else ["--steps", "1"]
    _status(argv, capsys)
