r"""The house style of depthdyn's figures: one rc set, a colour-blind-safe palette, typeset names.

Every plotting function of :mod:`depthdyn.plot` draws inside :func:`house_style` (a
:func:`matplotlib.rc_context`), so the style never leaks into the caller's own figures and
is the same in the report, the CLI, the docs and a notebook. The palette is Okabe and Ito's
eight colours, distinguishable with the common colour-vision deficiencies.

Names of parameters and families are typeset, never printed as code names:

>>> param_tex("lam"), param_tex("hres_1_1"), param_tex("eta")
('\\lambda', 'H^{\\mathrm{res}}_{11}', '\\eta')
>>> family_label("hyper_connection"), family_label("momentum:m=1/2")
('hyper-connection', 'momentum, $m = 1/2$')

Figures are saved through :func:`figure_bytes`: PNG at 200 dpi or more, PDF and SVG as
vectors (fonts embedded as TrueType in PDF, so journals accept them).

>>> from matplotlib.figure import Figure
>>> figure_bytes(Figure(), "pdf")[:5]
b'%PDF-'

``import depthdyn`` does not import this module (it imports matplotlib).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import wraps

import matplotlib as mpl
from cycler import cycler

from .errors import ParameterError

__all__ = ["PALETTE", "BLUE", "VERMILION", "GREEN", "PURPLE", "ORANGE", "STABLE", "MARGINAL", "REFERENCE",
           "RC", "FORMATS", "PNG_DPI", "house_style", "styled", "new_figure", "figure_bytes",
           "figure_format", "param_tex", "family_label"]

#: Okabe & Ito (2008): blue, vermilion, bluish green, reddish purple, orange, sky blue, yellow, black.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000")
#: The palette's first five colours by name, for marks that mean one thing in every figure.
BLUE, VERMILION, GREEN, PURPLE, ORANGE = PALETTE[:5]
#: Reference curves drawn beside the data (a continuum limit, the unit circle): a dark grey.
REFERENCE = "0.3"
#: Light fill of the strictly stable set and darker fill of the root-condition-only set (blues of the palette).
STABLE, MARGINAL = "#c6dbef", "#56B4E9"
#: The file formats figures are written in; PNG at :data:`PNG_DPI` at least.
FORMATS = ("png", "pdf", "svg")
PNG_DPI = 200

RC = {
    "axes.prop_cycle": cycler(color=list(PALETTE)),
    "figure.figsize": (6.4, 4.8),
    "figure.dpi": 100,
    "savefig.dpi": PNG_DPI,
    "font.size": 10.0,
    "axes.titlesize": "medium",
    "axes.labelsize": "medium",
    "legend.fontsize": "small",
    "xtick.labelsize": "small",
    "ytick.labelsize": "small",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": False,
    "lines.linewidth": 1.5,
    "mathtext.fontset": "cm",  # Computer Modern, as in the paper the figure goes into
    "pdf.fonttype": 42,  # TrueType, not Type 3: editable text, accepted by publishers
    "ps.fonttype": 42,
    "svg.fonttype": "path",  # glyphs as paths: the SVG looks the same without the fonts
    "image.cmap": "cividis",
}


@contextmanager
def house_style() -> Iterator[None]:
    """The rc settings of :data:`RC` for the duration of the block (restored afterwards).

    Except ``interactive``: importing pyplot for the first time inside the block (a figure
    function without ``ax`` in a Jupyter kernel) turns interactive mode on, and restoring it
    would stop the inline backend from showing every later pyplot figure.
    """
    with mpl.rc_context(RC):
        try:
            yield
        finally:
            interactive = mpl.rcParams["interactive"]
    mpl.rcParams["interactive"] = interactive


def styled(fn):
    """Decorator: run a plotting function inside :func:`house_style`."""

    @wraps(fn)
    def wrapper(*args, **kwargs):
        with house_style():
            out = fn(*args, **kwargs)
        axes = out if hasattr(out, "findobj") else None
        if axes is not None:  # texts made before the call (a caller's axes: title, labels) get the maths font too
            from matplotlib.text import Text

            for text in axes.findobj(Text):
                text.set_math_fontfamily(RC["mathtext.fontset"])
        return out

    return wrapper


def _in_ipython_kernel() -> bool:
    """True inside a Jupyter (IPython kernel) session, where pyplot's figures are shown inline."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    shell = ipython.get_ipython()
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def new_figure(figsize=None):
    """A new figure in the house style, with constrained layout.

    In a Jupyter kernel the figure is made through :mod:`matplotlib.pyplot`, so the inline
    backend shows it under the cell; anywhere else it is a plain
    :class:`matplotlib.figure.Figure` (no global state, nothing shown).
    """
    size = figsize or RC["figure.figsize"]
    if _in_ipython_kernel():
        import matplotlib.pyplot as plt

        return plt.figure(figsize=size, layout="constrained")
    from matplotlib.figure import Figure

    return Figure(figsize=size, layout="constrained")


