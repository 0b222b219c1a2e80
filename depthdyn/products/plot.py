"""Pictures of products over depth: exponents against depth, composite gains (HC vs mHC).

matplotlib is imported when a function here is first called; each takes ``ax=None`` and
returns the ``Axes`` it drew on (a new figure's, without pyplot, when ``ax`` is None).
"""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError
from .hc import CompositeGains, HcComparison
from .lyapunov import LyapunovSpectrum

__all__ = ["plot_exponents", "plot_composite_gains"]


def _axes(ax):
    if ax is not None:
        return ax
    from matplotlib.figure import Figure

    return Figure(figsize=(6.4, 4.2), layout="constrained").add_subplot()


def plot_exponents(spectrum: LyapunovSpectrum, ax=None, *, exact=None):
    """Running Lyapunov estimates against depth, one line per exponent.

    Parameters
    ----------
    spectrum : LyapunovSpectrum
    ax : matplotlib.axes.Axes, optional
    exact : sequence of float, optional
        Reference values drawn as dotted horizontal lines (e.g. ``log|mu| / p``).

    Returns
    -------
    matplotlib.axes.Axes
    """
    if not isinstance(spectrum, LyapunovSpectrum):
        raise ParameterError(f"expected a LyapunovSpectrum, got {type(spectrum).__name__}")
    ax = _axes(ax)
    depth = np.arange(1, spectrum.layers + 1)
    for i in range(spectrum.history.shape[1]):
        (line,) = ax.plot(depth, spectrum.history[:, i], lw=1.4, label=f"$\\lambda_{{{i + 1}}}$")
        if exact is not None and i < len(exact):
            ax.axhline(exact[i], color=line.get_color(), ls=":", lw=1)
    ax.set(xscale="log", xlabel="depth $L$", ylabel="estimate after $L$ layers (per layer, ln)",
           title="Lyapunov exponents by QR re-orthonormalisation")
    ax.legend(fontsize="small", ncol=2)
    return ax


def plot_composite_gains(gains, ax=None):
    """``||H_l ... H_1||_inf`` against depth (log scale) for one or more composites.

    Parameters
    ----------
    gains : CompositeGains, HcComparison or sequence of CompositeGains
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    if isinstance(gains, HcComparison):
        gains = [gains.hc, gains.mhc]
    elif isinstance(gains, CompositeGains):
        gains = [gains]
    gains = list(gains)
    if not gains or not all(isinstance(g, CompositeGains) for g in gains):
        raise ParameterError("expected CompositeGains, an HcComparison or a sequence of CompositeGains")
    ax = _axes(ax)
    for g in gains:
        depth = np.arange(1, g.layers + 1)
        log10 = g.log_row_gain / np.log(10)
        mean = log10.mean(axis=0)
        (line,) = ax.plot(depth, mean, lw=1.6, label=f"{g.label}, rate {g.rate.mean():.3g}/layer")
        if log10.shape[0] > 1:
            ax.fill_between(depth, log10.min(axis=0), log10.max(axis=0), color=line.get_color(), alpha=0.2)
    ax.set(xlabel="depth $l$", ylabel=r"$\log_{10} \|H_l \cdots H_1\|_\infty$",
           title="composite gain of $H^{res}$ over depth")
    ax.legend(fontsize="small")
    return ax
