"""Families side by side: one table of stability facts and one figure of their regions.

:func:`compare` takes family specifications (``"momentum:m=1/2"``, ``("lm_resnet", {"k": 0})``
or a :class:`~depthdyn.Recurrence`), fills what a specification leaves open from the registry
entry's example arguments (:attr:`depthdyn.families.Family.example`), and returns a
:class:`ComparisonTable`: per family the order, the state size, the characteristic
polynomial, the stability numbers (real and imaginary intervals, ``A(alpha)``,
zero-stability), the area of the strictly stable set inside a stated box of the ``lam``
plane (from the grid mask of :func:`~depthdyn.numeric.region.stability_region`) and the depth
limit of the scaled form (every ``lam`` replaced by ``lam / L``, ``L -> oo``, by
:func:`~depthdyn.symbolic.solve.depth_limit`). :func:`plot_comparison` overlays the regions
on one pair of axes; the table exports to markdown and LaTeX.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import sympy as sp

from .errors import DepthdynError, ParameterError
from .numeric.region import StabilityRegion, stability_region
from .recurrence import Param, Recurrence
from .symbolic.records import Record

__all__ = ["DEFAULT_BOX", "CompareRow", "ComparisonTable", "axis_intervals", "compare", "numeric_numbers", "parse_spec",
           "plot_comparison", "figure_path", "write_comparison_figure", "resolve_spec", "stability_facts"]

#: ``(re_lo, re_hi, im_lo, im_hi)`` of the ``lam`` plane where areas are measured and drawn.
DEFAULT_BOX = (-5.0, 1.0, -3.5, 3.5)
_L = Param("L", sp.Interval.open(0, sp.oo), "depth of the scaled form")


def _split_top(text: str) -> list[str]:
    """Split at commas outside brackets (matrix values contain commas)."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch in "([") - (ch in ")]")
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return [p.strip() for p in parts + [cur] if p.strip()]


def parse_spec(text: str) -> tuple[str, list[str]]:
    """``"FAMILY[:NAME=VALUE,...]"`` -> ``(family, ["NAME=VALUE", ...])``.

    Examples
    --------
    >>> parse_spec("momentum:m=1/2,eta=1")
    ('momentum', ['m=1/2', 'eta=1'])
    >>> parse_spec("hc_static:A_r=[[1, 0], [0, 1]]")
    ('hc_static', ['A_r=[[1, 0], [0, 1]]'])
    """
    if not isinstance(text, str) or not text.strip():
        raise ParameterError(f"a family specification must be FAMILY[:NAME=VALUE,...], got {text!r}")
    name, _, rest = text.strip().partition(":")
    return name.strip(), _split_top(rest)


def resolve_spec(spec) -> tuple[str, Recurrence, dict]:
    """``(label, recurrence, values filled from the example)`` for one specification of :func:`compare`."""
    from .cli import build_from_cli
    from .families import get_family

    if isinstance(spec, Recurrence):
        return spec.name, spec, {}
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[1], dict):
        name, given = spec[0], [f"{k}={v}" for k, v in spec[1].items()]
        label = name + (":" + ",".join(given) if given else "")
    else:
        name, given = parse_spec(spec)
        label = str(spec).strip()
    fam = get_family(name)
    keys = {a.partition("=")[0].strip() for a in given}
    structural = fam.structural
    extra = [f"{k}={v}" for k, v in fam.example.items() if k in structural and k not in keys
             and k not in ("rho", "sigma")]
    rho = sigma = None
    if name == "general":
        pairs = dict(a.split("=", 1) for a in given if a.split("=", 1)[0].strip() in ("rho", "sigma"))
        given = [a for a in given if a.split("=", 1)[0].strip() not in ("rho", "sigma")]
        rho = pairs.get("rho", fam.example.get("rho"))
        sigma = pairs.get("sigma", fam.example.get("sigma"))
    rec = build_from_cli(name, given + extra, rho, sigma)
    filled = {k: v for k, v in fam.example.items() if k in rec.param_names and k != rec.lam}
    return label, (rec.subs(filled) if filled else rec), filled


