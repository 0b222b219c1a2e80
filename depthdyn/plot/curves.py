"""Root loci, trajectories over depth and spectra."""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.ticker import MaxNLocator

from ..errors import ParameterError, ShapeError
from ..numeric.bridge import batch_coefficients
from ..numeric.simulate import simulate
from ..numeric.spectra import roots
from ..recurrence import Recurrence
from ..style import BLUE, GREEN, VERMILION, family_label, styled
from .common import (
    as_array,
    check_moving_param,
    draw_circle,
    draw_complex_plane,
    fixed_text,
    format_value,
    math_label,
    place_legend,
    prepare_axes,
    value_label,
)

__all__ = ["plot_root_locus", "plot_trajectories", "plot_spectrum"]

_SCALES = ("linear", "log", "symlog")


@styled
def plot_root_locus(rec, param: str, values, ax=None, *, colorbar: bool = True, **fixed) -> Axes:
    """Characteristic roots in the complex plane as one parameter moves.

    Parameters
    ----------
    rec : Recurrence
    param : str
        The moving parameter.
    values : array_like
        1-D values of ``param`` (real values colour the points; complex ones colour by index).
    ax : matplotlib.axes.Axes, optional
    colorbar : bool
        Add a colour bar for the parameter value (it takes space from ``ax``'s figure).
    **fixed
        Values of every other parameter.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax.collections[0]`` holds all roots: offsets ``(Re r, Im r)`` in the order of
        ``roots(...).reshape(-1)`` (value-major). Start and end roots are marked, the unit
        circle is a dashed line labelled ``unit circle``.

    Examples
    --------
    >>> from depthdyn import momentum
    >>> ax = plot_root_locus(momentum(), "m", [0.0, 0.5, 0.9], lam=-0.5, eta=1)
    >>> ax.collections[0].get_offsets().shape
    (6, 2)
    """
    check_moving_param(rec, param, fixed)
    vals = as_array(values, "values")
    if vals.ndim != 1 or vals.size == 0:
        raise ShapeError(f"values must be a non-empty 1-D array, got shape {vals.shape}")
    z = roots(batch_coefficients(rec, {param: vals, **fixed}), matrix=not rec.is_scalar)
    n = z.shape[-1]
    real = not np.iscomplexobj(vals) or not np.any(np.imag(vals))
    c = np.repeat(np.real(vals) if real else np.arange(vals.size), n)
    ax = prepare_axes(ax)
    draw_complex_plane(ax, "r")
    sc = ax.scatter(z.real.ravel(), z.imag.ravel(), c=c, cmap="viridis", s=10, zorder=3, label="roots")
    ax.scatter(z[0].real, z[0].imag, marker="o", s=70, facecolors="none", edgecolors=GREEN,
               linewidths=1.5, zorder=4, label=f"start: {value_label(param, vals[0])}")
    ax.scatter(z[-1].real, z[-1].imag, marker="X", s=60, color=VERMILION, zorder=4,
               label=f"end: {value_label(param, vals[-1])}")
    if colorbar:
        ax.figure.colorbar(sc, ax=ax, label=math_label(param) if real else f"index of {math_label(param)}")
    ax.set_title(f"root locus: {family_label(rec.name)}, {math_label(param)} from {format_value(vals[0])} "
                 f"to {format_value(vals[-1])}{fixed_text(fixed, rec=rec)}")
    place_legend(ax)
    return ax


