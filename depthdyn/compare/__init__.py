"""Families side by side: one table of stability facts and one figure of their regions.

:func:`compare` takes family specifications (``"momentum:m=1/2"``, ``("lm_resnet", {"k": 0})``
or a :class:`~depthdyn.Recurrence`), fills what a specification leaves open from the registry
entry's example arguments (:attr:`depthdyn.families.Family.example`), and returns a
:class:`ComparisonTable`: per family the order, the state size, the characteristic
polynomial, the stability numbers (real and imaginary intervals, ``A(alpha)``,
zero-stability), the area of the strictly stable set inside a stated box of the ``lam``
plane (from the grid mask of :func:`~depthdyn.numeric.region.stability_region`) and the depth
limit of the scaled form (every ``lam`` replaced by ``lam / L``, ``L -> oo``, by
:func:`~depthdyn.symbolic.solve.depth_limit`). The table exports to markdown and LaTeX;
:func:`depthdyn.plot.plot_comparison` overlays the regions on one pair of axes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import sympy as sp

from ..errors import DepthdynError, ParameterError
from ..families.registry import parse_spec, resolve_spec
from ..numeric.region import StabilityRegion, stability_region
from ..printing import sstr
from ..records import Record, jsonable
from ..recurrence import Param, Recurrence

__all__ = ["DEFAULT_BOX", "NOT_AVAILABLE", "CompareRow", "ComparisonTable", "axis_intervals", "compare",
           "numeric_numbers", "parse_spec", "resolve_spec", "stability_facts"]

#: ``(re_lo, re_hi, im_lo, im_hi)`` of the ``lam`` plane where areas are measured and drawn.
DEFAULT_BOX = (-5.0, 1.0, -3.5, 3.5)
#: How the depth-limit column starts when neither method could decide the limit.
NOT_AVAILABLE = "not available"
_L = Param("L", sp.Interval.open(0, sp.oo), "depth of the scaled form")


def _check_ready(label: str, rec: Recurrence) -> None:
    if not rec.lam:
        raise ParameterError(f"{label}: the family has no block eigenvalue lam, so no region in the "
                             "lam plane")
    free = [p for p in rec.param_names if p != rec.lam]
    if free:
        raise ParameterError(f"{label}: give values for {free} (e.g. {label.split(':')[0]}:"
                             f"{','.join(f'{p}=...' for p in free)})")


# ------------------------------------------------------------------ the numbers
_GAP = 10  # grid points around lam = 0 that may be lost to the Schur-Cohn tolerance (|r| = 1 - O(t^k))


def _component(lam: np.ndarray, ok: np.ndarray) -> tuple[float, float] | None:
    """The run of ``ok`` containing ``lam = 0`` (or on both sides of it), else the longest, as ``(lo, hi)``.
    """
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
    from ..numeric.masks import stability_mask
    from ..symbolic.stability import root_condition

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
    out["a_alpha_degrees"] = (None if not ok[0] else 90.0 if ok.all()
                              else float(np.rad2deg(theta[first_bad - 1])))
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


def _exact_ends(iv) -> list | None:
    """The exact ends of ``iv`` as SymPy numbers (None for an infinite end), None when empty.

    They stay SymPy objects here (the LaTeX table prints them; a root of a cubic has no text the
    safe parser reads back) and become strings in :meth:`CompareRow.to_json`.
    """
    if iv.is_empty:
        return None
    return [None if end.is_infinite else end for end in (iv.lo, iv.hi)]


def _disagreements(exact: dict, grid: dict, step: float, reach: float = 20.0) -> list[str]:
    """Where the grid estimate contradicts the exact numbers by more than two grid steps.

    The grid sees ``[-reach, reach]`` only: an exact end beyond it agrees with an open end (None).
    """
    bad = []
    for key in ("real_interval", "imag_interval"):
        a, b = exact[key], grid[key]
        if (a is None) != (b is None):
            bad.append(f"{key}: exact {_interval(a)}, grid {_interval(b)}")
            continue
        if a is None:
            continue
        for u, v in zip(a, b, strict=True):
            if v is None and u is not None and abs(u) >= reach - 2 * step:
                continue  # the exact end lies beyond the grid (momentum_sander: -38)
            if (u is None) != (v is None) or (u is not None and abs(u - v) > 2 * step):
                bad.append(f"{key}: exact {_interval(a)}, grid {_interval(b)}")
                break
    if exact["zero_stable"] != grid["zero_stable"]:
        bad.append(f"zero_stable: exact {exact['zero_stable']}, grid {grid['zero_stable']}")
    a, b = exact.get("a_alpha_degrees"), grid.get("a_alpha_degrees")
    # the grid takes 0.25 degree steps and calls a ray on the circle (|R(it)| = 1) unstable
    if (a is None) != (b is None) or (a is not None and abs(a - b) > 0.5):
        bad.append(f"a_alpha_degrees: exact {a}, grid {b}")
    return bad


def stability_facts(rec: Recurrence) -> dict:
    """The numbers of one family: exact where :func:`~depthdyn.stability_numbers` applies, checked on a grid.

    Families whose characteristic polynomial is ``rho(r) - lam sigma(r)`` get the exact
    numbers of :func:`~depthdyn.symbolic.numbers.stability_numbers` (``method`` says so),
    each interval and the zero-stability cross-checked against :func:`numeric_numbers`;
    ``grid_check`` lists any disagreement beyond two grid steps (empty when they agree).
    Others (Runge-Kutta blocks, matrix families) get the grid estimate, labelled as such.
    """
    from ..symbolic.numbers import stability_numbers

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
                 "accuracy_order": sn.order, "a_stable": sn.a_stable, "l_stable": sn.l_stable,
                 "a_alpha_exact": None if sn.a_alpha_exact is None else sp.sstr(sn.a_alpha_exact)}
        for key, whole in (("real", sn.real_set), ("imag", sn.imag_set)):
            if getattr(sn, f"{key}_interval").component.startswith("nearest"):  # no piece at 0: show them all
                exact[f"{key}_pieces"] = [_exact_interval(iv) for iv in whole.intervals]
                exact[f"{key}_pieces_exact"] = [_exact_ends(iv) for iv in whole.intervals]
    else:
        try:
            real, imag = (u.component(0) for u in axis_intervals(rec))
        except DepthdynError:
            return {**grid, "grid_check": []}
        exact = {**grid, "method": "intervals exact (stability conditions on each axis), A(alpha) "
                 "grid estimate; grid-checked", "real_interval": _exact_interval(real),
                 "imag_interval": _exact_interval(imag)}
    # the ends as exact numbers too: the LaTeX table prints -6/11, not -0.5455
    exact["real_exact"], exact["imag_exact"] = _exact_ends(real), _exact_ends(imag)
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
    :func:`~depthdyn.symbolic.solvefor.solve_for` (exact endpoints).

    Returns
    -------
    (IntervalUnion, IntervalUnion)
        The sets in ``lam`` and in ``t``.
    """
    from ..symbolic.solvefor import solve_for
    from ..symbolic.stability import stability_conditions

    try:
        real = solve_for(rec, rec.lam)
        sc = stability_conditions(rec, lam="complex")
        syms = {s.name: s for s, _ in sc.domains}
        re_, im_ = syms[f"{rec.lam}_re"], syms[f"{rec.lam}_im"]
        on_axis = [c.subs(re_, 0) for c in sc.conditions]
        imag = solve_for(on_axis, im_.name) if not sc.never else solve_for([sp.false], im_.name)
    except sp.polys.polyerrors.DomainError:  # real-root isolation over radicals (sqrt(3) in a tableau)
        raise ParameterError(f"{rec.name}: conditions with radical coefficients cannot be solved for an "
                             "interval here; stability_numbers handles them (scalar recurrences)") from None
    return real, imag


