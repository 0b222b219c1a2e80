"""The report's figures: which recurrence each family's figures draw, their captions, how they are rendered.

Each family of the sources has a list of :class:`FigureSpec` (:func:`specs`); :func:`render`
draws one in the house style of :mod:`depthdyn.style` and returns its bytes in every format
asked for, with a note on the stable area for a figure of the complex ``lam`` plane (exact
where :func:`exact_area` knows it).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import sympy as sp

from .families import family_recurrences

__all__ = ["FigureSpec", "FORMATS", "exact_area", "area_note", "new_report_figure", "render", "specs"]

_SIZE = (6.4, 4.8)
#: Figure formats written by default: PNG (linked from report.md) and PDF (vector).
FORMATS = ("png", "pdf")


# ------------------------------------------------------------------ figures
@dataclass(frozen=True)
class FigureSpec:
    """One figure: a file stem, a drawing function ``draw(fig)`` and its caption."""

    stem: str
    draw: Callable
    caption: str


def new_report_figure():
    """A new figure of the report's size in the house style (never through pyplot)."""
    from matplotlib.figure import Figure

    from ..style import house_style

    with house_style():
        return Figure(figsize=_SIZE, layout="constrained")


def _single_axes(fig):
    from ..plot.common import single_axes  # matplotlib: imported when a figure is drawn

    return single_axes(fig)


def _region(rec_fn, x, y, **fixed):
    def draw(fig):
        from ..plot import plot_stability_region

        # a complex plane is drawn at equal aspect
        plot_stability_region(rec_fn(), ax=_single_axes(fig), x=x, y=y, **fixed)

    return draw


def _traj(rec_fn, initial, L, param, values, yscale=None, **fixed):
    def draw(fig):
        from ..plot import plot_trajectories

        plot_trajectories(rec_fn(), initial, L, ax=_single_axes(fig), param=param, values=values,
                          scale=yscale or "linear", **fixed)

    return draw


def _locus(rec_fn, param, values, **fixed):
    def draw(fig):
        from ..plot import plot_root_locus

        plot_root_locus(rec_fn(), param, values, ax=_single_axes(fig), **fixed)

    return draw


def _oscillator_traj(fig):
    """Both discretisations of the oscillator toy from x_0 = x_1 = 1, with cos(beta l / L)."""
    from ..families import oscillator
    from ..plot import plot_trajectories
    from ..plot.common import place_legend
    from ..style import REFERENCE

    beta, depth, layers = math.pi / 2, 16, 64
    ax = _single_axes(fig)
    for form in ("block", "explicit"):
        rec = oscillator(form=form, L=depth)
        plot_trajectories(rec, [1.0, 1.0], layers, ax=ax, param="beta", values=[beta])
    block, explicit = ax.get_lines()[:2]
    block.set_label(r"block form: $x_{l+1} - (2 - \beta^2/L^2)\,x_l + x_{l-1} = 0$")
    explicit.set_label(r"explicit form (as printed): $x_{l+1} - 2x_l + (1 + \beta^2/L^2)\,x_{l-1} = 0$")
    ll = np.linspace(0, layers, 400)
    ax.plot(ll, np.cos(beta * ll / depth), color=REFERENCE, lw=1.0, ls="--",
            label=r"continuum $\cos(\beta l / L)$")
    ax.set_title(rf"oscillator toy: $x_l$ over depth ($\beta = \pi/2$, $L = {depth}$)")
    place_legend(ax)