def _check_ready(label: str, rec: Recurrence) -> None:
    if not rec.lam:
        raise ParameterError(f"{label}: the family has no block eigenvalue lam, so no region in the lam plane")
    free = [p for p in rec.param_names if p != rec.lam]
    if free:
        raise ParameterError(f"{label}: give values for {free} (e.g. {label.split(':')[0]}:"
                             f"{','.join(f'{p}=...' for p in free)})")


# ------------------------------------------------------------------ the numbers
_GAP = 10  # grid points around lam = 0 that may be lost to the Schur-Cohn tolerance (|r| = 1 - O(t^k))


def _component(lam: np.ndarray, ok: np.ndarray) -> tuple[float, float] | None:
    """The run of ``ok`` containing ``lam = 0`` (or on both sides of it), else the longest, as ``(lo, hi)``."""
    if not ok.any():
        return None
    edges = np.flatnonzero(np.diff(np.r_[0, ok.astype(np.int8), 0]))
    runs = list(zip(edges[::2], edges[1::2] - 1, strict=True))
    zero = int(np.argmin(np.abs(lam)))
    if not ok[zero]:  # a root touches the circle at lam = 0: join the runs on both sides of it
        left = [ab for ab in runs if zero - _GAP <= ab[1] < zero]
        right = [ab for ab in runs if zero < ab[0] <= zero + _GAP]
        if left and right:
            runs = [ab for ab in runs if ab not in (left[0], right[0])] + [(left[0][0], right[0][1])]
    pick = next(((a, b) for a, b in runs if a <= zero <= b), max(runs, key=lambda ab: ab[1] - ab[0]))
    return float(lam[pick[0]]), float(lam[pick[1]])


def numeric_numbers(rec: Recurrence, *, reach: float = 20.0, n: int = 8001) -> dict:
    """Stability numbers estimated on grids by the Schur-Cohn mask; zero-stability exactly.

    ``real_interval``: the run of real ``lam`` in ``[-reach, reach]`` (``n`` points) where all
    roots are strictly inside the circle, the run next to or containing 0 (else the longest),
    as ``[lo, hi]`` of its grid points; ``imag_interval`` the same on the imaginary axis (``Im
    lam``); ``a_alpha_degrees``: the largest ``alpha`` (0.25 degree steps) such that every ray
    ``lam = -rho e^{+-i theta}``, ``|theta| <= alpha``, ``10^-6 <= rho <= 10^3`` (400
    log-spaced radii) is strictly stable (``None`` when the negative real axis is not);
    ``zero_stable`` by :func:`~depthdyn.symbolic.stability.root_condition` at ``lam = 0``.
    Ends are accurate to the grid step ``2 reach / (n - 1)``; an end at ``+-reach`` is
    reported as ``None`` (unbounded, as far as the grid sees).
    """
    from .numeric.masks import stability_mask
    from .symbolic.stability import root_condition

    t = np.linspace(-reach, reach, n)
    out = {"method": f"grid estimate (Schur-Cohn on {n} points of [-{reach:g}, {reach:g}])"}
    for key, axis in (("real_interval", t + 0j), ("imag_interval", 1j * t)):
        comp = _component(t, stability_mask(rec, lam=axis)[0])
        out[key] = None if comp is None else [None if abs(c) >= reach else c for c in comp]
    theta = np.deg2rad(np.arange(0, 90.25, 0.25))
    rho = np.logspace(-6, 3, 400)
    lam = -rho[None, :] * np.exp(1j * theta[:, None])
    ok = stability_mask(rec, lam=lam)[0].all(axis=1) & stability_mask(rec, lam=np.conj(lam))[0].all(axis=1)
    first_bad = int(np.argmin(ok))
    out["a_alpha_degrees"] = None if not ok[0] else 90.0 if ok.all() else float(np.rad2deg(theta[first_bad - 1]))
    try:
        out["zero_stable"] = bool(root_condition(rec.subs({rec.lam: 0})).marginal)
    except DepthdynError as exc:
        out["zero_stable"] = f"undecided: {exc}"
    return out


def _exact_interval(iv) -> list | None:
    data = iv.to_json()
    if data["empty"]:
        return None
    return [data["lo"]["value"] if np.isfinite(data["lo"]["value"]) else None,
            data["hi"]["value"] if np.isfinite(data["hi"]["value"]) else None]


