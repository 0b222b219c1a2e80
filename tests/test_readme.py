"""The README's Python examples run as written."""

import doctest
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


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
