"""Region figures of families that are only marginally stable, and honest legends.

The C^2 network ``r^2 - (2 + h^2 lam) r + 1`` and the oscillator ``r^2 - (2 - beta^2/L^2) r + 1``
have root product 1: never strictly stable, but both roots are simple and on the unit circle
on an area (``-4 < h^2 lam < 0``, ``0 < beta < 2L``), whose edges are where the two roots meet
on the circle (at ``r = -1``: ``h = 2/sqrt(-lam)``, ``L = beta/2``; at ``r = 1``: ``lam = 0``).
The figure must draw those edges as exact curves, fill the area as vectors, and show in its
legend only what is drawn.
"""

import re

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import depthdyn as dd  # noqa: E402
from depthdyn.numeric import stability_region  # noqa: E402
from depthdyn.plot import plot_stability_region  # noqa: E402
from depthdyn.style import figure_bytes  # noqa: E402

SMOOTH_X, SMOOTH_Y = ("re(lam)", -5, 1, 121), ("h", 0.3, 2, 81)


def edge_lines(ax) -> dict:
    """gid -> finite vertices of the exact edges of the root-condition set."""
    out = {}
    for ln in ax.get_lines():
        gid = ln.get_gid() or ""
        if gid.startswith("root condition: "):
            xy = ln.get_xydata()
            out[gid] = xy[np.isfinite(xy).all(axis=1)]
    return out


def legend_texts(ax) -> list:
    return [t.get_text() for t in ax.get_legend().get_texts()]


def on_circle_residual(coeffs: np.ndarray) -> np.ndarray:
    """For each row of polynomial coefficients (highest first): |p(u)| / sum |c| at the root u
    nearest the unit circle, projected onto it. Zero (to rounding) iff p has a root on the circle;
    unlike the roots' moduli it is well conditioned at a double root."""
    out = []
    for c in coeffs:
        z = np.roots(c)
        u = z / np.abs(z)
        out.append(np.min(np.abs(np.polyval(c, u))) / np.abs(c).sum())
    return np.array(out)


def smooth_coeffs(lam, h):
    """r^2 - (2 + h^2 lam) r + 1, written out here from the update x' = 2x - x_prev + h^2 lam x."""
    lam, h = np.asarray(lam, float), np.asarray(h, float)
    return np.column_stack([np.ones_like(lam), -(2 + h**2 * lam), np.ones_like(lam)])


@pytest.fixture(scope="module")
def smooth_ax():
    return plot_stability_region(dd.smooth(k=2), x=SMOOTH_X, y=SMOOTH_Y)


def test_smooth_edges_are_the_exact_curves(smooth_ax):
    edges = edge_lines(smooth_ax)
    assert set(edges) == {"root condition: h**2*lam + 4 = 0", "root condition: lam = 0"}
    curve = edges["root condition: h**2*lam + 4 = 0"]
    lam, h = curve.T
    assert len(curve) > 50 and lam.min() < -4.5 and h.max() > 1.9  # across the window, not a stub
    assert np.allclose(h, 2 / np.sqrt(-lam), rtol=1e-12, atol=0)
    assert on_circle_residual(smooth_coeffs(lam, h)).max() < 1e-12
    assert np.all(edges["root condition: lam = 0"][:, 0] == pytest.approx(0, abs=1e-12))


def test_a_wrong_curve_fails_the_same_check(smooth_ax):
    lam, h = edge_lines(smooth_ax)["root condition: h**2*lam + 4 = 0"].T
    assert on_circle_residual(smooth_coeffs(lam, 1.01 * h)).min() > 1e-3  # 1.01 * 2/sqrt(-lam)
    assert on_circle_residual(smooth_coeffs(lam - 1e-3, h)).min() > 1e-5


def test_oscillator_edge_is_l_equals_beta_over_two():
    ax = plot_stability_region(dd.oscillator(), x=("beta", 0, 4, 121), y=("L", 0.2, 3, 81))
    (gid, curve), = edge_lines(ax).items()
    beta, L = curve.T
    assert gid == "root condition: 2*L - beta = 0" and beta.min() < 0.5 and beta.max() > 3.9
    assert np.allclose(L, beta / 2, rtol=1e-12, atol=0)
    coeffs = np.column_stack([np.ones_like(L), -(2 - beta**2 / L**2), np.ones_like(L)])
    assert on_circle_residual(coeffs).max() < 1e-12
    coeffs[:, 1] = -(2 - beta**2 / (0.99 * L) ** 2)  # the mutant: L scaled
    assert on_circle_residual(coeffs).min() > 1e-3


