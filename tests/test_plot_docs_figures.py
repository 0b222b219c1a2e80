"""The figures checked in under docs/: drawn by their script, in the house style."""

import re
import runpy
import struct
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from depthdyn.style import PNG_DPI  # noqa: E402

DOCS = Path(__file__).resolve().parents[1] / "docs"
MATH = re.compile(r"(?<!\\)\$.*?(?<!\\)\$")


def png_size_and_dpi(data: bytes) -> tuple:
    """(width, height) from IHDR and dots per inch from pHYs, read from the PNG's chunks."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    at = data.find(b"pHYs")
    ppm = struct.unpack(">I", data[at + 4:at + 8])[0] if at > 0 else 0
    return (width, height), ppm * 0.0254


def test_inspect_placement_png_is_at_house_resolution():
    (w, h), dpi = png_size_and_dpi((DOCS / "inspect_placement.png").read_bytes())
    assert round(dpi) >= PNG_DPI and (w, h) == (9 * PNG_DPI, round(3.8 * PNG_DPI))


def test_a_low_resolution_png_would_be_caught():
    import io

    from matplotlib.figure import Figure

    buf = io.BytesIO()
    Figure(figsize=(9, 3.8)).savefig(buf, format="png", dpi=80)
    (w, _), dpi = png_size_and_dpi(buf.getvalue())
    assert round(dpi) == 80 and w == 720


def test_the_page_names_the_script_that_draws_it():
    page = (DOCS / "inspect.md").read_text()
    assert "python docs/inspect_figures.py" in page and "(inspect_placement.png)" in page
    script = (DOCS / "inspect_figures.py").read_text()
    assert 'OUT = Path(__file__).resolve().parent / "inspect_placement.png"' in script


def test_the_script_draws_typeset_titles():
    pytest.importorskip("torch", reason="the inspected model needs the optional torch extra")
    fig = runpy.run_path(str(DOCS / "inspect_figures.py"))["placement_figure"]()
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[0].startswith(r"momentum ($\eta = 0.5$, $m = 0.9$): ") and titles[0].endswith(
        r"% of $\lambda$ strictly inside")
    assert titles[1].startswith(r"lm-resnet ($k = -0.5$): ")
    plain = [MATH.sub("", t.get_text()) for t in fig.findobj(Text) if t.get_visible()]
    assert not [t for t in plain if re.search(r"\b(eta|lam|lambda)\b|=", t)]
    assert all(not ax.spines["top"].get_visible() for ax in fig.axes)  # the house rc
    assert tuple(fig.get_size_inches()) == (9, 3.8)
