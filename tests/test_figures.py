"""Figures fit for a paper: every report figure in PDF and SVG, typeset labels, no empty region.

The report's figures are drawn once here (module fixture) and rendered in every format;
their text artists are read back: outside ``$...$`` no code name (``hres_1_1``,
``hyper_connection``, ``lam``) may appear, and every region figure shows a visible set.
"""

import re
import sys
import types

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.text import Text  # noqa: E402

import depthdyn as dd  # noqa: E402
from depthdyn.errors import ParameterError  # noqa: E402
from depthdyn.families import bdf  # noqa: E402
from depthdyn.plot import plot_root_locus, plot_spectrum, plot_stability_region, plot_trajectories  # noqa: E402
from depthdyn.report import figures as report_figures  # noqa: E402
from depthdyn.report.families import family_recurrences  # noqa: E402
from depthdyn.style import PNG_DPI, family_label, figure_bytes, house_style, new_figure, param_tex  # noqa: E402

MATH = re.compile(r"(?<!\\)\$.*?(?<!\\)\$")
CODE_WORDS = re.compile(r"\b(lam|eta|hres|hpre|hpost|gamma|beta|alpha)\b")


def plain_text(fig: Figure) -> list[str]:
    """The visible text of a figure with its mathtext segments removed."""
    return [MATH.sub("", t.get_text()) for t in fig.findobj(Text) if t.get_visible() and t.get_text()]


def code_names(fig: Figure) -> list[str]:
    return [t for t in plain_text(fig) if "_" in t or CODE_WORDS.search(t)]


def visible_share(ax) -> float:
    """Share of the window covered by the drawn set (strictly stable or root condition only), and the
    number of grid points of a curve set marked by dots (0 when there is none)."""
    shown = np.asarray(ax.images[0].get_array(), dtype=bool)
    if len(ax.images) > 1:
        shown = shown | (np.ma.filled(ax.images[1].get_array(), 0) == 1)
    dots = [c for c in ax.collections if c.get_gid() == "root condition only" and c.get_visible()]
    return float(shown.mean()), sum(len(c.get_offsets()) for c in dots)


@pytest.fixture(scope="module")
def drawn():
    """Every report figure, drawn: (family, spec, figure)."""
    recs, out = family_recurrences(), []
    for name, specs in report_figures.specs().items():
        for spec in specs:
            fig = report_figures.new_report_figure()
            spec.draw(fig)
            out.append((name, spec, fig, recs[name]()))
    return out


def test_every_report_figure_renders_as_pdf_and_svg(drawn):
    assert len(drawn) >= 30
    for _name, spec, fig, _ in drawn:
        pdf, svg = figure_bytes(fig, "pdf"), figure_bytes(fig, "svg")
        assert pdf.startswith(b"%PDF-") and pdf.rstrip().endswith(b"%%EOF"), spec.stem
        assert b"<svg" in svg[:2000] and svg.rstrip().endswith(b"</svg>"), spec.stem


def test_report_figures_have_typeset_labels_only(drawn):
    bad = {spec.stem: code_names(fig) for _, spec, fig, _ in drawn if code_names(fig)}
    assert not bad


def test_no_report_region_figure_is_empty(drawn):
    regions = [(spec.stem, fig.axes[0]) for _, spec, fig, _ in drawn if fig.axes[0].images]
    assert len(regions) >= 15
    for stem, ax in regions:
        share, dots = visible_share(ax)
        # an area: between 1 % and 99 % of the window; a curve set (root condition on a segment): >= 20 dots
        assert 0.01 <= share <= 0.99 or dots >= 20, (stem, share, dots)


def test_smooth_region_shows_its_marginal_area(drawn):
    (ax,) = [fig.axes[0] for _, spec, fig, _ in drawn if spec.stem == "smooth-region"]
    share, _ = visible_share(ax)
    assert share > 0.2  # -4 < h^2 lam < 0 over the window: a wedge, not a segment


def test_an_empty_window_would_be_caught():
    """The test above can fail: a window beside the residual's disc shows nothing."""
    ax = plot_stability_region(dd.residual(), x=("re(lam)", 0.5, 2, 61), y=("im(lam)", -1, 1, 61))
    share, dots = visible_share(ax)
    assert share < 0.01 and dots < 20


def test_a_curve_set_is_marked_visibly():
    """The C^2 network in the complex plane: the root condition holds on a segment, drawn as dots."""
    ax = plot_stability_region(dd.smooth(k=2, h=1), x=("re(lam)", -4.5, 0.5, 101), y=("im(lam)", -2.5, 2.5, 101))
    share, dots = visible_share(ax)
    assert share < 0.01 and dots >= 20