def figure_format(path_or_format) -> str:
    """The format (``png``, ``pdf``, ``svg``) named by a file name's suffix or given directly."""
    text = str(path_or_format)
    fmt = text.rsplit(".", 1)[-1].lower() if "." in text else text.lower()
    if fmt not in FORMATS:
        raise ParameterError(f"cannot write a figure as {text!r}: use a file name ending in "
                             f"{', '.join('.' + f for f in FORMATS)}")
    return fmt


def figure_bytes(fig, fmt: str = "png", dpi: int = PNG_DPI) -> bytes:
    """The figure as the bytes of a PNG (``dpi`` >= 200), PDF or SVG file.

    The metadata that would change from run to run (creation date, software) is left out,
    so the same figure gives the same bytes.
    """
    import io

    fmt = figure_format(fmt)
    if fmt == "png" and dpi < PNG_DPI:
        raise ParameterError(f"PNG figures are written at {PNG_DPI} dpi or more, got dpi={dpi}")
    metadata = {"png": {"Software": None}, "pdf": {"CreationDate": None, "Producer": None, "Creator": None},
                "svg": {"Date": None, "Creator": None}}[fmt]
    import logging

    buf = io.BytesIO()
    fonts = logging.getLogger("fontTools")
    level = fonts.level
    fonts.setLevel(logging.ERROR)  # its notes on the embedded fonts' timestamps are not ours to show
    try:
        with house_style():
            fig.savefig(buf, format=fmt, dpi=dpi, metadata=metadata)
    finally:
        fonts.setLevel(level)
    return buf.getvalue()


# ------------------------------------------------------------------ typeset names
_MATRIX = re.compile(r"^h(res|pre|post)_(\d+)(?:_(\d+))?$")
_SPECIAL = {"lam": "\\lambda", "L": "L", "Gamma": "\\Gamma", "gamma": "\\gamma"}


def param_tex(name: str) -> str:
    """Mathtext (without dollars) for a parameter name of the code.

    ``lam`` -> ``\\lambda``, ``lam_re`` -> ``\\lambda_{\\mathrm{re}}``, ``hres_1_2`` ->
    ``H^{\\mathrm{res}}_{12}``, ``re(lam)`` -> ``\\mathrm{Re}\\,\\lambda``; Greek names as
    their letters; any other name as SymPy prints its symbol.
    """
    if name[:3] in ("re(", "im(") and name.endswith(")"):
        return f"\\mathrm{{{name[:2].capitalize()}}}\\,{param_tex(name[3:-1])}"
    if name in _SPECIAL:
        return _SPECIAL[name]
    match = _MATRIX.match(name)
    if match:
        kind, i, j = match.groups()
        return f"H^{{\\mathrm{{{kind}}}}}_{{{i}{j or ''}}}"
    base, _, sub = name.partition("_")
    if sub and base in _SPECIAL:
        return f"{_SPECIAL[base]}_{{\\mathrm{{{sub}}}}}"
    if not name.isidentifier():
        return f"\\mathrm{{{name}}}"
    import sympy as sp

    return sp.latex(sp.Symbol(name))


def family_label(spec: str) -> str:
    """A family name or spec as text for a title or legend: ``momentum:m=1/2`` -> ``momentum, $m = 1/2$``."""
    name, _, args = str(spec).partition(":")
    label = name.replace("_", "-")
    if args:
        parts = []
        for item in args.split(","):
            key, eq, value = item.partition("=")
            parts.append(f"${param_tex(key.strip())} = {value.strip()}$" if eq else item.replace("_", "-"))
        label += ", " + ", ".join(parts)
    return label
