"""Families side by side: their stability regions overlaid on one pair of axes."""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ..compare import ComparisonTable
from ..errors import ParameterError
from ..style import PALETTE, family_label, styled
from .common import math_label, place_legend, prepare_axes
from .region import plot_stability_region

__all__ = ["plot_comparison"]


@styled
def plot_comparison(table: ComparisonTable, ax=None) -> Axes:
    """Overlay the families' regions on one pair of axes (equal aspect, a legend entry per family).

    Each family is drawn by :func:`~depthdyn.plot.plot_stability_region` in its own colour:
    a translucent fill of the strictly stable grid points, the root-condition-only points
    and the boundary locus in the same colour.

    Parameters
    ----------
    table : ComparisonTable
        The result of :func:`~depthdyn.compare.compare` (its rows hold the regions).
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
        ``ax.images`` holds the masks of each family (in table order, stacked by area:
        the largest lowest); the legend has one entry per family labelled with its specification:
        a patch where it has a strictly stable area, a square marker and "(root condition only)"
        where only the root condition holds (leapfrog's segment of the imaginary axis), an
        empty patch and "(nowhere stable here)" where neither holds in the box.

    Examples
    --------
    >>> from depthdyn import compare
    >>> ax = plot_comparison(compare("residual", "momentum:m=1/2", n=41))
    >>> [t.get_text() for t in ax.get_legend().get_texts()]
    ['residual', 'momentum, $m = 1/2$']
    """
    if not isinstance(table, ComparisonTable):
        raise ParameterError(f"expected a ComparisonTable (from compare), got {type(table).__name__}")
    ax = prepare_axes(ax)
    handles = []
    for k, row in enumerate(table.rows):
        color = PALETTE[k % len(PALETTE)]
        drawn, filled = len(ax.images), len(ax.collections)
        plot_stability_region(row.region, ax=ax, color=color, recurrence=row.recurrence)  # smooth edges
        for artist in [*ax.images[drawn:], *ax.collections[filled:]]:
            artist.set_zorder(-row.area)  # larger regions beneath, so every fill stays visible
        label = family_label(row.label)
        if row.area > 0:
            handles.append(Patch(facecolor=color, alpha=0.45, edgecolor=color, label=label))
        elif row.marginal_area > 0 or np.asarray(row.region.marginal).any():  # leapfrog: a segment, no area
            handles.append(Line2D([], [], color=color, ls="none", marker="s", markersize=4,
                                  label=f"{label} (root condition only)"))
        else:
            handles.append(Patch(facecolor="none", edgecolor=color, label=f"{label} (nowhere stable here)"))
    lo, hi, ilo, ihi = table.box
    ax.set(xlim=(lo, hi), ylim=(ilo, ihi), aspect="equal", xlabel=math_label("re(lam)"),
           ylabel=math_label("im(lam)"), title="stability regions: strictly stable filled")
    place_legend(ax, handles)
    return ax