def test_exact_area_of_the_residual_disc_against_the_grid():
    import sympy as sp

    assert report_figures.exact_area(dd.residual()) == sp.pi
    ax = plot_stability_region(dd.residual(), x=("re(lam)", -2.2, 0.2, 481), y=("im(lam)", -1.2, 1.2, 481))
    note = report_figures.area_note(ax.figure, dd.residual())
    assert "exactly `pi`" in note
    mask = np.asarray(ax.images[0].get_array(), dtype=bool)
    grid = mask.sum() * (2.4 / 480) ** 2
    assert abs(grid - np.pi) < 0.03  # the grid count converges to the exact area
    assert report_figures.exact_area(dd.rezero(a=2)) == sp.pi / 4  # a wrong disc radius moves the answer
    # second order: no disc formula, the note says approx.
    assert report_figures.exact_area(dd.momentum()) is None
    ax = plot_stability_region(dd.momentum(m="1/2", eta=1), x=("re(lam)", -4, 1, 101), y=("im(lam)", -2, 2, 101))
    assert "approx." in report_figures.area_note(ax.figure, dd.momentum(m="1/2", eta=1))


# ------------------------------------------------------------------ the plot functions
def _all_plots():
    hc = dd.hyper_connection(n=2, H_pre=[1, 0], H_post=[1, 1])
    yield plot_stability_region(hc, x=("re(lam)", -3, 1, 81), y=("hres_1_1", 0, 1, 41))
    yield plot_stability_region(dd.momentum(), x=("re(lam)", -5, 1, 81), y=("m", 0, 0.99, 41), eta=1)
    yield plot_stability_region(bdf(k=3), x=("re(lam)", -6, 12, 81), y=("im(lam)", -9, 9, 81), numbers=True)
    yield plot_root_locus(hc, "lam", np.linspace(-2, 0, 21), hres_1_1=0.3)
    yield plot_trajectories(hc, [[1.0, 0.0]], 12, param="hres_1_1", values=[0.2, 0.8], lam=-0.5)
    yield plot_trajectories(dd.momentum(m="1/2"), [1.0, 1.0], 7, param="lam", values=[-0.5], eta=1)
    yield plot_spectrum(hc, lam=-0.5, hres_1_1=0.25)


def test_plot_functions_use_typeset_names():
    for ax in _all_plots():
        assert not code_names(ax.figure), [t.get_text() for t in ax.figure.findobj(Text)]


def test_code_names_are_caught():
    """The label check can fail: a code name in a title is found."""
    ax = plot_spectrum([[0.0, 1.0], [1.0, 0.0]])
    ax.set_title("hres_1_1 of hyper_connection")
    assert code_names(ax.figure)


def test_typeset_names():
    assert param_tex("hres_2_1") == "H^{\\mathrm{res}}_{21}"
    assert param_tex("hpre_3") == "H^{\\mathrm{pre}}_{3}"
    assert param_tex("re(lam)") == "\\mathrm{Re}\\,\\lambda"
    assert family_label("hyper_connection") == "hyper-connection"
    assert family_label("momentum:m=1/2") == "momentum, $m = 1/2$"
    assert family_label("momentum:eta=2,m=1/2") == "momentum, $\\eta = 2$, $m = 1/2$"


def test_layer_ticks_are_integers():
    ax = plot_trajectories(dd.residual(), [1.0], 5, param="lam", values=[-0.5])
    ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
    assert ticks and all(float(t).is_integer() for t in ticks)


def test_legends_stay_inside_their_axes_in_a_grid():
    fig = Figure(figsize=(8, 6), layout="constrained")
    axes = fig.subplots(2, 2)
    plot_stability_region(dd.momentum(), ax=axes[0, 0], x=("re(lam)", -5, 1, 41), y=("m", 0, 0.99, 21), eta=1)
    plot_root_locus(dd.momentum(), "m", [0.0, 0.5, 0.9], ax=axes[0, 1], colorbar=False, lam=-0.5, eta=1)
    plot_trajectories(dd.momentum(), [1.0, 1.0], 10, ax=axes[1, 0], param="m", values=[0.0, 0.9], lam=-0.3, eta=1)
    plot_spectrum([[0.0, -1.0], [1.0, 0.0]], ax=axes[1, 1])
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    for ax in axes.flat:
        box = ax.get_legend().get_window_extent(renderer)
        for other in axes.flat:
            if other is not ax:
                assert not box.overlaps(other.get_window_extent(renderer)), "a legend covers a neighbour"


def test_own_figure_puts_the_legend_below():
    ax = plot_spectrum([[0.0, -1.0], [1.0, 0.0]])
    renderer = FigureCanvasAgg(ax.figure).get_renderer()
    ax.figure.draw(renderer)
    assert ax.get_legend().get_window_extent(renderer).y1 <= ax.get_window_extent(renderer).y0 + 1


