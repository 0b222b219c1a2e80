"""Regression tests for untyped errors and faults: each raised a raw exception, wrote the
wrong file, reported success on failure, or ran without a limit."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from depthdyn import closed_form, momentum, residual, stability_numbers
from depthdyn.cli import main
from depthdyn.errors import ArrayTooLargeError, DegreeTooLargeError, DepthdynError, ParameterError
from depthdyn.symbolic.solvefor import solve_for

ROOT = Path(__file__).resolve().parents[1]
SPEC = ["compare", "momentum:m=1/2", "--grid", "21"]


def _one_line(capsys, code: int, expected: int) -> str:
    err = capsys.readouterr().err
    assert code == expected, err
    assert err.count("\n") == 1 and err.startswith("depthdyn: error:"), err
    return err


# ---------------------------------------------------------------- typed errors
def test_stability_numbers_of_a_name_is_a_typed_error():
    with pytest.raises(ParameterError, match="needs a Recurrence"):
        stability_numbers("bdf")


@pytest.mark.parametrize("interval", [sp.EmptySet, sp.FiniteSet(-1, -2), sp.Interval(sp.nan, 0), (0, -1),
                                      (float("nan"), 0), 5, ("a", 1)])
def test_solve_for_all_refuses_anything_but_a_real_interval(interval):
    with pytest.raises(DepthdynError):
        solve_for(momentum(eta=1), "m", for_all={"lam": interval})


def test_solve_for_refuses_text_conditions_instead_of_recursing():
    for conditions in (["m < 1"], "m < 1"):
        with pytest.raises(ParameterError, match="not text"):
            solve_for(conditions, "m")
    m = sp.Symbol("m", real=True)
    assert solve_for([m < 1], "m").as_set() == sp.Interval.open(-sp.oo, 1)


@pytest.mark.parametrize("start", [2.5, "1", True, None])
def test_closed_form_start_must_be_an_integer(start):
    with pytest.raises(ParameterError, match="start"):
        closed_form(residual(), [3], start=start)
    assert closed_form(residual(), [3], start=np.int64(2)).start == 2


def test_solve_refuses_an_empty_forcing(capsys):
    for text in ("", "   "):
        assert "--forcing is empty" in _one_line(capsys, main(["solve", "residual", "--initial", "1",
                                                               "--forcing", text]), 2)
    assert main(["solve", "residual", "--initial", "1", "--forcing", "2**l"]) == 0


# ---------------------------------------------------------------- compare --out
def test_compare_out_with_an_unsupported_suffix_is_bad_input(capsys, tmp_path):
    err = _one_line(capsys, main([*SPEC, "--out", str(tmp_path / "notes.txt")]), 2)
    assert ".png" in err and ".pdf" in err and ".svg" in err
    assert list(tmp_path.iterdir()) == []


def test_compare_out_a_directory_writes_nothing(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert "is a directory" in _one_line(capsys, main([*SPEC, "--out", "."]), 2)
    assert "is a directory" in _one_line(capsys, main([*SPEC, "--out", "sub/"]), 2)
    assert list(tmp_path.iterdir()) == []  # no ./.png


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
def test_compare_out_dev_full_reports_failure(capsys):
    assert "not a regular file" in _one_line(capsys, main([*SPEC, "--out", "/dev/full"]), 2)


def test_compare_reports_a_failed_write_and_leaves_no_file(capsys, tmp_path, monkeypatch):
    target = tmp_path / "fig.png"

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    assert "No space left" in _one_line(capsys, main([*SPEC, "--out", str(target)]), 2)
    assert list(tmp_path.iterdir()) == []  # neither the figure nor a temporary file


def test_compare_writes_its_figure_atomically(capsys, tmp_path, monkeypatch):
    import depthdyn.output as output

    calls = []
    real = output.atomic_write
    monkeypatch.setattr(output, "atomic_write", lambda path, data: calls.append(path) or real(path, data))
    target = tmp_path / "fig.png"
    assert main([*SPEC, "--out", str(target)]) == 0
    assert calls == [target]
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fig.png"]
    assert main([*SPEC, "--out", str(tmp_path / "fig.svg")]) == 0
    assert (tmp_path / "fig.svg").read_text().lstrip().startswith("<?xml")


# ---------------------------------------------------------------- Ctrl-C while the package loads
_INTERRUPT_ON_IMPORT = """
import sys
class Interrupt:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == "depthdyn.cli.app":  # while the command line loads
            raise KeyboardInterrupt
        return None