def _disagreements(exact: dict, grid: dict, step: float) -> list[str]:
    """Where the grid estimate contradicts the exact numbers by more than two grid steps."""
    bad = []
    for key in ("real_interval", "imag_interval"):
        a, b = exact[key], grid[key]
        if (a is None) != (b is None):
            bad.append(f"{key}: exact {_interval(a)}, grid {_interval(b)}")
            continue
        if a is None:
            continue
        for u, v in zip(a, b, strict=True):
            if (u is None) != (v is None) or (u is not None and abs(u - v) > 2 * step):
                bad.append(f"{key}: exact {_interval(a)}, grid {_interval(b)}")
                break
    if exact["zero_stable"] != grid["zero_stable"]:
        bad.append(f"zero_stable: exact {exact['zero_stable']}, grid {grid['zero_stable']}")
    return bad


def stability_facts(rec: Recurrence) -> dict:
    """The numbers of one family: exact where :func:`~depthdyn.stability_numbers` applies, checked on a grid.

    Families whose characteristic polynomial is ``rho(r) - lam sigma(r)`` get the exact
    numbers of :func:`~depthdyn.symbolic.numbers.stability_numbers` (``method`` says so),
    each interval and the zero-stability cross-checked against :func:`numeric_numbers`;
    ``grid_check`` lists any disagreement beyond two grid steps (empty when they agree).
    Others (Runge-Kutta blocks, matrix families) get the grid estimate, labelled as such.
    """
    from .symbolic.numbers import stability_numbers

    grid = numeric_numbers(rec)
    try:
        sn = stability_numbers(rec)
    except DepthdynError:
        sn = None
    if sn is not None:
        real, imag = sn.real_interval, sn.imag_interval
        exact = {"method": "exact (stability_numbers), grid-checked",
                 "real_interval": _exact_interval(real), "imag_interval": _exact_interval(imag),
                 "a_alpha_degrees": sn.a_alpha_degrees, "zero_stable": sn.zero_stable,
                 "accuracy_order": sn.order}
    else:
        try:
            real, imag = (u.component(0) for u in axis_intervals(rec))
        except DepthdynError:
            return {**grid, "grid_check": []}
        exact = {**grid, "method": "intervals exact (stability conditions on each axis), A(alpha) "
                 "grid estimate; grid-checked", "real_interval": _exact_interval(real),
                 "imag_interval": _exact_interval(imag)}
    # which component of the stable set the interval is; "... on both sides": 0 itself is not in it
    exact["real_component"], exact["imag_component"] = real.component, imag.component
    exact["grid_check"] = _disagreements(exact, grid, 40.0 / 8000)
    return exact


def axis_intervals(rec: Recurrence):
    """Exact strict-stability sets of ``rec`` on the real and the imaginary ``lam`` axis.

    For any recurrence whose only free parameter is ``lam`` (not only ``rho - lam sigma``:
    Runge-Kutta blocks, whose roots are polynomials in ``lam``): the real set solves the
    Schur-Cohn conditions for real ``lam``; the imaginary set those for complex ``lam``
    restricted to ``Re lam = 0``, in ``t = Im lam``. Both via
    :func:`~depthdyn.symbolic.intervals.solve_for` (exact endpoints).

    Returns
    -------
    (IntervalUnion, IntervalUnion)
        The sets in ``lam`` and in ``t``.
    """
    from .symbolic.intervals import solve_for
    from .symbolic.stability import stability_conditions

    real = solve_for(rec, rec.lam)
    sc = stability_conditions(rec, lam="complex")
    syms = {s.name: s for s, _ in sc.domains}
    re_, im_ = syms[f"{rec.lam}_re"], syms[f"{rec.lam}_im"]
    on_axis = [c.subs(re_, 0) for c in sc.conditions]
    imag = solve_for(on_axis, im_.name) if not sc.never else solve_for([sp.false], im_.name)
    return real, imag


