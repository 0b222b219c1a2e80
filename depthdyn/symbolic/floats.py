"""Float data in exact results: conditions at the data's scale, residues within a tolerance.

Families built from float64 data (a Sinkhorn output, a trained network's numbers) reach the
exact engine as rationals with denominators near ``10**16``. The exact answer for those
rationals is right but can mislead: an integer condition scaled by ``10**48``, an interval
end ``-6e-17`` that is ``0`` in the data's intent. The rule (docs: stability, "Float data"):
a condition whose integer coefficients pass ``10**12`` is divided by its leading
coefficient's size (the same condition); an interval end or root modulus within
``FLOAT_TOLERANCE`` of a simple number (denominator at most ``SIMPLE_DENOMINATOR``) without
being it is reported as marginal within that tolerance, never as a verdict.
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sp

from ..families.common import FLOAT_TOLERANCE, SIMPLE_DENOMINATOR

__all__ = ["at_data_scale", "scale_free", "from_floats", "near_simple_ends", "near_simple", "near_circle"]


_LARGE = 10**12  # integer coefficients past this come from floats read exactly: shown scale-free


def at_data_scale(expr: sp.Expr) -> sp.Expr:
    """``expr`` (a product) with each sum factor whose rational coefficients pass ``10**12``
    divided by the size of its leading coefficient, that size moved into the numeric factor:
    the same value, ``0.59*(lam**2 + 1.63*lam + 0.65)**2`` for
    ``1.05e-66*(7.5e+32*lam**2 + ...)**2``.

    Examples
    --------
    >>> lam = sp.Symbol("lam")
    >>> at_data_scale(sp.Rational(1, 10**40) * (3 * 10**20 * lam + 10**20)**2)
    9*(lam + 1/3)**2
    """
    coeff, out = _scaled(expr)
    if coeff == 1:  # nothing scaled: as given (rebuilding 4*(x + 1) would distribute it)
        return expr
    if len(out) == 1 and out[0].is_Add:  # 2*(x + 1) would distribute back
        return sp.Mul(coeff, out[0], evaluate=False)
    return coeff * sp.Mul(*out)


def _scaled(expr: sp.Expr) -> tuple[sp.Expr, list]:
    coeff, out = sp.Integer(1), []
    for f in sp.Mul.make_args(expr):
        base, k = f.as_base_exp()
        if base.is_Add and base.free_symbols and k.is_Integer:
            try:
                coeffs = sp.Poly(base, *sorted(base.free_symbols, key=str)).coeffs()
            except sp.PolynomialError:  # radicals of parameters (sqrt(L)): not a polynomial, kept
                coeffs = []
            if coeffs and all(c.is_Rational for c in coeffs) and max(abs(c) for c in coeffs) > _LARGE:
                size = abs(coeffs[0])
                base, coeff = sp.expand(base / size), coeff * size**k
        out.append(base**k)
    return coeff, out


def scale_free(expr: sp.Expr) -> sp.Expr:
    """The condition ``expr > 0`` at the scale of its data: :func:`at_data_scale` without the
    positive numeric factor it leaves."""
    coeff, out = _scaled(expr)
    return (sp.sign(coeff) if coeff.is_Rational else coeff) * sp.Mul(*out)


def from_floats(factors: list) -> bool:
    """Whether a coefficient holds a rational of denominator ``>= 10**12``: data read from floats."""
    return any(q.q >= _LARGE for P in factors for c in P.all_coeffs()
               for q in sp.sympify(c, strict=True).atoms(sp.Rational))


def near_simple(value) -> tuple[sp.Rational, float] | None:
    """``(p/q, gap)`` when the real number ``value`` is within ``FLOAT_TOLERANCE`` (relative to
    ``max(1, |p/q|)``) of a rational ``p/q`` with ``q <= SIMPLE_DENOMINATOR`` without being it.

    Examples
    --------
    >>> near_simple(sp.Rational(-6, 10**17))
    (0, 6e-17)
    >>> near_simple(sp.Rational(-6, 11)) is None, near_simple(sp.Rational(1, 10**6)) is None
    (True, True)
    """
    value = sp.sympify(value, strict=True)
    approx = value if value.is_Rational else sp.N(value, 40)
    simple = Fraction(float(approx)).limit_denominator(SIMPLE_DENOMINATOR)
    p = sp.Rational(simple.numerator, simple.denominator)
    gap = abs(approx - p)
    if 0 < gap <= FLOAT_TOLERANCE * max(1, abs(p)):
        return p, float(gap)
    return None


def near_simple_ends(union) -> str:
    """The note for the ends of an :class:`~depthdyn.symbolic.intervals.IntervalUnion` that are
    within ``FLOAT_TOLERANCE`` of a simple rational without being it: with float data, a residue."""
    near = []
    for iv in union.intervals:
        for end in (iv.lo, iv.hi):
            hit = None if end.is_infinite else near_simple(end)
            if hit is not None:
                near.append(f"{float(sp.N(end, 20)):.3g} (within {hit[1]:.1e} of {hit[0]})")
    if not near:
        return ""
    return (f"float data: the ends {', '.join(dict.fromkeys(near))} are simple numbers up to a float "
            f"residue; stability there is marginal within tolerance {FLOAT_TOLERANCE:g}, not decided")


def near_circle(found: list) -> str:
    """The note for roots (:class:`~depthdyn.symbolic.circle.CircleRoot`) off the unit circle by
    at most ``FLOAT_TOLERANCE`` in modulus: with float data, marginal within tolerance."""
    near = [c for c in found if c.where != 0 and abs(c.modulus - 1) <= FLOAT_TOLERANCE]
    if not near:
        return ""
    rows = ", ".join(f"r ~ {sp.N(c.value, 12)} ({'inside' if c.where < 0 else 'outside'}, |r| - 1 = "
                     f"{float(sp.N(sp.Abs(c.value) - 1, 20)):.1e})" for c in near)
    return (f"float data: {rows} on the unit circle up to a float residue; marginal within tolerance "
            f"{FLOAT_TOLERANCE:g}, not decided")
