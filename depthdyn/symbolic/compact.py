"""Characteristic polynomials of matrix families in structured form, and compact printing.

The expanded characteristic polynomial of ``x_{l+1} = (H + lam u v^T) x_l`` with a
symbolic ``n x n`` matrix ``H`` has thousands of terms at ``n = 4`` and cannot be written
down at ``n = 8``; its roots and discriminant are larger still. The structure of the
families says more in less:

* **doubly stochastic** ``H`` (``H 1 = 1``, ``1^T H = 1^T``): in the basis of the all-ones
  vector and its complement ``H = diag(1, H')``, so ``det(r I - H) = (r - 1) q(r)`` with
  ``q = det(r I - H')``;
* **rank-one update** (hyper-connections): the matrix determinant lemma
  ``det(r I - H - lam u v^T) = det(r I - H) (1 - lam v^T (r I - H)^-1 u)``. With ``H``
  doubly stochastic, splitting ``u`` and ``v`` into their all-ones parts and the rest gives

  .. math:: \\chi(r) = q(r)\\,(r - 1 - \\lambda s) - \\lambda (r - 1)\\, w(r),
     \\qquad s = \\frac{(1^T u)(1^T v)}{n},

  with ``w(r) = v_perp^T adj(r I - H') u_perp`` of degree ``n - 2``; when ``u`` or ``v``
  is a multiple of the all-ones vector (uniform gates), ``w = 0`` and the eigenvalue
  ``1 + lam s`` belongs to the all-ones direction;
* **shift** ``H + lam I`` (entangled maps): ``chi(r) = chi_H(r - lam)``;
* the remaining determinant is factored exactly when it is small enough (Kronecker
  factors of KromHC split into the products of the factors' eigenvalues this way).

Pieces whose expansion could be large (an upper bound on their number of terms, the
permanent of the entries' term counts, above :data:`EXPAND_TERMS`) are left as
definitions. :meth:`StructuredCharpoly.expand` multiplies everything back.

:func:`shorten_numbers` and :func:`summary` keep printed output readable: numbers with more than
12 digits (exact rationals read from float64, such as Sinkhorn matrices) are shown to 10
significant digits, and long expressions by their size.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

from ..errors import ParameterError
from ..records import Record
from ..recurrence import r
from .structure import _rank_one

__all__ = ["StructuredCharpoly", "Piece", "structured_charpoly", "term_bound", "shorten_numbers", "shorten",
           "Speller", "summary",
           "EXPAND_TERMS", "DIGITS"]

#: Pieces whose term bound exceeds this are left unexpanded (a definition and a size).
EXPAND_TERMS = 20_000
#: Integers with more digits than this are printed as floats (numerator or denominator).
DIGITS = 12

_x = sp.Symbol("x")


@dataclass(frozen=True)
class Piece:
    """A named polynomial of the structured form: its meaning, value (``None`` when left
    unexpanded) and an upper bound on its number of terms."""

    name: str
    meaning: str
    value: sp.Expr | None
    bound: int


@dataclass(frozen=True)
class StructuredCharpoly(Record):
    """``charpoly = form`` with the functions in ``form`` defined by ``pieces``.

    ``factors`` lists ``(factor, multiplicity)`` in ``r`` when the form is a product of
    expanded factors (then roots and discriminant follow factor by factor); ``facts`` says
    which structure was used.
    """

    form: sp.Expr
    pieces: tuple[Piece, ...]
    facts: tuple[str, ...]
    factors: tuple[tuple[sp.Expr, int], ...] | None
    method: str

    def expand(self) -> sp.Expr:
        """The characteristic polynomial, multiplied back and expanded."""
        expr = self.form
        for piece in self.pieces:
            if piece.value is None:
                raise ParameterError(f"{piece.name} was left unexpanded (up to {piece.bound} terms)")
            f = sp.Function(piece.name.split("(")[0])
            expr = expr.replace(f, lambda arg, v=piece.value: v.subs(r, arg))
        return sp.expand(expr)

    def _text(self) -> str:
        lines = [f"charpoly = {sp.sstr(self.form)}   [{self.method}]"]
        for piece in self.pieces:
            value = "not expanded" if piece.value is None else sp.sstr(piece.value)
            lines.append(f"  {piece.name} = {piece.meaning}: {value}")
        lines += [f"  {fact}" for fact in self.facts]
        return "\n".join(lines)

    def _latex(self) -> str:
        return f"$\\chi(r) = {sp.latex(self.form)}$"


def term_bound(M: sp.MatrixBase) -> int:
    """Upper bound on the number of terms of ``det(r I - M)`` expanded.

    The smaller of the permanent of the entries' term counts (Ryser's formula; ``r`` adds
    one term on the diagonal), which bounds the products the expansion makes, and the
    number of monomials the degrees allow (each symbol's degree is at most the sum over
    rows of its largest degree in the row), which is small when few symbols occur.
    """
    n = M.rows
    entries = [[sp.expand(M[i, j]) for j in range(n)] for i in range(n)]
    counts = [[len(sp.Add.make_args(e)) if e != 0 else 0 for e in row] for row in entries]
    for i in range(n):
        counts[i][i] += 1
    perm = 0
    for mask in range(1, 1 << n):
        cols = [j for j in range(n) if mask >> j & 1]
        prod = 1
        for row in counts:
            prod *= sum(row[j] for j in cols)
        perm += (-1) ** (n - len(cols)) * prod
    gens = sorted(M.free_symbols, key=str)
    if abs(perm) <= n + 1 or not gens:
        return min(abs(perm), n + 1) if not gens else abs(perm)
    degree = [0] * len(gens)
    for row in entries:
        top = [0] * len(gens)
        for e in row:
            if e != 0:
                top = [max(a, b) for a, b in zip(top, sp.Poly(e, *gens).degree_list(), strict=True)]
        degree = [a + b for a, b in zip(degree, top, strict=True)]
    monomials = n + 1  # powers of r
    for d in degree:
        monomials *= d + 1
    return min(abs(perm), monomials)


def _split(rec):
    """``(G, M1, lam)`` with the recurrence ``x' = (G + lam M1) x``, or ``None``."""
    if rec.is_scalar or rec.order != 1 or rec.coeffs[0] != sp.eye(rec.dim):
        return None
    M = -sp.Matrix(rec.coeffs[1])
    lam = rec.lam_symbol
    if lam is None or not M.has(lam):
        return M.applyfunc(sp.expand), sp.zeros(rec.dim), lam
    if any(sp.degree(e, lam) > 1 for e in M if e.has(lam)):
        return None
    M1 = M.diff(lam)
    return (M - lam * M1).applyfunc(sp.expand), M1, lam


