r"""Figures of a trained stack: loss curve, depth profiles, trajectories over depth.

They draw numbers computed elsewhere (a training record, the depth diagnostics of a stack, the
positions of a :class:`~depthdyn.nn.blocks.stack.Trace`): ``ax=None`` makes a new house-style
figure, every function returns the Axes it drew into, labels are typeset.
:func:`training_figures` composes the figures ``depthdyn train`` writes.

>>> figs = training_figures([1.0, 0.5, 0.25])
>>> list(figs), figs["loss"].axes[0].get_ylabel()
(['loss'], 'loss')
"""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes

from ..errors import ShapeError
from ..style import PALETTE, house_style, new_figure, styled
from .common import prepare_axes

__all__ = ["plot_loss", "plot_depth_profile", "plot_depth_trajectories", "training_figures", "PROFILE_LABELS"]

#: The depth profiles of :func:`training_figures`: attribute of the diagnostics -> typeset label.
PROFILE_LABELS = {
    "norms": r"mean $\|x_\ell\|$",
    "update_cosine": r"$\cos(u_\ell, u_{\ell+1})$",
    "perturbation": r"$\|x_{\ell+1} - x_\ell\| / \|x_\ell\|$",
    "grad_norms": r"$\|\partial \mathcal{L} / \partial s_\ell\|$",
}

_CLASS_COLOURS = tuple(PALETTE[:4])


def _vector(values, what: str) -> np.ndarray:
    a = np.asarray(values, dtype=float)
    if a.ndim != 1 or a.size == 0:
        raise ShapeError(f"{what} must be a non-empty 1-D sequence, got shape {a.shape}")
    return a


@styled
def plot_loss(losses, ax=None, *, label: str | None = None) -> Axes:
    """Training loss against the optimisation step (log scale when all values are positive)."""
    ax = prepare_axes(ax)
    y = _vector(losses, "losses")
    ax.plot(np.arange(y.size), y, label=label)
    if np.all(y[np.isfinite(y)] > 0):
        ax.set_yscale("log")
    ax.set_xlabel("optimisation step")
    ax.set_ylabel("loss")
    ax.set_title("training loss")
    if label:
        ax.legend()
    return ax


@styled
def plot_depth_profile(values, ax=None, *, ylabel: str, start: int = 0, label: str | None = None) -> Axes:
    r"""One number per layer (``||x_l||``, a cosine, a gradient norm) against the layer index.

    ``ylabel`` is typeset as given (e.g. ``r"$\|x_{\ell+1} - x_\ell\| / \|x_\ell\|$"``).
    """
    ax = prepare_axes(ax)
    y = _vector(values, ylabel)
    ax.plot(np.arange(start, start + y.size), y, marker="o", ms=3, label=label)
    ax.set_xlabel(r"layer $\ell$")
    ax.set_ylabel(ylabel)
    if label:
        ax.legend()
    return ax


@styled
def plot_depth_trajectories(
    positions, labels=None, ax=None, *, phase: bool = False, feature: int = 0
) -> Axes:
    """Trajectories of one feature over depth, coloured by class.

    ``positions`` has shape ``(L+1, B, d)`` (``Trace.positions``). With ``phase`` the
    curves are drawn in the ``(x_l, x_l - x_{l-1})`` plane, the position/velocity picture of
    002 Fig. 3, where second-order nets can pass classes over each other.
    """
    ax = prepare_axes(ax)
    P = np.asarray(positions, dtype=float)
    if P.ndim == 2:
        P = P[..., None]
    if P.ndim != 3 or P.shape[0] < 2:
        raise ShapeError(f"positions must have shape (L+1, B, d) with L >= 1, got {P.shape}")
    x = P[:, :, feature]
    lab = np.zeros(x.shape[1], dtype=int) if labels is None else np.asarray(labels).astype(int).reshape(-1)
    if lab.size != x.shape[1]:
        raise ShapeError(f"labels must have one entry per sample ({x.shape[1]}), got {lab.size}")
    for c in np.unique(lab):
        colour = _CLASS_COLOURS[int(c) % len(_CLASS_COLOURS)]
        sel = x[:, lab == c]
        if phase:
            xs, ys = sel[1:], np.diff(sel, axis=0)
        else:
            xs, ys = np.arange(x.shape[0])[:, None].repeat(sel.shape[1], 1), sel
        lines = ax.plot(xs, ys, color=colour, lw=0.6, alpha=0.5)
        lines[0].set_label(f"class {c}" if labels is not None else None)
    ax.set_xlabel(r"position $x_\ell$" if phase else r"layer $\ell$")
    ax.set_ylabel(r"velocity $x_\ell - x_{\ell-1}$" if phase else rf"$x_{{\ell,{feature}}}$")
    ax.set_title("phase portrait over depth" if phase else "trajectories over depth")
    if labels is not None:
        ax.legend(loc="best")
    return ax