def test_region_window_from_the_exact_locus():
    ax = plot_stability_region(dd.residual())
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    assert x0 < -2 and x1 > 0 and y0 < -1 and y1 > 1  # the whole disc |1 + lam| < 1
    share, _ = visible_share(ax)
    assert 0.2 < share < 0.9


def test_figure_formats_and_dpi():
    fig = new_figure()
    fig.add_subplot().plot([0, 1])
    png = figure_bytes(fig, "png")
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width = int.from_bytes(png[16:20], "big")
    assert width == round(fig.get_figwidth() * PNG_DPI)
    assert figure_bytes(fig, "pdf") == figure_bytes(fig, "pdf")  # no date in the file: reproducible
    with pytest.raises(ParameterError, match="ending in"):
        figure_bytes(fig, "notes.txt")
    with pytest.raises(ParameterError, match="200 dpi"):
        figure_bytes(fig, "png", dpi=100)


def test_style_does_not_leak():
    before = dict(matplotlib.rcParams)
    plot_spectrum([[0.0, -1.0], [1.0, 0.0]])
    with house_style():
        assert matplotlib.rcParams["pdf.fonttype"] == 42
    assert dict(matplotlib.rcParams) == before


def test_kernel_detection(monkeypatch):
    from depthdyn import style

    assert not style._in_ipython_kernel()
    terminal = types.SimpleNamespace(config={"TerminalIPythonApp": {}})
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: terminal))
    assert not style._in_ipython_kernel()
    kernel = types.SimpleNamespace(config={"IPKernelApp": {}})
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: kernel))
    assert style._in_ipython_kernel()


def test_jupyter_kernel_gets_a_pyplot_figure(monkeypatch):
    """Inside an IPython kernel the figure is pyplot's (the inline backend shows it); elsewhere it is not."""
    import matplotlib.pyplot as plt

    from depthdyn import style

    ax = plot_spectrum([[0.0, -1.0], [1.0, 0.0]])
    assert ax.figure not in [plt.figure(n) for n in plt.get_fignums()]
    monkeypatch.setattr(style, "_in_ipython_kernel", lambda: True)
    ax = plot_spectrum([[0.0, -1.0], [1.0, 0.0]])
    try:
        assert ax.figure in [plt.figure(n) for n in plt.get_fignums()]
    finally:
        plt.close("all")


# ------------------------------------------------------------------ the CLI writes vector figures
def test_cli_region_pdf_and_compare_svg(tmp_path, capsys):
    from depthdyn.cli import main

    pdf, svg = tmp_path / "x.pdf", tmp_path / "x.svg"
    assert main(["region", "momentum", "-p", "eta=1", "--x", "re(lam):-5:1:41", "--y", "m:0:0.99:21",
                 "--out", str(pdf)]) == 0
    assert pdf.read_bytes().startswith(b"%PDF-")
    assert main(["compare", "residual", "rk4", "--grid", "41", "--out", str(svg)]) == 0
    assert b"<svg" in svg.read_bytes()[:2000]
    assert main(["compare", "residual", "--grid", "41", "--out", str(tmp_path / "x.txt")]) == 2
    assert not (tmp_path / "x.txt").exists()
    capsys.readouterr()


# ------------------------------------------------------------------ vector fills, honest legends
def test_region_and_overlay_pdfs_hold_vector_fills_not_rasters():
    import depthdyn as dd
    from depthdyn.compare import compare
    from depthdyn.numeric.region import stability_region
    from depthdyn.plot import plot_comparison, plot_stability_region
    from depthdyn.style import figure_bytes

    raster = b"/Subtype /Image"
    reg = stability_region(dd.momentum(eta=1), ("re(lam)", -5, 1, 41), ("m", 0, 0.99, 21))
    for ax in (plot_stability_region(dd.momentum(eta=1), x=("re(lam)", -5, 1, 41), y=("m", 0, 0.99, 21)),
               plot_stability_region(reg),  # no recurrence: the fill from the mask itself
               plot_comparison(compare("residual", "leapfrog", n=41))):
        assert raster not in figure_bytes(ax.figure, "pdf")
        assert ax.images and not any(im.get_visible() for im in ax.images)  # the masks stay as data
    # the check sees a raster where one is drawn
    fig = Figure()
    fig.add_subplot().imshow(np.eye(3))
    assert raster in figure_bytes(fig, "pdf")


def test_overlay_legend_says_when_a_family_has_no_stable_area():
    from depthdyn.compare import compare
    from depthdyn.plot import plot_comparison

    ax = plot_comparison(compare("residual", "leapfrog", n=41))
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    # leapfrog's grid area is 0 (roots on the circle at best): not drawn as a filled region
    assert texts == ["residual", "leapfrog (root condition only)"]
    assert "strictly stable filled" in ax.get_title()
