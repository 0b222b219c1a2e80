"""Exit statuses a script can trust, for every subcommand, and the README's paragraph on them."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from depthdyn.cli import EXIT_CODES, main
from depthdyn.cli.app import COMMANDS

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()
SUBCOMMANDS = ("derive", "check", "region", "verify", "report", "train", "stability", "solve", "compare",
               "product", "inspect", "meanfield", "explore")
REGION = ["region", "momentum", "--x", "re(lam):-3:1:12", "--y", "m:0:0.9:8", "-p", "eta=1"]
#: A well-formed command line of each subcommand.
VALID = {"derive": ["derive", "momentum"], "check": ["check", "momentum"], "region": REGION,
         "verify": ["verify"], "report": ["report"], "train": ["train", "--list"],
         "stability": ["stability", "weighted", "-p", "a=1/2"], "solve": ["solve", "residual", "-p", "lam=1"],
         "compare": ["compare", "residual", "--grid", "41"],
         "product": ["product", "residual:lam=a", "residual:lam=b"],
         "inspect": ["inspect", "mymodels.py:make", "--quiet"],
         "meanfield": ["meanfield", "relu", "--sw2", "1", "--sb2", "0.5"],
         "explore": ["explore", "residual", "--out", "explore.html"]}


def _paragraph() -> str:
    start = README.index("Exit status, the same for every subcommand")
    return README[start:README.index("\n\n", start)]


def test_readme_paragraph_lists_every_status_and_subcommand():
    text = _paragraph()
    assert {int(c) for c in re.findall(r"`(\d+)`", text)} == set(EXIT_CODES)
    for name in SUBCOMMANDS:
        assert f"`{name}`" in text
    assert set(COMMANDS) == set(SUBCOMMANDS)  # the paragraph names all there are
    assert "--traceback" in text


def _one_line(capsys, status_expected, code):
    err = capsys.readouterr().err
    assert code == status_expected, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


# status 2: bad input, for every subcommand
@pytest.mark.parametrize(
    "argv",
    [
        ["derive", "nosuch"],
        ["check", "momentum", "-p", "m=2"],
        [*REGION[:-2], "-p", "eta=-1"],
        ["verify", "--source", "nosuch"],
        ["report", "--out", "{tmp}/file.txt"],
        ["train", "smooth", "--task", "separation-1d", "--layers", "99999999999999999999"],
        ["stability", "weighted", "-p", "a=2**(10**9)"],
        ["solve", "residual", "--forcing", "l**l"],
        ["compare", "momentum:m=3/2"],
        ["product", "residual", "entangled:n=2"],
        ["inspect", "depthdyn_no_such_module:make", "--quiet"],
        ["meanfield", "relu", "--sw2", "-1"],
        ["explore", "momentum", "--at", "m=2", "--out", "{tmp}/m.html"],
    ],
    ids=SUBCOMMANDS,
)
def test_bad_input_exits_2_in_one_line(argv, tmp_path, capsys):
    (tmp_path / "file.txt").write_text("x")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    if argv[0] in ("train", "inspect"):
        pytest.importorskip("torch")
    _one_line(capsys, 2, main(argv))


# status 3: an internal error in any subcommand is one line that points at --traceback
@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_internal_error_exits_3_and_traceback_shows_it(name, monkeypatch, capsys):
    def broken(args):
        raise RuntimeError("boom")

    monkeypatch.setitem(COMMANDS, name, broken)
    argv = VALID[name]
    err = _one_line(capsys, 3, main(argv))
    assert "internal error" in err and "run with --traceback for details" in err
    assert main(["--traceback", *argv]) == 3
    err = capsys.readouterr().err
    assert "Traceback" in err and "RuntimeError: boom" in err
    # where the one line says to add it: after the command too
    assert main([*argv, "--traceback"]) == 3
    err = capsys.readouterr().err
    assert "Traceback" in err and "RuntimeError: boom" in err


@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_ctrl_c_exits_130(name, monkeypatch, capsys):
    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setitem(COMMANDS, name, interrupted)
    err = _one_line(capsys, 130, main(VALID[name]))
    assert "interrupted" in err


def test_success_and_disagreement(capsys, monkeypatch):
    assert main(["derive", "momentum"]) == 0
    assert main(["check", "momentum", "--samples", "3"]) == 0
    import depthdyn.numeric.check as check_mod

    real = check_mod.check

    class Failed:  # the same report with its verdict turned: status 1, nothing else changes
        def __init__(self, report):
            self.report, self.passed = report, False

        def __str__(self):
            return str(self.report)

    monkeypatch.setattr(check_mod, "check", lambda rec, **kw: Failed(real(rec, **kw)))
    assert main(["check", "momentum", "--samples", "3"]) == 1


@pytest.mark.parametrize(
    "out, message",
    [
        (".", ".png"),
        ("{tmp}", ".png"),
        ("{tmp}/figure.txt", ".png, .pdf or .svg"),
        ("{tmp}/.png", ".png"),
        ("{tmp}/missing/figure.png", "does not exist"),
        ("{tmp}/" + "x" * 300 + ".png", "longer than 255"),
    ],
)
def test_region_out_paths(out, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    err = _one_line(capsys, 2, main([*REGION, "--out", out.replace("{tmp}", str(tmp_path))]))
    assert message in err
    assert not (tmp_path / ".png").exists() and list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root ignores permissions")
def test_region_out_read_only_directory(tmp_path, capsys):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        err = _one_line(capsys, 2, main([*REGION, "--out", str(ro / "f.png")]))
        assert "not writable" in err
    finally:
        ro.chmod(0o700)


def test_disk_errors_are_one_line_exit_2(monkeypatch, tmp_path, capsys):
    import depthdyn.output as output

    def full(path, data):
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(output, "atomic_write", full)
    err = _one_line(capsys, 2, main([*REGION, "--out", str(tmp_path / "f.png")]))
    assert "No space left on device" in err


def test_huge_digit_results_are_one_line_exit_2(capsys):
    # each value is within the parser's budget; the printed product is past Python's limit
    argv = ["derive", "smooth", "-p", "k=6", "-p", "h=10**900", "-p", "lam=10**900"]
    err = _one_line(capsys, 2, main(argv))
    assert "4,300 digits" in err


def _run(cmd: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", f"set -o pipefail; {cmd}"], capture_output=True, text=True,
                          timeout=300)


def test_closed_pipe_ends_quietly():
    # an output far beyond the pipe's buffer (about 1.6 MB with --full), so the reader closes it
    # while the writer still writes (a short output can be written whole before head exits: status 0)
    proc = _run(f"{sys.executable} -m depthdyn derive hyper_connection -p n=3 --full | head -1")
    assert proc.stdout.startswith("hyper_connection") and proc.stdout.count("\n") == 1
    assert proc.stderr == "" and proc.returncode == 141


def test_sigint_ends_with_130_and_one_line():
    code = (
        "import os, signal, threading, time\n"
        "import depthdyn.cli as cli\n"
        "import depthdyn.cli.app\n"
        "def slow(args):\n"
        "    os.kill(os.getpid(), signal.SIGINT); time.sleep(5)\n"
        "cli.app.COMMANDS['derive'] = slow\n"
        "raise SystemExit(cli.main(['derive', 'momentum']))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 130 and proc.stderr == "depthdyn: interrupted\n"


def test_solve_takes_vector_initial_states_and_says_how(capsys):
    """A matrix family's initial states are bracketed vectors; the message says so when not."""
    base = ["solve", "entangled", "-p", "n=2", "-p", "gamma=1/3", "-p", "lam=1/2", "--terms", "2"]
    assert main([*base, "--initial", "[1,2]"]) == 0
    out = capsys.readouterr().out
    assert "x_1 = [5/3, 17/6]" in out  # x_1 = [[4/3, 1/6], [1/6, 4/3]] x_0 by hand
    assert "vector of 2 entries" in _one_line(capsys, 2, main([*base, "--initial", "1,2"]))
    assert "must have 2 entries, got 3" in _one_line(capsys, 2, main([*base, "--initial", "[1,2,3]"]))
    assert "vector of 2 entries" in _one_line(capsys, 2, main([*base, "--initial", "[[1],2]"]))
    assert "comma-separated values" in _one_line(capsys, 2, main(["solve", "momentum", "--initial", "[1,2]"]))