def _doubly_stochastic(G) -> bool:
    ones = sp.ones(G.rows, 1)
    return all(sp.expand(e - 1) == 0 for e in list(G * ones) + list(ones.T * G))


def _near_stochastic(G) -> float | None:
    """Largest deviation of a numeric matrix's row and column sums from 1, or ``None``."""
    if G.free_symbols:
        return None
    ones = sp.ones(G.rows, 1)
    try:  # complex or huge entries: no near-stochastic matrix
        return max(abs(complex(sp.N(e - 1))) for e in list(G * ones) + list(ones.T * G))
    except (TypeError, ValueError, OverflowError):
        return None


class _Ring:
    """``G``, ``u``, ``v`` in one sparse polynomial domain; polynomials in ``r`` over it.

    All the work below is ring arithmetic (SymPy's ``DomainMatrix`` and dense ``Poly`` in
    ``r``); expressions are made only for printing.
    """

    def __init__(self, G, u=None, v=None):
        from sympy.polys.matrices import DomainMatrix

        mats = [DomainMatrix.from_Matrix(sp.Matrix(G))]
        if u is not None:
            mats += [DomainMatrix.from_Matrix(u), DomainMatrix.from_Matrix(v.T)]
        mats = mats[0].unify(*mats[1:]) if len(mats) > 1 else mats
        self.D = mats[0]
        self.U, self.V = (mats[1], mats[2]) if u is not None else (None, None)
        self.dom = self.D.domain
        self.coeffs = self.D.charpoly()

    def poly(self, coeffs) -> sp.Poly:
        return sp.Poly.from_list(list(coeffs), r, domain=self.dom)

    def const(self, expr) -> sp.Poly:
        return sp.Poly.from_list([self.dom.from_sympy(sp.expand(expr))], r, domain=self.dom)

    def chi(self) -> sp.Poly:
        """``det(r I - G)``."""
        return self.poly(self.coeffs)

    def adjugate_form(self) -> sp.Poly:
        """``v^T adj(r I - G) u`` from the Krylov products ``v^T G^k u`` (see :mod:`.structure`)."""
        c, n = self.coeffs, self.D.shape[0]
        moments, x = [], self.U
        for _ in range(n):
            moments.append((self.V * x)[0, 0].element)
            x = self.D * x
        zero = self.dom.zero
        return self.poly([sum((c[i] * moments[j - i] for i in range(j + 1)), zero) for j in range(n)])


