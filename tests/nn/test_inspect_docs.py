"""The torch pages (docs/inspect.md, docs/nn.md) run as written: their examples are executed."""

import doctest
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="depthdyn.nn needs the optional torch extra")
torch.set_num_threads(1)  # a second thread on a loaded 2-core machine slows each small op ~100x

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.mark.parametrize("page, least", [("inspect.md", 10), ("nn.md", 4)])
def test_torch_page_examples(page, least):
    flags = doctest.NORMALIZE_WHITESPACE
    result = doctest.testfile(str(DOCS / page), module_relative=False, optionflags=flags)
    assert result.attempted >= least
    assert result.failed == 0
