"""Cross-check the exact symbolic layer against the batched numeric layer at random points.

:func:`check` samples parameter points inside every parameter's domain (dyadic rationals,
so the float64 inputs equal the exact ones) and compares, with stated tolerances:

``roots``
    :func:`depthdyn.roots` of the substituted recurrence, evaluated at 30 digits, against
    the batched float roots of :func:`depthdyn.numeric.spectra.roots`. Error
    ``|z_num - z_exact| / max(1, |z_exact|)`` after an optimal matching; tolerance
    ``1e-9`` for a simple root and ``10 * 1e-15**(1/m)`` for a root of multiplicity ``m``
    (float roots of an ``m``-fold root are only good to ``eps**(1/m)``).
``stability``, ``stability Schur-Cohn mask``
    :func:`depthdyn.stability_conditions` (``holds``) against the numeric verdict
    ``max |z_num| < 1`` and, for scalar recurrences, against the strict mask of
    :func:`depthdyn.numeric.masks.schur_cohn`; points within ``1e-9`` of the boundary
    (``|rho - 1|`` at 30 digits) are skipped. Error: the number of disagreements;
    tolerance 0. Real and complex ``lam`` get separate rows.
``stability boundary``
    Pairs of exact points within ``2**-24`` (along a segment) of the boundary, one on each
    side, found by bisecting between numerically stable and unstable candidates: the exact
    verdict must be True inside and False outside (tolerance 0). Catches wrong conditions
    that random points (often all unstable) cannot.
``closed form``
    :func:`depthdyn.closed_form` at layers ``0 .. p+3`` and 16 against
    :func:`~depthdyn.numeric.simulate.trajectory` from the same random initial values.
    Error ``max_l |x_num - x_exact| / max(1, max_l |x_exact|)``; tolerance ``1e-10``.
``realisation NAME``
    ``numpy.linalg.eigvals`` of every realisation's matrix ``A`` at the point against the
    characteristic roots, measured and toleranced as for ``roots``.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from ..errors import DegreeTooLargeError, ParameterError
from ..records import Record
from ..recurrence import COMPLEXES, r

__all__ = [
    "CheckRow", "CheckReport", "check", "ROOT_TOL", "CLOSED_FORM_TOL", "BOUNDARY_BAND", "PARAMETRIC_SECONDS",
    "BOUNDARY_CANDIDATES", "BOUNDARY_STEPS",
]

#: Tolerance for simple roots (relative to ``max(1, |z|)``).
ROOT_TOL = 1e-9
#: Tolerance of closed form against simulation (relative to ``max(1, max |x_l|)``).
CLOSED_FORM_TOL = 1e-10
#: Points with ``|spectral radius - 1|`` below this are not used for the stability check.
BOUNDARY_BAND = 1e-9
#: Seconds allowed for complex-``lam`` stability conditions in all parameters at once; past
#: them (or refused up front) the conditions are derived point by point in ``lam`` alone.
PARAMETRIC_SECONDS = 5.0
_DIGITS = 30
_DENOM = 1024


@dataclass(frozen=True)
class CheckRow:
    """One comparison: how many numbers were compared, the worst error and the verdict."""

    name: str
    compared: int
    max_error: float
    tolerance: float
    passed: bool
    note: str = ""

    def to_json(self) -> dict:
        return {"name": self.name, "compared": self.compared, "max_error": self.max_error,
                "tolerance": self.tolerance, "passed": self.passed, "note": self.note}


@dataclass(frozen=True, eq=False)
class CheckReport(Record):
    """Result of :func:`check`: one :class:`CheckRow` per comparison; ``passed`` if all pass."""

    recurrence: str
    samples: int
    seed: int
    rows: tuple = field(default=())

    @property
    def passed(self) -> bool:
        return all(row.passed for row in self.rows)

    def to_json(self) -> dict:
        return {"recurrence": self.recurrence, "samples": self.samples, "seed": self.seed,
                "passed": self.passed, "rows": [row.to_json() for row in self.rows]}

    def _text(self) -> str:
        head = f"check {self.recurrence} ({self.samples} samples, seed {self.seed}): "
        w = max([5] + [len(row.name) for row in self.rows]) + 2
        lines = [head + ("passed" if self.passed else "FAILED"),
                 f"  {'check':<{w}}{'compared':>9}{'max error':>12}{'tolerance':>12}  result"]
        for row in self.rows:
            lines.append(f"  {row.name:<{w}}{row.compared:>9}{row.max_error:>12.2e}{row.tolerance:>12.2e}  "
                         + ("pass" if row.passed else "FAIL") + (f"  ({row.note})" if row.note else ""))
        return "\n".join(lines)

    def _latex(self) -> str:
        return f"\\text{{check {self.recurrence}: {'passed' if self.passed else 'FAILED'}}}"

    def __repr__(self) -> str:
        return json.dumps(self.to_json())


# ------------------------------------------------------------------- sampling
def _uniform(rng: random.Random, lo, hi) -> sp.Rational:
    """A dyadic rational strictly inside ``(lo, hi)`` (exactly representable in float64)."""
    return lo + (hi - lo) * sp.Rational(rng.randint(1, _DENOM - 1), _DENOM)


def _sample(param, rng: random.Random, complex_ok: bool) -> sp.Expr:
    dom = param.domain
    if dom == COMPLEXES:
        re = _uniform(rng, -2, 2)
        return re + sp.I * _uniform(rng, -1, 1) if complex_ok else re
    if isinstance(dom, sp.FiniteSet):
        return rng.choice(list(dom))
    if isinstance(dom, sp.Interval):
        lo, hi = dom.start, dom.end
        if lo.is_infinite and hi.is_infinite:
            lo, hi = -2, 2
        elif lo.is_infinite:
            lo = hi - 2
        elif hi.is_infinite:
            hi = lo + 2
        return _uniform(rng, lo, hi)
    value = _uniform(rng, -2, 2)
    if dom.contains(value) is not sp.true:
        raise ParameterError(f"cannot sample the domain {dom} of {param.name}; substitute a value first")
    return value


def _points(rec, samples: int, rng: random.Random) -> list[dict]:
    """Half the points with a complex ``lam`` where ``lam`` is complex (every other one)."""
    return [{p.name: _sample(p, rng, complex_ok=i % 2 == 1) for p in rec.params} for i in range(samples)]


def _complex(v: sp.Expr) -> complex:
    """``complex(v)`` for the sampled values ``a + b*I`` (``a, b`` rational) without evalf."""
    a, rest = v.as_coeff_Add()
    b, unit = rest.as_coeff_Mul()
    if a.is_Rational and b.is_Rational and (unit is sp.I or rest == 0):
        return complex(int(a.p) / int(a.q), int(b.p) / int(b.q) if rest != 0 else 0.0)
    return complex(v)


def _floats(points: list[dict], names) -> dict:
    out = {}
    for name in names:
        vals = [_complex(pt[name]) for pt in points]
        out[name] = np.array([v.real for v in vals]) if all(v.imag == 0 for v in vals) else np.array(vals)
    return out


# ---------------------------------------------------------------- exact roots
def _exact_roots(sub) -> tuple[list, str]:
    """Roots of a numeric recurrence as (value at 30 digits, multiplicity) pairs, and a note."""
    from ..symbolic.polynomial import roots

    try:
        found = roots(sub)
    except NotImplementedError as exc:  # e.g. CRootOf over Gaussian rationals
        out = []
        for fac, mult in sp.sqf_list(sp.Poly(sub.charpoly(), r))[1]:
            out += [(complex(z), mult) for z in sp.Poly(fac, r).nroots(n=_DIGITS, maxsteps=200)]
        return out, f"depthdyn.roots raised {type(exc).__name__} ({exc}); used Poly.nroots"
    out, done = [], set()
    for rt in found:
        # CRootOf (slow to evaluate one by one) and implicit RootOf placeholders (complex
        # coefficients, degree >= 4): all roots of the square-free factor at once
        if isinstance(rt.value, sp.CRootOf) or not rt.explicit:
            if rt.factor not in done:
                done.add(rt.factor)
                out += [(complex(z), rt.multiplicity)
                        for z in sp.Poly(rt.factor, r).nroots(n=_DIGITS, maxsteps=200)]
        else:
            out.append((complex(sp.N(rt.value, _DIGITS)), rt.multiplicity))
    return out, ""


def _tolerance(mult: int) -> float:
    return ROOT_TOL if mult == 1 else 10 * 1e-15 ** (1 / mult)


def _match(numeric: np.ndarray, exact: list) -> tuple[float, float, bool]:
    """Worst error, its tolerance and the verdict after the optimal assignment."""
    values = [z for z, m in exact for _ in range(m)]
    mults = [m for _, m in exact for _ in range(m)]
    if len(values) != numeric.size:
        return np.inf, ROOT_TOL, False
    from scipy.optimize import linear_sum_assignment  # lazy: scipy.optimize is slow to import

    cost = np.abs(numeric[:, None] - np.array(values)[None, :])
    rows, cols = linear_sum_assignment(cost)
    err = cost[rows, cols] / np.maximum(1.0, np.abs(np.array(values)[cols]))
    tol = np.array([_tolerance(mults[c]) for c in cols])
    worst = int(np.argmax(err / tol))
    return float(err.max()), float(tol[worst]), bool((err <= tol).all())


class _Rows:
    """Accumulates one row: compared count, worst error and its tolerance, verdict, notes."""

    def __init__(self, name: str, tolerance: float):
        self.name, self.tolerance, self.compared, self.error = name, tolerance, 0, 0.0
        self.ok, self.notes = True, []

    def add(self, count: int, error: float, tolerance: float, ok: bool) -> None:
        self.compared += count
        if error / tolerance >= self.error / self.tolerance or not ok:
            self.error, self.tolerance = error, tolerance
        self.ok = self.ok and ok

    def row(self) -> CheckRow:
        note = "; ".join(dict.fromkeys(self.notes))
        return CheckRow(self.name, self.compared, self.error, self.tolerance, self.ok, note)


# ------------------------------------------------------------------- the verb
def check(rec, samples: int = 20, seed: int = 0, *, closed_form_samples: int = 6) -> CheckReport:
    """Compare exact symbolic results with batched numerics at random parameter points.

    Parameters
    ----------
    rec : Recurrence
        Any recurrence (parameters symbolic or substituted).
    samples : int
        Random points (every other one with a complex ``lam`` where ``lam`` is complex).
    seed : int
        Seed of the sampler (the report is reproducible).
    closed_form_samples : int
        How many of the points also compare the closed form with a simulation.

    Returns
    -------
    CheckReport
        Rows ``roots``, ``stability`` (real and complex ``lam`` separately),
        ``closed form`` and one ``realisation NAME`` per realisation, with the tolerances
        of the module docstring; ``passed`` is True when every row passes.

    Examples
    --------
    >>> from depthdyn import momentum
    >>> report = check(momentum(), samples=4)
    >>> report.passed, [row.name for row in report.rows][:2]
    (True, ['roots', 'stability (real lam)'])
    """
    from .bridge import batch_coefficients
    from .spectra import roots as numeric_roots

    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise ParameterError(f"samples must be a positive integer, got {samples!r}")
    rng = random.Random(seed)
    points = _points(rec, samples, rng)
    subs = [rec.subs(pt) for pt in points]
    exact = [_exact_roots(sub) for sub in subs]
    coeffs = batch_coefficients(rec, _floats(points, rec.param_names)) if rec.params else \
        batch_coefficients(rec)[None].repeat(samples, axis=0)
    num = numeric_roots(coeffs, matrix=not rec.is_scalar).reshape(samples, -1)
    rows = [_check_roots(num, exact)]
    memo: dict = {}  # stability conditions per mode, shared by the stability and boundary rows
    rows += _check_stability(rec, points, num, exact, coeffs, memo)
    rows += _check_boundary(rec, rng, memo)
    rows.append(_check_closed_form(rec, subs[:closed_form_samples], coeffs[:closed_form_samples], rng))
    rows += _check_realisations(rec, points, exact)
    return CheckReport(rec.name, samples, seed, tuple(rows))


def _check_roots(num: np.ndarray, exact: list) -> CheckRow:
    acc = _Rows("roots", ROOT_TOL)
    for z, (ex, note) in zip(num, exact, strict=True):
        acc.add(z.size, *_match(z, ex))
        if note:
            acc.notes.append(note)
    return acc.row()


def _verdicts(rec, mode: str, lam, chosen: list, points: list, memo: dict):
    """Exact verdicts ``holds`` at the chosen points, and a note on how they were obtained.

    The conditions are derived once per mode (kept in ``memo`` for the boundary rows),
    parametric in every parameter. Complex-``lam`` conditions with many parameters can be
    costly: when they do not fit in :data:`PARAMETRIC_SECONDS` (refused by the up-front
    estimate or interrupted), they are derived per point instead, in ``lam_re, lam_im``
    with the other parameters substituted.
    """
    from ..budget import budget, budget_seconds
    from ..errors import BudgetExceededError
    from ..symbolic.stability import stability_conditions

    if mode not in memo:
        try:
            if mode == "real" or not rec.params:
                memo[mode] = stability_conditions(rec, lam=mode)
            else:
                with budget(min(budget_seconds(), PARAMETRIC_SECONDS)):
                    memo[mode] = stability_conditions(rec, lam=mode)
        except BudgetExceededError:
            if mode == "real":
                raise
            memo[mode] = None
    sc = memo[mode]
    if sc is not None:
        return [sc.holds(points[i]) for i in chosen], ""
    out = []
    for i in chosen:
        sub = rec.subs({k: v for k, v in points[i].items() if k != lam})
        out.append(stability_conditions(sub, lam=mode).holds({lam: points[i][lam]}))
    return out, "conditions in lam derived per point"


def _schur_cohn_strict(rec, coeffs: np.ndarray):
    """The numeric Schur-Cohn strict mask (scalar recurrences), or None where there is none."""
    if not rec.is_scalar:
        return None
    try:
        from .masks import schur_cohn
    except ImportError:  # pragma: no cover - masks is part of the package
        return None
    return schur_cohn(coeffs)[0]


def _check_stability(rec, points, num, exact, coeffs, memo: dict) -> list[CheckRow]:
    mask = _schur_cohn_strict(rec, coeffs)
    out = []
    lam = rec.lam if rec.lam and rec.param(rec.lam).domain == COMPLEXES else None
    for mode in ("real", "complex"):
        chosen = [i for i, pt in enumerate(points)
                  if (lam is not None and complex(pt[lam]).imag != 0) == (mode == "complex")]
        name = f"stability ({mode} lam)" if lam else "stability"
        chosen_far = [i for i in chosen if abs(max(abs(z) for z, _ in exact[i][0]) - 1) >= BOUNDARY_BAND]
        if not chosen:
            continue
        try:
            symbolic, note = _verdicts(rec, mode, lam, chosen_far, points, memo)
        except (DegreeTooLargeError, ParameterError) as exc:
            out.append(CheckRow(name, 0, 0.0, 0.0, True, f"skipped: {exc}"))
            continue
        skipped = len(chosen) - len(chosen_far)
        notes = [f"{sum(symbolic)} stable"] + ([note] if note else [])
        notes += [f"{skipped} point(s) within {BOUNDARY_BAND:g} of |r| = 1 skipped"] if skipped else []
        verdicts = [("", [bool(np.abs(num[i]).max() < 1) for i in chosen_far])]
        if mask is not None:
            verdicts.append((" Schur-Cohn mask", [bool(mask[i]) for i in chosen_far]))
        for suffix, numeric in verdicts:
            disagree = sum(a != b for a, b in zip(symbolic, numeric, strict=True))
            out.append(CheckRow(name.replace("stability", "stability" + suffix), len(chosen_far),
                                float(disagree), 0.0, disagree == 0, "; ".join(notes)))
    return out


# ------------------------------------------------------------ boundary points
#: Candidate points searched (numerically) for stable/unstable pairs to bisect between.
BOUNDARY_CANDIDATES = 256
#: Bisection steps along a segment; the pair straddles the boundary within ``2**-steps``.
BOUNDARY_STEPS = 24


def _radius(rec, points: list) -> np.ndarray:
    """Float64 spectral radius at exact points (batched)."""
    from .bridge import batch_coefficients
    from .spectra import roots as numeric_roots

    if not rec.params:
        coeffs = batch_coefficients(rec)[None].repeat(len(points), axis=0)
    else:
        coeffs = batch_coefficients(rec, _floats(points, rec.param_names))
    return np.abs(numeric_roots(coeffs, matrix=not rec.is_scalar).reshape(len(points), -1)).max(axis=1)


def _between(a: dict, b: dict, t: sp.Rational) -> dict:
    """The exact point ``a + t (b - a)`` (domains are intervals or finite sets: take ``a``'s
    value for a parameter whose two values cannot be interpolated)."""
    out = {}
    for name, va in a.items():
        vb = b[name]
        out[name] = va + t * (vb - va) if va != vb else va
    return out


def _straddle(rec, stable: dict, unstable: dict) -> tuple[dict, dict]:
    """Bisect the segment between a stable and an unstable point (float radius, batched by
    step) down to two exact points on either side of ``|r| = 1``."""
    lo, hi = sp.Integer(0), sp.Integer(1)
    for _ in range(BOUNDARY_STEPS):
        mid = (lo + hi) / 2
        rad = _radius(rec, [_between(stable, unstable, mid)])[0]
        lo, hi = (mid, hi) if rad < 1 else (lo, mid)
    return _between(stable, unstable, lo), _between(stable, unstable, hi)


def _check_boundary(rec, rng: random.Random, memo: dict, pairs: int = 3) -> list[CheckRow]:
    """Exact verdicts at point pairs that straddle the stability boundary, per mode.

    Random points rarely land near the boundary (and many families are almost never
    stable at random), so a wrong set of conditions could pass; here stable and unstable
    candidates are paired and bisected to within ``2**-24`` of the boundary, and the exact
    verdict must be True on the inside point and False on the outside one (points within
    :data:`BOUNDARY_BAND` of ``|r| = 1``, on a marginal stretch, are skipped).
    """
    lam = rec.lam if rec.lam and rec.param(rec.lam).domain == COMPLEXES else None
    out = []
    for mode in ("real", "complex") if lam else ("real",):
        if not rec.params:
            break
        cands = [{p.name: _sample(p, rng, complex_ok=mode == "complex") for p in rec.params}
                 for _ in range(BOUNDARY_CANDIDATES)]
        with np.errstate(all="ignore"):
            rad = _radius(rec, cands)
        inside = [c for c, x in zip(cands, rad, strict=True) if x < 1 - 1e-6]
        outside = [c for c, x in zip(cands, rad, strict=True) if x > 1 + 1e-6]
        name = f"stability boundary ({mode} lam)" if lam else "stability boundary"
        if not inside or not outside:
            out.append(CheckRow(name, 0, 0.0, 0.0, True,
                                f"skipped: no {'stable' if not inside else 'unstable'} point among "
                                f"{BOUNDARY_CANDIDATES} candidates"))
            continue
        near, expected = [], []
        for k in range(min(pairs, len(inside), len(outside))):
            a, b = _straddle(rec, inside[k], outside[k])
            for pt, want in ((a, True), (b, False)):
                rho = _radius(rec, [pt])[0]
                if abs(rho - 1) >= BOUNDARY_BAND and (rho < 1) == want:
                    near.append(pt)
                    expected.append(want)
        try:
            symbolic, note = _verdicts(rec, mode, lam, list(range(len(near))), near, memo)
        except (DegreeTooLargeError, ParameterError) as exc:
            out.append(CheckRow(name, 0, 0.0, 0.0, True, f"skipped: {exc}"))
            continue
        disagree = sum(a != b for a, b in zip(symbolic, expected, strict=True))
        notes = [f"{len(near)} points within 2^-{BOUNDARY_STEPS} of the boundary, both sides"]
        out.append(CheckRow(name, len(near), float(disagree), 0.0, disagree == 0,
                            "; ".join(notes + ([note] if note else []))))
    return out


def _exact_complex(value) -> np.ndarray:
    entries = list(value) if isinstance(value, sp.MatrixBase) else [value]
    return np.array([complex(sp.N(v, _DIGITS)) for v in entries])


def _check_closed_form(rec, subs, coeffs, rng: random.Random) -> CheckRow:
    from ..symbolic.solve import closed_form
    from .simulate import trajectory

    acc = _Rows("closed form", CLOSED_FORM_TOL)
    p, n, last = rec.order, rec.dim, 16
    layers = list(range(p + 4)) + [last]
    shape = (p,) if rec.is_scalar else (p, n)
    inits = [np.array([_uniform(rng, -1, 1) for _ in range(int(np.prod(shape)))]).reshape(shape)
             for _ in subs]
    floats = np.array([[float(v) for v in init.ravel()] for init in inits]).reshape((len(subs),) + shape)
    traj = trajectory(coeffs, floats, last, matrix=not rec.is_scalar)
    for i, (sub, init) in enumerate(zip(subs, inits, strict=True)):
        initial = init.tolist()
        try:
            cf = closed_form(sub, initial)
            exact = [_exact_complex(cf.at(k)) for k in layers]
        except (ParameterError, DegreeTooLargeError, NotImplementedError) as exc:
            acc.notes.append(f"closed_form raised {type(exc).__name__} ({exc}); used Recurrence.iterate")
            seq = sub.iterate(initial, last)
            exact = [_exact_complex(seq[k]) for k in layers]
        exact = np.array(exact)
        got = traj[layers, i].reshape(exact.shape)
        err = float(np.abs(got - exact).max() / max(1.0, np.abs(exact).max()))
        acc.add(exact.size, err, CLOSED_FORM_TOL, err <= CLOSED_FORM_TOL)
    return acc.row()


def _check_realisations(rec, points, exact) -> list[CheckRow]:
    from ..symbolic.statespace import realisations

    symbols = [p.symbol for p in rec.params]
    out = []
    for name, real in realisations(rec).items():
        acc = _Rows(f"realisation {name}", ROOT_TOL)
        evaluate = sp.lambdify(symbols, real.A, modules="numpy")
        with np.errstate(all="ignore"):
            mats = np.array([np.array(evaluate(*[complex(pt[s.name]) for s in symbols]), dtype=complex)
                             for pt in points])
        finite = np.isfinite(mats).all(axis=(-2, -1))
        if not finite.all():
            acc.notes.append(f"A is not finite at {int((~finite).sum())} point(s); skipped")
        eig = np.linalg.eigvals(np.where(finite[:, None, None], mats, 0))
        for i in np.flatnonzero(finite):
            acc.add(eig[i].size, *_match(eig[i], exact[i][0]))
        out.append(acc.row())
    return out
