"""Compact printing of large exact expressions.

Exact results read from float64 (Sinkhorn matrices, trained weights) carry rationals with
seventeen-digit numerators; a structured characteristic polynomial
(:func:`depthdyn.structure.structured_charpoly`) or a discriminant can run to thousands of
characters. :func:`shorten` and :func:`shorten_numbers` show numbers with more than
:data:`~depthdyn.limits.SHORTEN_DIGITS` digits to 10 significant digits, :class:`Speller`
prints through them, and :func:`summary` replaces a long text by its size.
"""

from __future__ import annotations

import re
from decimal import Context, Decimal, localcontext
from fractions import Fraction

import sympy as sp

from ..limits import MAX_DPS, SHORTEN_DIGITS
from ..printing import sstr

__all__ = ["shorten_numbers", "shorten", "Speller", "summary"]



def shorten(expr, digits: int = 10):
    """``expr`` with every rational whose numerator or denominator has more than
    :data:`~depthdyn.limits.SHORTEN_DIGITS` digits replaced by a float of ``digits`` significant digits.

    >>> shorten(sp.Rational(12178558398992939, 50000000000000000) * sp.Symbol("lam") + sp.Rational(1, 3))
    0.243571168*lam + 1/3
    """
    if not isinstance(expr, sp.Basic):
        return expr
    big = 10**SHORTEN_DIGITS  # more than SHORTEN_DIGITS digits, without printing the integer
    long = {a for a in expr.atoms(sp.Rational) if abs(a.p) >= big or a.q >= big}
    if not long:
        return expr
    floats = {a: sp.Float(a, digits) for a in long}
    naive = expr.xreplace(floats)
    fixed = {piece: value for piece in _numeric_pieces(expr, long)
             if (value := _accurate(piece, piece.xreplace(floats), digits)) is not None}
    return expr.xreplace(fixed).xreplace(floats) if fixed else naive


def _numeric_pieces(expr, long: set):
    """The largest numeric sub-expressions of ``expr`` that hold a long rational."""
    if isinstance(expr, sp.Expr) and expr.is_number:
        if long & expr.atoms(sp.Rational) and not expr.is_Rational:
            yield expr
        return
    for arg in getattr(expr, "args", ()):
        yield from _numeric_pieces(arg, long)


def _accurate(piece, naive, digits: int):
    """``piece`` to ``digits`` correct digits where its rationals put in as floats lose them
    (``-1/2 + sqrt(1/4 - 10^-300)``, a root of ``r^2 + r + 10^-300``, came out as -5.95e-12,
    not -1e-300); None where the floats are fine. A value evalf cannot give to any digit
    stays exact."""
    value = sp.N(piece, digits, maxn=MAX_DPS)
    if any(f._prec < 4 for f in value.atoms(sp.Float)) or value == 0:
        return piece
    try:
        error = abs(sp.N(naive, digits) - value)
    except (TypeError, ValueError):
        return None
    return value if error > sp.Float(10) ** (2 - digits) * abs(value) else None


class Speller:
    """:func:`depthdyn.printing.sstr` of expressions (polynomials in ``r`` in descending powers),
    through :func:`shorten` unless ``full``; remembers whether any number was shortened."""

    def __init__(self, full: bool = True):
        self.full, self.shortened = full, False

    def __call__(self, expr) -> str:
        if not self.full:
            short = shorten(expr)
            self.shortened |= short is not expr
            expr = short
        return sstr(expr)


# a fraction p/q whose p is no exponent or denominator (``r**2/10**17`` is not 2/10**17),
# else a lone integer
_NUMBER = re.compile(r"(?<![\w.*/^])(\d+)/(\d+)(?![\w.])|(?<![\w.])(\d+)(?![\w.])")


def shorten_numbers(text: str, digits: int = 10) -> tuple[str, bool]:
    """``text`` with every integer or fraction ``p/q`` written with more than
    :data:`~depthdyn.limits.SHORTEN_DIGITS` digits (in ``p`` or ``q``) replaced by a float of
    ``digits`` significant digits; and whether anything was replaced.

    >>> shorten_numbers("lam + 12178558398992939/50000000000000000 > 3/4")
    ('lam + 0.243571168 > 3/4', True)
    >>> shorten_numbers("r**2/100000000000000000 + 7")
    ('r**2/1e+17 + 7', True)
    """
    changed = False

    def short(match: re.Match) -> str:
        nonlocal changed
        p, q = (match.group(1), match.group(2)) if match.group(1) else (match.group(3), "1")
        if len(p) <= SHORTEN_DIGITS and len(q) <= SHORTEN_DIGITS:
            return match.group(0)
        changed = True
        return _scientific(Fraction(int(p), int(q)), digits)

    return _NUMBER.sub(short, text), changed


def _scientific(x: Fraction, digits: int) -> str:
    """``x`` to ``digits`` significant digits, as a float prints it, past the float range too."""
    try:
        value = float(x)
    except OverflowError:
        value = None
    if value is not None and (value != 0 or x == 0) and abs(value) >= 1e-300:
        return f"{value:.{digits}g}"
    reach = x.numerator.bit_length() + x.denominator.bit_length()  # past any decimal exponent of x
    with localcontext(Context(prec=digits, Emax=reach, Emin=-reach)):
        dec = Decimal(x.numerator) / Decimal(x.denominator)
    mantissa, _, exponent = f"{dec:.{digits - 1}e}".partition("e")
    mantissa = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
    return f"{mantissa}e{int(exponent):+03d}"


def summary(text: str, limit: int, what: str = "expression") -> str:
    """``text`` when at most ``limit`` characters, else a note of its size.

    >>> summary("x" * 5000, 100, "discriminant")
    '<discriminant of 5,000 characters; --full prints it>'
    """
    if len(text) <= limit:
        return text
    return f"<{what} of {len(text):,} characters; --full prints it>"