def specs() -> dict[str, list[FigureSpec]]:
    """Family name -> the figures of its report section, in order."""
    from .. import families as fam

    R = family_recurrences()
    osc_locus = np.linspace(0.0, 2.5, 126)
    return {
        "residual": [
            FigureSpec("residual-region",
                       _region(R["residual"], ("re(lam)", -3, 1, 301), ("im(lam)", -2, 2, 301)),
                       "Residual block in the complex `lam` plane: shaded points are strictly stable "
                       "(`|1 + lam| < 1`), the disc of radius 1 about `lam = -1`; the dashed curve is the "
                       "exact boundary locus `lam = e^{it} - 1`."),
            FigureSpec("residual-trajectories",
                       _traj(R["residual"], [1.0], 30, "lam", [0.05, -0.5, -1.5, -2.1], yscale="symlog"),
                       "Residual block, `x_l` over 30 layers from `x_0 = 1` (symmetric log scale) for real "
                       "`lam` = 0.05 (slow growth, "
                       "factor 1.05), -0.5 (monotone decay), -1.5 (alternating decay, factor -0.5) and -2.1 "
                       "(alternating growth, factor -1.1)."),
        ],
        "rezero": [
            FigureSpec("rezero-region", _region(R["rezero"], ("re(lam)", -3, 1, 301), ("a", 0, 3, 201)),
                       "ReZero over real `lam` and gain `a`: shaded points are strictly stable; the coloured "
                       "curves are the exact boundaries `a lam = 0` (`lam = 0`) and `a lam = -2` (a "
                       "hyperbola), "
                       "so at `a = 0` (the initialisation) no point is strictly stable: the block is the "
                       "identity."),
            FigureSpec("rezero-trajectories", _traj(R["rezero"], [1.0], 30, "a", [0.0, 0.5, 2.5], lam=-1),
                       "ReZero at `lam = -1`, `x_l` from `x_0 = 1` for `a` = 0 (identity: constant), 0.5 "
                       "(factor 0.5, decay) and 2.5 (factor -1.5, alternating growth)."),
        ],
        "weighted": [
            FigureSpec("weighted-region", _region(R["weighted"], ("re(lam)", -3, 2, 301), ("a", -2, 2, 201)),
                       "Weighted residual over real `lam` and skip weight `a`: strictly stable exactly on "
                       "the "
                       "diagonal band `-1 < a + lam < 1`, bounded by the two exact lines drawn."),
            FigureSpec("weighted-trajectories",
                       _traj(R["weighted"], [1.0], 30, "a", [0.5, 1.0, 1.2], lam=-0.1),
                       "Weighted residual at `lam = -0.1`, `x_l` from `x_0 = 1` for `a` = 0.5, 1.0, 1.2 "
                       "(factors 0.4, 0.9 and 1.1: fast decay, slow decay, growth)."),
        ],
        "highway": [
            FigureSpec("highway-region", _region(R["highway"], ("re(lam)", -3, 2, 301), ("g", 0, 1, 201)),
                       "Highway block over real `lam` and gate `g`: shaded points are strictly stable; the "
                       "exact "
                       "boundaries are `lam = 1` and `g (lam - 1) = -2`; at `g = 0` (gate closed) the block "
                       "is "
                       "the identity and nothing is strictly stable."),
            FigureSpec("highway-trajectories", _traj(R["highway"], [1.0], 30, "g", [0.0, 0.5, 1.0], lam=0.5),
                       "Highway block at `lam = 0.5`, `x_l` from `x_0 = 1` for gate `g` = 0, 0.5, 1 "
                       "(factors 1, 0.75, 0.5: the more open the gate, the faster the decay)."),
        ],
        "momentum": [
            FigureSpec("momentum-region",
                       _region(R["momentum"], ("re(lam)", -5, 1, 301), ("m", 0, 0.99, 200), eta=1),
                       "Momentum block at `eta = 1` over real `lam` and carry `m`: shaded points are "
                       "strictly "
                       "stable; the exact boundary is `lam = 0` and `lam = -2(1 + m)`, so momentum widens "
                       "the "
                       "stable interval from `(-2, 0)` at `m = 0` towards `(-4, 0)`."),
            FigureSpec("momentum-trajectories",
                       _traj(R["momentum"], [1.0, 1.0], 40, "m", [0.0, 0.5, 0.9], lam=-0.3, eta=1),
                       "Momentum block at `lam = -0.3`, `eta = 1`, `x_l` from `x_0 = x_1 = 1` for `m` = 0 "
                       "(plain residual, monotone decay), 0.5 and 0.9 (complex roots of modulus `sqrt(m)`: "
                       "damped oscillation, slower for larger `m`)."),
        ],
        "oscillator": [
            FigureSpec("oscillator-region",
                       _region(R["oscillator"], ("beta", 0, 6, 301), ("L", 0.25, 4, 200)),
                       "Oscillator toy (block form) over `beta` and `L`: no point is strictly stable (the "
                       "roots' product is 1, legend: exact 'never strictly stable'); the dark area is where "
                       "the root condition holds (two simple roots on the unit circle), `0 < beta < 2L`."),
            FigureSpec("oscillator-trajectories", _oscillator_traj,
                       "Oscillator toy at `beta = pi/2`, `L = 16`, 64 layers from `x_0 = x_1 = 1`: the block "
                       "form follows the continuum `cos(beta l / L)` (dashed) with constant amplitude, the "
                       "explicit form as printed in 000 §3 grows (root modulus `sqrt(1 + beta^2/L^2) > 1`)."),
            FigureSpec("oscillator-root-locus",
                       _locus(lambda: fam.oscillator(L=1), "beta", osc_locus),
                       "Roots of the block-form oscillator at `L = 1` as `beta` goes from 0 to 2.5: a double "
                       "root at `r = 1` for `beta = 0`, then a conjugate pair on the unit circle until "
                       "`beta = 2`, after which both roots are real and negative and one leaves the circle."),
        ],
        "smooth": [
            FigureSpec("smooth-region",
                       _region(R["smooth"], ("re(lam)", -9, 1, 301), ("h", 0.5, 2, 201)),
                       "`C^2` smooth network over real `lam` and step `h`: no point is strictly stable (the "
                       "product of the roots is 1, legend: exact 'never strictly stable'); the dark area is "
                       "where the root condition holds (two simple roots on the unit circle), "
                       "`-4 < h^2 lam < 0`. In the complex `lam` plane this set is only the real segment "
                       "`(-4/h^2, 0)`: a picture of that plane would be empty."),
            FigureSpec("smooth-root-locus",
                       _locus(R["smooth"], "lam", np.linspace(-5.0, 1.0, 121), h=1),
                       "Roots of the `C^2` network (`h = 1`) as real `lam` moves from -5 to 1: a reciprocal "
                       "pair `r, 1/r`; on the unit circle for `-4 <= lam <= 0`, one root outside otherwise."),
            FigureSpec("smooth-trajectories",
                       _traj(R["smooth"], [1.0, 1.0], 30, "lam", [0.2, -1.0, -3.0, -4.5], yscale="symlog",
                             h=1),
                       "`C^2` network (`h = 1`), `x_l` from `x_0 = x_1 = 1` on a symmetric log scale for "
                       "`lam` = "
                       "-1 and -3 (bounded oscillation: roots on the unit circle), 0.2 (monotone growth) "
                       "and -4.5 "
                       "(alternating growth): outside `[-4, 0]` one root lies outside the circle."),
        ],
        "dense": [
            FigureSpec("dense-region",
                       _region(R["dense"], ("re(lam)", -3, 1, 301), ("im(lam)", -2, 2, 301), h=1),
                       "Dense network, `k = 2` lags, `h = 1`, in the complex `lam` plane: the root `r = -1` "
                       "is "
                       "always present, so nothing is strictly stable; the dark disc `|1 + lam| < 1` is "
                       "where "
                       "the root condition holds, bounded by the dashed boundary locus."),
            FigureSpec("dense-trajectories",
                       _traj(R["dense"], [1.0, 0.5], 30, "lam", [-0.5, -1.5, -2.5], yscale="symlog", h=1),
                       "Dense network (`k = 2`, `h = 1`), `x_l` from `x_0 = 1`, `x_1 = 0.5` on a symmetric "
                       "log "
                       "scale for `lam` = -0.5, "
                       "-1.5 (the residual mode `(1 + lam)^l` decays, the `(-1)^l` mode persists) and -2.5 "
                       "(the residual mode grows)."),
        ],
        "entangled": [
            FigureSpec("entangled-region",
                       _region(R["entangled"], ("re(lam)", -3, 1, 301), ("gamma", 0, 1, 201)),
                       "Entangled residual, uniform `Gamma`, `n = 3`, over real `lam` and `gamma`: strictly "
                       "stable where both eigenvalues `1 + lam` and `1 - gamma + lam` of the one-step map "
                       "lie in "
                       "`(-1, 1)`, i.e. `gamma - 2 < lam < 0`; lines are the exact Schur–Cohn boundaries."),
            FigureSpec("entangled-trajectories",
                       _traj(R["entangled"], [[1.0, 0.0, 0.0]], 20, "gamma", [0.0, 0.4, 0.8], yscale="log",
                             lam=-1.5),
                       "Entangled residual (`n = 3`) at `lam = -1.5`, `|x_l|` (log scale) from `x_0 = e_1` "
                       "for "
                       "`gamma` = 0, 0.4, 0.8: eigenvalue `-0.5 - gamma` has modulus 0.5, 0.9, 1.3, so "
                       "decay, "
                       "slow decay and growth."),
        ],
        "hyper_connection": [
            FigureSpec("hyper_connection-region",
                       _region(R["hyper_connection"], ("re(lam)", -3, 1, 301), ("hres_1_1", 0, 1, 201)),
                       "Hyper-connections, 2 streams, `H_pre = [1, 0]`, `H_post = [1, 1]`, over real `lam` "
                       "and "
                       "`h = hres_1_1`: the eigenvalues are `1 + lam` and `2h - 1`, so the strictly stable "
                       "set "
                       "is `-2 < lam < 0`, `0 < h < 1`; lines are the exact Schur–Cohn boundaries."),
            FigureSpec("hyper_connection-trajectories",
                       _traj(R["hyper_connection"], [[1.0, 0.0]], 20, "hres_1_1", [0.0, 0.25, 1.0], lam=-0.5),
                       "Hyper-connections (2 streams) at `lam = -0.5`, `|x_l|` from `x_0 = e_1` for `h` = 0, "
                       "0.25, 1. The eigenvalues are `1 + lam = 0.5` and `2h - 1`: at `h = 0` (swap) and `h "
                       "= 1` "
                       "(identity `H_res`) the second is -1 or 1 and `|x_l|` settles at a non-zero "
                       "constant; at "
                       "`h = 0.25` it is -0.5 and `x_l` decays to 0."),
        ],
        "general": [
            FigureSpec("general-region",
                       _region(R["general"], ("re(lam)", -1.5, 0.5, 301), ("im(lam)", -1, 1, 301)),
                       "Adams–Bashforth 2 depth model in the complex `lam` plane: the shaded points are "
                       "strictly "
                       "stable; the dashed curve is the exact boundary locus `lam = rho(e^{it}) / "
                       "sigma(e^{it})`; "
                       "on the real axis the interval is `(-1, 0)`."),
            FigureSpec("general-trajectories",
                       _traj(R["general"], [1.0, 1.0], 40, "lam", [-0.5, -0.9, -1.1], yscale="symlog"),
                       "Adams–Bashforth 2 model, `x_l` from `x_0 = x_1 = 1` (symmetric log scale) for real "
                       "`lam` = -0.5 (decay), "
                       "-0.9 (slow alternating decay) and -1.1 (outside `(-1, 0)`: alternating growth)."),
        ],
        **_multistep_specs(R),
    }


