"""Stability regions over 2-D parameter grids, filled by the boundary locus.

For a grid over the complex ``lam`` plane of a family whose characteristic polynomial is
``rho(r) - lam sigma(r)``, the **boundary locus** ``lam = rho(e^{it}) / sigma(e^{it})``
(:func:`boundary_locus`) bounds the stability region: the number of roots inside the
circle is ``N_in(sigma) + wind(locus, lam)``, so the strict region is a winding-number
level set. The locus is split at the exact extrema of ``Im lam(t)`` (bisection on
``d/dt Im lam``) into pieces monotone in ``Im lam``, so each grid row meets each piece at
most once; the crossing is found by bracketed bisection and Newton steps on the exact
curve, and a cumulative sum along the row gives the winding number. The grid points next
to every crossing and every extreme point (tangent rows) are re-decided by the Schur–Cohn
recursion of :mod:`depthdyn.numeric.masks`, which also gives their marginal verdicts.
Falls back to Schur–Cohn where ``sigma`` has a root within ``1e-6`` of the unit circle
(a pole of the locus; structural unit roots), and on any other pair of axes.

:func:`stability_region` returns a :class:`StabilityRegion` record (strict and marginal
masks, the locus curves and, when computed, the exact conditions). Work is done in chunks
of rows, so extra memory stays at a few chunk-sized buffers plus the output masks.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from ..errors import ParameterError, UnknownParameterError
from ..records import Record
from .bridge import compile_entries, prepare_values
from .masks import charpoly_entries, chunked_mask, evaluate_entries, schur_cohn_chunk

__all__ = ["boundary_locus", "StabilityRegion", "stability_region"]


# ------------------------------------------------------------------ boundary locus
def _locus_polys(rec, fixed: dict):
    """Numeric ``(rho, sigma)`` coefficient arrays in ``r`` (highest first), fixed values put in."""
    try:
        key = tuple(sorted(fixed.items()))
        hash(key)
    except TypeError:  # array values: no caching
        return _locus_polys_uncached(rec, fixed)
    return _locus_polys_cached(rec, key)


@functools.lru_cache(maxsize=64)
def _locus_polys_cached(rec, key: tuple):
    return _locus_polys_uncached(rec, dict(key))


def _locus_polys_uncached(rec, fixed: dict):
    import sympy as sp

    from ..recurrence import r, to_exact

    pair = rec.rho_sigma()
    if pair is None:
        raise ParameterError(
            f"{rec.name}: the characteristic polynomial is not rho(r) - lam*sigma(r) (linear in lam), "
            "so it has no boundary locus; use stability_mask instead"
        )
    prepare_values(rec, {**fixed, rec.lam: 0.0})  # validates names, domains, finiteness
    symbols = _facts(rec)[1]
    subs = {symbols[k]: to_exact(complex(v) if np.iscomplexobj(v) else float(v)) for k, v in fixed.items()}
    out = []
    for expr in pair:
        poly = sp.Poly(sp.expand(expr.xreplace(subs)), r)
        out.append(np.array([complex(c) for c in poly.all_coeffs()]))
    return out


def _curve(rho: np.ndarray, sigma: np.ndarray, t: np.ndarray) -> np.ndarray:
    z = np.exp(1j * t)
    with np.errstate(all="ignore"):
        return np.polyval(rho, z) / np.polyval(sigma, z)


def boundary_locus(rec, n: int = 4096, **fixed) -> list[np.ndarray]:
    """The boundary locus ``lam = rho(e^{it}) / sigma(e^{it})``, ``0 <= t <= 2 pi``.

    On this curve some root of ``rho(r) - lam sigma(r)`` lies on the unit circle, so the
    stability region is a union of the regions it bounds. Returns closed curves (complex
    arrays of ``n + 1`` points, first == last), split where ``sigma`` vanishes on the circle.

    Examples
    --------
    >>> from depthdyn import momentum
    >>> z = boundary_locus(momentum(), n=4, m=0.5, eta=1)[0]
    >>> np.round(z, 12).tolist()  # an ellipse through 0 and -2(1 + m)
    [0j, (-1.5+0.5j), (-3+0j), (-1.5-0.5j), 0j]
    """
    if not rec.lam:
        raise ParameterError(f"{rec.name} has no lam parameter, so no boundary locus")
    rho, sigma = _locus_polys(rec, fixed)
    t = np.linspace(0, 2 * np.pi, n + 1)
    t[-1] = 0.0  # closes exactly
    z = _curve(rho, sigma, t)
    big = ~np.isfinite(z) | (np.abs(z) > 1e8 * (1 + np.nanmedian(np.abs(z))))
    if not big.any():
        return [z]
    z = np.where(big, np.nan, z)
    pieces = np.split(z, np.flatnonzero(big))
    return [pc[np.isfinite(pc)] for pc in pieces if np.isfinite(pc).sum() > 1]


class _Locus:
    """``G(t) = rho(e^{it}) / sigma(e^{it})`` with ``y(t) = Im G`` and ``y'(t)``."""

    def __init__(self, rho, sigma):
        self.rho, self.sigma = rho, sigma
        self.drho, self.dsig = np.polyder(rho), np.polyder(sigma)

    def __call__(self, t):
        return _curve(self.rho, self.sigma, t)

    def dy(self, t):
        e = np.exp(1j * t)
        s = np.polyval(self.sigma, e)
        with np.errstate(all="ignore"):
            return (
                1j
                * e
                * (np.polyval(self.drho, e) * s - np.polyval(self.rho, e) * np.polyval(self.dsig, e))
                / s**2
            ).imag