sys.meta_path.insert(0, Interrupt)
"""


@pytest.mark.parametrize("entry", ["import _depthdyn_launch as m; sys.exit(m.main())",
                                   "sys.argv = ['depthdyn', '--help']; import _depthdyn_launch as m; "
                                   "sys.exit(m.main())"])
def test_ctrl_c_during_start_up_exits_130_quietly(entry):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", _INTERRUPT_ON_IMPORT + entry], capture_output=True, text=True,
                          timeout=120, env=env, cwd=ROOT)
    assert proc.returncode == 130 and proc.stderr == "depthdyn: interrupted\n", proc.stderr
    # without the guard the same interrupt is a traceback
    bare = subprocess.run([sys.executable, "-c", _INTERRUPT_ON_IMPORT + "import depthdyn.cli"],
                          capture_output=True, text=True, timeout=120, env=env, cwd=ROOT)
    assert "Traceback" in bare.stderr


def test_console_script_points_at_the_guarded_launcher():
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["depthdyn"] == "_depthdyn_launch:main"


# ---------------------------------------------------------------- report directory ownership
def test_two_reports_into_one_new_directory_both_claim_it(tmp_path, monkeypatch):
    """The second run starts while the first is between creating the directory and writing the marker."""
    import depthdyn.report as report

    out = tmp_path / "new"
    real_fdopen, second = os.fdopen, []

    def interleaved(fd, *args, **kw):
        if not second:  # the first run is about to write its marker: the second run claims now
            second.append(report.claim_directory(out, report.MARKER, "second\n"))
        return real_fdopen(fd, *args, **kw)

    monkeypatch.setattr(os, "fdopen", interleaved)
    assert report.claim_directory(out, report.MARKER, "first\n") == out
    assert second == [out]
    monkeypatch.undo()
    assert (out / report.MARKER).is_file()
    # a foreign non-empty directory is still refused
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(ParameterError, match="not written by"):
        report.claim_directory(foreign, report.MARKER, "x\n")


# ---------------------------------------------------------------- sizes refused up front
class _Untouchable(list):
    """A row that fails the test if anything reads its entries."""

    def __iter__(self):
        raise AssertionError("the tableau's entries were read before its size was checked")

    def __getitem__(self, i):
        raise AssertionError("the tableau's entries were read before its size was checked")


def test_huge_butcher_tableau_is_refused_by_its_shape():
    from depthdyn.families.literature import runge_kutta

    rows = [_Untouchable([0] * 3) for _ in range(2000)]
    with pytest.raises(DegreeTooLargeError, match="2000 stages"):
        runge_kutta(A=rows, b=[1] * 2000)
    with pytest.raises(DegreeTooLargeError, match="2000 stages"):
        runge_kutta(A=np.zeros((2000, 2000)), b=np.ones(2000))
    # a small custom tableau still works: explicit Euler, R(z) = 1 + z
    assert runge_kutta(A=[[0]], b=[1]) .charpoly() == runge_kutta(tableau="euler").charpoly()


def test_simulate_refuses_a_stored_trajectory_past_the_layer_limit():
    from depthdyn.numeric import simulate as sim

    with pytest.raises(ArrayTooLargeError, match="MAX_LAYERS"):
        sim.simulate(momentum(), [1.0, 0.0], 10**8, lam=-0.5, m=0.5, eta=1)
    with pytest.raises(ArrayTooLargeError, match="MAX_LAYERS"):
        sim.trajectory([1.0, -0.5, 0.25], [1.0, 0.0], sim.MAX_LAYERS + 1)
    # only x_L: repeated squaring, no limit; x_L of r^2 - r/2 + 1/4 (roots of modulus 1/2) is 0
    res = sim.simulate(momentum(), [1.0, 0.0], 10**8, full=False, lam=-0.5, m=0.5, eta=1)
    assert res.values is None and res.final == 0.0
