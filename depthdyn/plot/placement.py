"""The placement figure: measured ``lam`` values of a network's layers over a stability region."""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError, ShapeError
from ..style import param_tex, styled
from .common import place_legend, prepare_axes
from .region import plot_stability_region

__all__ = ["plot_placement"]


def _lam_window(pts: np.ndarray) -> tuple:
    """The points and the unit disc about ``-1``, with a margin."""
    lo_re, hi_re = min(pts.real.min(), -2.0), max(pts.real.max(), 0.0)
    lo_im, hi_im = min(pts.imag.min(), -1.0), max(pts.imag.max(), 1.0)
    pad = 0.1 * max(hi_re - lo_re, hi_im - lo_im)
    return (lo_re - pad, hi_re + pad, lo_im - pad, hi_im + pad)


def _coordinate(placement, expr: str) -> np.ndarray:
    """A coordinate of the placement's points: a name of ``coordinates`` or a product ``eta*lam``."""
    names = [n.strip() for n in expr.split("*")]
    missing = [n for n in names if n not in placement.coordinates]
    if missing:
        raise ParameterError(
            f"plane coordinate {expr!r}: the placement has no coordinates {missing}; it has "
            f"{sorted(placement.coordinates) or 'none (only a linearised stack has coordinates)'}"
        )
    out = np.ones(())
    for n in names:
        out = out * np.asarray(placement.coordinates[n])
    return np.real(out).reshape(-1)


@styled
def plot_placement(placement, ax=None, *, steps=None, window=None, n: int = 301, plane=None):
    """The stability region of a :class:`~depthdyn.nn.analysis.placement.Placement` with its points.

    Parameters
    ----------
    placement : Placement
        From :func:`~depthdyn.nn.analysis.placement.place` (or ``Inspection.placement``).
    ax : matplotlib.axes.Axes, optional
        Drawn into; a new house-style figure otherwise.
    steps : sequence of int, optional
        ``plane=None``: which steps to draw (all by default), one colour each; they must be
        placed on one recurrence.
    window : (x_lo, x_hi, y_lo, y_hi), optional
        Default (``plane=None``): the points and the unit disc about ``-1``, with a margin;
        with a ``plane``: the points with a margin.
    n : int
        Grid points per axis of the region.
    plane : (str, str), optional
        ``None``: the ``lam`` plane (real and imaginary part) of the steps' recurrence.
        ``(x, y)``: the placement's :attr:`coordinates` (a linearised stack), ``x`` a
        coordinate or the product of ``lam`` with the coefficients that multiply it in the
        family (``"eta*lam"`` for momentum), ``y`` a learned coefficient (``"m"``); the region
        is the family's (:attr:`family_recurrence`) over ``re(lam)`` and ``y``, with the
        coefficients of ``x`` other than ``lam`` set to 1.

    Returns
    -------
    matplotlib.axes.Axes
    """
    if plane is not None:
        return _plane(placement, ax, plane, window, n)
    picked = list(range(len(placement.lam))) if steps is None else list(steps)
    if not picked or any(not 0 <= i < len(placement.lam) for i in picked):
        raise ParameterError(f"steps must be indices in 0..{len(placement.lam) - 1}, got {steps!r}")
    recs = {id(placement.recurrences[i][0]) for i in picked}
    if len(recs) != 1 or any(len(placement.recurrences[i]) != 1 for i in picked):
        raise ParameterError(
            "plot_placement draws one recurrence in the lam plane: pick steps placed on the same one, "
            "or pass plane=('eta*lam', 'm') for a linearised stack"
        )
    rec = placement.recurrences[picked[0]][0]
    pts = np.concatenate([np.asarray(placement.lam[i]).reshape(-1) for i in picked])
    window = _lam_window(pts) if window is None else window
    ax = plot_stability_region(
        rec, prepare_axes(ax), x=("re(lam)", window[0], window[1], n), y=("im(lam)", window[2], window[3], n)
    )
    inside = placement.inside
    for i in picked:
        lam = np.asarray(placement.lam[i]).reshape(-1)
        ax.scatter(lam.real, lam.imag, s=6, zorder=5,
                   label=f"{placement.names[i]} ({100 * inside[i]:.0f}% inside)")
    sizes = np.array([placement.lam[i].size for i in picked], float)
    frac = float(np.sum(inside[picked] * sizes) / sizes.sum())
    params = ", ".join(f"${param_tex(k)} = {v:g}$" for k, v in placement.params[picked[0]])
    ax.set_title(
        f"{placement.families[picked[0]].replace('_', '-')}{f' ({params})' if params else ''}: "
        f"{100 * frac:.0f}% of $\\lambda$ strictly inside",
        fontsize="medium",
    )
    place_legend(ax)
    return ax


def _plane(placement, ax, plane, window, n: int):
    if not (isinstance(plane, (tuple, list)) and len(plane) == 2 and all(isinstance(p, str) for p in plane)):
        raise ParameterError(
            f"plane must be a pair of coordinate names such as ('eta*lam', 'm'), got {plane!r}"
        )
    rec = placement.family_recurrence
    if rec is None:
        raise ParameterError("this placement has no family recurrence to draw its region (use plane=None)")
    x_names = [s.strip() for s in plane[0].split("*")]
    if "lam" not in x_names:
        raise ParameterError(f"the x coordinate must contain lam, got {plane[0]!r}")
    px, py = _coordinate(placement, plane[0]), _coordinate(placement, plane[1])
    if px.shape != py.shape:
        raise ShapeError(f"the coordinates {plane} have different sizes: {px.size} vs {py.size}")
    if window is None:
        span_x, span_y = np.ptp(px) or 1.0, np.ptp(py) or 1.0
        window = (px.min() - 0.2 * span_x, px.max() + 0.2 * span_x, py.min() - 0.2 * span_y,
                  py.max() + 0.2 * span_y)
    fixed = {name: 1 for name in x_names if name != "lam"}
    ax = plot_stability_region(
        rec, prepare_axes(ax), x=("re(lam)", window[0], window[1], n), y=(plane[1], window[2], window[3], n),
        **fixed,
    )
    ax.scatter(px, py, s=8, zorder=5, label="learned layers")
    ax.set_xlabel("$" + " ".join(param_tex(s) for s in x_names) + "$ (learned layers)")
    ax.set_ylabel(f"${param_tex(plane[1])}$")
    ax.set_title(f"{placement.family.replace('_', '-')}: {100 * placement.fraction:.0f}% of (layer, sample) "
                 "points strictly stable", fontsize="medium")
    place_legend(ax)
    return ax