def _bisect(f, a, b, fa, steps):
    """Vectorised bisection for sign changes of ``f`` on ``[a, b]``."""
    for _ in range(steps):
        m = 0.5 * (a + b)
        fm = f(m)
        left = np.sign(fm) == np.sign(fa)
        a, fa, b = np.where(left, m, a), np.where(left, fm, fa), np.where(left, b, m)
    return 0.5 * (a + b)


def _y_extrema(G: _Locus, M: int = 4096) -> np.ndarray:
    """All ``t`` in ``[0, 2 pi)`` where ``y = Im G`` has a local extremum, sorted."""
    t = np.linspace(0, 2 * np.pi, M + 1)
    d = G.dy(t)
    d[-1] = d[0]
    # two zeros of y' inside one step need |y'| <= max|y''| dt at both ends; bound |y''| dt
    # locally by 4x the largest change of y' over the neighbouring steps
    step = np.abs(np.diff(d))
    local = 4 * np.maximum.reduce([np.roll(step, -1), step, np.roll(step, 1)])
    small = np.flatnonzero((np.abs(d[:-1]) <= local) & (np.abs(d[1:]) <= local))
    if small.size:  # two extrema could hide in one step: look closer there
        sub = (t[small, None] + np.linspace(0, 1, 257)[None, :] * (t[1] - t[0])).ravel()
        t = np.unique(np.concatenate([t[:-1], sub, [2 * np.pi]]))
        d = G.dy(t)
        d[-1] = d[0]
    change = np.flatnonzero(np.sign(d[:-1]) * np.sign(d[1:]) < 0)
    exact = np.flatnonzero(d[:-1] == 0)
    ext = _bisect(G.dy, t[change], t[change + 1], d[change], 26)  # |y(t_ext)| error ~ y'' (2^-26 dt)^2
    return np.sort(np.concatenate([ext, t[exact]]) % (2 * np.pi))