@styled
def plot_trajectories(rec, initial, L, /, ax=None, *, param: str | None = None, values=(), scale: str = "linear",
                      linthresh: float = 1.0, **fixed) -> Axes:
    """``x_l`` over depth, one line per parameter value.

    Parameters
    ----------
    rec : Recurrence
    initial : array_like
        Initial values, as for :func:`~depthdyn.numeric.simulate.simulate` (shared by all lines).
    L : int
        Number of layers (positional-only: a parameter called ``L`` goes in ``**fixed``).
    ax : matplotlib.axes.Axes, optional
    param : str, optional
        The parameter that differs between the lines; omitted: a single line.
    values : sequence
        Its values, one line each.
    scale : {"linear", "log", "symlog"}
        The y scale: ``log`` for trajectories that grow or decay geometrically (``|x_l|``
        of matrix families, positive ``x_l``), ``symlog`` for sign-alternating ones
        (logarithmic beyond ``linthresh``, linear inside; the y label says so).
    linthresh : float
        The linear range ``[-linthresh, linthresh]`` of ``symlog``.
    **fixed
        Values of the other parameters, and ``convention`` / ``threshold`` for ``simulate``.

    Returns
    -------
    matplotlib.axes.Axes
        One line per value labelled ``$param = value$`` (mathtext), ``y`` data the simulated
        ``x_l`` (its real part if complex; the Euclidean norm ``|x_l|`` for matrix families).

    Raises
    ------
    SimulationOverflowError
        When a trajectory overflows (see ``simulate``).

    Examples
    --------
    >>> from depthdyn import momentum
    >>> ax = plot_trajectories(momentum(), [1.0, 1.0], 20, param="m", values=[0.0, 0.9], lam=-0.3, eta=1)
    >>> [line.get_label() for line in ax.get_lines()]
    ['$m = 0$', '$m = 0.9$']
    """
    if not isinstance(rec, Recurrence):
        raise ParameterError(f"expected a Recurrence, got {type(rec).__name__}")
    if scale not in _SCALES:
        raise ParameterError(f"scale must be one of {_SCALES}, got {scale!r}")
    if not (np.isfinite(linthresh) and linthresh > 0):
        raise ParameterError(f"linthresh must be a positive number, got {linthresh!r}")
    vals = as_array(values, "values")
    if param is None:
        if vals.size:
            raise ParameterError("values need param=NAME to say which parameter they set")
        data = simulate(rec, initial, L, **fixed).values[:, None]
        labels = [family_label(rec.name)]
    else:
        check_moving_param(rec, param, fixed)
        if vals.ndim != 1 or vals.size == 0:
            raise ShapeError(f"values must be a non-empty 1-D sequence, got shape {vals.shape}")
        data = simulate(rec, initial, L, values={param: vals}, **fixed).values
        labels = [value_label(param, v) for v in vals]
    if not rec.is_scalar:
        data = np.linalg.norm(data, axis=-1)
    ylabel = "$|x_l|$" if not rec.is_scalar else "$\\mathrm{Re}\\,x_l$" if np.iscomplexobj(data) else "$x_l$"
    data = np.real(data)
    if scale == "log" and not np.all(data > 0):
        raise ParameterError("scale='log' needs positive values; use scale='symlog' for sign changes")
    ax = prepare_axes(ax)
    layers = np.arange(data.shape[0])
    for j, label in enumerate(labels):
        ax.plot(layers, data[:, j], lw=1.4, marker="." if data.shape[0] <= 60 else None, label=label)
    ax.grid(True, color="0.9", lw=0.6)
    title = f"{family_label(rec.name)}: {ylabel} over depth{fixed_text(fixed, rec.param_names, rec=rec)}"
    if scale == "symlog":
        ax.set_yscale("symlog", linthresh=linthresh)
        bound = format_value(linthresh)
        ylabel += f" (symmetric log scale, linear in $[-{bound}, {bound}]$)"
    elif scale == "log":
        ax.set_yscale("log")
        ylabel += " (log scale)"
    ax.set(xlabel="layer $l$", ylabel=ylabel, title=title)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # layers are whole numbers
    ax.legend(loc="best", fontsize="small")
    return ax


@styled
def plot_spectrum(rec_or_matrix, ax=None, *, eigenvalues: bool = False, **fixed) -> Axes:
    """Eigenvalues of a one-step depth map in the complex plane, with the unit circle.

    Parameters
    ----------
    rec_or_matrix : Recurrence or array_like
        A recurrence (its roots = eigenvalues of the block-companion one-step map, e.g.
        ``Gamma + lam I`` for ``entangled``, ``H_res + lam H_post^T H_pre`` for
        ``hyper_connection``), a square matrix, or eigenvalues: 1-D, >= 3-D (such as
        :func:`~depthdyn.numeric.conv.conv_spectrum` output), any shape with ``eigenvalues=True``.
    ax : matplotlib.axes.Axes, optional
    eigenvalues : bool
        Read a 2-D array as eigenvalues rather than as a matrix.
    **fixed
        Parameter values (recurrence only); arrays give the union of the spectra.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax.collections[0]`` holds the eigenvalues as offsets ``(Re, Im)``; the unit
        circle and the spectral-radius circle are lines.

    Examples
    --------
    >>> ax = plot_spectrum([[0.0, -1.0], [1.0, 0.0]])
    >>> sorted(ax.collections[0].get_offsets()[:, 1].tolist())
    [-1.0, 1.0]
    """
    if isinstance(rec_or_matrix, Recurrence):
        rec = rec_or_matrix
        z = roots(batch_coefficients(rec, **fixed), matrix=not rec.is_scalar)
        what = f"{family_label(rec.name)}{fixed_text(fixed, rec=rec)}"
    else:
        if fixed:
            raise ParameterError(f"parameter values {sorted(fixed)} need a Recurrence, not an array")
        a = as_array(rec_or_matrix, "the matrix")
        if a.dtype.kind not in "iufc":
            raise ParameterError(f"expected a Recurrence or an array, got {type(rec_or_matrix).__name__}")
        if not np.all(np.isfinite(a)):
            raise ParameterError("the array must be finite (no NaN or inf)")
        if a.ndim == 2 and not eigenvalues:
            if a.shape[0] != a.shape[1]:
                raise ShapeError(f"a matrix must be square, got {a.shape}; pass eigenvalues=True for values")
            z, what = np.linalg.eigvals(a), f"{a.shape[0]} x {a.shape[0]} matrix"
        else:
            z, what = a, f"{a.size} eigenvalues"
    z = np.asarray(z, dtype=complex).ravel()
    if z.size == 0:
        raise ShapeError("no eigenvalues to draw")
    rho = float(np.abs(z).max())
    ax = prepare_axes(ax)
    draw_complex_plane(ax, "z")
    draw_circle(ax, rho, color=VERMILION, lw=0.8, ls=":", label=f"spectral radius {rho:.4g}")
    ax.scatter(z.real, z.imag, s=18, color=BLUE, zorder=3, label=f"eigenvalues ({z.size})")
    ax.set_title(f"spectrum of the one-step map:\n{what}")  # two lines: a small figure keeps the whole title
    place_legend(ax)
    return ax