def _depth_limit(rec: Recurrence) -> tuple[str, sp.Expr | None]:
    """``x_L`` as ``L -> oo`` for the scaled form ``lam -> lam / L``, from ``x_0 = ... = x_{p-1} = 1``.

    ``(text, limit)``: the closed-form limit of :func:`~depthdyn.symbolic.solve.depth_limit`,
    else the principal-root argument of :func:`~depthdyn.symbolic.scaled.principal_limit`
    (BDF3: its cubic's closed-form roots defeat the limit); ``limit`` is None when neither
    gives one.
    """
    from ..symbolic.scaled import principal_limit
    from ..symbolic.solve import depth_limit

    if not rec.is_scalar:
        return "n/a (matrix family: take one eigenmode)", None
    if "L" in rec.param_names:
        return "n/a (the family already has a depth L)", None
    lam = rec.lam_symbol
    scaled = replace(rec, coeffs=tuple(c.xreplace({lam: lam / _L.symbol}) for c in rec.coeffs),
                     params=rec.params + (_L,), native=(), name=rec.name + " (lam/L)")
    try:  # the layers before the first at rest: x_0 = ... = x_{p-1} = 1
        lim = depth_limit(scaled, [1] * rec.order).limit
        return sp.sstr(lim), lim
    except DepthdynError as exc:
        first, unknown = exc, None
    except (NotImplementedError, sp.PoleError) as exc:
        # SymPy's series cannot expand every mode (smooth k=3: cube roots of lam/L); the
        # closed form says nothing then, so the cell must not claim "no finite limit"
        first, unknown = exc, f"SymPy's series expansion of a mode failed ({type(exc).__name__})"
    try:
        lim = principal_limit(rec)
        return sp.sstr(lim), lim
    except DepthdynError as exc:
        if unknown:
            return f"{NOT_AVAILABLE} ({unknown}; principal root: {exc})", None
        return f"no finite limit: {first}", None


