"""Mean-field pictures: the order-to-chaos phase diagram and correlations over depth.

The numbers come from :mod:`depthdyn.meanfield` (``phase_diagram``, ``critical_line``,
``iterate``); these functions only draw them, take ``ax=None`` and return the Axes.
"""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import LogNorm
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ..errors import ParameterError
from ..style import PALETTE, styled
from .common import place_legend, prepare_axes

__all__ = ["plot_phase_diagram", "plot_critical_lines", "plot_correlations"]

_EXPLODING = "#d9d9d9"
_CONTOUR = "0.88"  # light grey: visible over the dark end of cividis


def _draw_line(ax: Axes, line, color, label: str) -> None:
    """The critical line: solid where the variance fixed point attracts, dashed where it repels."""
    sw2, sb2 = np.asarray(line.sw2), np.asarray(line.sb2)
    good = np.asarray(line.attracting)
    solid = np.where(good, sb2, np.nan)
    ax.plot(sw2, solid, color=color, lw=2.0, label=label, gid="critical line")
    if not good.all():
        dashed = np.where(~good | np.roll(~good, 1) | np.roll(~good, -1), sb2, np.nan)
        ax.plot(sw2, dashed, color=color, lw=1.2, ls="--", gid="critical line (repelling q*)",
                label=r"$\chi_q > 1$: $q^*$ repels")


@styled
def plot_phase_diagram(diagram, line=None, ax=None, *, depth=None, colorbar: bool = True) -> Axes:
    """Heat map of the correlation depth scale ``xi_c`` with the order-to-chaos line over it.

    Parameters
    ----------
    diagram : PhaseDiagram
        From :func:`depthdyn.meanfield.phase_diagram`.
    line : CriticalLine, optional
        From :func:`depthdyn.meanfield.critical_line` (drawn over the heat map).
    ax : matplotlib.axes.Axes, optional
    depth : float or sequence of float, optional
        Network depths ``L`` whose trainable region (``L <= 6 xi_c``) is outlined.
    colorbar : bool
        Add a colour bar for ``xi_c``.

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = prepare_axes(ax)
    w, b = np.asarray(diagram.sw2), np.asarray(diagram.sb2)
    xi = np.asarray(diagram.xi_c, dtype=float)
    finite = np.isfinite(xi) & (xi > 0)
    if not finite.any():
        raise ParameterError("the phase diagram has no finite depth scale to draw")
    shown = np.ma.masked_where(~finite, xi)
    norm = LogNorm(vmin=max(xi[finite].min(), 0.3), vmax=max(xi[finite].max(), 10.0))
    mesh = ax.pcolormesh(w, b, shown, norm=norm, shading="nearest", cmap="cividis", rasterized=True)
    exploding = np.asarray(diagram.phase) == 2
    if exploding.any():
        ax.pcolormesh(w, b, np.ma.masked_where(~exploding, np.ones_like(xi)), shading="nearest",
                      cmap=_single(_EXPLODING), rasterized=True)
    handles = []
    if colorbar:
        ax.figure.colorbar(mesh, ax=ax, label=r"correlation depth scale $\xi_c$")
    if line is not None:
        _draw_line(ax, line, PALETTE[1], r"order-to-chaos line ($\chi_1 = 1$)")
        handles += ax.get_legend_handles_labels()[0]
    if depth is not None:
        from ..meanfield.phase import TRAINABLE_FACTOR

        depths = np.atleast_1d(np.asarray(depth, dtype=float))
        levels = np.sort(depths / TRAINABLE_FACTOR)
        trainable = np.where(finite | exploding, np.where(finite, xi, np.nan), np.nan)
        if np.nanmax(trainable) > levels.min():
            ax.contour(w, b, np.nan_to_num(trainable, nan=0.0), levels=levels, colors=_CONTOUR,
                       linestyles=":", linewidths=1.4)
            text = ", ".join(f"{d:g}" for d in depths)
            handles.append(Line2D([], [], color="0.45", ls=":", lw=1.4,
                                  label=rf"trainable depth: $6\xi_c = {text}$"))
    if exploding.any():
        handles.append(Patch(color=_EXPLODING, label=r"$q$ explodes"))
    ax.set_xlim(w.min(), w.max())
    ax.set_ylim(b.min(), b.max())
    ax.set_xlabel(r"$\sigma_w^2$")
    ax.set_ylabel(r"$\sigma_b^2$")
    ax.set_title(f"mean-field phase diagram: {diagram.activation}")
    place_legend(ax, handles)
    return ax


def _single(color):
    from matplotlib.colors import ListedColormap

    return ListedColormap([color])


@styled
def plot_critical_lines(lines, ax=None) -> Axes:
    """Order-to-chaos lines of several activations in one ``(sw2, sb2)`` plane."""
    ax = prepare_axes(ax)
    lines = list(lines) if isinstance(lines, (list, tuple)) else [lines]
    for k, line in enumerate(lines):
        _draw_line(ax, line, PALETTE[k % len(PALETTE)], line.activation)
    ax.set_xlabel(r"$\sigma_w^2$")
    ax.set_ylabel(r"$\sigma_b^2$")
    ax.set_title("order-to-chaos lines ($\\chi_1 = 1$)")
    handles, labels = ax.get_legend_handles_labels()
    seen = {}
    for h, label in zip(handles, labels, strict=True):
        seen.setdefault(label, h)
    place_legend(ax, list(seen.values()))
    return ax


@styled
def plot_correlations(iterates, ax=None, *, simulation=None, label: str | None = None) -> Axes:
    """The correlation ``c_l`` over depth from the mean-field maps, with a simulation over it.

    Parameters
    ----------
    iterates : Iterates
        From :func:`depthdyn.meanfield.iterate`.
    simulation : tuple (layers, mean, low, high), optional
        Correlations measured in finite networks: the layers, the mean and a confidence band.
    label : str, optional
        Legend text of the theory curve.
    """
    ax = prepare_axes(ax)
    layers = np.arange(len(iterates.c))
    ax.plot(layers, iterates.c, color=PALETTE[0], label=label or f"mean field ({iterates.activation})")
    if simulation is not None:
        at, mean, low, high = (np.asarray(x, dtype=float) for x in simulation)
        ax.fill_between(at, low, high, color=PALETTE[1], alpha=0.25, lw=0)
        ax.plot(at, mean, "o", ms=3, color=PALETTE[1], label="finite networks (band: 95%)")
    ax.set_xlabel("layer $l$")
    ax.set_ylabel("correlation $c_l$")
    ax.set_title(rf"$\sigma_w^2 = {iterates.sw2:g}$, $\sigma_b^2 = {iterates.sb2:g}$")
    place_legend(ax)
    return ax
