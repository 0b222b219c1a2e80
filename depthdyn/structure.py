"""The characteristic polynomial of a matrix recurrence, from its structure.

A first-order matrix recurrence ``x_{l+1} = M x_l`` has ``det(r I - M)``. Expanding that
determinant with symbolic entries (Berkowitz on a SymPy ``Matrix``) is slow at real sizes;
the structure of the families makes it cheap, and says more in less:

* **shift** ``M = G + lam I`` (entangled maps): ``det(r I - M) = chi_G(r - lam)``, with the
  characteristic polynomial ``chi_G`` of ``G`` computed once, without ``lam``;
* **rank-one update** ``M = G + lam u v^T`` (hyper-connections): the matrix determinant
  lemma in polynomial form,
  ``det(r I - G - lam u v^T) = chi_G(r) - lam v^T adj(r I - G) u`` with
  ``adj(r I - G) = sum_j r^(n-1-j) sum_{i<=j} c_i G^(j-i)`` (``c_i`` the coefficients of
  ``chi_G``), which needs only the Krylov products ``v^T G^k u``;
* **doubly stochastic** ``G`` (``G 1 = 1``, ``1^T G = 1^T``): in the basis of the all-ones
  vector and its complement ``G = diag(1, G')``, so ``det(r I - G) = (r - 1) q(r)`` with
  ``q = det(r I - G')``; with the rank-one update, splitting ``u`` and ``v`` into their
  all-ones parts and the rest gives

  .. math:: \\chi(r) = q(r)\\,(r - 1 - \\lambda s) - \\lambda (r - 1)\\, w(r),
     \\qquad s = \\frac{(1^T u)(1^T v)}{n},

  with ``w(r) = v_perp^T adj(r I - G') u_perp`` of degree ``n - 2``; when ``u`` or ``v``
  is a multiple of the all-ones vector (uniform gates), ``w = 0`` and the eigenvalue
  ``1 + lam s`` belongs to the all-ones direction;
* otherwise, the division-free Berkowitz charpoly of :class:`DomainMatrix` over the sparse
  polynomial ring of the parameters.

Two verbs: :func:`matrix_charpoly` gives the expanded coefficients in ``r`` (what
:meth:`depthdyn.recurrence.Recurrence.charpoly` uses); :func:`structured_charpoly` gives the
structured form itself, a :class:`StructuredCharpoly` whose pieces are left as definitions when
their expansion could be large (a bound on their number of terms above :data:`~depthdyn.limits.EXPAND_TERMS`),
and whose remaining determinant is factored exactly when it is small enough (Kronecker factors
of KromHC split into the products of the factors' eigenvalues). All of it is ring arithmetic
(SymPy's ``DomainMatrix`` and dense ``Poly`` in ``r``), not expression trees.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp
from sympy.polys.matrices import DomainMatrix

from .errors import ParameterError
from .limits import EXPAND_TERMS
from .records import Record

__all__ = ["r", "matrix_charpoly", "rank_one", "StructuredCharpoly", "Piece", "structured_charpoly",
           "term_bound"]

#: The characteristic variable (``x_l = r**l``).
r = sp.Symbol("r")


def rank_one(M1: sp.MatrixBase):
    """``(u, v)`` with ``M1 = u v^T`` if ``M1`` has rank one, else ``None``.

    >>> rank_one(sp.Matrix([[1, 2], [3, 6]]))
    (Matrix([
    [1],
    [3]]), Matrix([
    [1],
    [2]]))
    """
    nonzero = [(i, j) for i in range(M1.rows) for j in range(M1.cols) if M1[i, j] != 0]
    if not nonzero:
        return None
    i0, j0 = nonzero[0]
    u = M1[:, j0]
    v = M1[i0, :] / M1[i0, j0]
    if (u * v - M1).applyfunc(lambda e: sp.cancel(e)) != sp.zeros(*M1.shape):
        return None
    return u, v.T


class _Ring:
    """``G``, ``u``, ``v`` in one sparse polynomial domain; polynomials in ``r`` over it.

    All the work below is ring arithmetic (SymPy's ``DomainMatrix`` and dense ``Poly`` in
    ``r``); expressions are made only for printing.
    """

    def __init__(self, G, u=None, v=None):
        mats = [DomainMatrix.from_Matrix(sp.Matrix(G))]
        if u is not None:
            mats += [DomainMatrix.from_Matrix(u), DomainMatrix.from_Matrix(v.T)]
        mats = mats[0].unify(*mats[1:]) if len(mats) > 1 else mats
        self.D = mats[0]
        self.U, self.V = (mats[1], mats[2]) if u is not None else (None, None)
        self.dom = self.D.domain
        self.coeffs = self.D.charpoly()

    def adjugate_coeffs(self) -> list:
        """Coefficients in ``r`` of ``v^T adj(r I - G) u`` from the Krylov products ``v^T G^k u``."""
        c, n = self.coeffs, self.D.shape[0]
        moments, x = [], self.U
        for _ in range(n):
            moments.append((self.V * x)[0, 0].element)
            x = self.D * x
        zero = self.dom.zero
        return [sum((c[i] * moments[j - i] for i in range(j + 1)), zero) for j in range(n)]

    def poly(self, coeffs) -> sp.Poly:
        return sp.Poly.from_list(list(coeffs), r, domain=self.dom)

    def const(self, expr) -> sp.Poly:
        return sp.Poly.from_list([self.dom.from_sympy(sp.expand(expr))], r, domain=self.dom)

    def chi(self) -> sp.Poly:
        """``det(r I - G)``."""
        return self.poly(self.coeffs)

    def adjugate_form(self) -> sp.Poly:
        """``v^T adj(r I - G) u``."""
        return self.poly(self.adjugate_coeffs())


# ------------------------------------------------------------------ expanded coefficients
def _polynomial(coeffs: list, var) -> sp.Expr:
    n = len(coeffs) - 1
    return sp.Add(*[c * var ** (n - j) for j, c in enumerate(coeffs)])


def _in_r(expr: sp.Expr, var) -> list:
    return [sp.expand(c) for c in sp.Poly(expr, var).all_coeffs()]


def _coefficients(M) -> list:
    """Coefficients ``c_0 = 1, c_1, ..., c_n`` of ``det(r I - M)``, as SymPy expressions."""
    ring = _Ring(M)
    return [ring.dom.to_sympy(c) for c in ring.coeffs]


def _lemma(G, u, v, lam) -> list:
    """Coefficients in ``r`` of ``det(r I - G - lam u v^T)`` by the matrix determinant lemma."""
    ring = _Ring(G, u, v)
    chi = [ring.dom.to_sympy(x) for x in ring.coeffs]
    adj = ring.adjugate_coeffs()
    return [chi[0]] + [sp.expand(chi[j + 1] - lam * ring.dom.to_sympy(adj[j])) for j in range(len(adj))]


def matrix_charpoly(coeffs: tuple, lam, var=r) -> tuple[list, str]:
    """Coefficients in ``var`` (highest first) of ``det(A_0 r^p + ... + A_p)``, and the method.

    See the module docstring for the methods.

    >>> lam = sp.Symbol("lam")
    >>> matrix_charpoly((sp.eye(2), -sp.Matrix([[lam, 1], [0, lam]])), lam)
    ([1, -2*lam, lam**2], 'shift: chi_Gamma(r - lam)')
    """
    if len(coeffs) == 2 and coeffs[0] == sp.eye(coeffs[0].rows):
        M = -sp.Matrix(coeffs[1])
        if lam is not None and M.has(lam) and all(sp.degree(e, lam) <= 1 for e in M if e.has(lam)):
            M1 = M.diff(lam)
            G = (M - lam * M1).applyfunc(sp.expand)
            if M1 == sp.eye(M.rows):
                return _in_r(_polynomial(_coefficients(G), var - lam), var), "shift: chi_Gamma(r - lam)"
            pair = rank_one(M1)
            if pair is not None:
                return _lemma(G, *pair, lam), "matrix determinant lemma (rank-one update in lam)"
        return _coefficients(M), "DomainMatrix charpoly"
    P = sp.zeros(coeffs[0].rows)
    p = len(coeffs) - 1
    for j, A in enumerate(coeffs):
        P += A * var ** (p - j)
    D = DomainMatrix.from_Matrix(P)
    return _in_r(D.domain.to_sympy(D.det()), var), "DomainMatrix det"


# ------------------------------------------------------------------ the structured form
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
        R = sp.Matrix(p * p, q * q, lambda a, b, p=p, q=q: G[(a // p) * q + b // q, (a % p) * q + b % q])
        pair = rank_one(R)
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
    pair = rank_one(M1)
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