def _expr(p: sp.Poly) -> sp.Expr:
    return sp.expand(p.as_expr())


def _factored(poly: sp.Expr) -> tuple[tuple[sp.Expr, int], ...]:
    """Monic factors in ``r`` with multiplicities whose product is exactly ``poly`` (monic)."""
    poly = sp.expand(poly)
    out = []
    for f, m in sp.factor_list(poly)[1]:
        if f.has(r):
            out.append((sp.expand(f / sp.Poly(f, r).LC()), m))
    return _checked(out, poly)


def _checked(factors, poly: sp.Expr) -> tuple[tuple[sp.Expr, int], ...]:
    """``factors`` sorted, after checking their product is ``poly``; else ``((poly, 1),)``."""
    factors = sorted(factors, key=lambda fm: (sp.degree(fm[0], r), sp.default_sort_key(fm[0])))
    gens = (r, *sorted(sp.sympify(poly, strict=True).free_symbols - {r}, key=str))
    product = sp.Poly(1, *gens)
    for f, m in factors:
        product *= sp.Poly(f, *gens) ** m
    if product != sp.Poly(poly, *gens):  # never trust a factorisation unchecked
        return ((sp.expand(poly), 1),)
    return tuple(factors)


def _kron_split(G):
    """``(A, B)`` with ``G = A (x) B`` (smallest ``A``, at least 2 x 2), or ``None``."""
    n = G.rows
    for p in range(2, n // 2 + 1):
        if n % p:
            continue
        q = n // p
        R = sp.Matrix(p * p, q * q, lambda a, b: G[(a // p) * q + b // q, (a % p) * q + b % q])
        pair = _rank_one(R)
        if pair is not None:
            A, B = sp.Matrix(p, p, list(pair[0])), sp.Matrix(q, q, list(pair[1]))
            c = sp.cancel(sum(B.row(0)))  # A (x) B = (c A) (x) (B / c): B with row sums 1
            if c != 0:
                A, B = (A * c).applyfunc(sp.cancel), (B / c).applyfunc(sp.cancel)
            if all(e.is_polynomial() for e in list(A) + list(B)):
                return A, B
            return None
    return None


def _eigenvalues(G) -> list | None:
    """Exact eigenvalues of ``G`` with repetition when every factor of its charpoly is
    linear, splitting Kronecker products into products of their factors' eigenvalues."""
    split = _kron_split(G) if G.rows > 2 else None
    if split is not None:
        left, right = _eigenvalues(split[0]), _eigenvalues(split[1])
        if left is None or right is None:
            return None
        return [sp.expand(a * b) for a in left for b in right]
    factors = _factored(_charpoly_of(G))
    if any(sp.degree(f, r) != 1 for f, _ in factors):
        return None
    return [sp.expand(r - f) for f, m in factors for _ in range(m)]


def _charpoly_of(G):
    return _expr(_Ring(G).chi())


def _product(factors) -> sp.Expr:
    return sp.Mul(*[f ** m for f, m in factors])


def _q_factors(G, q: sp.Expr, facts: list) -> tuple[tuple[sp.Expr, int], ...]:
    """Factors of ``q = det(r I - G)/(r - 1)``; Kronecker products by their factors' eigenvalues."""
    split = _kron_split(G)
    if split is not None:
        eig = _eigenvalues(G)
        if eig is not None and 1 in eig:
            facts.append(f"H = A (x) B with A {split[0].rows}x{split[0].rows}: its eigenvalues are the "
                         "products of the Kronecker factors' eigenvalues")
            eig.remove(1)
            counts: dict = {}
            for e in eig:
                counts[e] = counts.get(e, 0) + 1
            return _checked([(sp.expand(r - e), m) for e, m in counts.items()], q)
    return _factored(q)


def structured_charpoly(rec, *, limit: int = EXPAND_TERMS) -> StructuredCharpoly | None:
    """The characteristic polynomial of a first-order matrix recurrence in structured form.

    ``None`` for recurrences without matrix structure (scalar ones, higher order, or a
    ``lam`` part that is neither ``I`` nor rank one).

    Examples
    --------
    >>> from depthdyn import entangled
    >>> structured_charpoly(entangled(n=3)).form
    (-lam + r - 1)*(gamma - lam + r - 1)**2
    """
    split = _split(rec)
    if split is None:
        return None
    G, M1, lam = split
    n = G.rows
    facts: list[str] = []
    bound = term_bound(G)
    small = bound <= limit
    stochastic = _doubly_stochastic(G)
    if stochastic:
        facts.append("H (the matrix at lam = 0: H_res, Gamma) is doubly stochastic (H 1 = 1, 1^T H = 1^T): "
                     "eigenvalue 1 on the all-ones vector")
    elif (gap := _near_stochastic(G)) is not None and gap < 1e-9:
        facts.append(f"H (the matrix at lam = 0) is doubly stochastic only to within {gap:.1e} (its row and "
                     "column sums; exact "
                     "values read from float64): eigenvalue 1 on the all-ones vector up to that residual, "
                     "so no factor is split off exactly")
    if M1 == sp.eye(n):  # entangled: chi(r) = chi_G(r - lam)
        if not small:
            piece = Piece("chi_G(r)", "det(r I - G)", None, bound)
            return StructuredCharpoly(sp.Function("chi_G")(r - lam), (piece,), tuple(facts), None,
                                      "shift: chi_G(r - lam)")
        factors = tuple((sp.expand(f.subs(r, r - lam)), m) for f, m in _factored(_charpoly_of(G)))
        return StructuredCharpoly(_product(factors), (), tuple(facts), factors,
                                  "shift chi_G(r - lam), chi_G factored exactly")
    if M1 == sp.zeros(n):  # no lam in the matrix: det(r I - G) itself
        if not small:
            piece = Piece("chi_G(r)", "det(r I - G)", None, bound)
            return StructuredCharpoly(sp.Function("chi_G")(r), (piece,), tuple(facts), None, "no lam part")
        factors = _factored(_charpoly_of(G))
        return StructuredCharpoly(_product(factors), (), tuple(facts), factors, "det(r I - G) factored")
    pair = _rank_one(M1)
    if pair is None:
        return None
    u, v = pair
    ring = _Ring(G, u, v) if small else None
    if not stochastic:  # the plain lemma
        pieces = (Piece("chi_G(r)", "det(r I - G)", ring and _expr(ring.chi()), bound),
                  Piece("a(r)", "v^T adj(r I - G) u", ring and _expr(ring.adjugate_form()), bound))
        form = sp.Function("chi_G")(r) - lam * sp.Function("a")(r)
        return StructuredCharpoly(form, pieces, tuple(facts), None,
                                  "matrix determinant lemma (rank-one in lam)")
    ones = sp.ones(n, 1)
    su, sv = sp.expand((ones.T * u)[0]), sp.expand((ones.T * v)[0])
    s = sp.factor(su * sv / n)
    u_perp, v_perp = (u - su / n * ones).applyfunc(sp.expand), (v - sv / n * ones).applyfunc(sp.expand)
    decoupled = u_perp == sp.zeros(n, 1) or v_perp == sp.zeros(n, 1)
    facts.append(f"rank-one update lam u v^T (u v^T = H_post^T H_pre); along the all-ones vector "
                 f"s = (1^T u)(1^T v)/n = {sp.sstr(s)}")
    q = ring.chi().exquo(ring.poly([1, -1])) if ring else None
    q_piece = Piece("q(r)", f"det(r I - H'), H' = H on the complement of the all-ones vector "
                    f"(degree {n - 1})",
                    q and _expr(q), bound)
    head = r - 1 - lam * s
    if decoupled:
        facts.append("u or v is a multiple of the all-ones vector: the eigenvalue 1 + lam s separates "
                     "(charpoly = (r - 1 - lam s) q(r))")
        if q is None:
            return StructuredCharpoly(head * sp.Function("q")(r), (q_piece,), tuple(facts), None,
                                      "doubly stochastic H, rank-one update along the all-ones vector")
        factors = ((sp.expand(head), 1),) + _q_factors(G, _expr(q), facts)
        return StructuredCharpoly(_product(factors), (), tuple(facts), factors,
                                  "doubly stochastic H, rank-one update along the all-ones vector, "
                                  "q factored")
    w = None
    if ring is not None:  # n a - (1^T u)(1^T v) q = n (r - 1) w
        w = (ring.adjugate_form() * n - q * ring.const(su * sv)).exquo(ring.poly([1, -1]))
        w = sp.expand(_expr(w) / n)
    facts.append("matrix determinant lemma: det(r I - H - lam u v^T) = "
                 "det(r I - H) (1 - lam v^T (r I - H)^-1 u)")
    w_piece = Piece("w(r)", f"v_perp^T adj(r I - H') u_perp, the parts of u, v off the all-ones vector "
                    f"(degree {n - 2})", w, bound)
    form = head * sp.Function("q")(r) - lam * (r - 1) * sp.Function("w")(r)
    return StructuredCharpoly(form, (q_piece, w_piece), tuple(facts), None,
                              "doubly stochastic H and the matrix determinant lemma")


def shorten(expr, digits: int = 10):
    """``expr`` with every rational whose numerator or denominator has more than
    :data:`DIGITS` digits replaced by a float of ``digits`` significant digits.

    >>> shorten(sp.Rational(12178558398992939, 50000000000000000) * sp.Symbol("lam") + sp.Rational(1, 3))
    0.243571168*lam + 1/3
    """
    if not isinstance(expr, sp.Basic):
        return expr
    long = [a for a in expr.atoms(sp.Rational) if len(str(abs(a.p))) > DIGITS or len(str(a.q)) > DIGITS]
    return expr.xreplace({a: sp.Float(a, digits) for a in long}) if long else expr


class Speller:
    """``sympy.sstr`` of expressions, through :func:`shorten` unless ``full``; remembers
    whether any number was shortened."""

    def __init__(self, full: bool = True):
        self.full, self.shortened = full, False

    def __call__(self, expr) -> str:
        if not self.full:
            short = shorten(expr)
            self.shortened |= short is not expr
            expr = short
        return sp.sstr(expr)


# a fraction p/q whose p is no exponent or denominator (``r**2/10**17`` is not 2/10**17),
# else a lone integer
_NUMBER = re.compile(r"(?<![\w.*/^])(\d+)/(\d+)(?![\w.])|(?<![\w.])(\d+)(?![\w.])")


def shorten_numbers(text: str, digits: int = 10) -> tuple[str, bool]:
    """``text`` with every integer or fraction ``p/q`` written with more than
    :data:`DIGITS` digits (in ``p`` or ``q``) replaced by a float of ``digits`` significant
    digits; and whether anything was replaced.

    >>> shorten_numbers("lam + 12178558398992939/50000000000000000 > 3/4")
    ('lam + 0.243571168 > 3/4', True)
    >>> shorten_numbers("r**2/100000000000000000 + 7")
    ('r**2/1e+17 + 7', True)
    """
    changed = False

    def short(match: re.Match) -> str:
        nonlocal changed
        p, q = (match.group(1), match.group(2)) if match.group(1) else (match.group(3), "1")
        if len(p) <= DIGITS and len(q) <= DIGITS:
            return match.group(0)
        changed = True
        return f"{float(Fraction(int(p), int(q))):.{digits}g}"

    return _NUMBER.sub(short, text), changed


def summary(text: str, limit: int, what: str = "expression") -> str:
    """``text`` when at most ``limit`` characters, else a note of its size.

    >>> summary("x" * 5000, 100, "discriminant")
    '<discriminant of 5,000 characters; --full prints it>'
    """
    if len(text) <= limit:
        return text
    return f"<{what} of {len(text):,} characters; --full prints it>"