def _crossings(G: _Locus, Y: np.ndarray, M: int = 4096):
    """Rows, crossing x and direction (+1 up, -1 down) of the locus with the lines ``Im = Y``."""
    ext = _y_extrema(G, M)
    if ext.size < 2:
        return None
    bounds = np.concatenate([ext, [ext[0] + 2 * np.pi]])
    yext = G(ext).imag
    yext = np.concatenate([yext, yext[:1]])  # one value per extremum, shared by both pieces
    grid = np.linspace(0, 2 * np.pi, M + 1)
    rows, ta, tb, sign = [], [], [], []
    for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:], strict=True)):  # y is monotone on each piece
        inner = (
            grid[(grid > a) & (grid < b)]
            if b <= 2 * np.pi
            else np.concatenate([grid[grid > a], grid[(grid > 0) & (grid < b - 2 * np.pi)] + 2 * np.pi])
        )
        tt = np.concatenate([[a], inner, [b]])
        yy = G(tt).imag
        yy[0], yy[-1] = yext[i], yext[i + 1]
        up = yy[-1] > yy[0]
        yy = np.maximum.accumulate(yy) if up else np.minimum.accumulate(yy)  # monotone despite rounding
        lo, hi = (yy[0], yy[-1]) if up else (yy[-1], yy[0])
        r = np.arange(np.searchsorted(Y, lo, "left"), np.searchsorted(Y, hi, "left"))
        if not r.size:
            continue
        j = np.searchsorted(yy if up else -yy, Y[r] if up else -Y[r], "right") - 1
        j = np.clip(j, 0, len(tt) - 2)
        rows.append(r)
        ta.append(tt[j])
        tb.append(tt[j + 1])
        sign.append(np.full(r.size, 1 if up else -1, dtype=np.int8))
    tangent = G(ext)  # extreme points: rows through them touch the locus without crossing
    if not rows:
        return np.array([], int), np.array([]), np.array([], np.int8), tangent
    rows, ta, tb, sign = (np.concatenate(v) for v in (rows, ta, tb, sign))
    f = lambda tc: G(tc).imag - Y[rows]  # noqa: E731
    fa = f(ta)
    tc = _bisect(f, ta, tb, fa, 8)  # then Newton, kept inside the bracket
    for _ in range(4):
        with np.errstate(all="ignore"):
            step = f(tc) / G.dy(tc)
        tn = tc - step
        tc = np.where(np.isfinite(tn) & (tn >= ta) & (tn <= tb), tn, tc)
    return rows, G(tc).real, sign, tangent


def _winding_fill(rho, sigma, X: np.ndarray, Y: np.ndarray):
    """Strict mask on the grid ``X + i Y`` from the winding number of the locus.

    ``N_in(rho - z sigma) = N_in(sigma) + wind(locus, z)`` (argument principle; common
    roots of ``rho`` and ``sigma`` are counted on both sides). Returns ``(strict, rows,
    cols)`` with the grid points next to each crossing, or ``None`` when ``sigma`` has a
    root near the unit circle (the locus has a pole; structural unit roots).
    """
    p = max(len(rho), len(sigma)) - 1
    sroots = np.roots(sigma) if len(sigma) > 1 else np.array([])
    if sroots.size and np.min(np.abs(np.abs(sroots) - 1)) < 1e-6:
        return None
    target = p - int(np.sum(np.abs(sroots) < 1))
    found = _crossings(_Locus(rho, sigma), Y)
    if found is None:
        return None
    row, xc, sign, tangent = found
    k = np.searchsorted(X, xc, "left")
    E = np.zeros((len(Y), len(X) + 1), dtype=np.int8)
    np.add.at(E, (row, k), sign)
    total = np.bincount(row, weights=sign, minlength=len(Y)).astype(np.int64)
    C = np.cumsum(E[:, :-1], axis=1, dtype=np.int8, out=E[:, :-1])
    strict = C == (total - target).astype(np.int8)[:, None]  # winding = total - C
    # re-decide the grid points next to every crossing and to every extreme point
    ty = np.searchsorted(Y, tangent.imag, "left")
    tx = np.searchsorted(X, tangent.real, "left")
    rows = np.concatenate([row, row] + [ty + dy for dy in (-1, -1, 0, 0)])
    cols = np.concatenate([k - 1, k] + [tx + dx for dx in (-1, 0, -1, 0)])
    keep = (cols >= 0) & (cols < len(X)) & (rows >= 0) & (rows < len(Y))
    return strict, rows[keep], cols[keep]