def _placement_window(placement) -> tuple:
    """The ``(eta lam, m)`` window of a momentum placement: the points and the exact region's
    left edge ``eta lam = -2 (1 + m)`` at the largest ``m``, with a margin."""
    c = placement.coordinates
    eta_lam = np.real(np.asarray(c["eta"]) * np.asarray(c["lam"])).reshape(-1)
    m = np.real(np.asarray(c["m"])).reshape(-1)
    lo = min(-2 * (1 + m.max()) - 0.5, eta_lam.min() - 0.2)
    return lo, max(0.5, eta_lam.max() + 0.2), 0.0, 0.99


def training_figures(losses, diagnostics=None, *, positions=None, labels=None, placement=None) -> dict:
    """The figures of a training run, by file stem, in the house style.

    Parameters
    ----------
    losses : sequence of float
        The loss at every optimisation step: figure ``loss``.
    diagnostics : object, optional
        With the depth profiles of :data:`PROFILE_LABELS` as attributes (a
        :class:`~depthdyn.nn.analysis.diagnostics.Diagnostics`; ``None`` entries are left
        blank): figure ``depth_profile``, one panel each.
    positions : array, optional
        ``(L+1, B, d)`` positions over depth with ``d <= 2``: figure ``trajectories`` (over
        depth and in the phase plane), coloured by ``labels`` (a class per sample).
    placement : Placement, optional
        A linearised momentum stack's placement: figure ``placement``, its learned layers in
        the ``(eta lam, m)`` plane over the exact region.

    Returns
    -------
    dict
        Stem -> :class:`matplotlib.figure.Figure`, to be saved in any format of
        :data:`depthdyn.style.FORMATS` (:func:`depthdyn.output.save_figure`).
    """
    figs = {}
    with house_style():  # the axes take the house rc (spines, fonts) when they are made
        fig = new_figure((6.4, 4.0))
        plot_loss(losses, fig.add_subplot())
        figs["loss"] = fig
        if diagnostics is not None:
            fig = new_figure((14, 3.6))
            for ax, (name, ylabel) in zip(fig.subplots(1, len(PROFILE_LABELS)), PROFILE_LABELS.items(),
                                          strict=True):
                values = getattr(diagnostics, name, None)
                if values is not None:
                    plot_depth_profile(values, ax, ylabel=ylabel)
                else:
                    ax.set_axis_off()
            figs["depth_profile"] = fig
        if positions is not None:
            P = np.asarray(positions, dtype=float)
            if P.ndim == 3 and P.shape[-1] <= 2:
                fig = new_figure((10, 4))
                a, b = fig.subplots(1, 2)
                plot_depth_trajectories(P, labels, a)
                plot_depth_trajectories(P, labels, b, phase=True)
                figs["trajectories"] = fig
        if placement is not None and getattr(placement, "family", None) == "momentum":
            from .placement import plot_placement

            fig = new_figure()
            plot_placement(placement, fig.add_subplot(), plane=("eta*lam", "m"),
                           window=_placement_window(placement), n=241)
            figs["placement"] = fig
    return figs
