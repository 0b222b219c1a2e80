"""Plots: the figures hold the data they claim (masks, boundaries, roots, trajectories, spectra)."""

import matplotlib

matplotlib.use("Agg")

import io  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from scipy.optimize import linear_sum_assignment  # noqa: E402

from depthdyn import dense, entangled, hyper_connection, momentum  # noqa: E402
from depthdyn.errors import ParameterError, ShapeError, UnknownParameterError  # noqa: E402
from depthdyn.numeric import StabilityRegion, conv_kernel, conv_spectrum, stability_region  # noqa: E402
from depthdyn.plot import plot_root_locus, plot_spectrum, plot_stability_region, plot_trajectories  # noqa: E402

X_AX, Y_AX = ("re(lam)", -5, 1, 120), ("m", 0, 0.99, 60)


def unit_circles(ax):
    """Lines whose every vertex has modulus 1 (within 1e-12)."""
    return [ln for ln in ax.get_lines() if np.allclose(np.hypot(*ln.get_data()), 1, atol=1e-12)]


def condition_lines(ax) -> dict:
    """gid ("expr = 0") -> finite vertices of the lines drawn for the exact conditions."""
    out = {}
    for ln in ax.get_lines():
        if (ln.get_gid() or "").endswith(" = 0"):
            xy = ln.get_xydata()
            out[ln.get_gid()] = xy[np.isfinite(xy).all(axis=1)]
    return out


def legend_texts(ax) -> list:
    return [t.get_text() for t in ax.get_legend().get_texts()]


def same_multiset(a, b, tol=1e-9):
    """Equal as multisets of complex numbers (optimal matching, so conjugate pairs cannot swap)."""
    a, b = np.ravel(a).astype(complex), np.ravel(b).astype(complex)
    if a.shape != b.shape:
        return False
    rows, cols = linear_sum_assignment(np.abs(a[:, None] - b[None, :]))
    return bool(np.all(np.abs(a[rows] - b[cols]) <= tol))


# ------------------------------------------------------------------ stability region
@pytest.fixture(scope="module")
def momentum_region():
    ax = plot_stability_region(momentum(), x=X_AX, y=Y_AX, eta=1)
    return ax, stability_region(momentum(), X_AX, Y_AX, eta=1)


def test_region_image_is_the_mask(momentum_region):
    ax, reg = momentum_region
    img = ax.images[0]
    assert np.array_equal(np.asarray(img.get_array()), reg.strict.astype(float))
    dx, dy = reg.x[1] - reg.x[0], reg.y[1] - reg.y[0]
    assert np.allclose(img.get_extent(), [-5 - dx / 2, 1 + dx / 2, -dy / 2, 0.99 + dy / 2])
    # orientation, independently: -2(1 + m) < lam < 0 away from the boundary
    lam, m = np.meshgrid(reg.x, reg.y)
    inside, far = (lam < 0) & (lam > -2 * (1 + m)), np.minimum(abs(lam), abs(lam + 2 * (1 + m))) > dx
    assert np.array_equal(np.asarray(img.get_array())[far] == 1, inside[far])
    assert 0.2 < reg.strict.mean() < 0.5


def test_region_boundary_is_exact(momentum_region):
    ax, reg = momentum_region
    lines = condition_lines(ax)
    assert set(lines) == {"lam + 2*m + 2 = 0", "-lam = 0"}
    lam, m = np.concatenate(list(lines.values())).T
    near0, near2 = abs(lam) <= 1e-9, abs(lam + 2 * (1 + m)) <= 1e-9  # on the exact curves, not just the grid
    assert np.all(near0 | near2)
    for near in (near0, near2):  # both lines, across the whole m range
        assert near.sum() > 10 and m[near].min() < 0.05 and m[near].max() > 0.94
    # mathtext, not code; the curve -lam = 0 is written lam = 0 (the gid keeps the condition's expression)
    assert {r"$\lambda + 2 m + 2 = 0$", r"$\lambda = 0$"} <= set(legend_texts(ax))
    assert ax.get_xlabel() == r"$\mathrm{Re}\,\lambda$" and ax.get_ylabel() == "$m$"
    assert "momentum" in ax.get_title() and r"$\eta = 1$" in ax.get_title()
    assert not [ln for ln in ax.get_lines() if ln.get_label() == "boundary locus"]