# ------------------------------------------------------------------ regions
@dataclass(frozen=True, eq=False)
class StabilityRegion(Record):
    """Strict and marginal stability over a 2-D parameter grid.

    ``strict[i, j]`` and ``marginal[i, j]`` belong to ``(x[j], y[i])`` (rows follow ``y``,
    as :func:`matplotlib.pyplot.imshow` with ``origin="lower"`` expects). ``boundary``
    holds the boundary locus curves in the ``lam`` plane when the axes are ``re(lam)`` and
    ``im(lam)``; ``conditions`` the exact :class:`~depthdyn.symbolic.stability.StabilityConditions`
    when they were computed.
    """

    family: str
    x_name: str
    y_name: str
    x: np.ndarray
    y: np.ndarray
    strict: np.ndarray
    marginal: np.ndarray
    boundary: tuple = ()
    conditions: object = None
    method: str = ""
    fixed: dict = field(default_factory=dict)
    notes: tuple = ()

    @property
    def extent(self) -> tuple[float, float, float, float]:
        """``(x0, x1, y0, y1)`` for ``imshow``."""
        return float(self.x[0]), float(self.x[-1]), float(self.y[0]), float(self.y[-1])

    def agrees_with_conditions(self, samples: int = 100, seed: int = 0) -> int:
        """Disagreements between the mask and the exact conditions at random interior points.

        Points with a neighbour of the other verdict (the boundary band) are skipped.
        """
        if self.conditions is None:
            raise ParameterError("no exact conditions were computed; pass conditions=True")
        s = self.strict
        inner = np.zeros_like(s)
        inner[1:-1, 1:-1] = (
            (s[1:-1, 1:-1] == s[:-2, 1:-1])
            & (s[1:-1, 1:-1] == s[2:, 1:-1])
            & (s[1:-1, 1:-1] == s[1:-1, :-2])
            & (s[1:-1, 1:-1] == s[1:-1, 2:])
        )
        idx = np.argwhere(inner)
        pick = np.random.default_rng(seed).choice(len(idx), size=min(samples, len(idx)), replace=False)
        names = {sym.name for sym, _ in self.conditions.domains}
        bad = 0
        for i, j in idx[pick]:
            point = dict(self.fixed)
            for name, v in ((self.x_name, self.x[j]), (self.y_name, self.y[i])):
                if name[:3] in ("re(", "im("):
                    base = name[3:-1]
                    z = complex(point.pop(base, 0)) + (float(v) if name[:3] == "re(" else 1j * float(v))
                    point[base] = z
                else:
                    point[name] = float(v)
            for key in [k for k in point if k + "_re" in names]:
                z = complex(point.pop(key))
                point[key + "_re"], point[key + "_im"] = z.real, z.imag
            for key in [k for k in point if isinstance(point[k], complex)]:
                point[key] = point[key].real  # real-lam conditions: the grid has im = 0
            point = {k: v for k, v in point.items() if k in names}
            bad += self.conditions.holds(point) != bool(s[i, j])
        return bad

    def _text(self) -> str:
        lines = [
            f"stability region of {self.family}: "
            f"{self.x_name} in [{self.x[0]:g}, {self.x[-1]:g}] ({len(self.x)}) "
            f"x {self.y_name} in [{self.y[0]:g}, {self.y[-1]:g}] ({len(self.y)})",
            f"strictly stable: {100 * self.strict.mean():.3g}% of the grid; root condition: "
            f"{100 * self.marginal.mean():.3g}%",
            f"method: {self.method}",
        ]
        if self.fixed:
            lines.append("fixed: " + ", ".join(f"{k}={v}" for k, v in self.fixed.items()))
        if self.conditions is not None:
            lines.append("exact conditions:\n  " + str(self.conditions).replace("\n", "\n  "))
        return "\n".join(lines + list(self.notes))

    def _latex(self) -> str:
        return self.conditions._latex() if self.conditions is not None else f"\\text{{{self.family}}}"