def _multistep_specs(R) -> dict[str, list[FigureSpec]]:
    """Region (with the exact intervals and A(alpha) sector marked) and trajectories per method."""
    marks = "thick segments mark the exact real and imaginary stability intervals of `depthdyn stability`"
    return {
        "adams_bashforth": [
            FigureSpec("adams_bashforth-region",
                       _region(R["adams_bashforth"], ("re(lam)", -1, 0.3, 201), ("im(lam)", -1, 1, 201),
                               numbers=True),
                       f"Adams–Bashforth 3 in the complex `z = lam` plane; {marks}: `(-6/11, 0)` on the real "
                       "axis and `i (-12 sqrt(11)/55, 12 sqrt(11)/55)` (about `+-0.7236 i`)."),
            FigureSpec("adams_bashforth-trajectories",
                       _traj(R["adams_bashforth"], [1.0, 1.0, 1.0], 40, "lam", [-0.3, -0.5, -0.6],
                             yscale="symlog"),
                       "Adams–Bashforth 3, `x_l` from `x_0 = x_1 = x_2 = 1` for real `lam` = -0.3, -0.5 "
                       "(inside `(-6/11, 0)`: decay) and -0.6 (outside: growth)."),
        ],
        "adams_moulton": [
            FigureSpec("adams_moulton-region",
                       _region(R["adams_moulton"], ("re(lam)", -7, 1, 201), ("im(lam)", -4, 4, 201)),
                       "Adams–Moulton 2 (order 3) in the complex `lam` plane: the dashed boundary locus meets "
                       "the real axis at -6 and 0 (`depthdyn stability adams_moulton -p k=2`)."),
            FigureSpec("adams_moulton-trajectories",
                       _traj(R["adams_moulton"], [1.0, 1.0], 40, "lam", [-1.0, -5.0, -6.5], yscale="symlog"),
                       "Adams–Moulton 2, `x_l` from `x_0 = x_1 = 1` for `lam` = -1, -5 (inside `(-6, 0)`) "
                       "and -6.5 (outside: alternating growth)."),
        ],
        "bdf": [
            FigureSpec("bdf-region",
                       _region(R["bdf"], ("re(lam)", -6, 12, 201), ("im(lam)", -9, 9, 201), numbers=True),
                       f"BDF 3 in the complex `lam` plane: stable outside the bounded curve; {marks}, and "
                       "the dash-dotted rays bound the A(alpha) sector, `alpha = 86.03` degrees exactly "
                       "`180 atan(329 sqrt(35)/135)/pi`."),
            FigureSpec("bdf-trajectories",
                       _traj(R["bdf"], [1.0, 1.0, 1.0], 40, "lam", [-0.5, -5.0, -50.0]),
                       "BDF 3, `x_l` from `x_0 = x_1 = x_2 = 1` for `lam` = -0.5, -5 and -50: decay for "
                       "every negative real `lam`."),
        ],
        "nystrom": [
            FigureSpec("nystrom-region",
                       _region(R["nystrom"], ("re(lam)", -1.5, 1.5, 201), ("im(lam)", -1.5, 1.5, 201)),
                       "Leapfrog (Nyström 2) in the complex `lam` plane: no point is strictly stable; the "
                       "root condition holds exactly on the segment `i (-1, 1)` (`marginal_conditions`), "
                       "drawn dark where the grid hits it."),
            FigureSpec("nystrom-trajectories",
                       _traj(R["nystrom"], [1.0, 1.0], 40, "lam", [-0.05, -0.2], yscale="symlog"),
                       "Leapfrog, `x_l` from `x_0 = x_1 = 1` for real `lam` = -0.05 and -0.2: the parasitic "
                       "root below -1 makes every negative real `lam` grow in alternation."),
        ],
        "milne_simpson": [
            FigureSpec("milne_simpson-region",
                       _region(R["milne_simpson"], ("re(lam)", -2, 2, 201), ("im(lam)", -2.5, 2.5, 201)),
                       "Milne–Simpson 2 in the complex `lam` plane: never strictly stable; the root "
                       "condition holds exactly on `i (-sqrt(3), sqrt(3))`."),
            FigureSpec("milne_simpson-trajectories",
                       _traj(R["milne_simpson"], [1.0, 1.0], 40, "lam", [-0.05, -0.5], yscale="symlog"),
                       "Milne–Simpson 2, `x_l` from `x_0 = x_1 = 1` for real `lam` = -0.05 and -0.5: slow "
                       "alternating growth from the parasitic root."),
        ],
        "lmm": [
            FigureSpec("lmm-region",
                       _region(R["lmm"], ("re(lam)", -4, 4, 201), ("im(lam)", -4, 4, 201)),
                       "The trapezoidal rule given as `alpha = [-1, 1]`, `beta = [1/2, 1/2]`: strictly stable "
                       "on the open left half-plane (A-stable); the boundary locus is the imaginary axis."),
            FigureSpec("lmm-trajectories",
                       _traj(R["lmm"], [1.0], 30, "lam", [-0.5, -3.0, 0.2], yscale="symlog"),
                       "Trapezoidal rule, `x_l` from `x_0 = 1` for `lam` = -0.5, -3 (decay, alternating for "
                       "`lam < -2`) and 0.2 (growth)."),
        ],
    }