def test_region_lam_plane_draws_the_locus():
    reg = stability_region(momentum(), ("re(lam)", -4, 1, 80), ("im(lam)", -1, 1, 60), m=0.5, eta=1)
    ax = plot_stability_region(reg)
    (line,) = [ln for ln in ax.get_lines() if ln.get_label() == "boundary locus"]
    x, y = line.get_data()
    assert np.array_equal(x, reg.boundary[0].real) and np.array_equal(y, reg.boundary[0].imag)
    assert np.allclose(((x + 1.5) / 1.5) ** 2 + (y / 0.5) ** 2, 1)  # the ellipse through 0 and -2(1 + m)
    assert not condition_lines(ax)  # auto: the locus alone
    swapped = plot_stability_region(momentum(), x=("im(lam)", -1, 1, 30), y=("re(lam)", -4, 1, 40),
                                    m=0.5, eta=1)
    (line,) = [ln for ln in swapped.get_lines() if ln.get_label() == "boundary locus"]
    assert np.allclose(((line.get_ydata() + 1.5) / 1.5) ** 2 + (line.get_xdata() / 0.5) ** 2, 1)


def test_region_conditions_in_the_lam_plane():
    ax = plot_stability_region(momentum(), x=("re(lam)", -4, 1, 100), y=("im(lam)", -1, 1, 80),
                               overlay="conditions", m=0.5, eta=1)
    assert not [ln for ln in ax.get_lines() if ln.get_label() == "boundary locus"]
    lines = condition_lines(ax)  # the zero sets of the other conditions do not bound the region
    assert list(lines) == ["-9*lam_im**2 - lam_re**2 - 3*lam_re = 0"]
    v = lines["-9*lam_im**2 - lam_re**2 - 3*lam_re = 0"]
    assert np.allclose(((v[:, 0] + 1.5) / 1.5) ** 2 + (v[:, 1] / 0.5) ** 2, 1, atol=1e-9)
    assert np.ptp(v[:, 0]) > 2.9 and np.ptp(v[:, 1]) > 0.95  # the whole ellipse


def test_region_conditions_keep_only_the_boundary():
    # entangled, n = 2: eigenvalues 1 + lam and 1 - gamma + lam, so stable iff gamma - 2 < lam < 0
    ax = plot_stability_region(entangled(n=2), x=("re(lam)", -2.5, 1, 90), y=("gamma", 0, 1, 50))
    lines = condition_lines(ax)
    lam, gamma = np.concatenate(list(lines.values())).T
    assert np.all((abs(lam) <= 1e-9) | (abs(lam - gamma + 2) <= 1e-9))
    assert (abs(lam) <= 1e-9).sum() > 10 and (abs(lam - gamma + 2) <= 1e-9).sum() > 10
    assert "stability region: entangled" in ax.get_title()


def test_region_marginal_layer_and_never_stable():
    # dense, k = 2: (r + 1)(r - 1 - h lam): never strictly stable (r = -1 always), marginal
    # where |1 + h lam| < 1
    ax = plot_stability_region(dense(k=2), x=("re(lam)", -3, 1, 81), y=("im(lam)", -2, 2, 61), h=1)
    assert not np.asarray(ax.images[0].get_array()).any()
    marginal = np.ma.filled(ax.images[1].get_array(), 0) == 1
    lam = np.linspace(-3, 1, 81)[None, :] + 1j * np.linspace(-2, 2, 61)[:, None]
    far = abs(abs(1 + lam) - 1) > 0.1
    assert np.array_equal(marginal[far], (abs(1 + lam) < 1)[far])
    assert "exact: never strictly stable" in legend_texts(ax)
    assert any(t.startswith("root condition only") for t in legend_texts(ax))