def _depth_limit(rec: Recurrence) -> str:
    """``x_L`` as ``L -> oo`` for the scaled form ``lam -> lam / L``, from ``x_0 = ... = x_{p-1} = 1`` (text)."""
    from .symbolic.solve import depth_limit

    if not rec.is_scalar:
        return "n/a (matrix family: take one eigenmode)"
    if "L" in rec.param_names:
        return "n/a (the family already has a depth L)"
    lam = rec.lam_symbol
    scaled = replace(rec, coeffs=tuple(c.xreplace({lam: lam / _L.symbol}) for c in rec.coeffs),
                     params=rec.params + (_L,), native=(), name=rec.name + " (lam/L)")
    try:  # the layers before the first at rest: x_0 = ... = x_{p-1} = 1
        return sp.sstr(depth_limit(scaled, [1] * rec.order).limit)
    except DepthdynError as exc:
        return f"no finite limit: {exc}"


# ------------------------------------------------------------------ records
@dataclass(frozen=True, eq=False)
class CompareRow(Record):
    """One family of a comparison; ``region`` is the grid it was measured on."""

    label: str
    recurrence: Recurrence
    filled: dict
    numbers: dict
    area: float
    marginal_area: float
    depth_limit: str
    region: StabilityRegion

    @property
    def order(self) -> int:
        return self.recurrence.order

    @property
    def state_size(self) -> int:
        return self.recurrence.order * self.recurrence.dim

    @property
    def charpoly(self) -> sp.Expr:
        return self.recurrence.charpoly()

    def to_json(self) -> dict:
        return {
            "family": self.label, "name": self.recurrence.name, "source": self.recurrence.source,
            "filled_from_example": {k: sp.sstr(v) for k, v in self.filled.items()},
            "order": self.order, "state_size": self.state_size, "charpoly": sp.sstr(self.charpoly),
            **{k: v for k, v in self.numbers.items() if k != "method"},
            "area": self.area, "marginal_area": self.marginal_area, "depth_limit": self.depth_limit,
        }

    def _text(self) -> str:
        return f"{self.label}: {sp.sstr(self.charpoly)}"

    def _latex(self) -> str:
        return sp.latex(self.charpoly)


def _interval(v, component: str = "") -> str:
    if v is None:
        return "none"
    lo, hi = ("-oo" if v[0] is None else f"{v[0]:.4g}"), ("oo" if v[1] is None else f"{v[1]:.4g}")
    return f"({lo}, {hi})" + (" \\ {0}" if component.endswith("on both sides") else "")


_COLUMNS = ("family", "order", "states", "characteristic polynomial", "real interval", "imag interval",
            "A(alpha)", "zero-stable", "area", "depth limit")


