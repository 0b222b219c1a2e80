"""The how-to page docs/products.md runs as written (its examples are doctests)."""

import doctest
from pathlib import Path

PAGE = Path(__file__).resolve().parents[1] / "docs" / "products.md"


def test_products_page_examples():
    result = doctest.testfile(str(PAGE), module_relative=False, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 10
    assert result.failed == 0