def test_region_into_given_axes_and_errors():
    fig = Figure()
    ax = fig.add_subplot()
    reg = stability_region(momentum(), X_AX, Y_AX, eta=1)
    assert plot_stability_region(reg, ax) is ax and ax.figure is fig and len(ax.images) == 1
    with pytest.raises(UnknownParameterError):
        plot_stability_region(momentum(), x=("alpha", 0, 1, 5), y=Y_AX, eta=1)
    with pytest.raises(UnknownParameterError):
        plot_stability_region(momentum(), x=X_AX, y=Y_AX, eta=1, zeta=2)
    with pytest.raises(ParameterError):
        plot_stability_region(reg, x=X_AX)
    with pytest.raises(ParameterError):
        plot_stability_region(momentum(), x=X_AX, eta=1)
    with pytest.raises(ParameterError):
        plot_stability_region(reg, overlay="everything")
    with pytest.raises(ParameterError):
        plot_stability_region(reg, ax="not axes")
    with pytest.raises(ParameterError):
        plot_stability_region(np.zeros((3, 3)))
    flat = StabilityRegion("f", "a", "b", np.arange(4.0), np.arange(4.0), np.ones(4, bool), np.ones(4, bool))
    with pytest.raises(ShapeError):
        plot_stability_region(flat)
    ones = np.ones((4, 3), bool)
    wrong = StabilityRegion("f", "a", "b", np.arange(4.0), np.arange(3.0), ones, ones)  # transposed
    with pytest.raises(ShapeError):
        plot_stability_region(wrong)


# ------------------------------------------------------------------ root locus
def test_root_locus_scatter_is_the_roots():
    ms = np.linspace(0, 0.99, 25)
    ax = plot_root_locus(momentum(), "m", ms, lam=-0.5, eta=1)
    pts = ax.collections[0].get_offsets()
    z = pts[:, 0] + 1j * pts[:, 1]
    # independently: the roots of r^2 - (1 + m + eta lam) r + m, value-major
    ref = np.array([np.roots([1, -(0.5 + m), m]) for m in ms])
    assert all(same_multiset(z[2 * i:2 * i + 2], ref[i]) for i in range(len(ms)))
    assert np.allclose(np.asarray(ax.collections[0].get_array()), np.repeat(ms, 2))
    start, end = (c.get_offsets() for c in ax.collections[1:3])
    assert same_multiset(start[:, 0] + 1j * start[:, 1], ref[0])
    assert same_multiset(end[:, 0] + 1j * end[:, 1], ref[-1])
    assert len(unit_circles(ax)) == 1 and unit_circles(ax)[0].get_label() == "unit circle"
    assert len(ax.figure.axes) == 2  # with the colour bar
    assert "momentum" in ax.get_title() and "$m$ from 0 to 0.99" in ax.get_title()


def test_root_locus_matrix_family_and_errors():
    lams = np.linspace(-1, 0.5, 7)
    fig = Figure()
    ax = fig.add_subplot()
    assert plot_root_locus(entangled(n=3), "lam", lams, ax, colorbar=False, gamma=0.5) is ax
    assert len(fig.axes) == 1
    pts = ax.collections[0].get_offsets()
    G = 0.5 / 3 * np.ones((3, 3)) + 0.5 * np.eye(3)
    ref = np.concatenate([np.linalg.eigvals(G + lam * np.eye(3)) for lam in lams])
    assert same_multiset(pts[:, 0] + 1j * pts[:, 1], ref)
    with pytest.raises(UnknownParameterError):
        plot_root_locus(momentum(), "mu", [0.1, 0.2], lam=-0.5, eta=1)
    with pytest.raises(UnknownParameterError):
        plot_root_locus(momentum(), "m", [0.1, 0.2], lam=-0.5, eta=1, zeta=0)
    with pytest.raises(ParameterError):
        plot_root_locus(momentum(), "m", [0.1, 0.2], m=0.3, lam=-0.5, eta=1)
    with pytest.raises(ShapeError):
        plot_root_locus(momentum(), "m", [[0.1, 0.2]], lam=-0.5, eta=1)


