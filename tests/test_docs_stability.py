"""The how-to page docs/stability.md runs as written (its examples are doctests)."""

import doctest
from pathlib import Path

PAGE = Path(__file__).resolve().parents[1] / "docs" / "stability.md"


def test_stability_page_examples():
    result = doctest.testfile(str(PAGE), module_relative=False, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 15
    assert result.failed == 0
