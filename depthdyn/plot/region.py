"""The stability-region picture: the fill (smooth from the spectral radius), the exact boundary over it."""

from __future__ import annotations

import numpy as np
import sympy as sp
from contourpy import contour_generator
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap, to_rgba
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ..errors import ParameterError, ShapeError
from ..numeric.bridge import batch_coefficients
from ..numeric.region import StabilityRegion, stability_region
from ..printing import tex
from ..recurrence import Recurrence
from ..style import GREEN, MARGINAL, PALETTE, PURPLE, STABLE, VERMILION, family_label, styled
from .common import fixed_text, is_complex_plane, math_label, place_legend, prepare_axes

__all__ = ["plot_stability_region"]

_OVERLAYS = ("auto", "locus", "conditions", "both", "none")


def _condition_symbol(axis: str, names: set) -> str:
    """Name of the condition symbol for an axis (``re(lam)`` -> ``lam_re`` or ``lam``)."""
    if axis[:3] in ("re(", "im(") and axis.endswith(")"):
        base, part = axis[3:-1], axis[:2]
        return f"{base}_{part}" if f"{base}_{part}" in names or part == "im" else base
    return axis


def _fn(expr, sx, sy):
    f = sp.lambdify((sx, sy), expr, "numpy")

    def call(x, y):
        with np.errstate(all="ignore"):
            return np.broadcast_to(f(x, y), np.broadcast_shapes(np.shape(x), np.shape(y))).astype(float)

    return call


def _zero_pieces(f, grad, Z, reg: StabilityRegion, cell) -> list:
    """Polylines of ``f = 0``: contoured on the grid, each vertex then moved onto the exact curve."""
    pieces = contour_generator(reg.x, reg.y, np.ma.masked_invalid(Z)).lines(0.0)
    for P in pieces:
        for _ in range(6):  # Newton steps along the gradient; a step beyond a cell is refused
            g = np.column_stack([d(P[:, 0], P[:, 1]) for d in grad])
            with np.errstate(all="ignore"):
                step = (f(P[:, 0], P[:, 1]) / np.sum(g * g, axis=1))[:, None] * g
            ok = np.all(np.isfinite(step) & (np.abs(step) < cell), axis=1)
            P[ok] -= step[ok]
    return pieces


def _draw_conditions(ax: Axes, reg: StabilityRegion) -> list:
    """The exact boundary from the conditions ``expr_i > 0``; returns the lines drawn.

    Each ``expr_i = 0`` is found on the grid, its vertices are moved onto the exact curve,
    and only the vertices where every other condition holds (to 1e-9 of its largest
    value on the grid) are kept: the pieces that bound the region, not the branches
    outside it. Each condition is one line (pieces separated by NaN), ``gid`` ``"expr = 0"``.
    """
    conds = reg.conditions
    if conds.never:
        return [Line2D([], [], ls="none", label="exact: never strictly stable")]
    syms = {s.name: s for s, _ in conds.domains}
    sx, sy = (syms.get(_condition_symbol(a, syms), sp.Symbol(a)) for a in (reg.x_name, reg.y_name))
    fns = []
    for cond in conds.conditions:  # a condition on a parameter off the axes cannot be drawn
        if cond.lhs.free_symbols <= {sx, sy}:
            f = _fn(cond.lhs, sx, sy)
            Z = f(reg.x[None, :], reg.y[:, None])
            scale = np.nanmax(np.abs(Z)) if np.isfinite(Z).any() else 0.0
            fns.append((cond.lhs, f, Z, 1e-9 * scale))
    lines = []
    for i, (expr, f, Z, _) in enumerate(fns):
        finite = Z[np.isfinite(Z)]
        if not (finite.size and finite.min() < 0 < finite.max()):
            continue  # no zero crossing on this grid
        grad = [_fn(sp.diff(expr, v), sx, sy) for v in (sx, sy)]
        cell = np.array([np.ptp(reg.x) / (reg.x.size - 1), np.ptp(reg.y) / (reg.y.size - 1)])
        kept = []
        for P in _zero_pieces(f, grad, Z, reg, cell):
            hold = np.ones(len(P), bool)
            for _, g, _, tol in fns[:i] + fns[i + 1:]:
                hold &= g(P[:, 0], P[:, 1]) >= -tol
            cuts = np.flatnonzero(np.diff(hold.astype(int))) + 1
            kept += [r for r, k in zip(np.split(P, cuts), np.r_[0, cuts], strict=True)  # no 1-cell stubs
                     if hold[k] and np.hypot(*(np.diff(r, axis=0) / cell).T).sum() > 1.5]
        if not kept:
            continue
        xy = np.concatenate([np.vstack([r, [np.nan, np.nan]]) for r in kept])[:-1]
        text = sp.sstr(expr)  # the gid keeps the expression whole and parsable; the legend is mathtext
        # TeX cannot be cut: a long condition is named in the legend, written out in full in the gid
        # the curve, not the inequality: -lam = 0 is read lam = 0
        shown = -expr if expr.could_extract_minus_sign() else expr
        label = f"${tex(shown)} = 0$" if len(text) <= 60 else f"$q_{{{i + 1}}} = 0$ (exact condition {i + 1})"
        (line,) = ax.plot(*xy.T, color=PALETTE[(i + 1) % len(PALETTE)], lw=1.4, zorder=3, label=label,
                          gid=f"{text} = 0")
        lines.append(line)
    return lines