# ------------------------------------------------------------------ trajectories
def test_trajectories_lines_are_the_simulation():
    ms, L = [0.0, 0.5, 0.9], 30
    ax = plot_trajectories(momentum(), [1.0, 1.0], L, param="m", values=ms, lam=-0.3, eta=1)
    assert len(ax.get_lines()) == len(ms)
    for line, m in zip(ax.get_lines(), ms, strict=True):
        x = [1.0, 1.0]  # independently: x_{l+1} = (1 + m + eta lam) x_l - m x_{l-1}
        while len(x) <= L:
            x.append((0.7 + m) * x[-1] - m * x[-2])
        assert np.allclose(line.get_ydata(), x, rtol=1e-12, atol=1e-14)
        assert np.array_equal(line.get_xdata(), np.arange(L + 1))
        assert line.get_label() == f"$m = {m:g}$"
    assert ax.get_xlabel() == "layer $l$" and r"$\lambda = -0.3$" in ax.get_title()


def test_trajectories_single_matrix_and_errors():
    fig = Figure()
    ax = fig.add_subplot()
    assert plot_trajectories(momentum(), [1.0, 0.5], 10, ax, lam=-0.3, m=0.2, eta=1) is ax
    assert len(ax.get_lines()) == 1
    G = 0.5 / 2 * np.ones((2, 2)) + 0.5 * np.eye(2)
    ax = plot_trajectories(entangled(n=2), [[1.0, 0.0]], 8, param="lam", values=[-0.2, 0.1], gamma=0.5)
    for line, lam in zip(ax.get_lines(), [-0.2, 0.1], strict=True):
        ref = [np.linalg.norm(np.linalg.matrix_power(G + lam * np.eye(2), k) @ [1.0, 0.0]) for k in range(9)]
        assert np.allclose(line.get_ydata(), ref)
    assert ax.get_ylabel() == "$|x_l|$"
    with pytest.raises(ParameterError):
        plot_trajectories(momentum(), [1.0, 1.0], 5, values=[0.1], lam=-0.3, m=0.2, eta=1)
    with pytest.raises(UnknownParameterError):
        plot_trajectories(momentum(), [1.0, 1.0], 5, param="beta", values=[0.1], lam=-0.3, eta=1)
    with pytest.raises(ShapeError):
        plot_trajectories(momentum(), [1.0, 1.0], 5, param="m", values=[], lam=-0.3, eta=1)


# ------------------------------------------------------------------ spectrum
def test_spectrum_entangled_and_hyper_connection():
    ax = plot_spectrum(entangled(n=4), gamma=0.5, lam=0.2)
    pts = ax.collections[0].get_offsets()
    G = 0.5 / 4 * np.ones((4, 4)) + 0.5 * np.eye(4)
    assert same_multiset(pts[:, 0] + 1j * pts[:, 1], np.linalg.eigvals(G + 0.2 * np.eye(4)))
    assert len(unit_circles(ax)) == 1
    H = np.array([[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.3, 0.2, 0.5]])
    pre, post = np.array([1.0, 0, 0]), np.array([0, 1.0, 1.0])
    rec = hyper_connection(n=3, H_res=H.tolist(), H_pre=pre.tolist(), H_post=post.tolist())
    ax = plot_spectrum(rec, lam=-0.4)
    pts = ax.collections[0].get_offsets()
    assert same_multiset(pts[:, 0] + 1j * pts[:, 1], np.linalg.eigvals(H - 0.4 * np.outer(post, pre)))