def _tableau_order(spec, rec: Recurrence):
    """The order from the Butcher tableau's order conditions when ``rec`` is a Runge-Kutta block."""
    from ..symbolic.butcher import runge_kutta_tableau, tableau_order

    tab = runge_kutta_tableau(rec)
    return None if tab is None else tableau_order(*tab)


def _depth_check(rec: Recurrence, text: str, limit) -> list[str]:
    """The depth-limit column against the recurrence iterated at ``L = 10^3 .. 10^5`` (float64)."""
    from ..symbolic.scaled import check_depth_limit

    if text.startswith(("n/a", NOT_AVAILABLE)):
        return []
    try:
        why = check_depth_limit(rec, limit)
    except DepthdynError as exc:
        return [f"depth_limit: not checked ({exc})"]
    return [f"depth_limit: {why}"] if why else []


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
    #: the depth limit as an expression in ``lam`` (None where ``depth_limit`` gives none)
    limit: sp.Expr | None = None

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
            "order": self.order, "state_size": self.state_size, "charpoly": sstr(self.charpoly),
            **{k: jsonable(v) if k.endswith("_exact") else v
               for k, v in self.numbers.items() if k != "method"},
            "area": self.area, "marginal_area": self.marginal_area, "depth_limit": self.depth_limit,
        }

    def _text(self) -> str:
        return f"{self.label}: {sstr(self.charpoly)}"

    def _latex(self) -> str:
        return sp.latex(self.charpoly)


def _interval(v, component: str = "", pieces=None) -> str:
    if pieces:  # no piece contains or touches 0 (BDF3 on the imaginary axis: |t| > 1.936): all of them
        return " U ".join(_interval(p) for p in pieces)
    if v is None:
        return "none"
    lo, hi = ("-oo" if v[0] is None else f"{v[0]:.4g}"), ("oo" if v[1] is None else f"{v[1]:.4g}")
    return f"({lo}, {hi})" + (" \\ {0}" if component.endswith("on both sides") else "")


