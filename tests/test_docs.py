"""The Sphinx documentation builds with warnings as errors (docs/, API from docstrings)."""

from pathlib import Path

import pytest

pytest.importorskip("sphinx")
pytest.importorskip("numpydoc")
pytest.importorskip("myst_parser")

from sphinx.cmd.build import build_main  # noqa: E402

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_docs_build_without_warnings(tmp_path):
    status = build_main(["-W", "--keep-going", "-E", "-b", "html", "-q", str(DOCS), str(tmp_path / "html")])
    assert status == 0
    out = tmp_path / "html"
    for page in ("index", "theory", "cli", "nn", "inspect", "notebooks", "api"):
        assert (out / f"{page}.html").is_file()
    api = (out / "api.html").read_text(encoding="utf-8")
    modules = ("depthdyn.recurrence", "depthdyn.numeric.sweep", "depthdyn.claims.hyper", "depthdyn.cli")
    for module in (*modules, "depthdyn.nn.analysis.linearize"):
        assert f'id="module-{module}"' in api
    listing = (out / "notebooks.html").read_text(encoding="utf-8")
    for nb in sorted((DOCS.parent / "notebooks").glob("*.ipynb")):
        assert (out / "_notebooks" / f"{nb.stem}.html").is_file()
        assert f"_notebooks/{nb.stem}.html" in listing