def test_spectrum_of_arrays_and_errors():
    A = np.random.default_rng(1).normal(size=(6, 6)) / 3
    fig = Figure()
    ax = fig.add_subplot()
    assert plot_spectrum(A, ax) is ax
    pts = ax.collections[0].get_offsets()
    assert same_multiset(pts[:, 0] + 1j * pts[:, 1], np.linalg.eigvals(A))
    rho = np.abs(np.linalg.eigvals(A)).max()
    assert [ln for ln in ax.get_lines() if np.allclose(np.hypot(*ln.get_data()), rho)]
    ev = conv_spectrum(conv_kernel("spatial", gamma=0.5), 6, 6)
    pts = plot_spectrum(ev).collections[0].get_offsets()
    assert np.allclose(pts[:, 0] + 1j * pts[:, 1], ev.ravel())
    with pytest.raises(ShapeError):
        plot_spectrum(np.ones((2, 3)))
    with pytest.raises(ParameterError):
        plot_spectrum(A, lam=1)
    with pytest.raises(ParameterError):
        plot_spectrum(np.array([[np.nan, 0], [0, 1]]))
    with pytest.raises(UnknownParameterError):
        plot_spectrum(entangled(n=2), gamma=0.5, lam=0.1, beta=2)


# ------------------------------------------------------------------ hygiene
def test_figures_render_to_png():
    ax = plot_root_locus(momentum(), "lam", np.linspace(-4, 0.5, 10), m=0.5, eta=1)
    assert isinstance(ax, Axes) and isinstance(ax.figure, Figure)
    buf = io.BytesIO()
    ax.figure.savefig(buf, format="png")
    assert buf.getvalue()[:8] == b"\x89PNG\r\n\x1a\n"