def exact_area(rec):
    """Exact area of the strictly stable set in the complex ``lam`` plane, or None where not known here.

    Known: a first-order scalar recurrence whose root is ``c0 + c1 lam`` (numbers ``c0``,
    ``c1 != 0``): the stable set is the disc ``|c0 + c1 lam| < 1`` of radius ``1/|c1|``,
    area ``pi / |c1|^2``.

    >>> from depthdyn import residual, rezero
    >>> exact_area(residual()), exact_area(rezero(a=2)), exact_area(rezero()) is None
    (pi, pi/4, True)
    """
    from ..symbolic.polynomial import charpoly

    lam = rec.symbols.get(rec.lam) if rec.lam else None
    if lam is None or not rec.is_scalar or rec.order != 1:
        return None
    r = sp.Symbol("r")
    p = sp.Poly(sp.expand(charpoly(rec)), r)
    if p.degree() != 1:
        return None
    root = sp.expand(-p.nth(0) / p.nth(1))
    if root.free_symbols != {lam} or not root.is_polynomial(lam) or sp.degree(root, lam) != 1:
        return None
    return sp.pi / sp.Abs(root.coeff(lam, 1)) ** 2


def area_note(fig, rec) -> str:
    """For a figure of the complex ``lam`` plane: the stable area, exact where known, else the grid's count."""
    ax = fig.axes[0]
    if not (ax.images and "Re" in ax.get_xlabel() and "Im" in ax.get_ylabel()):
        return ""
    mask = np.asarray(ax.images[0].get_array(), dtype=bool)
    x0, x1, y0, y1 = ax.images[0].get_extent()
    grid = float(mask.sum()) * (x1 - x0) * (y1 - y0) / mask.size
    exact = exact_area(rec)
    if exact is not None:
        return (f" Strictly stable area in the `lam` plane: exactly `{sp.sstr(exact)}` = {float(exact):.6g} "
                f"(a disc; the figure's grid counts {grid:.4g}).")
    edge = mask[0].any() or mask[-1].any() or mask[:, 0].any() or mask[:, -1].any()
    if not mask.any():
        return " Strictly stable area in the `lam` plane: 0 (no grid point of the window is strictly stable)."
    return (f" Strictly stable area in the `lam` plane: {'at least' if edge else 'approx.'} {grid:.4g} "
            f"({'the set reaches the edge of the window' if edge else 'grid count'}; no exact formula here).")


def render(spec: FigureSpec, formats=FORMATS, rec=None) -> tuple[dict, str]:
    """Draw one report figure and return ``({format: bytes}, area note)``."""
    from ..style import figure_bytes

    fig = new_report_figure()
    spec.draw(fig)
    note = area_note(fig, rec) if rec is not None else ""
    return {fmt: figure_bytes(fig, fmt) for fmt in formats}, note