def _plane_symbols(rec, reg: StabilityRegion):
    """The SymPy symbols of a region's two axes when both are real parameters (``re(lam)`` with a
    real other axis counts as ``lam``), or None for the complex plane of one parameter."""
    names = []
    for axis in (reg.x_name, reg.y_name):
        if axis[:3] == "im(":
            return None
        names.append(axis[3:-1] if axis[:3] == "re(" and axis.endswith(")") else axis)
    syms = rec.symbols
    return tuple(syms[n] for n in names) if all(n in syms for n in names) else None


def _edge_factors(rec, reg: StabilityRegion, sx, sy) -> list:
    """Candidate edges of a root-condition set over two real parameters, exactly.

    A simple root stays on the unit circle until it meets another one there (the discriminant
    in ``r`` vanishes) or leaves through ``r = 1`` or ``r = -1`` (the characteristic polynomial
    vanishes there): the irreducible factors of these three expressions in the axis symbols.
    """
    from ..errors import DepthdynError
    from ..symbolic.polynomial import discriminant

    values = {k: v for k, v in reg.fixed.items() if k not in _NOT_VALUES}
    try:
        sub = rec.subs(values) if values else rec
        p = sp.expand(sub.charpoly())
        if p.free_symbols - {sx, sy, sp.Symbol("r")} or sp.degree(p, sp.Symbol("r")) > 4:
            return []  # a parameter left without a value, or a degree too large to factor here
        exprs = [discriminant(sub), p.subs(sp.Symbol("r"), 1), p.subs(sp.Symbol("r"), -1)]
    except (DepthdynError, ValueError, TypeError, ArithmeticError, sp.PolynomialError):
        return []
    factors = []
    for e in exprs:
        num = sp.numer(sp.together(e))
        for f, _ in sp.factor_list(num)[1]:
            if f.free_symbols & {sx, sy} and not any(sp.expand(f - g) == 0 or sp.expand(f + g) == 0
                                                      for g in factors):
                factors.append(f)
    return factors


def _side_test(only: np.ndarray, reg: StabilityRegion, P: np.ndarray, normal: np.ndarray, cell) -> np.ndarray:
    """True at vertices with the root-condition set on exactly one side (1.5 cells along the normal)."""
    xs, ys = np.asarray(reg.x, float), np.asarray(reg.y, float)
    sides = []
    for sign in (1, -1):  # a side past the window's edge is read at the edge
        Q = P + sign * 1.5 * normal * cell
        i = np.clip(np.rint((Q[:, 1] - ys[0]) / cell[1]), 0, ys.size - 1).astype(int)
        j = np.clip(np.rint((Q[:, 0] - xs[0]) / cell[0]), 0, xs.size - 1).astype(int)
        sides.append(only[i, j])
    return sides[0] != sides[1]


