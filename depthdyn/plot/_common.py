"""Helpers shared by the plot functions: axes, typeset names, legends, the complex plane."""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes

from ..errors import ParameterError, ShapeError
from ..recurrence import Recurrence
from ..style import MARGINAL, PALETTE, STABLE, new_figure, param_tex

_STABLE, _MARGINAL = STABLE, MARGINAL  # fills: strictly stable; root condition only (simple unit roots)
_BLUE, _VERMILION, _GREEN, _PURPLE, _ORANGE = PALETTE[:5]
_OVERLAYS = ("auto", "locus", "conditions", "both", "none")
_SCALES = ("linear", "log", "symlog")
#: The structural size of a family shown in titles: (symbol, attribute of the Recurrence).
_STRUCTURE = {"smooth": ("k", "order"), "dense": ("k", "order"), "entangled": ("n", "dim"),
              "hyper_connection": ("n", "dim")}


def _axes(ax) -> Axes:
    """``ax``, or the axes of a new house-style figure (shown inline in Jupyter, see :func:`~depthdyn.style.new_figure`)."""
    if ax is None:
        axes = new_figure().add_subplot()
        axes._depthdyn_own = True  # the legend may go below the axes: no neighbour to cover
        return axes
    if not isinstance(ax, Axes):
        raise ParameterError(f"ax must be a matplotlib Axes or None, got {type(ax).__name__}")
    if not (ax.lines or ax.collections or ax.images or ax.patches):  # an empty axes takes the house colours
        ax.set_prop_cycle(color=list(PALETTE))
    return ax


def _fmt(v) -> str:
    if isinstance(v, str):  # an exact spelling the caller gave ("1/2"): shown as given
        return v
    a = np.asarray(v)
    if a.dtype.kind in "US":
        return f"[{a.flat[0]} .. {a.flat[-1]}]" if a.ndim else str(a)
    if a.ndim:
        return f"[{_fmt(a.flat[0])} .. {_fmt(a.flat[-1])}]"
    return f"{complex(a).real:g}" if complex(a).imag == 0 else f"{complex(a):g}"


def _name_tex(name: str) -> str:
    """Mathtext (without the dollars) for a parameter or axis name: ``re(lam)`` -> ``\\mathrm{Re}\\,\\lambda``."""
    return param_tex(name)


def _math(name: str) -> str:
    """A parameter or axis name as a mathtext label."""
    return f"${_name_tex(name)}$"


def _value_tex(name: str, v) -> str:
    return f"${_name_tex(name)} = {_fmt(v)}$"


def _fixed_text(fixed: dict, names=None, rec=None) -> str:
    """`` (k = 2, $\\eta = 1$)``: the family's structural size and the fixed parameter values."""
    items = []
    if rec is not None and rec.name in _STRUCTURE:
        sym, attr = _STRUCTURE[rec.name]
        items.append(f"${sym} = {getattr(rec, attr)}$")
    items += [_value_tex(k, v) for k, v in fixed.items()
              if (names is None or k in names) and k not in ("tol", "method", "conditions", "convention",
                                                             "threshold")]
    return f" ({', '.join(items)})" if items else ""


def _same_plane(x_name: str, y_name: str) -> bool:
    """The axes are the real and imaginary parts of one parameter: a complex plane."""
    return ({x_name[:3], y_name[:3]} == {"re(", "im("} and x_name[3:] == y_name[3:])


def _legend(ax: Axes, handles=None) -> None:
    """Legend below the axes, where it hides no data (constrained layout makes room)."""
    handles = handles if handles is not None else ax.get_legend_handles_labels()[0]
    if not handles:
        return
    if not getattr(ax, "_depthdyn_own", False):
        # the caller's axes may sit in a grid: a legend outside them would cover the neighbours
        ax.legend(handles=handles, loc="best", fontsize="x-small", framealpha=0.85)
        return
    width = max(len(h.get_label()) for h in handles)
    ncols = min(1 if width > 40 else 2 if width > 22 else 3, len(handles))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncols=ncols,
              fontsize="small", frameon=False)


def _circle(ax: Axes, radius: float, **style) -> None:
    t = np.linspace(0, 2 * np.pi, 721)
    ax.plot(radius * np.cos(t), radius * np.sin(t), **style)


def _complex_plane(ax: Axes, what: str) -> None:
    """Unit circle (a dashed line labelled ``unit circle``), the axes through 0, equal aspect."""
    _circle(ax, 1.0, color="0.35", lw=0.9, ls="--", label="unit circle")
    ax.axhline(0, color="0.8", lw=0.6, zorder=0)
    ax.axvline(0, color="0.8", lw=0.6, zorder=0)
    ax.set(aspect="equal", xlabel=f"$\\mathrm{{Re}}\\,{what}$" if what else "real part",
           ylabel=f"$\\mathrm{{Im}}\\,{what}$" if what else "imaginary part")
    ax.set_adjustable("datalim")


def _check_param(rec, param: str, fixed: dict) -> None:
    if not isinstance(rec, Recurrence):
        raise ParameterError(f"expected a Recurrence, got {type(rec).__name__}")
    rec.param(param)  # UnknownParameterError with the known names
    if param in fixed:
        raise ParameterError(f"{param} is the moving parameter; do not also fix it")


def _array(value, what: str) -> np.ndarray:
    """``np.asarray`` with a typed error for ragged input."""
    try:
        return np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise ShapeError(f"cannot make an array of {what}: {exc}") from None
