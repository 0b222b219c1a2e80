"""What the figure functions share: their axes, typeset names and values, legends, the complex plane.

Every function of :mod:`depthdyn.plot` gets its axes from :func:`prepare_axes` (the caller's,
or a new house-style figure's) and puts its legend with :func:`place_legend`; the names of
parameters and axes are typeset by :func:`math_label`.

>>> math_label("re(lam)"), value_label("eta", 1), format_value([0.0, 0.5, 0.9])
('$\\\\mathrm{Re}\\\\,\\\\lambda$', '$\\\\eta = 1$', '[0 .. 0.9]')
"""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes

from ..errors import ParameterError, ShapeError
from ..recurrence import Recurrence
from ..style import PALETTE, RC, new_figure, param_tex

__all__ = ["prepare_axes", "single_axes", "place_legend", "format_value", "math_label", "value_label",
           "fixed_text", "is_complex_plane", "draw_circle", "draw_complex_plane", "check_moving_param",
           "as_array"]

#: The structural size of a family shown in titles: (symbol, attribute of the Recurrence).
_STRUCTURE = {"smooth": ("k", "order"), "dense": ("k", "order"), "entangled": ("n", "dim"),
              "hyper_connection": ("n", "dim")}
#: Set on axes that are alone in their figure: their legend may go below them.
_ALONE = "_depthdyn_alone"
#: Keyword arguments of the computations that are not parameter values (left out of titles).
_NOT_VALUES = ("tol", "method", "conditions", "convention", "threshold")


def single_axes(fig) -> Axes:
    """The one axes of ``fig`` (added here): its legend goes below it, where it covers no neighbour."""
    axes = fig.add_subplot()
    setattr(axes, _ALONE, True)
    return axes


def prepare_axes(ax) -> Axes:
    """``ax``, or the axes of a new house-style figure (see :func:`~depthdyn.style.new_figure`).

    An empty ``ax`` takes the house colour cycle and frame (no top and right spines), as an axes
    made inside the house style would; anything but an Axes or None is refused.
    """
    if ax is None:
        return single_axes(new_figure())
    if not isinstance(ax, Axes):
        raise ParameterError(f"ax must be a matplotlib Axes or None, got {type(ax).__name__}")
    if not (ax.lines or ax.collections or ax.images or ax.patches):  # an empty axes takes the house colours
        ax.set_prop_cycle(color=list(PALETTE))
        for side in ("top", "right"):  # axes made outside the house style (fig.subplots in a notebook)
            ax.spines[side].set_visible(RC[f"axes.spines.{side}"])
    return ax


def format_value(v) -> str:
    """A parameter value for a label: ``0.5`` -> ``0.5``, an array by its first and last entries."""
    if isinstance(v, str):  # an exact spelling the caller gave ("1/2"): shown as given
        return v
    a = np.asarray(v)
    if a.dtype.kind in "US":
        return f"[{a.flat[0]} .. {a.flat[-1]}]" if a.ndim else str(a)
    if a.ndim:
        return f"[{format_value(a.flat[0])} .. {format_value(a.flat[-1])}]"
    return f"{complex(a).real:g}" if complex(a).imag == 0 else f"{complex(a):g}"


def math_label(name: str) -> str:
    """A parameter or axis name as a mathtext label: ``re(lam)`` -> ``$\\mathrm{Re}\\,\\lambda$``."""
    return f"${param_tex(name)}$"


def value_label(name: str, v) -> str:
    """``$\\eta = 1$``: a parameter and its value as mathtext."""
    return f"${param_tex(name)} = {format_value(v)}$"


def fixed_text(fixed: dict, names=None, rec=None) -> str:
    """`` (k = 2, $\\eta = 1$)``: the family's structural size and the fixed parameter values, for a title."""
    items = []
    if rec is not None and rec.name in _STRUCTURE:
        sym, attr = _STRUCTURE[rec.name]
        items.append(f"${sym} = {getattr(rec, attr)}$")
    items += [value_label(k, v) for k, v in fixed.items()
              if (names is None or k in names) and k not in _NOT_VALUES]
    return f" ({', '.join(items)})" if items else ""


def is_complex_plane(x_name: str, y_name: str) -> bool:
    """The axes are the real and imaginary parts of one parameter: a complex plane."""
    return ({x_name[:3], y_name[:3]} == {"re(", "im("} and x_name[3:] == y_name[3:])


def place_legend(ax: Axes, handles=None) -> None:
    """Legend below axes alone in their figure (constrained layout makes room), else inside them."""
    handles = handles if handles is not None else ax.get_legend_handles_labels()[0]
    if not handles:
        return
    if not getattr(ax, _ALONE, False):
        # the caller's axes may sit in a grid: a legend outside them would cover the neighbours
        ax.legend(handles=handles, loc="best", fontsize="x-small", framealpha=0.85)
        return
    width = max(len(h.get_label()) for h in handles)
    ncols = min(1 if width > 40 else 2 if width > 22 else 3, len(handles))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncols=ncols,
              fontsize="small", frameon=False)


def draw_circle(ax: Axes, radius: float, **style) -> list:
    """A circle about 0 as a line (721 points); returns the lines drawn."""
    t = np.linspace(0, 2 * np.pi, 721)
    return ax.plot(radius * np.cos(t), radius * np.sin(t), **style)


def draw_complex_plane(ax: Axes, what: str) -> None:
    """Unit circle (a dashed line labelled ``unit circle``), the axes through 0, equal aspect."""
    draw_circle(ax, 1.0, color="0.35", lw=0.9, ls="--", label="unit circle")
    ax.axhline(0, color="0.8", lw=0.6, zorder=0)
    ax.axvline(0, color="0.8", lw=0.6, zorder=0)
    ax.set(aspect="equal", xlabel=f"$\\mathrm{{Re}}\\,{what}$" if what else "real part",
           ylabel=f"$\\mathrm{{Im}}\\,{what}$" if what else "imaginary part")
    ax.set_adjustable("datalim")


def check_moving_param(rec, param: str, fixed: dict) -> None:
    """``rec`` is a Recurrence with a parameter ``param`` that ``fixed`` does not also set."""
    if not isinstance(rec, Recurrence):
        raise ParameterError(f"expected a Recurrence, got {type(rec).__name__}")
    rec.param(param)  # UnknownParameterError with the known names
    if param in fixed:
        raise ParameterError(f"{param} is the moving parameter; do not also fix it")


def as_array(value, what: str) -> np.ndarray:
    """``np.asarray`` with a typed error for ragged input."""
    try:
        return np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise ShapeError(f"cannot make an array of {what}: {exc}") from None