def _draw_marginal_edges(ax: Axes, rec, reg: StabilityRegion, only: np.ndarray, fill) -> tuple:
    """The exact edges of a root-condition-only area over two real parameters, and its fill.

    Each candidate factor (:func:`_edge_factors`) is contoured on the grid, its vertices are
    moved onto the exact curve by Newton steps, and only the pieces with the root-condition set
    on one side and not on the other are kept. The area is filled from the product of the kept
    factors (its sign changes exactly on the edges), when that sign agrees with the grid's
    verdicts; else it is not filled here. Returns ``(lines, filled)``.
    """
    syms = _plane_symbols(rec, reg)
    if syms is None:
        return [], False
    sx, sy = syms
    xs, ys = np.asarray(reg.x, float), np.asarray(reg.y, float)
    cell = np.array([np.ptp(xs) / (xs.size - 1), np.ptp(ys) / (ys.size - 1)])
    lines, kept_values = [], []
    for expr in _edge_factors(rec, reg, sx, sy):
        f = _fn(expr, sx, sy)
        Z = f(xs[None, :], ys[:, None])
        finite = Z[np.isfinite(Z)]
        if not (finite.size and finite.min() < 0 < finite.max()):
            continue
        grad = [_fn(sp.diff(expr, v), sx, sy) for v in (sx, sy)]
        kept = []
        for P in _zero_pieces(f, grad, Z, reg, cell):
            g = np.column_stack([d(P[:, 0], P[:, 1]) for d in grad]) / cell  # in cells
            normal = g / np.maximum(np.hypot(*g.T), 1e-300)[:, None]
            hold = _side_test(only, reg, P, normal, cell)
            cuts = np.flatnonzero(np.diff(hold.astype(int))) + 1
            kept += [q for q, k in zip(np.split(P, cuts), np.r_[0, cuts], strict=True)
                     if hold[k] and np.hypot(*(np.diff(q, axis=0) / cell).T).sum() > 1.5]
        if not kept:
            continue
        xy = np.concatenate([np.vstack([q, [np.nan, np.nan]]) for q in kept])[:-1]
        shown = -expr if expr.could_extract_minus_sign() else expr
        text = sp.sstr(shown)
        label = f"${tex(shown)} = 0$" if len(text) <= 60 else "edge of the root-condition set"
        (line,) = ax.plot(*xy.T, color=PALETTE[(len(lines) + 1) % len(PALETTE)], lw=1.4, zorder=3,
                          label=label, gid=f"root condition: {text} = 0")
        lines.append(line)
        kept_values.append(Z)
    if not lines:
        return [], False
    D = np.prod(kept_values, axis=0)
    for sign in (1, -1):
        inside = sign * D > 0
        if np.mean(inside != only) <= 0.02:  # the sign of the product is the set, up to grid points on edges
            top = np.nanmax(sign * D)
            ax.contourf(xs, ys, sign * D, levels=[0.0, top * (1 + 1e-9) + 1e-300], colors=[fill], zorder=0.6)
            return lines, True
    return lines, False


_BAND = 1e-7  # |radius - 1| counted as on the unit circle when shading the root-condition-only area
_NOT_VALUES = ("tol", "method", "conditions", "convention", "threshold")