def _axis(spec, what: str) -> tuple[str, np.ndarray]:
    try:
        name, lo, hi, n = spec
        lo, hi = float(lo), float(hi)
    except (TypeError, ValueError):
        raise ParameterError(
            f"{what} must be (name, lo, hi, n), e.g. ('re(lam)', -3, 1, 401); got {spec!r}"
        ) from None
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise ParameterError(f"{what}: the number of points must be an integer >= 2, got {n!r}")
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ParameterError(f"{what}: need finite lo < hi, got {lo}, {hi}")
    return str(name).replace(" ", ""), np.linspace(lo, hi, int(n))


@functools.lru_cache(maxsize=64)
def _facts(rec) -> tuple:
    """Cached symbolic facts: ``a_p / a_0``, the symbols, whether ``rho_sigma`` exists."""
    import sympy as sp

    from ..recurrence import r

    poly = sp.Poly(rec.charpoly(), r)
    return sp.simplify(poly.TC() / poly.LC()), rec.symbols, rec.rho_sigma() is not None


def _strict_impossible(rec, fixed: dict) -> str:
    """Why no point can be strictly stable, decided exactly from ``a_p / a_0`` (or '')."""
    import sympy as sp

    from ..recurrence import to_exact

    ratio, symbols, _ = _facts(rec)
    ratio = ratio.xreplace({symbols[k]: to_exact(v) for k, v in fixed.items() if k in symbols})
    if ratio.free_symbols or sp.Abs(ratio) < 1:
        return ""
    return (
        f"strict mask empty by exact arithmetic: |a_p / a_0| = |{sp.sstr(ratio)}| >= 1 "
        "(the product of the root moduli)"
    )


