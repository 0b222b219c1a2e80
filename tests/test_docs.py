"""The Sphinx documentation builds with warnings as errors (docs/, API from docstrings)."""

import re
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
    for page in ("index", "theory", "stability", "cli", "compare", "gallery", "nn", "inspect", "notebooks", "api"):
        assert (out / f"{page}.html").is_file()
    api = (out / "api.html").read_text(encoding="utf-8")
    modules = ("depthdyn.recurrence", "depthdyn.numeric.sweep", "depthdyn.claims.hyper", "depthdyn.cli",
               "depthdyn.families", "depthdyn.compare", "depthdyn.claims.literature")
    for module in (*modules, "depthdyn.nn.analysis.linearise"):
        assert f'id="module-{module}"' in api
    listing = (out / "notebooks.html").read_text(encoding="utf-8")
    for nb in sorted((DOCS.parent / "notebooks").glob("*.ipynb")):
        assert (out / "_notebooks" / f"{nb.stem}.html").is_file()
        assert f"_notebooks/{nb.stem}.html" in listing
        # executed at build time: the page shows the notebook's figures
        page = (out / "_notebooks" / f"{nb.stem}.html").read_text(encoding="utf-8")
        assert re.search(r'<img [^>]*src="[^"]*_fig1\.png"', page), nb.stem
    assert re.search(r'<img [^>]*src="[^"]*stability-bdf3\.png"', (out / "stability.html").read_text(encoding="utf-8"))

    # the gallery: every registry family, with a region figure where it has a lam
    from depthdyn.compare import resolve_spec
    from depthdyn.families import FAMILIES

    gallery = (out / "gallery.html").read_text(encoding="utf-8")
    for name in FAMILIES:
        assert f'id="{name.replace("_", "-")}"' in gallery, name
        drawn = resolve_spec(name)[1].lam is not None
        assert (f'src="_images/{name}.png"' in gallery) == drawn, name
        assert (out / "_images" / f"{name}.png").is_file() == drawn, name
    # the executed compare example: its JSON rows and the overlay
    page = (out / "compare.html").read_text(encoding="utf-8")
    for family in ("residual", "momentum:m=1/2", "lm_resnet", "leapfrog", "rk4"):
        assert re.search(f'(&quot;|")family(&quot;|"): (&quot;|"){family}(&quot;|")', page), family
    assert re.search('(&quot;|")figure(&quot;|"): (&quot;|")compare.png', page)
    assert (out / "_images" / "compare.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
