"""The command line as a user meets it: a light start, --version, suggestions, errors that
name options, validated budgets that every verb honours, progress only where it helps."""

import argparse
import importlib
import json
import math
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

import depthdyn
from depthdyn.budget import budget_seconds
from depthdyn.cli import VERBS, main
from depthdyn.cli.app import COMMANDS
from depthdyn.cli.common import budget_value
from depthdyn.cli.progress import Working, enabled

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("sympy", "numpy", "matplotlib", "torch")


def _status(argv) -> int:
    """main's status, or argparse's (it exits with status 2 on malformed options)."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


def _one_line(capsys, code, expected=2):
    err = capsys.readouterr().err
    assert code == expected, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def _imported(code: str) -> list[str]:
    probe = f"\nimport json, sys; print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    out = subprocess.run([sys.executable, "-c", code + probe], capture_output=True, text=True, cwd=ROOT,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("argv", [["--help"], ["derive", "--help"], ["stability", "--help"], ["--version"]])
def test_help_and_version_import_nothing_heavy(argv):
    code = f"import depthdyn.cli\ntry:\n    depthdyn.cli.main({argv!r})\nexcept SystemExit:\n    pass"
    assert _imported(code) == []
    # and the check sees an import when there is one
    assert "sympy" in _imported("import depthdyn.cli\nfrom depthdyn import momentum")


def test_lazy_package_keeps_its_names():
    assert set(depthdyn.__all__) <= set(dir(depthdyn))
    from depthdyn import compare, momentum  # noqa: F401

    importlib.import_module("depthdyn.compare")  # the submodule of that name does not shadow the function
    assert callable(depthdyn.compare) and depthdyn.compare.__name__ == "compare"
    with pytest.raises(AttributeError, match="no_such_name"):
        depthdyn.no_such_name  # noqa: B018


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"depthdyn {depthdyn.__version__}"


@pytest.mark.parametrize(
    "argv, hint",
    [
        (["derve", "momentum"], "did you mean 'derive'?"),
        (["derive", "momentm"], "did you mean 'momentum'"),
        (["derive", "momentum", "-p", "mm=1"], "did you mean 'm'?"),
        (["check", "hyper_conection"], "did you mean 'hyper_connection'?"),
        (["compare", "momentum", "--format", "markdwn"], "did you mean 'markdown'?"),
        (["compare", "momentum", "--fromat", "latex"], "did you mean '--format'?"),
        (["derive", "momentum", "--jsn"], "did you mean '--json'?"),
        (["report", "--froce"], "did you mean '--force'?"),
    ],
)
def test_misspellings_get_a_suggestion(argv, hint, capsys):
    err = _one_line(capsys, _status(argv))
    assert hint in err


def test_no_suggestion_for_a_word_like_nothing(capsys):
    err = _one_line(capsys, main(["derive", "zzzzqqq"]))
    assert "did you mean" not in err and "unknown family" in err
    err = _one_line(capsys, _status(["derive", "momentum", "--zzzzqqq"]))
    assert "did you mean" not in err and "unrecognized arguments: --zzzzqqq" in err


def test_progress_names_the_stage_with_or_without_tqdm(monkeypatch, capsys):
    from depthdyn.cli import progress

    import importlib.util

    shapes = (["installed"] if importlib.util.find_spec("tqdm") else []) + [None]
    for tqdm in shapes:
        if tqdm is None:  # the plain display
            monkeypatch.setitem(sys.modules, "tqdm", None)
        with Working("report", True, delay=0.0) as shown:
            progress.stage("claims")
            assert shown.stage == "claims" and shown.text(12.3) == "depthdyn report: claims, 12 s"
            for _ in range(200):  # the display thread writes its first line at once (delay 0)
                if "claims" in capsys.readouterr().err:
                    break
                time.sleep(0.05)
            else:
                raise AssertionError(f"no stage shown (tqdm {tqdm})")
        progress.stage("after")  # no display running: nothing to name
        assert shown.stage == "claims"
    assert Working("verify", True).text(3) == "depthdyn verify: 3 s"  # no stage named
    assert progress.DELAY == 2.0  # the README's "work over about 2 s"


@pytest.mark.parametrize(
    "argv, option",
    [
        (["region", "momentum", "--x", "re(lam):-3:1:12", "--y", "m:0:0.9:8"], "-p eta="),
        (["stability", "momentum"], "-p m="),
    ],
)
def test_errors_name_the_option_to_give(argv, option, capsys):
    err = _one_line(capsys, main(argv))
    assert option in err and "batch_coefficients" not in err


@pytest.mark.parametrize("text", ["-5", "0", "nan", "1.01e8", "1e300", "1e400", "-inf", "abc", ""])
def test_bad_budgets_are_refused(text):
    with pytest.raises(argparse.ArgumentTypeError):
        budget_value(text)


@pytest.mark.parametrize("text, value", [("5", 5.0), ("0.25", 0.25), ("inf", math.inf), ("none", math.inf),
                                         ("1e7", 1e7), ("1e8", 1e8)])
def test_good_budgets_are_read(text, value):
    assert budget_value(text) == value


@pytest.mark.parametrize("verb", list(VERBS))
@pytest.mark.parametrize("text", ["-5", "nan", "1e300"])
def test_every_verb_refuses_a_bad_budget_in_one_line(verb, text, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([verb, "--budget", text])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--budget" in err


@pytest.mark.parametrize("verb", list(VERBS))
def test_every_verb_runs_under_its_budget(verb, monkeypatch):
    seen = {}
    monkeypatch.setitem(COMMANDS, verb, lambda args: seen.setdefault("budget", budget_seconds()) and 0)
    argv = {"derive": ["derive", "momentum"], "check": ["check", "momentum"],
            "stability": ["stability", "bdf"], "solve": ["solve", "residual"],
            "region": ["region", "momentum", "--x", "a:0:1:2", "--y", "b:0:1:2"],
            "compare": ["compare", "residual"], "train": ["train", "--list"],
            "product": ["product", "residual"], "inspect": ["inspect", "gpt2"],
            "meanfield": ["meanfield", "relu"]}.get(verb, [verb])
    assert main([*argv, "--budget", "7.5"]) == 0
    assert seen["budget"] == 7.5
    seen.clear()
    assert main([*argv, "--budget", "inf"]) == 0 and seen["budget"] == math.inf


@pytest.mark.parametrize("argv", [["stability", "bdf", "-p", "k=3"], ["solve", "smooth", "-p", "k=4"]])
def test_stability_and_solve_honour_a_tiny_budget(argv, capsys):
    err = _one_line(capsys, main([*argv, "--budget", "1e-6"]))
    assert "budget" in err
    assert main(argv) == 0  # the default budget suffices


def test_progress_only_when_asked_or_on_a_terminal(capsys):
    quiet = argparse.Namespace(quiet=True, progress=False)
    forced = argparse.Namespace(quiet=False, progress=True)
    plain = argparse.Namespace(quiet=False, progress=False)
    assert not enabled(quiet) and enabled(forced)
    assert not enabled(plain)  # pytest's captured stderr is no terminal
    with Working("verify", True, delay=0.01):
        time.sleep(0.6)
    assert "depthdyn verify" in capsys.readouterr().err
    with Working("verify", False, delay=0.01):
        time.sleep(0.2)
    assert capsys.readouterr().err == ""


def test_captured_runs_print_no_progress(capsys):
    assert main(["derive", "momentum"]) == 0
    assert capsys.readouterr().err == ""


def test_quiet_and_progress_exclude_each_other(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["derive", "momentum", "--quiet", "--progress"])
    assert exit_.value.code == 2
    assert re.search(r"not allowed with argument", capsys.readouterr().err)
