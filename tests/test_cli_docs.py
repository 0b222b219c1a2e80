"""docs/cli.md shows the current ``--help`` of every subcommand."""

from pathlib import Path

import pytest

from depthdyn.cli import main

CLI_DOC = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text()


@pytest.mark.parametrize(
    "command",
    [[], ["derive"], ["check"], ["region"], ["stability"], ["solve"], ["verify"], ["compare"], ["product"], ["report"],
     ["train"], ["inspect"], ["meanfield"]],
)
def test_cli_page_shows_the_current_help(command, monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit) as exit_:
        main([*command, "--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    assert text.strip() in CLI_DOC, f"docs/cli.md is out of date for depthdyn {' '.join(command)} --help"


def verbs_named(doc: str) -> set[str]:
    """The verbs a docstring shows as ``depthdyn VERB``."""
    import re

    return set(re.findall(r"``depthdyn ([a-z]+)\b", doc))


def test_the_package_docstring_names_every_verb():
    import depthdyn.cli as cli
    from depthdyn.cli import VERBS

    assert verbs_named(cli.__doc__) == set(VERBS)
    # the check can fail: a docstring that forgets a verb is caught
    assert verbs_named(cli.__doc__.replace("``depthdyn product", "``product")) != set(VERBS)