@dataclass(frozen=True, eq=False)
class ComparisonTable(Record):
    """The rows of :func:`compare`, the box the areas were measured in, and how the numbers were made."""

    rows: tuple
    box: tuple
    n: int
    numbers_method: str

    def cells(self) -> list[list[str]]:
        """One list of strings per row, in the order of the column headers."""
        out = []
        for row in self.rows:
            nb = row.numbers
            alpha = nb.get("a_alpha_degrees")
            flag = " (!)" if nb.get("grid_check") else ""
            out.append([row.label + flag, str(row.order), str(row.state_size), sp.sstr(row.charpoly),
                        _interval(nb.get("real_interval"), nb.get("real_component", "")),
                        _interval(nb.get("imag_interval"), nb.get("imag_component", "")),
                        "none" if alpha is None else f"{alpha:.4g} deg", str(nb.get("zero_stable")),
                        f"{row.area:.4g}",
                        "no finite limit" if row.depth_limit.startswith("no finite") else row.depth_limit])
        return out

    @property
    def caption(self) -> str:
        lo, hi, ilo, ihi = self.box
        return (f"area: strictly stable part of the box Re lam in [{lo:g}, {hi:g}], Im lam in [{ilo:g}, {ihi:g}] "
                f"({self.n} x {self.n} grid); numbers: {self.numbers_method}; depth limit: x_L as L -> oo "
                f"with lam -> lam/L, from x_0 = ... = x_(p-1) = 1; intervals: strict stability, open"
                + ("; (!): the grid cross-check disagrees with the exact numbers (grid_check in the JSON)"
                   if any(row.numbers.get("grid_check") for row in self.rows) else ""))

    def to_json(self) -> dict:
        return {"box": list(self.box), "grid": self.n, "numbers_method": self.numbers_method,
                "rows": [row.to_json() for row in self.rows]}

    def to_markdown(self) -> str:
        """A GitHub/MyST pipe table with the caption below it."""
        esc = lambda s: s.replace("|", "\\|")  # noqa: E731
        lines = ["| " + " | ".join(_COLUMNS) + " |", "|" + "---|" * len(_COLUMNS)]
        lines += ["| " + " | ".join(esc(c) for c in cells) + " |" for cells in self.cells()]
        return "\n".join(lines) + f"\n\n{self.caption}\n"

    def to_latex(self) -> str:
        """A ``tabular`` (booktabs rules) with the polynomials in math mode."""
        def tex(text: str) -> str:
            return text.replace("\\", "\\textbackslash{}").replace("_", "\\_").replace("&", "\\&").replace(
                "%", "\\%").replace("#", "\\#")

        body = []
        for row, cells in zip(self.rows, self.cells(), strict=True):
            cells = [tex(c) for c in cells]
            cells[3] = f"${sp.latex(row.charpoly)}$"
            body.append(" & ".join(cells) + r" \\")
        head = " & ".join(tex(c) for c in _COLUMNS) + r" \\"
        return "\n".join([r"\begin{tabular}{" + "l" * len(_COLUMNS) + "}", r"\toprule", head, r"\midrule",
                          *body, r"\bottomrule", r"\end{tabular}", f"% {tex(self.caption)}"]) + "\n"

    def _text(self) -> str:
        rows = [list(_COLUMNS)] + self.cells()
        widths = [max(len(r[i]) for r in rows) for i in range(len(_COLUMNS))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
        return "\n".join(lines + ["", self.caption])

    def _latex(self) -> str:
        return r"\text{comparison of " + str(len(self.rows)) + " families}"


def compare(*specs, box=DEFAULT_BOX, n: int = 301, numbers=None) -> ComparisonTable:
    """Compare families: one row each of order, state size, polynomial, numbers, area and depth limit.

    Parameters
    ----------
    *specs : str, (str, dict) or Recurrence
        ``"FAMILY[:NAME=VALUE,...]"`` (structural arguments and exact parameter values, as
        ``-p`` on the command line), ``(family, {name: value})``, or a recurrence whose only
        free parameter is ``lam``. Parameters left open take the registry's example values
        (reported per row as ``filled``).
    box : tuple of float
        ``(re_lo, re_hi, im_lo, im_hi)`` of the ``lam`` plane, for the areas and the overlay.
    n : int
        Grid points per axis of the region masks.
    numbers : callable, optional
        ``numbers(rec) -> dict`` with ``real_interval``, ``imag_interval``,
        ``a_alpha_degrees``, ``zero_stable`` and ``method``; default :func:`stability_facts`
        (exact where possible, else a grid estimate, and always cross-checked).

    Returns
    -------
    ComparisonTable

    Raises
    ------
    UnknownFamilyError, ParameterError
        An unknown family, a malformed specification, a family without ``lam`` or with a
        parameter that neither the specification nor the example fixes, a bad box.

    Examples
    --------
    >>> t = compare("residual", "momentum:m=1/2", n=41)
    >>> [(row.label, row.order, row.state_size) for row in t.rows]
    [('residual', 1, 1), ('momentum:m=1/2', 2, 2)]
    >>> t.rows[1].filled
    {'eta': 1}
    """
    if not specs:
        raise ParameterError("compare needs at least one family")
    try:
        lo, hi, ilo, ihi = (float(v) for v in box)
    except (TypeError, ValueError):
        raise ParameterError(f"box must be (re_lo, re_hi, im_lo, im_hi), got {box!r}") from None
    if not (np.isfinite([lo, hi, ilo, ihi]).all() and lo < hi and ilo < ihi):
        raise ParameterError(f"box needs finite re_lo < re_hi and im_lo < im_hi, got {box!r}")
    if isinstance(n, bool) or not isinstance(n, int) or not 11 <= n <= 2001:
        raise ParameterError(f"n must be an integer in 11..2001, got {n!r}")
    numbers = numbers or stability_facts
    rows, methods = [], set()
    for spec in specs:
        label, rec, filled = resolve_spec(spec)
        _check_ready(label, rec)
        reg = stability_region(rec, ("re(lam)", lo, hi, n), ("im(lam)", ilo, ihi, n), conditions=False)
        cell = (hi - lo) * (ihi - ilo)
        nb = numbers(rec)
        methods.add(nb.get("method", ""))
        rows.append(CompareRow(label, rec, filled, nb, float(reg.strict.mean() * cell),
                               float(reg.marginal.mean() * cell), _depth_limit(rec), reg))
    return ComparisonTable(tuple(rows), (lo, hi, ilo, ihi), n, "; ".join(sorted(m for m in methods if m)))


def plot_comparison(table: ComparisonTable, ax=None):
    """Overlay the families' regions on one pair of axes (equal aspect, a legend entry per family).

    Each family is drawn by :func:`~depthdyn.plot.plot_stability_region` in its own colour:
    a translucent fill of the strictly stable grid points, the root-condition-only points
    and the boundary locus in the same colour.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax.images`` holds the masks of each family (in table order, stacked by area:
        the largest lowest); the legend has one patch per family labelled with its specification.
    """
    from matplotlib.patches import Patch

    from .plot import _axes, _legend, _math, plot_stability_region

    if not isinstance(table, ComparisonTable):
        raise ParameterError(f"expected a ComparisonTable (from compare), got {type(table).__name__}")
    ax = _axes(ax)
    handles = []
    for k, row in enumerate(table.rows):
        color = f"C{k % 10}"
        drawn = len(ax.images)
        plot_stability_region(row.region, ax=ax, color=color)
        for image in ax.images[drawn:]:
            image.set_zorder(-row.area)  # larger regions beneath, so every fill stays visible
        handles.append(Patch(facecolor=color, alpha=0.45, edgecolor=color, label=row.label))
    lo, hi, ilo, ihi = table.box
    ax.set(xlim=(lo, hi), ylim=(ilo, ihi), aspect="equal", xlabel=_math("re(lam)"), ylabel=_math("im(lam)"),
           title="stability regions (strictly stable, filled)")
    _legend(ax, handles)
    return ax


#: Figure formats ``write_comparison_figure`` writes, by file suffix.
FIGURE_FORMATS = ("png", "pdf", "svg", "eps", "ps")


def figure_path(path) -> Path:
    """Check a figure destination before any work: a regular file (or a new one) whose
    suffix names a supported format, in an existing directory; else :class:`ParameterError`."""
    text = os.fspath(path)
    out = Path(text)
    fmt = out.suffix[1:].lower()
    supported = ", ".join(f".{f}" for f in FIGURE_FORMATS)
    if text.endswith(("/", os.sep)) or out.is_dir():
        raise ParameterError(f"--out {text} is a directory; give a file name such as {out / 'compare.png'}")
    if out.exists() and not out.is_file():  # /dev/full: a device cannot be replaced atomically
        raise ParameterError(f"--out {text} is not a regular file; give a file name such as compare.png")
    if fmt not in FIGURE_FORMATS:
        raise ParameterError(f"--out {text}: unsupported figure format {out.suffix or '(no suffix)'}; "
                             f"use one of {supported}")
    if not out.parent.is_dir():
        raise ParameterError(f"--out {text}: directory {out.parent} does not exist")
    return out


def write_comparison_figure(table: ComparisonTable, path) -> Path:
    """Draw :func:`plot_comparison` and write it to ``path`` atomically (format from the suffix).

    The figure is rendered in memory, then written by :func:`depthdyn.report.atomic_write`:
    a failed write (disk full, no permission) raises and leaves no partial file.
    """
    import io

    from matplotlib.figure import Figure

    from .report import atomic_write

    out = figure_path(path)
    fig = Figure(figsize=(6.4, 5.6), layout="constrained")
    plot_comparison(table, ax=fig.add_subplot())
    buf = io.BytesIO()
    fig.savefig(buf, format=out.suffix[1:].lower(), dpi=120)
    return atomic_write(out, buf.getvalue())