def _radius_grid(rec, reg: StabilityRegion):
    """Spectral radius on the region's grid (masked where not finite), or None where it cannot be had."""
    from ..errors import DepthdynError
    from ..numeric.spectra import spectral_radius

    X, Y = np.asarray(reg.x, float)[None, :], np.asarray(reg.y, float)[:, None]
    values = {k: v for k, v in reg.fixed.items() if k not in _NOT_VALUES}
    lam = 0j
    for name, grid in ((reg.x_name, X), (reg.y_name, Y)):
        if name[:3] in ("re(", "im(") and name.endswith(")"):
            lam = lam + (grid if name[:2] == "re" else 1j * grid)
        else:
            values[name] = grid + 0 * X * Y
    if not np.isscalar(lam):
        values[rec.lam] = lam + 0 * X * Y
    try:
        rho = spectral_radius(rec, values) if rec.is_scalar else \
            spectral_radius(batch_coefficients(rec, values), matrix=True)
    except (DepthdynError, ValueError, TypeError, ArithmeticError):
        return None
    rho = np.asarray(rho, float)
    return np.ma.masked_invalid(rho) if rho.shape == np.shape(reg.strict) else None


def _window(rec, fixed: dict) -> tuple:
    """Grid axes of the complex ``lam`` plane from the exact boundary locus: the curve and a margin."""
    from ..numeric.region import boundary_locus

    params = {k: v for k, v in fixed.items() if k not in _NOT_VALUES}
    try:
        z = np.concatenate([np.ravel(c) for c in boundary_locus(rec, 2048, **params)] or [np.zeros(0)])
    except (ValueError, TypeError, ArithmeticError):
        z = np.zeros(0)
    z = z[np.isfinite(z) & (np.abs(z) < 1e3)]
    if z.size == 0:
        return None, None  # no locus: the caller names the axes
    lo, hi = complex(z.real.min(), z.imag.min()), complex(z.real.max(), z.imag.max())
    span = max(hi.real - lo.real, hi.imag - lo.imag, 0.5)
    cx, cy, half = (lo.real + hi.real) / 2, (lo.imag + hi.imag) / 2, 0.65 * span
    return (f"re({rec.lam})", cx - half, cx + half, 301), (f"im({rec.lam})", cy - half, cy + half, 301)



def _interval_tex(iv) -> str:
    """An interval in maths notation for a legend: ``$(-2.785, 0)$``, ``$(-\\infty, -1.936]$``."""
    def end(v, value):
        return ("-" if v < 0 else "") + "\\infty" if sp.Abs(v) == sp.oo else f"{value:.4g}"

    if iv.is_empty:
        return "$\\emptyset$"
    left, right = "(" if iv.lo_open else "[", ")" if iv.hi_open else "]"
    return f"${left}{end(iv.lo, iv.lo_value)}, {end(iv.hi, iv.hi_value)}{right}$"


def _draw_numbers(ax: Axes, numbers, swap: bool) -> list:
    """Real/imaginary intervals as thick segments on the axes, the A(alpha) sector as two rays."""
    handles = []
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    far = 2 * max(abs(x0), abs(x1), abs(y0), abs(y1))

    def seg(iv):
        if iv.is_empty:
            return None
        return max(float(iv.lo_value), -far), min(float(iv.hi_value), far)

    for iv, along_real, color, label in ((numbers.real_interval, True, VERMILION, "real interval"),
                                         (numbers.imag_interval, False, GREEN, "imaginary interval")):
        ends = seg(iv)
        if ends is None:
            continue
        lo, hi = ends
        px, py = ((lo, hi), (0, 0)) if along_real else ((0, 0), (lo, hi))
        if swap:
            px, py = py, px
        (line,) = ax.plot(px, py, color=color, lw=4, solid_capstyle="butt", zorder=5,
                          label=f"{label} {_interval_tex(iv)}", gid=label)
        handles.append(line)
    if numbers.a_alpha_degrees is not None and numbers.a_alpha_degrees > 0:
        a, rays = np.radians(numbers.a_alpha_degrees), []
        for k, sgn in enumerate((1, -1)):
            px, py = np.array([0, -far * np.cos(a)]), np.array([0, sgn * far * np.sin(a)])
            if swap:
                px, py = py, px
            (line,) = ax.plot(px, py, color=PURPLE, lw=1.4, ls="-.", zorder=5, gid="A(alpha) sector",
                              label=f"$A(\\alpha)$ sector, $\\alpha = {numbers.a_alpha_degrees:.4f}^\\circ$"
                              if k == 0
                              else "_nolegend_")
            rays.append(line)
        handles.append(rays[0])
    ax.set(xlim=(x0, x1), ylim=(y0, y1))
    return handles