def _alpha_cell(nb: dict) -> str:
    alpha, exact = nb.get("a_alpha_degrees"), nb.get("a_alpha_exact")
    if alpha is None:
        return "none"
    if exact == "90":
        return "90 deg (L-stable)" if nb.get("l_stable") else "90 deg (A-stable)"
    return f"{alpha:.4g} deg"


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
            flag = " (!)" if nb.get("grid_check") else ""
            out.append([row.label + flag, str(row.order), str(row.state_size), sstr(row.charpoly),
                        *(_interval(nb.get(f"{a}_interval"), nb.get(f"{a}_component", ""),
                                    nb.get(f"{a}_pieces")) for a in ("real", "imag")),
                        _alpha_cell(nb), str(nb.get("zero_stable")),
                        f"{row.area:.4g}",
                        "no finite limit" if row.depth_limit.startswith("no finite") else row.depth_limit])
        return out

    @property
    def caption(self) -> str:
        lo, hi, ilo, ihi = self.box
        return (f"area: strictly stable part of the box Re lam in [{lo:g}, {hi:g}], "
                f"Im lam in [{ilo:g}, {ihi:g}] "
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
        """A ``tabular`` (booktabs rules) typeset for a paper: :func:`depthdyn.compare.latex.latex_table`."""
        from .latex import latex_table

        return latex_table(self)

    def _text(self) -> str:
        rows = [list(_COLUMNS)] + self.cells()
        widths = [max(len(r[i]) for r in rows) for i in range(len(_COLUMNS))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
        return "\n".join(lines + ["", self.caption])

    def _latex(self) -> str:
        return r"\text{comparison of " + str(len(self.rows)) + " families}"


def compare(*specs, box=DEFAULT_BOX, n: int = 301, numbers=None, progress=None) -> ComparisonTable:
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
    progress : callable, optional
        Called as ``progress(stage)`` before each family (``"bdf:k=2 (2/4)"``).

    Returns
    -------
    ComparisonTable

    Raises
    ------
    UnknownFamilyError, ParameterError
        An unknown family, a malformed specification, a family without ``lam`` or with a
        parameter that neither the specification nor the example fixes, a bad box, ``numbers``
        that is not callable.

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
    if numbers is not None and not callable(numbers):
        raise ParameterError(f"numbers must be a function rec -> dict (or None for the default), "
                             f"got {numbers!r}")
    numbers = numbers or stability_facts
    rows, methods = [], set()
    for i, spec in enumerate(specs):
        if progress is not None:
            name = spec if isinstance(spec, str) else getattr(spec, "name", None) or spec[0]
            progress(f"{name} ({i + 1}/{len(specs)})")
        label, rec, filled = resolve_spec(spec)
        _check_ready(label, rec)
        reg = stability_region(rec, ("re(lam)", lo, hi, n), ("im(lam)", ilo, ihi, n), conditions=False)
        cell = (hi - lo) * (ihi - ilo)
        nb = numbers(rec)
        methods.add(nb.get("method", ""))
        tab = _tableau_order(spec, rec)
        if tab is not None:
            nb = {**nb, "tableau_order": tab.order if not tab.at_least else f">= {tab.order}"}
            lin = nb.get("accuracy_order")
            if isinstance(lin, int) and tab.order > lin:  # the linear order bounds the tableau order
                nb["grid_check"] = list(nb.get("grid_check", [])) + [
                    f"order: tableau {tab.order} > order {lin} of R(z) = P/Q"]
        text, limit = _depth_limit(rec)
        nb = {**nb, "grid_check": list(nb.get("grid_check", [])) + _depth_check(rec, text, limit)}
        rows.append(CompareRow(label, rec, filled, nb, float(reg.strict.mean() * cell),
                               float(reg.marginal.mean() * cell), text, reg, limit))
    return ComparisonTable(tuple(rows), (lo, hi, ilo, ihi), n, "; ".join(sorted(m for m in methods if m)))
