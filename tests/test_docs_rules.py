"""The page docs/rules.md runs as written (its examples are doctests)."""

import doctest
from pathlib import Path

PAGE = Path(__file__).resolve().parents[1] / "docs" / "rules.md"


def test_rules_page_examples():
    result = doctest.testfile(str(PAGE), module_relative=False, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 15
    assert result.failed == 0