def test_the_fill_is_the_exact_set_as_vectors(smooth_ax):
    """The filled area is -4 < h^2 lam < 0 (sampled off the grid), drawn as paths, not an image."""
    fills = [c for c in smooth_ax.collections if hasattr(c, "get_paths") and c.get_paths()
             and c.get_visible() and c.get_gid() != "root condition only"]
    assert fills and not any(im.get_visible() for im in smooth_ax.images)
    rng = np.random.default_rng(0)
    pts = np.column_stack([rng.uniform(-5, 1, 4000), rng.uniform(0.3, 2, 4000)])
    z = pts[:, 1] ** 2 * pts[:, 0]
    clear = (np.abs(z) > 0.05) & (np.abs(z + 4) > 0.05)
    inside = np.zeros(len(pts), bool)
    for c in fills:
        for path in c.get_paths():
            inside |= path.contains_points(pts)
    assert np.array_equal(inside[clear], ((-4 < z) & (z < 0))[clear])
    pdf = figure_bytes(smooth_ax.figure, "pdf")
    assert not re.search(rb"/Subtype\s*/Image", pdf)


def test_an_image_in_a_pdf_would_be_caught(smooth_ax):
    """The raster check above can fail: a visible image is embedded in the PDF."""
    from matplotlib.figure import Figure

    fig = Figure()
    fig.add_subplot().imshow(np.eye(4))
    assert re.search(rb"/Subtype\s*/Image", figure_bytes(fig, "pdf"))


def test_legend_shows_only_what_is_drawn(smooth_ax):
    texts = legend_texts(smooth_ax)
    assert "root condition only" in texts and "exact: never strictly stable" in texts
    assert not any(t.startswith("strictly stable") for t in texts)  # nothing strictly stable is filled
    assert {"$\\lambda = 0$", "$h^{2} \\lambda + 4 = 0$"} <= set(texts)


def test_marginal_points_on_a_strict_boundary_get_no_entry():
    """Momentum's lam = 0 edge and the residual's circle hold root-condition grid points, but they
    lie on the exact boundary drawn over them: no dots, no legend entry naming them."""
    for ax in (plot_stability_region(dd.momentum(), x=("re(lam)", -5, 1, 121), y=("m", 0, 0.99, 60), eta=1),
               plot_stability_region(dd.residual(), x=("re(lam)", -3, 1, 201), y=("im(lam)", -2, 2, 201))):
        assert np.ma.filled(ax.images[1].get_array(), 0).any()  # the grid has such points
        assert not any(t.startswith("root condition only") for t in legend_texts(ax))
        assert not [c for c in ax.collections if c.get_gid() == "root condition only"]
        assert any(t.startswith("strictly stable") for t in legend_texts(ax))
    texts = legend_texts(plot_stability_region(dd.momentum(), x=("re(lam)", -5, 1, 121), y=("m", 0, 0.99, 60),
                                               eta=1))
    assert "$\\lambda = 0$" in texts and "$- \\lambda = 0$" not in texts  # the curve lam = 0, not -lam = 0


def test_a_curve_set_off_any_strict_area_keeps_its_dots():
    """The mutant of the test above: with no strict area the root-condition segment is marked."""
    ax = plot_stability_region(dd.smooth(k=2, h=1), x=("re(lam)", -4.5, 0.5, 101),
                               y=("im(lam)", -2.5, 2.5, 101))
    dots = [c for c in ax.collections if c.get_gid() == "root condition only"]
    assert dots and len(dots[0].get_offsets()) >= 20
    assert "root condition only (grid)" in legend_texts(ax)


def test_a_region_without_its_recurrence_keeps_the_grid_fill():
    """Given only the region, no exact edge can be derived: the fill is the grid's and says so."""
    reg = stability_region(dd.smooth(k=2), SMOOTH_X, SMOOTH_Y, conditions=True)
    ax = plot_stability_region(reg)
    assert not edge_lines(ax) and "root condition only (grid)" in legend_texts(ax)
    ax = plot_stability_region(reg, recurrence=dd.smooth(k=2))
    assert len(edge_lines(ax)) == 2 and "root condition only" in legend_texts(ax)


def test_region_command_titles_name_the_given_values(tmp_path, monkeypatch, capsys):
    """-p values are substituted into the recurrence, so the region holds none: the title still
    names them (typeset), and a structural argument once (k = 2 from the recurrence)."""
    import depthdyn.output
    from depthdyn.cli import main

    drawn = []
    monkeypatch.setattr(depthdyn.output, "save_figure", lambda fig, path: drawn.append(fig))
    out = str(tmp_path / "r.pdf")
    assert main(["region", "momentum", "-p", "eta=1", "-p", "m=1/2", "--x", "re(lam):-4:1:41",
                 "--y", "im(lam):-2:2:41", "--out", out]) == 0
    assert main(["region", "smooth", "-p", "k=2", "-p", "h=1", "--x", "re(lam):-5:1:41",
                 "--y", "im(lam):-1:1:41", "--out", out]) == 0
    titles = [fig.axes[0].get_title() for fig in drawn]
    assert titles == ["stability region: momentum ($\\eta = 1$, $m = 1/2$)",
                      "stability region: smooth ($k = 2$, $h = 1$)"]