def test_import_depthdyn_does_not_import_matplotlib_and_plots_avoid_pyplot():
    code = (
        "import sys, depthdyn\n"
        "assert 'matplotlib' not in sys.modules, 'import depthdyn imported matplotlib'\n"
        "from depthdyn.plot import plot_spectrum\n"
        "plot_spectrum([[0.5, 0.0], [0.0, -0.5]]).figure.savefig(__import__('io').BytesIO(), format='png')\n"
        "assert 'matplotlib.pyplot' not in sys.modules, 'depthdyn.plot used pyplot'\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr


def test_stability_numbers_marks():
    from depthdyn import stability_numbers
    from depthdyn.families import adams_bashforth, bdf
    from depthdyn.plot import plot_stability_region

    ax = plot_stability_region(bdf(k=4), x=("re(lam)", -10, 30, 81), y=("im(lam)", -20, 20, 81), numbers=True)
    gids = [line.get_gid() for line in ax.lines]
    assert gids.count("A(alpha) sector") == 2 and "real interval" in gids
    ray = next(line for line in ax.lines if line.get_gid() == "A(alpha) sector")
    (x0, x1), (y0, y1) = ray.get_xdata(), ray.get_ydata()
    angle = np.degrees(np.arctan2(abs(y1 - y0), -(x1 - x0)))
    assert abs(angle - stability_numbers(bdf(k=4)).a_alpha_degrees) < 1e-9
    sn = stability_numbers(adams_bashforth(k=3))
    ax = plot_stability_region(adams_bashforth(k=3), x=("re(lam)", -1, 0.3, 41), y=("im(lam)", -1, 1, 41),
                               numbers=sn)
    seg = next(line for line in ax.lines if line.get_gid() == "imaginary interval")
    assert np.allclose(seg.get_ydata(), [sn.imag_interval.lo_value, sn.imag_interval.hi_value])
    assert np.allclose(seg.get_xdata(), 0)
    with pytest.raises(ParameterError, match="re\\(lam\\), im\\(lam\\)"):
        plot_stability_region(momentum(), x=("re(lam)", -5, 1, 21), y=("m", 0, 0.9, 11), eta=1, numbers=sn)


# ------------------------------------------------------------------ publication-ready text
def _drawn_text(ax) -> list[str]:
    """Every text matplotlib draws for the axes: labels, title, legend entries, tick-free."""
    fig = ax.figure
    fig.canvas.draw()  # the mathtext parser runs here: malformed TeX would raise
    texts = [ax.get_xlabel(), ax.get_ylabel(), ax.get_title()]
    if ax.get_legend() is not None:
        texts += [t.get_text() for t in ax.get_legend().get_texts()]
    return texts


def test_region_labels_legend_and_title_are_latex():
    ax = plot_stability_region(momentum(), x=("re(lam)", -5, 1, 61), y=("m", 0, 0.99, 30), eta=1)
    texts = _drawn_text(ax)
    assert r"$\mathrm{Re}\,\lambda$" in texts and "$m$" in texts
    assert not any("lam" in t.replace(r"\lambda", "") for t in texts), texts  # no code names left
    conds = [t for t in texts if t.endswith("= 0$")]
    assert len(conds) == 2 and all(t.startswith("$") for t in conds)


def test_complex_plane_region_is_drawn_at_equal_aspect():
    ax = plot_stability_region(momentum(), x=("re(lam)", -4, 1, 40), y=("im(lam)", -1, 1, 30), m=0.5, eta=1)
    assert ax.get_aspect() == 1.0
    other = plot_stability_region(momentum(), x=("re(lam)", -5, 1, 40), y=("m", 0, 0.99, 20), eta=1)
    assert other.get_aspect() != 1.0  # a parameter plane keeps the auto aspect


def test_titles_name_the_structural_parameters():
    from depthdyn import dense, smooth

    ax = plot_trajectories(dense(k=3), [1.0, 0.5, 0.2], 10, lam=-0.5, h=1)
    assert "$k = 3$" in ax.get_title()
    ax = plot_trajectories(smooth(k=2), [1.0, 1.0], 10, lam=-0.5, h=1)
    assert "$k = 2$" in ax.get_title()
    ax = plot_spectrum(entangled(n=4), gamma=0.5, lam=0.2)
    assert "$n = 4$" in ax.get_title()


def test_trajectory_scales():
    from depthdyn import residual

    ax = plot_trajectories(residual(), [1.0], 20, param="lam", values=[0.5, -1.5], scale="symlog")
    assert ax.get_yscale() == "symlog" and "symmetric log" in ax.get_ylabel()
    ax = plot_trajectories(residual(), [1.0], 20, param="lam", values=[0.5, -0.5], scale="log")
    assert ax.get_yscale() == "log"
    assert plot_trajectories(residual(), [1.0], 5, lam=0.1).get_yscale() == "linear"
    with pytest.raises(ParameterError, match="positive values"):
        plot_trajectories(residual(), [1.0], 20, param="lam", values=[-1.5], scale="log")  # sign changes
    with pytest.raises(ParameterError, match="scale must be"):
        plot_trajectories(residual(), [1.0], 5, lam=0.1, scale="loglog")
    with pytest.raises(ParameterError, match="linthresh"):
        plot_trajectories(residual(), [1.0], 5, lam=0.1, scale="symlog", linthresh=0)


# ------------------------------------------------------------------ products over depth, side by side
def test_exponent_figure_draws_the_running_estimates():
    from depthdyn import lyapunov
    from depthdyn.plot import plot_exponents

    # constant layers diag(2, 1/2): the exponents are log 2 and log 1/2; with both of them the
    # running estimates add up to log|det| = 0 after every layer, whatever the random start
    depth = 400
    spec = lyapunov(np.broadcast_to(np.diag([2.0, 0.5]), (depth, 2, 2)), k=2)
    ax = plot_exponents(spec, exact=[np.log(2), np.log(0.5)])
    estimates, references = ax.get_lines()[:2], ax.get_lines()[2:]
    assert [line.get_label() for line in estimates] == ["$\\lambda_{1}$", "$\\lambda_{2}$"]
    assert np.allclose(estimates[0].get_xdata(), np.arange(1, depth + 1))
    assert np.allclose(estimates[0].get_ydata() + estimates[1].get_ydata(), 0.0, atol=1e-12)
    assert abs(estimates[0].get_ydata()[-1] - np.log(2)) < 0.01  # the running mean converges like 1/L
    assert np.allclose([line.get_ydata()[0] for line in references], [np.log(2), np.log(0.5)])
    assert ax.get_xscale() == "log" and ax.get_legend() is not None
    # a different product moves the lines: the figure draws the data, not a fixed picture
    other = plot_exponents(lyapunov(np.broadcast_to(np.diag([3.0, 0.5]), (depth, 2, 2)), k=2))
    lines = other.get_lines()
    assert np.allclose(lines[0].get_ydata() + lines[1].get_ydata(), np.log(1.5), atol=1e-12)
    with pytest.raises(ParameterError, match="LyapunovSpectrum"):
        plot_exponents(np.zeros((3, 2)))
    with pytest.raises(ParameterError, match="Axes"):
        plot_exponents(spec, ax="not an axes")


def test_composite_gain_figure_draws_log10_of_the_gain():
    from depthdyn import composite_gains
    from depthdyn.plot import plot_composite_gains
    from depthdyn.products import hc_vs_mhc

    stochastic = composite_gains(np.array([[[0.75, 0.25], [0.25, 0.75]]] * 8), "doubly stochastic")
    growing = composite_gains(np.array([[[2.0, 0.0], [0.0, 1.0]]] * 8), "diag(2, 1)")
    ax = plot_composite_gains([stochastic, growing])
    flat, up = ax.get_lines()
    assert np.allclose(flat.get_ydata(), 0.0)  # row sums 1: the infinity norm stays 1
    assert np.allclose(up.get_ydata(), np.arange(1, 9) * np.log10(2))  # ||diag(2, 1)^l||_inf = 2^l
    assert flat.get_label().startswith("doubly stochastic") and ax.get_yscale() == "linear"
    both = plot_composite_gains(hc_vs_mhc(layers=10, n=3, samples=4, seed=0))
    assert len(both.get_lines()) == 2 and len(both.collections) == 2  # a band per composite over 4 samples
    with pytest.raises(ParameterError, match="CompositeGains"):
        plot_composite_gains([])
    with pytest.raises(ParameterError, match="CompositeGains"):
        plot_composite_gains([np.eye(2)])


def test_comparison_figure_overlays_one_region_per_family():
    from depthdyn import compare
    from depthdyn.plot import plot_comparison

    table = compare("residual", "momentum:m=1/2", n=41)
    ax = plot_comparison(table)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["residual", "momentum, $m = 1/2$"]
    assert len(ax.images) >= 2 and ax.get_aspect() == 1.0
    assert ax.get_xlim() == pytest.approx(table.box[:2]) and ax.get_ylim() == pytest.approx(table.box[2:])
    with pytest.raises(ParameterError, match="ComparisonTable"):
        plot_comparison(table.rows)


def test_house_style_keeps_interactive_mode_switched_on_inside_it():
    """pyplot's first import inside a figure function (Jupyter) turns interactive mode on; it stays on."""
    import matplotlib as mpl

    from depthdyn.style import house_style

    before, size = mpl.rcParams["interactive"], mpl.rcParams["font.size"]
    try:
        mpl.interactive(False)
        with house_style():
            mpl.interactive(True)
            mpl.rcParams["font.size"] = size + 7
        assert mpl.rcParams["interactive"] is True  # the inline backend keeps showing figures
        assert mpl.rcParams["font.size"] == size    # every other setting is restored
    finally:
        mpl.interactive(before)