@styled
def plot_stability_region(region_or_rec, ax=None, *, x=None, y=None, overlay: str = "auto", numbers=None,
                          color=None, recurrence=None,
                          **fixed) -> Axes:
    """Draw a stability region: the grid mask with the exact boundary over it.

    Parameters
    ----------
    region_or_rec : StabilityRegion or Recurrence
        A computed region, or a recurrence whose region is computed here with
        :func:`~depthdyn.numeric.region.stability_region` (exact conditions are requested
        for ``order * dim <= 3``, ``<= 2`` with an ``im(lam)`` axis, unless ``conditions=`` is given).
    ax : matplotlib.axes.Axes, optional
        Axes to draw into; a new figure is made when omitted (so for every function).
    x, y : tuple, optional
        ``(name, lo, hi, n)`` grid axes (recurrence only), e.g. ``("re(lam)", -3, 1, 401)``.
    overlay : {"auto", "locus", "conditions", "both", "none"}
        The exact boundary drawn over the mask: the boundary-locus curves (lam plane),
        the exact Schur-Cohn conditions (each ``expr > 0`` as its zero set ``expr = 0``,
        where the other conditions hold), both, or none. ``auto``: the locus where there
        is one, else the conditions.
    numbers : StabilityNumbers or True, optional
        Mark the real and imaginary stability intervals (thick segments on the axes,
        ``gid`` ``"real interval"`` / ``"imaginary interval"``) and the A(alpha) sector (two
        rays, ``gid`` ``"A(alpha) sector"``) in the ``re(lam)``/``im(lam)`` plane. ``True``
        computes them with :func:`~depthdyn.stability_numbers` (recurrence only).
    color : matplotlib colour, optional
        Draw in this colour over what ``ax`` holds (to overlay several regions): the
        stable fill translucent, unstable points transparent, the locus in the colour.
    recurrence : Recurrence, optional
        The recurrence a given region was computed from: with it the fill's edges are drawn
        smooth, as for a recurrence (contours of the spectral radius on the grid).
    **fixed
        Values of the parameters not on an axis, and ``tol``, ``method``, ``conditions``
        for :func:`~depthdyn.numeric.region.stability_region` (only with a recurrence).

    Returns
    -------
    matplotlib.axes.Axes
        The strictly stable grid points are an image (``ax.images[0]``, data = the mask;
        hidden when the fill is drawn smooth from the spectral radius, with a recurrence);
        locus curves are lines labelled ``boundary locus``; each condition's boundary piece
        is a line whose ``gid`` is ``"<expr> = 0"`` (SymPy text) and whose label is its
        mathtext (``$- \\eta \\lambda = 0$``). Where nothing is strictly stable but the root
        condition holds on an area of two real parameters (the C^2 network, the oscillator),
        its exact edges are lines with ``gid`` ``"root condition: <expr> = 0"`` (where two
        roots meet on the unit circle or one passes ``r = 1`` or ``r = -1``) and the area is
        filled from them. Root-condition grid points on the edge of a strict set are not
        marked: they lie on its exact boundary. Axis labels are mathtext; a complex plane
        (``re(p)`` against ``im(p)``) is drawn at equal aspect.

    Raises
    ------
    ParameterError, UnknownParameterError, ShapeError
        Bad axes or values, grid options given with a region, a region that is not 2-D.
    """
    if overlay not in _OVERLAYS:
        raise ParameterError(f"overlay must be one of {_OVERLAYS}, got {overlay!r}")
    rec = None
    if isinstance(region_or_rec, Recurrence):
        rec = region_or_rec
        if x is None and y is None and rec.lam:
            x, y = _window(rec, fixed)
        if x is None or y is None:
            raise ParameterError("give both grid axes, e.g. x=('re(lam)', -3, 1, 401), y=('m', 0, 0.99, 100)")
        plane = any(isinstance(a, (tuple, list)) and a and str(a[0]).startswith("im(") for a in (x, y))
        fixed.setdefault("conditions", True if rec.order * rec.dim <= (2 if plane else 3) else None)
        reg = stability_region(rec, x, y, **fixed)
    elif isinstance(region_or_rec, StabilityRegion):
        reg = region_or_rec
        if x is not None or y is not None or fixed:
            raise ParameterError("x, y and parameter values go with a Recurrence; this region is computed")
        if recurrence is not None:
            if not isinstance(recurrence, Recurrence):
                raise ParameterError(f"recurrence must be a Recurrence, got {type(recurrence).__name__}")
            rec = recurrence
    else:
        raise ParameterError(f"expected a StabilityRegion or Recurrence, got {type(region_or_rec).__name__}")
    mask, xs, ys = np.asarray(reg.strict), np.asarray(reg.x), np.asarray(reg.y)
    if mask.ndim != 2 or mask.shape != (ys.size, xs.size) or min(mask.shape) < 2 or xs.ndim != 1:
        raise ShapeError(f"a region needs a 2-D mask of shape (len(y), len(x)), both >= 2; got {mask.shape} "
                         f"for x {xs.shape}, y {ys.shape}")
    ax = prepare_axes(ax)
    marginal_edges = []
    dx, dy = (xs[-1] - xs[0]) / (xs.size - 1), (ys[-1] - ys[0]) / (ys.size - 1)
    extent = (xs[0] - dx / 2, xs[-1] + dx / 2, ys[0] - dy / 2, ys[-1] + dy / 2)
    fills = ["white", STABLE, MARGINAL] if color is None else [(0, 0, 0, 0), to_rgba(color, 0.35), color]
    image = ax.imshow(mask.astype(float), origin="lower", extent=extent, aspect="auto",
                      interpolation="nearest", cmap=ListedColormap(fills[:2]), vmin=0, vmax=1)
    rho = _radius_grid(rec, reg) if rec is not None and rec.name == reg.family else None
    # the image stays ax.images[0], the data of the figure, but is not drawn: fills are contour
    # polygons, so a PDF or SVG holds vectors, not a raster
    image.set_visible(False)
    # matplotlib composites an axes' images into one raster before it looks at their visibility:
    # without this the hidden masks would still be embedded in a PDF
    ax.get_figure(root=True).suppressComposite = True
    if rho is not None and mask.any():  # smooth edges: marching squares on the spectral radius, not the mask
        ax.contourf(xs, ys, rho, levels=[-1.0, 1.0], colors=[fills[1]], zorder=0.5)
    elif mask.any():
        ax.contourf(xs, ys, mask.astype(float), levels=[0.5, 1.5], colors=[fills[1]], zorder=0.5)
    never = reg.conditions is not None and reg.conditions.never
    handles = []
    if mask.any() or not never:  # an empty fill is not shown in the legend when the exact verdict says why
        share = f"{100 * mask.mean():.3g}%"
        handles.append(Patch(facecolor=fills[1], edgecolor="0.6", label=f"strictly stable (grid, {share})"))
    only = np.asarray(reg.marginal, dtype=bool) & ~mask.astype(bool)
    if only.any():  # root condition without strict stability: a curve or an area, drawn darker
        inner = only[1:-1, 1:-1] & only[:-2, 1:-1] & only[2:, 1:-1] & only[1:-1, :-2] & only[1:-1, 2:]
        # ax.images[1]: the grid points; where they form an area its edge is drawn where the radius leaves 1
        dots = ax.imshow(np.ma.masked_where(~only, only.astype(float)), origin="lower", extent=extent,
                         aspect="auto", interpolation="nearest", cmap=ListedColormap(fills[2:]),
                         vmin=0, vmax=1)
        dots.set_visible(False)  # drawn as vectors below (the data stays in ax.images[1])
        # grid points beside the strict set lie on its exact boundary, which is drawn as a curve:
        # only the others are marked (else a legend entry would name a few stray squares)
        near = np.zeros_like(only)
        if mask.any():
            padded = np.pad(mask.astype(bool), 1)
            for di in (0, 1, 2):
                for dj in (0, 1, 2):
                    near |= padded[di:di + only.shape[0], dj:dj + only.shape[1]]
        shown, exact = only & ~near, False
        if inner.any() and not mask.any() and rho is not None and not reg.boundary:
            edges, exact = _draw_marginal_edges(ax, rec, reg, only, fills[2])
            marginal_edges += edges
        if exact:
            pass  # filled by the exact edges' product
        elif rho is not None and inner.any():
            ax.contourf(xs, ys, np.ma.masked_where(mask.astype(bool), rho), levels=[1 - _BAND, 1 + _BAND],
                        colors=[fills[2]], zorder=0.6)
        elif inner.any():
            ax.contourf(xs, ys, only.astype(float), levels=[0.5, 1.5], colors=[fills[2]], zorder=0.6)
        elif shown.any():  # a curve: one pixel wide at print size, so marked by dots a reader sees
            rows, cols = np.nonzero(shown)
            ax.scatter(xs[cols], ys[rows], s=4, marker="s", linewidths=0, color=fills[2], zorder=0.7,
                       gid="root condition only")
        if inner.any() or shown.any():
            label = "root condition only" + ("" if exact else " (grid)")
            handles.append(Patch(facecolor=fills[2], label=label))
    locus = overlay in ("locus", "both") or (overlay == "auto" and len(reg.boundary) > 0)
    if locus and reg.boundary:
        swap = reg.x_name.startswith("im(")
        lines = []
        for k, z in enumerate(reg.boundary):
            px, py = (z.imag, z.real) if swap else (z.real, z.imag)
            lines += ax.plot(px, py, color=color or "k", lw=1.6, ls=(0, (5, 3)), zorder=4,
                             label="boundary locus" if k == 0 else "_nolegend_")
        handles.append(lines[0])  # the labelled piece (a later one would show "_nolegend_" in the legend)
    handles += marginal_edges
    if reg.conditions is not None:
        if overlay in ("conditions", "both") or (overlay == "auto" and not reg.boundary):
            handles += _draw_conditions(ax, reg)
        elif reg.conditions.never:
            handles.append(Line2D([], [], ls="none", label="exact: never strictly stable"))
    ax.set(xlim=extent[:2], ylim=extent[2:], xlabel=math_label(reg.x_name), ylabel=math_label(reg.y_name),
           title=f"stability region: {family_label(reg.family)}{fixed_text(reg.fixed, rec=rec)}")
    if is_complex_plane(reg.x_name, reg.y_name):
        ax.set_aspect("equal", adjustable="box")  # circles in the complex plane look round
    if numbers is not None and numbers is not False:
        names = {reg.x_name, reg.y_name}
        if not {n[:3] for n in names} == {"re(", "im("}:
            raise ParameterError("interval and A(alpha) marks need the re(lam), im(lam) plane as axes")
        if numbers is True:
            if not isinstance(region_or_rec, Recurrence):
                raise ParameterError("numbers=True needs a Recurrence; pass the StabilityNumbers "
                                     "for a region")
            from ..symbolic.numbers import stability_numbers

            numbers = stability_numbers(region_or_rec, **{k: v for k, v in fixed.items()
                                                           if k in region_or_rec.param_names})
        handles += _draw_numbers(ax, numbers, swap=reg.x_name.startswith("im("))
    place_legend(ax, handles)
    return ax