def stability_region(
    rec,
    x=("re(lam)", -3.0, 1.0, 401),
    y=("im(lam)", -2.0, 2.0, 401),
    *,
    tol: float = 1e-12,
    method: str = "auto",
    conditions: bool | None = None,
    **fixed,
) -> StabilityRegion:
    """Strict and marginal stability of a recurrence over a 2-D grid.

    Parameters
    ----------
    rec : Recurrence
        Scalar or matrix (through its characteristic polynomial) recurrence.
    x, y : tuple
        ``(name, lo, hi, n)``; ``name`` is a real parameter or ``re(lam)`` / ``im(lam)``
        (a part of ``lam`` on no axis is 0 unless ``lam`` is fixed).
    tol : float
        Tolerance of the Schur–Cohn singular case (see :func:`~depthdyn.numeric.masks.schur_cohn`).
    method : {"auto", "locus", "schur-cohn"}
        ``auto`` fills by the boundary locus when the axes are ``re(lam), im(lam)`` and the
        family is linear in ``lam`` (falling back to Schur–Cohn when the locus is unsuitable).
    conditions : bool, optional
        Attach the exact conditions (default: only for degree <= 2, where they are fast).
    **fixed
        Values of the parameters not on an axis.

    Examples
    --------
    >>> from depthdyn import momentum
    >>> reg = stability_region(momentum(), ("re(lam)", -5, 1, 7), ("m", 0, 0.75, 4), eta=1)
    >>> reg.strict.astype(int)
    array([[0, 0, 0, 0, 1, 0, 0],
           [0, 0, 0, 1, 1, 0, 0],
           [0, 0, 0, 1, 1, 0, 0],
           [0, 0, 1, 1, 1, 0, 0]])
    """
    if method not in ("auto", "locus", "schur-cohn"):
        raise ParameterError(f"method must be 'auto', 'locus' or 'schur-cohn', got {method!r}")
    (xn, X), (yn, Y) = _axis(x, "x"), _axis(y, "y")
    lam = rec.lam
    parts = {f"re({lam})": "re", f"im({lam})": "im"} if lam else {}
    for name in (xn, yn):
        if name not in parts and name not in rec.param_names:
            raise UnknownParameterError(f"axis {name!r}: use one of {list(parts) + list(rec.param_names)}")
        if name == lam:
            raise ParameterError(f"use 're({lam})' or 'im({lam})' as an axis, not {lam!r}")
    if xn == yn:
        raise ParameterError("x and y must be different axes")
    on_axes = {parts.get(n, n) for n in (xn, yn)}
    if lam in fixed and on_axes & {"re", "im"}:
        raise ParameterError(f"{lam} is on an axis; do not fix it too")
    check = {k: v for k, v in fixed.items()}
    for name, vals, shape in ((xn, X, (1, -1)), (yn, Y, (-1, 1))):
        if name not in parts:
            check[name] = vals.reshape(shape)
    if lam and lam not in fixed:
        re_ = X if parts.get(xn) == "re" else Y if parts.get(yn) == "re" else np.zeros(1)
        im_ = X if parts.get(xn) == "im" else Y if parts.get(yn) == "im" else np.zeros(1)
        check[lam] = np.concatenate([re_ + 1j * im_[0], re_[0] + 1j * im_]) if im_.any() else re_ + 0.0
    prepare_values(rec, check)  # names, domains, finiteness
    comp = compile_entries(rec)

    def args_at(xv, yv):
        """Arguments of the compiled coefficients at x-values ``xv`` and y-values ``yv``."""
        out = []
        for name in comp.names:
            if name == lam and lam not in fixed:
                pr = [xv if parts.get(xn) == k else yv if parts.get(yn) == k else 0.0 for k in ("re", "im")]
                out.append(pr[0] + 1j * pr[1] if "im" in on_axes else pr[0] + 0.0 * yv)
            else:
                out.append(xv if name == xn else yv if name == yn else np.asarray(check[name]))
        return out

    def arg_rows(s, e):
        return args_at(X[None, :], Y[s:e, None])

    notes, boundary, used = [], (), "Schur-Cohn recursion on the grid"
    others = {k: v for k, v in fixed.items()}
    if lam and on_axes >= {"re", "im"} and _facts(rec)[2]:
        boundary = tuple(boundary_locus(rec, 2048, **others))
    impossible = _strict_impossible(rec, fixed)
    strict = None
    if method != "schur-cohn" and not impossible and (xn, yn) == (f"re({lam})", f"im({lam})") and boundary:
        filled = _winding_fill(*_locus_polys(rec, others), X, Y)
        if filled is not None:
            strict, rows, cols = filled
            marginal = strict.copy()
            pts = args_at(X[cols], Y[rows])
            cols_ = evaluate_entries(charpoly_entries(rec), pts)
            strict[rows, cols], marginal[rows, cols] = schur_cohn_chunk(cols_, rows.shape, tol)
            used = "boundary-locus winding number, Schur-Cohn next to the boundary"
    if strict is None:
        if method == "locus":
            raise ParameterError(
                "the boundary-locus fill needs axes re(lam), im(lam), a family linear in lam "
                "and sigma without roots on the unit circle; use method='auto'"
            )
        strict, marginal = chunked_mask(rec, arg_rows, (len(Y), len(X)), tol)
    if impossible:
        strict = np.zeros_like(strict)
        notes.append(impossible)
    conds = _conditions(rec, fixed, "im" in on_axes or np.iscomplexobj(fixed.get(lam, 0.0)), conditions)
    return StabilityRegion(
        rec.name, xn, yn, X, Y, strict, marginal, boundary, conds, used, dict(fixed), tuple(notes)
    )


def _conditions(rec, fixed: dict, complex_lam: bool, wanted: bool | None):
    if wanted is False or (wanted is None and rec.order * rec.dim > 2):
        return None
    try:
        from ..symbolic.stability import stability_conditions
    except ImportError:  # the symbolic stability module is optional here
        return None
    from ..errors import DepthdynError

    try:
        return stability_conditions(
            rec.subs(fixed) if fixed else rec, lam="complex" if complex_lam else "real"
        )
    except DepthdynError:
        return None
