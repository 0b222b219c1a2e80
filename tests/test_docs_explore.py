"""docs/explore.md embeds the live explorer: the built HTML holds an ``<iframe>`` whose page lies
beside it, and in headless Chromium (the system's, driven by playwright) the explorer renders
inside the built docs page opened from disk, agreeing with depthdyn at its starting point.

The build is Sphinx with warnings as errors on the real ``docs/conf.py`` and ``docs/explore.md``
(with ``docs/explore_page.py``, which the configuration runs), copied beside a one-entry index;
the build extensions that generate the gallery and execute the notebooks are left out, as the
full build of tests/test_docs.py runs them. The starting point's reference: the momentum block's
roots ``r^2 - (1 + m + eta lam) r + m = 0`` at lam = -1/2, m = 1/2, eta = 1 are
``(1 +- i) / 2``, of modulus ``sqrt(1/2)``: strictly stable.
"""

from __future__ import annotations

import io
import math
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sphinx")
pytest.importorskip("numpydoc")
pytest.importorskip("myst_parser")

from sphinx.cmd.build import build_main  # noqa: E402
from system_programs import chromium

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGE = "explorer-momentum.html"
EXTENSIONS = "sphinx.ext.autodoc,sphinx.ext.mathjax,numpydoc,myst_parser"


def build_explore_docs(src: Path, out: Path) -> Path:
    """Build docs/explore.md with docs/conf.py (warnings as errors) from a copy in ``src``; the
    output directory."""
    src.mkdir()
    for name in ("conf.py", "explore.md", "explore_page.py"):
        shutil.copy(DOCS / name, src / name)
    (src / "index.md").write_text("# depthdyn\n\n```{toctree}\nexplore\n```\n", encoding="utf-8")
    status = build_main(["-W", "--keep-going", "-E", "-q", "-b", "html", "-D", f"extensions={EXTENSIONS}",
                         str(src), str(out)])
    assert status == 0
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("docs")
    return build_explore_docs(root / "src", root / "html")


def iframes(html: str) -> list[str]:
    """The ``src`` of every ``<iframe>`` in ``html``."""
    return re.findall(r'<iframe\b[^>]*\bsrc="([^"]+)"', html)


def test_the_built_page_embeds_the_explorer_beside_it(built):
    html = (built / "explore.html").read_text(encoding="utf-8")
    assert iframes(html) == [PAGE]
    page = built / PAGE  # next to explore.html: the iframe's relative src finds it
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and "const COMPILED" in text and "eval(" not in text
    # the build wrote it from the current front end and depthdyn (as `depthdyn explore` would)
    from depthdyn.explore import page as explorer_page

    assert text == explorer_page("momentum", at={"lam": "-1/2", "m": "1/2", "eta": 1})
    assert f'href="{PAGE}"' in html  # and links it to open on its own


def test_the_iframe_finder_sees_a_missing_embed():
    assert iframes('<p><img src="explorer-momentum.png"></p>') == []
    assert iframes('<iframe title="x" src="a.html"></iframe>') == ["a.html"]


def _variance(png: bytes) -> float:
    from PIL import Image

    return float(np.asarray(Image.open(io.BytesIO(png)).convert("L"), dtype=float).var())


def explorer_in_frame(tab):
    """The explorer's state from the first iframe of the docs page open in ``tab``, once it ran."""
    frame = tab.frame_locator("iframe").first
    frame.locator(".dd-explorer canvas").first.wait_for(timeout=60_000)
    handle = tab.locator("iframe").first.element_handle().content_frame()
    handle.wait_for_function("window.depthdynExplorer !== undefined", timeout=60_000)
    return frame, handle.evaluate("window.depthdynExplorer.state()")


def test_the_explorer_renders_inside_the_built_docs_page(built, tmp_path):
    from depthdyn import momentum
    from depthdyn.explore import evaluate

    exe = chromium()
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the test extra")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=["--no-sandbox"])  # never a download
        try:
            tab = browser.new_page(viewport={"width": 1100, "height": 1000})
            errors = []
            tab.on("pageerror", lambda exc: errors.append(str(exc)))
            tab.goto((built / "explore.html").as_uri())
            frame, state = explorer_in_frame(tab)

            assert state["values"] == {"lam": -0.5, "m": 0.5, "eta": 1}
            assert state["stable"] is True and all(state["conditions"])
            want = sorted([complex(0.5, 0.5), complex(0.5, -0.5)], key=lambda z: z.imag)
            got = sorted((complex(*z) for z in state["roots"]), key=lambda z: z.imag)
            assert all(abs(a - b) <= 1e-12 for a, b in zip(got, want, strict=True))
            assert state["radius"] == pytest.approx(math.sqrt(0.5), rel=1e-12)
            py = evaluate(momentum(), state["values"], len(state["trajectory"]) - 1)
            assert py.stable is True and max(map(abs, py.roots)) == pytest.approx(state["radius"], rel=1e-9)

            assert frame.locator("input[type=range]").count() == 3
            assert frame.locator(".dd-verdict").text_content() == "strictly stable"
            # the frame is tall enough for the whole explorer: no inner scrolling at the docs' width
            inner = tab.locator("iframe").first.element_handle().content_frame()
            assert inner.evaluate("document.documentElement.scrollHeight") <= \
                tab.locator("iframe").first.bounding_box()["height"]
            assert _variance(tab.locator("iframe").first.screenshot()) > 100
            for i in range(3):
                assert _variance(frame.locator("canvas").nth(i).screenshot()) > 10
            assert errors == []
        finally:
            browser.close()


def test_the_frame_check_fails_on_a_docs_page_without_the_explorer(built, tmp_path):
    """The docs page with its iframe pointed at a missing page: the check above cannot pass."""
    html = (built / "explore.html").read_text(encoding="utf-8").replace(f'src="{PAGE}"', 'src="missing.html"')
    (built / "explore-mutant.html").write_text(html, encoding="utf-8")
    exe = chromium()
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the test extra")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        try:
            tab = browser.new_page(viewport={"width": 1100, "height": 1000})
            tab.goto((built / "explore-mutant.html").as_uri())
            with pytest.raises(sync_api.TimeoutError):
                tab.frame_locator("iframe").first.locator(".dd-explorer canvas").first.wait_for(timeout=3_000)
        finally:
            browser.close()
