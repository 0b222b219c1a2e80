"""Products over depth: running Lyapunov exponents, composite gains of H_res (HC against mHC)."""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes

from ..errors import ParameterError
from ..products.hc import CompositeGains, HcComparison
from ..products.lyapunov import LyapunovSpectrum
from ..style import styled
from .common import place_legend, prepare_axes

__all__ = ["plot_exponents", "plot_composite_gains"]


@styled
def plot_exponents(spectrum: LyapunovSpectrum, ax=None, *, exact=None) -> Axes:
    """Running Lyapunov estimates against depth, one line per exponent.

    Parameters
    ----------
    spectrum : LyapunovSpectrum
        From :func:`~depthdyn.products.lyapunov.lyapunov` (its ``history`` is drawn).
    ax : matplotlib.axes.Axes, optional
    exact : sequence of float, optional
        Reference values drawn as dotted horizontal lines (e.g. ``log|mu| / p``).

    Returns
    -------
    matplotlib.axes.Axes
        One line per exponent labelled ``$\\lambda_i$`` (``y`` data the running estimate
        after each layer), then the dotted reference lines.

    Examples
    --------
    >>> import numpy as np
    >>> from depthdyn import lyapunov
    >>> spec = lyapunov(np.broadcast_to(np.diag([2.0, 0.5]), (20, 2, 2)), k=2)
    >>> ax = plot_exponents(spec, exact=[np.log(2), np.log(0.5)])
    >>> [line.get_label() for line in ax.get_lines()[:2]]
    ['$\\\\lambda_{1}$', '$\\\\lambda_{2}$']
    """
    if not isinstance(spectrum, LyapunovSpectrum):
        raise ParameterError(f"expected a LyapunovSpectrum, got {type(spectrum).__name__}")
    ax = prepare_axes(ax)
    depth = np.arange(1, spectrum.layers + 1)
    lines = [ax.plot(depth, spectrum.history[:, i], lw=1.4, label=f"$\\lambda_{{{i + 1}}}$")[0]
             for i in range(spectrum.history.shape[1])]
    for line, value in zip(lines, [] if exact is None else exact, strict=False):
        ax.axhline(value, color=line.get_color(), ls=":", lw=1)
    ax.set(xscale="log", xlabel="depth $L$", ylabel="estimate after $L$ layers (per layer, ln)",
           title="Lyapunov exponents by QR re-orthonormalisation")
    place_legend(ax, lines)
    return ax


@styled
def plot_composite_gains(gains, ax=None) -> Axes:
    """``||H_l ... H_1||_inf`` against depth (log scale) for one or more composites.

    Parameters
    ----------
    gains : CompositeGains, HcComparison or sequence of CompositeGains
        From :func:`~depthdyn.products.hc.composite_gains` or :func:`~depthdyn.products.hc.hc_vs_mhc`.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
        One line per composite (the mean of ``log10`` of the gain over samples, labelled
        with its rate per layer) and, with several samples, a band from their minimum to
        their maximum.
    """
    if isinstance(gains, HcComparison):
        gains = [gains.hc, gains.mhc]
    elif isinstance(gains, CompositeGains):
        gains = [gains]
    gains = list(gains)
    if not gains or not all(isinstance(g, CompositeGains) for g in gains):
        raise ParameterError("expected CompositeGains, an HcComparison or a sequence of CompositeGains")
    ax = prepare_axes(ax)
    for g in gains:
        depth = np.arange(1, g.layers + 1)
        log10 = g.log_row_gain / np.log(10)
        label = f"{g.label}, rate {g.rate.mean():.3g}/layer"
        (line,) = ax.plot(depth, log10.mean(axis=0), lw=1.6, label=label)
        if log10.shape[0] > 1:
            ax.fill_between(depth, log10.min(axis=0), log10.max(axis=0), color=line.get_color(), alpha=0.2)
    ax.set(xlabel="depth $l$", ylabel=r"$\log_{10} \|H_l \cdots H_1\|_\infty$",
           title="composite gain of $H^{res}$ over depth")
    place_legend(ax)
    return ax
