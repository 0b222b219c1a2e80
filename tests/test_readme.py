"""The README's Python examples run as written, and every command it shows exits 0 as printed.

The commands are read from the README's ``bash`` blocks, so a changed line is what runs. A
chain ``python -m venv .venv && . .venv/bin/activate && pip install ... && depthdyn report``
is the set-up the test run itself stands on (``.ci/run`` runs the README's test command
verbatim in a fresh clone); its ``depthdyn`` part runs here. Two lines that parse to the same
arguments (``depthdyn report`` and ``depthdyn report --out report``, the default) run once.
Each command runs in a fresh directory through the ``depthdyn`` script next to this
interpreter (``python -m depthdyn`` where it is not installed as a script).
"""

import doctest
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: Verbs that take a minute or more of CPU (the report, a transformer inspected, training).
SLOW_VERBS = {"report", "inspect", "train"}
#: Set-up steps of a chain: done by the test set-up itself, not run again here.
SETUP = ("python -m venv", ". ", "source ", "pip install", "python -m pip install", "python -m pytest")
#: Commands another test runs as printed: the docs build (tests/test_docs.py, with these flags).
ELSEWHERE = ("python -m sphinx -W --keep-going -b html docs ",)


def test_readme_examples():
    result = doctest.testfile(str(README), module_relative=False, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 5
    assert result.failed == 0


def test_ci_runs_the_readme_test_command_verbatim():
    text = README.read_text()
    commands = [line for line in text.splitlines() if "pytest" in line and line.startswith("python -m venv")]
    assert len(commands) == 1, commands
    ci = (README.parent / ".ci" / "run").read_text()
    assert commands[0] + " || status=$?" in ci
    # the torch extra pins the CPU build; an unpinned torch would pull a CUDA build
    assert '".[test,torch]"' in commands[0]


def readme_commands(text: str) -> list[str]:
    """Every ``depthdyn`` command of the ``bash`` blocks of ``text``, comments dropped, in order."""
    out = []
    for block in re.findall(r"^```bash\n(.*?)^```", text, re.M | re.S):
        for line in block.splitlines():
            words, parts = shlex.split(line, comments=True), [[]]
            for word in words:  # a chain: one part per command between the &&
                parts.append([]) if word == "&&" else parts[-1].append(word)
            for part in (shlex.join(p) for p in parts if p):
                if part.startswith(SETUP + ELSEWHERE):
                    continue
                if not part.startswith(("depthdyn ", "python -m depthdyn ")):
                    raise AssertionError(f"README command of an unknown kind: {part!r}")
                out.append(part)
    return out


def _arguments(command: str) -> dict:
    """The parsed arguments of a ``depthdyn`` command, for telling two spellings of one command apart."""
    from depthdyn.cli.app import _parser

    argv = shlex.split(command)[1 if command.startswith("depthdyn ") else 3:]
    args = vars(_parser(argv).parse_args(argv))
    return {k: v for k, v in args.items() if not callable(v)}


def unique_commands(commands: list[str]) -> list[str]:
    """``commands`` less those parsing to an earlier one's arguments (the longer spelling kept)."""
    seen: dict[str, str] = {}
    for command in commands:
        key = repr(sorted(_arguments(command).items()))
        if key not in seen or len(command) > len(seen[key]):
            seen[key] = command
    return list(seen.values())


COMMANDS = unique_commands(readme_commands(README.read_text()))


def _param(command: str):
    verb = shlex.split(command)[1 if command.startswith("depthdyn ") else 3]
    slow = verb in SLOW_VERBS and "--list" not in command
    return pytest.param(command, id=command[:70], marks=[pytest.mark.slow] if slow else [])


def _argv(command: str) -> list[str]:
    words = shlex.split(command)
    script = Path(sys.executable).with_name("depthdyn")
    if words[0] == "depthdyn":
        return ([str(script)] if script.exists() else [sys.executable, "-m", "depthdyn"]) + words[1:]
    return [sys.executable] + words[1:]  # python -m depthdyn ...


@pytest.mark.parametrize("command", [_param(c) for c in COMMANDS])
def test_readme_command_exits_0(command, tmp_path):
    if shlex.split(command)[1:2] in (["inspect"], ["train"]):
        pytest.importorskip("torch", reason="the README installs the torch extra for this command")
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    done = subprocess.run(_argv(command), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=3000)
    assert done.returncode == 0, f"{command}\nexit {done.returncode}\n{done.stderr[-3000:]}"
    assert "Traceback" not in done.stderr


def test_the_readme_commands_are_all_found():
    # the paper's table and the report are among them; a chain's set-up steps are not
    assert "depthdyn compare smooth:k=3 bdf:k=2 --format latex" in COMMANDS
    assert "depthdyn report --out report" in COMMANDS and "depthdyn report" not in COMMANDS
    assert not any(c.startswith(("pip", "python -m venv")) for c in COMMANDS)
    assert len(COMMANDS) >= 15


def test_a_changed_readme_line_is_what_runs():
    text = "```bash\ndepthdyn derive momentum -p m=1/3    # a comment\n```\n```python\ndepthdyn no\n```\n"
    assert readme_commands(text) == ["depthdyn derive momentum -p m=1/3"]
    assert readme_commands("```bash\npython -m venv v && pip install -e . && depthdyn report\n```") == [
        "depthdyn report"]
    with pytest.raises(AssertionError, match="unknown kind"):
        readme_commands("```bash\nmake docs\n```")


def test_two_spellings_of_one_command_run_once_and_different_ones_twice():
    both = ["depthdyn report", "depthdyn report --out report"]
    assert unique_commands(both) == ["depthdyn report --out report"]
    assert len(unique_commands(["depthdyn report", "depthdyn report --out other"])) == 2
    assert isinstance(_arguments("python -m depthdyn derive --list"), dict)


def test_the_docs_build_command_is_the_one_the_docs_test_runs():
    text = README.read_text()
    (line,) = [ln for ln in text.splitlines() if "python -m sphinx" in ln]
    assert ELSEWHERE[0] in line
    docs_test = (ROOT / "tests" / "test_docs.py").read_text()
    assert '"-W", "--keep-going"' in docs_test and '"-b", "html"' in docs_test
