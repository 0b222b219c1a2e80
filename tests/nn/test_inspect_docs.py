"""The "analyse your own model" page (docs/inspect.md) runs as written: its output is executed."""

import doctest
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="depthdyn.nn needs the optional torch extra")
torch.set_num_threads(1)  # a second thread on a loaded 2-core machine slows each small op ~100x

PAGE = Path(__file__).resolve().parents[2] / "docs" / "inspect.md"


def test_inspect_page_examples():
    result = doctest.testfile(str(PAGE), module_relative=False, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 10
    assert result.failed == 0
