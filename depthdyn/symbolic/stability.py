"""Exact stability: all characteristic roots strictly inside the unit circle.

:func:`stability_conditions` gives polynomial inequalities in the parameters through the
bilinear map ``r = (1 + s)/(1 - s)`` and the Lienard-Chipart test; :func:`root_condition`
decides strict and marginal stability of a numeric recurrence exactly (see :mod:`.circle`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import sympy as sp
from sympy.polys.matrices import DomainMatrix
from sympy.polys.rings import PolyRing, sring

from ..budget import REFINE_SECONDS, at_most, bounded, part, require
from ..errors import DegreeTooLargeError, DomainError, ParameterError, UnknownParameterError
from ..limits import MAX_STATE
from ..printing import sstr, tex
from ..printing import symbol as _symbol  # lam prints as \lambda in sympy.latex
from ..records import Record
from ..recurrence import REALS, r, to_exact
from .circle import circle_roots, exact_poly, verdicts
from .floats import from_floats, near_circle, near_simple_ends, scale_free
from .intervals import IntervalUnion, reduced_conditions
from .polynomial import factors_in_r
from .signs import cheap_to_factor
from .signs import sign as _sign

__all__ = ["StabilityConditions", "stability_conditions", "RootCondition", "root_condition"]

_s = sp.Symbol("s")


def _reduce(expr: sp.Expr, domains: dict):
    """Tidy ``expr > 0``: returns (status, tidy, reduced), status in true/false/implied/keep."""
    expr = sp.expand(expr)
    if expr.is_number:
        return ("true" if expr > 0 else "false"), expr, expr
    if not cheap_to_factor(expr):
        return "keep", expr, expr  # multivariate factoring at this size is slow: kept as is
    try:
        c, facs = sp.factor_list(expr)
    except sp.PolynomialError:  # radicals of parameters (N**(-1/4)): not a polynomial, kept as is
        return "keep", expr, expr
    sign = 1 if c > 0 else -1
    facs = [(f, 2 if k % 2 == 0 else 1) for f, k in facs]  # f**3 g > 0 iff f g > 0
    tidy = _natural(sign, facs)
    kept = []
    for f, k in facs:
        sg = _sign(f, domains, irreducible=True)
        if sg is None:
            kept.append((f, k))
        elif sg < 0 and k % 2:
            sign = -sign
    if not kept:
        return ("implied" if sign > 0 else "false"), tidy, sp.Integer(sign)
    if sign < 0 and all(k == 2 for _, k in kept):
        return "false", tidy, -sp.Mul(*(f**k for f, k in kept))
    return "keep", tidy, _natural(sign, kept)


def _natural(sign: int, facs: list) -> sp.Expr:
    """``sign * prod f**k``, absorbing a minus sign into a sum factor where that reads better."""
    facs = list(facs)
    if sign < 0:
        odd = [i for i, (f, k) in enumerate(facs) if k % 2 and f.is_Add]
        if odd:
            i = max(odd, key=lambda j: sum(not t.could_extract_minus_sign() for t in (-facs[j][0]).args))
            facs[i], sign = (-facs[i][0], facs[i][1]), 1
    return sign * sp.Mul(*(f**k for f, k in facs))


def _gt(expr: sp.Expr) -> sp.Basic:
    return sp.StrictGreaterThan(expr, 0, evaluate=False)


def _bilinear(coeffs: list) -> list:
    """Coefficients (highest first) of ``Q(s) = (1 - s)^n p((1 + s)/(1 - s))``."""
    n = len(coeffs) - 1
    Q = sum((c * (1 + _s) ** (n - j) * (1 - _s) ** j for j, c in enumerate(coeffs)), sp.Integer(0))
    Q = sp.Poly(sp.expand(Q), _s)
    return [Q.coeff_monomial(_s ** (n - i)) for i in range(n + 1)]


def _hurwitz(a: list, k: int) -> sp.Expr:
    n = len(a) - 1
    entry = lambda i, j: a[2 * j - i + 1] if 0 <= 2 * j - i + 1 <= n else 0  # noqa: E731
    M = DomainMatrix.from_Matrix(sp.Matrix(k, k, entry))  # division-free Berkowitz in the polynomial ring
    return M.domain.to_sympy((-1) ** k * M.charpoly()[-1])


@dataclass(frozen=True)
class StabilityConditions(Record):
    """Conditions ``expr > 0`` that together mean: every root has ``|r| < 1``.

    ``implied_by_domain`` lists the necessary conditions dropped because the parameter
    domains already imply them; ``never`` is True when one condition can never hold.
    Where the conditions are in one real parameter, ``intervals`` is the stable set as an
    exact union of intervals and ``conditions`` keeps only those the set needs (none
    implied by the others). Conditions whose integer coefficients pass ``10**12`` (data
    read from floats) are divided by their leading coefficient's size. ``tolerance_note``
    says where float data leave a verdict within ``FLOAT_TOLERANCE`` (docs: stability,
    "Float data").
    """

    conditions: tuple
    implied_by_domain: tuple
    assumptions: tuple
    method: str
    never: bool = False
    reason: str = ""
    domains: tuple = field(default=(), repr=False, compare=False)  # (symbol, Set) pairs
    intervals: IntervalUnion | None = field(default=None, compare=False)
    tolerance_note: str = ""

    @property
    def region(self) -> sp.Basic:
        return sp.And(*self.conditions)

    def _symbol(self, name) -> sp.Symbol:
        name = getattr(name, "name", name)
        for sym, _ in self.domains:
            if sym.name == name:
                return sym
        raise UnknownParameterError(f"no parameter {name!r}; known: {[s.name for s, _ in self.domains]}")

    def holds(self, values: dict | None = None, **kw) -> bool:
        """Decide the conditions at exact parameter values (names -> numbers).

        Under complex ``lam`` a complex value ``lam=...`` is split into ``lam_re, lam_im``.
        Raises :class:`~depthdyn.errors.ParameterError` if a symbol is left without value,
        :class:`~depthdyn.errors.DomainError` for a value outside its domain.
        """
        items = {getattr(k, "name", str(k)): to_exact(v) for k, v in {**(values or {}), **kw}.items()}
        names = {s.name for s, _ in self.domains}
        for key in [k for k in items if k not in names and {k + "_re", k + "_im"} <= names]:
            z = sp.expand(items.pop(key))
            items[key + "_re"], items[key + "_im"] = sp.re(z), sp.im(z)
        mapping, doms = {}, dict(self.domains)
        for key, value in items.items():
            sym = self._symbol(key)
            outside = value.is_extended_real is False or doms[sym].contains(value) is sp.false
            if not value.free_symbols and outside:
                raise DomainError(f"{key}={value} is outside its domain {doms[sym]} ({self.assumptions})")
            mapping[sym] = value
        result = True
        for cond in self.conditions + self.implied_by_domain:
            val = _at(cond, mapping)
            if val not in (sp.true, sp.false):
                left = sorted(str(s) for s in getattr(val, "free_symbols", ()))
                raise ParameterError(f"cannot decide {sstr(cond)}: give values for {left or 'all symbols'}")
            result = result and bool(val)
        return result

    def solve_for(self, name: str) -> sp.Basic:
        """Solve the conditions for one symbol when each is linear in it with a known-sign slope.

        A condition ``a*x > 0`` forces ``a != 0``, which fixes the sign of a slope ``a`` that
        is otherwise only known to be ``>= 0`` (``eta`` in the momentum family).
        """
        x, doms = self._symbol(name), dict(self.domains)
        if self.never:
            return sp.false
        lin = []
        for cond in self.conditions:
            poly = sp.Poly(sp.expand(cond.lhs), x)
            if poly.degree() > 1 or poly.coeff_monomial(1).has(x):
                raise ParameterError(f"cannot solve for {x}: {sstr(cond)} is not linear in it")
            lin.append((poly.coeff_monomial(x), poly.coeff_monomial(1), cond))
        forced = {sp.expand(a) for a, b, _ in lin if a != 0 and b == 0}  # a*x > 0 forces a != 0
        parts = []
        for a, b, cond in lin:
            sg = _sign(a, doms) if a != 0 else 0
            if sg is None and (sp.expand(a) in forced or sp.expand(-a) in forced):
                sg = _sign(a, doms, strict=False)
            if sg is None:
                raise ParameterError(f"cannot solve {sstr(cond)} for {x}: the sign of {sstr(a)} is unknown")
            bound = sp.factor(-b / a) if sg else None
            rel = sp.StrictGreaterThan if sg > 0 else sp.StrictLessThan
            parts.append(rel(x, bound) if sg else cond)
        return sp.And(*parts)

    def to_json(self) -> dict:
        return {"conditions": [sstr(c) for c in self.conditions],
                "implied_by_domain": [sstr(c) for c in self.implied_by_domain],
                "assumptions": list(self.assumptions), "method": self.method, "never": self.never,
                "reason": self.reason,
                "set": None if self.intervals is None or self.never else self.intervals.inequalities(),
                "intervals": None if self.intervals is None else self.intervals.to_json(),
                "tolerance_note": self.tolerance_note}

    def _text(self) -> str:
        head = "never strictly stable: " + self.reason if self.never else "all |r| < 1 iff:"
        if self.intervals is not None and not self.never:
            lines = [head, f"  {self.intervals.inequalities()}"]
        else:
            lines = [head] + [f"  {sstr(c)}" for c in self.conditions if not self.never]
        if self.tolerance_note:
            lines.append(self.tolerance_note)
        if self.implied_by_domain:
            lines.append("implied by the domains: " + ", ".join(sstr(c) for c in self.implied_by_domain))
        lines.append("assuming " + "; ".join(self.assumptions) if self.assumptions else "no parameters")
        return "\n".join(lines + [f"method: {self.method}"])

    def _latex(self) -> str:
        if self.intervals is not None and not self.never:
            x = tex(_symbol(self.intervals.variable, real=True))
            return f"|r_i| < 1 \\iff {x} \\in {sp.latex(self.intervals.as_set())}"
        return "|r_i| < 1 \\iff " + " \\wedge ".join(tex(c) for c in self.conditions)


def _at(cond: sp.Basic, mapping: dict) -> sp.Basic:
    """``cond`` at the values ``mapping``: evaluated in Python's exact fractions when every
    value is rational (conditions have hundreds of terms; building them as SymPy numbers
    is 100x slower), else by ``xreplace`` (all at once: ``subs`` would evaluate every
    partially substituted relation)."""
    if isinstance(cond, sp.Rel) and all(v.is_Rational for v in mapping.values()):
        vals = {s: Fraction(int(v.p), int(v.q)) for s, v in mapping.items()}
        try:
            lhs, rhs = _fraction(cond.lhs, vals), _fraction(cond.rhs, vals)
        except (_NotRational, ZeroDivisionError):
            pass
        else:
            return cond.func(sp.Rational(lhs.numerator, lhs.denominator), sp.Rational(rhs.numerator, rhs.denominator))
    return cond.xreplace(mapping)


class _NotRational(Exception):
    """The expression is not a rational function of the given rational values."""


def _fraction(e: sp.Expr, vals: dict) -> Fraction:
    if e.is_Rational:
        return Fraction(int(e.p), int(e.q))
    if e.is_Symbol:
        if e not in vals:
            raise _NotRational(e)
        return vals[e]
    if e.is_Add:
        return sum((_fraction(a, vals) for a in e.args), Fraction(0))
    if e.is_Mul:
        return math.prod((_fraction(a, vals) for a in e.args), start=Fraction(1))
    if e.is_Pow and e.exp.is_Integer:
        return _fraction(e.base, vals) ** int(e.exp)
    raise _NotRational(e)  # radicals of parameters (N**(1/4)) and the like


@bounded("stability conditions")
def stability_conditions(rec, *, lam: str = "real") -> StabilityConditions:
    """Exact conditions for all characteristic roots strictly inside the unit circle.

    ``Q(s) = (1 - s)^n p((1 + s)/(1 - s))`` is Hurwitz-stable with degree ``n`` iff ``p`` is
    Schur-stable; Lienard-Chipart then asks for every coefficient of ``Q`` and the Hurwitz
    determinants ``Delta_{n-1}, Delta_{n-3}, ...`` to be positive. A negative constant
    leading coefficient ``a_n`` of ``p`` flips ``p``; a parametric one multiplies ``p`` by
    ``a_n`` (``a_n**2`` leads, so the conditions are polynomial and right for either
    sign, and fail where ``a_n = 0``). Complex coefficients (``lam="complex"``:
    ``lam = lam_re + I*lam_im``) use the Schur-Cohn criterion instead: the ``n x n``
    Hermitian Schur-Cohn matrix of ``p`` is positive definite, i.e. its ``n`` leading
    principal minors (real polynomials) are positive; this is far cheaper than the
    degree-``2n`` polynomial ``p * conj(p)`` the bilinear route would need. The exact work
    runs as the budgeted part ``"stability conditions"`` (:mod:`depthdyn.budget`). Each condition is factored; constant, domain-positive and
    domain-nonzero squared factors are removed. ``never`` detection is per condition.

    Parameters
    ----------
    rec : Recurrence
    lam : {"real", "complex"}
        How to treat ``lam`` (ignored by families without one).

    Examples
    --------
    >>> from depthdyn import momentum
    >>> sc = stability_conditions(momentum())
    >>> sc.conditions
    (eta*lam + 2*m + 2 > 0, -eta*lam > 0)
    >>> sc.implied_by_domain
    (1 - m > 0,)
    >>> sc.solve_for("lam")
    (lam < 0) & (lam > -2*(m + 1)/eta)
    """
    if lam not in ("real", "complex"):
        raise ParameterError(f"lam must be 'real' or 'complex', got {lam!r}")
    lam_sym, domains, assumptions, swap = rec.lam_symbol, {}, [], {}
    complex_lam = (sp.Dummy("z"), (sp.Symbol("z_re", real=True), sp.Symbol("z_im", real=True)))
    for par in rec.params:
        sym = par.symbol
        if par.name == rec.lam and lam == "real":
            sym = _symbol(par.name, real=True)
            swap[lam_sym] = sym
            domains[sym] = par.domain.intersect(REALS)
            assumptions.append(f"{par.name} real" + ("" if domains[sym] == REALS else f", in {domains[sym]}"))
        elif par.name == rec.lam:
            re_, im_ = _symbol(par.name + "_re", real=True), _symbol(par.name + "_im", real=True)
            swap[lam_sym] = z = sp.Dummy(par.name)  # lam = re + I im only after the minors
            complex_lam = (z, (re_, im_))
            domains[re_] = domains[im_] = REALS
            assumptions.append(f"{par.name} = {re_} + I*{im_} with {re_}, {im_} real")
        elif par.domain.is_subset(REALS):
            domains[sym] = par.domain
            assumptions.append(f"{par.name} in {par.domain}")
        else:
            raise ParameterError(f"parameter {par.name} is complex; stability needs real parameters")
    if rec.order * rec.dim > MAX_STATE:
        raise DegreeTooLargeError(
            f"degree {rec.order * rec.dim} > {MAX_STATE}: too large for exact stability conditions")
    with part("stability conditions"):
        # every root is a root of one distinct irreducible factor: conditions factor by factor
        # (two linear factors for an entangled map instead of one degree-8 polynomial)
        found = factors_in_r(rec)
        if lam == "real":
            for f, k in found:  # refuse hopeless sizes before building anything
                # an irreducible charpoly: its coefficient list is at hand (a Poly of f costs seconds)
                whole = len(found) == 1 and k == 1 and len(rec.charpoly_coeffs()) == sp.degree(f, r) + 1
                coeffs = list(rec.charpoly_coeffs()) if whole else sp.Poly(f, r).all_coeffs()
                _estimate("stability conditions", coeffs, len(coeffs) - 2, sum_terms=True)
        factors = [sp.Poly(sp.expand(f.xreplace(swap)), r) for f, _ in found]
        return _conditions(factors, domains, assumptions, complex_lam)


_LC_METHOD = "bilinear map r = (1+s)/(1-s), Lienard-Chipart on Q(s) = (1-s)^n p((1+s)/(1-s))"
_SC_METHOD = ("Schur-Cohn: the Hermitian Schur-Cohn matrix of p is positive definite "
              "(its leading principal minors are positive)")


def _factor_conditions(P: sp.Poly, domains: dict, complex_lam: tuple) -> tuple[list, str]:
    """Raw conditions ``e > 0`` for the roots of one factor, and the method.

    ``complex_lam`` is ``(z, (re, im))``: the symbol standing for a complex ``lam`` in
    ``P`` and the real symbols of its real and imaginary parts.
    """
    n = P.degree()
    z = complex_lam[0]
    if any(c.has(z, sp.I) for c in P.all_coeffs()):  # complex: Schur-Cohn minors, degree 2k
        return _schur_cohn_minors(P, *complex_lam), _SC_METHOD
    method = _LC_METHOD
    lead = P.LC()
    lead_sign = _sign(lead, domains)
    if lead_sign is None:
        P, method = P * lead, method + f"; p multiplied by its leading coefficient {sstr(lead)}"
    elif lead_sign < 0:
        P = -P
    a = _bilinear(P.all_coeffs())
    _estimate("stability conditions", a, n - 1)
    return a + [_hurwitz(a, k) for k in range(n - 1, 1, -2)], method


def _conditions(factors: list, domains: dict, assumptions: list, complex_lam: tuple) -> StabilityConditions:
    raw, methods = [], []
    for P in factors:
        conds, method = _factor_conditions(P, domains, complex_lam)
        raw += conds
        methods.append(method)
    method = "; ".join(dict.fromkeys(methods))
    if len(factors) > 1:
        method = f"per irreducible factor ({len(factors)}): " + method
    kept, implied, never, reason = {}, {}, False, ""  # expanded form -> condition (no duplicates)
    for e in raw:
        status, tidy, reduced = _reduce(e, domains)
        if status == "false":
            never = True
            reason = reason or f"the condition {sstr(_gt(tidy))} can never hold on the domains"
        elif status == "implied":
            tidy = scale_free(tidy)
            implied.setdefault(sp.expand(tidy), _gt(tidy))
        elif status == "keep":
            reduced = scale_free(reduced)
            kept.setdefault(sp.expand(reduced), _gt(reduced))
    clash = [(c, kept[-key]) for key, c in kept.items() if -key in kept]
    if clash and not never:
        never, reason = True, f"{sstr(clash[0][0])} and {sstr(clash[0][1])} contradict each other"
    kept, implied = list(kept.values()), list(implied.values())
    for P in factors:
        prod = sp.cancel(P.TC() / P.LC())
        if prod.is_number and sp.Abs(prod) >= 1:
            never = True
            reason = (reason + "; " if reason else "") + f"|product of the roots| = {sp.Abs(prod)} >= 1"
            break
    floats = from_floats(factors)
    union, note = None, ""
    if not never:
        union, kept = _one_variable(kept, domains)
        if union is not None and union.is_empty:
            never, reason = True, f"no real {union.variable} satisfies every condition"
        elif union is not None and floats:
            note = near_simple_ends(union)
    if never:
        kept = [sp.false]
    return StabilityConditions(tuple(kept), tuple(implied), tuple(assumptions), method, never, reason,
                               tuple(domains.items()), union, note)


def _one_variable(kept: list, domains: dict) -> tuple[IntervalUnion | None, list]:
    """The stable set and the conditions it needs when the conditions are in one real parameter
    with rational coefficients; ``(None, kept)`` otherwise."""
    free = set().union(*(c.free_symbols for c in kept)) if kept else set()
    if len(free) != 1:
        return None, kept
    x = free.pop()
    dom = domains.get(x, REALS)
    if not isinstance(dom, sp.Interval) and dom != REALS:
        return None, kept
    try:  # a refinement: past a few seconds of CPU the inequalities stay as they are
        found = at_most(REFINE_SECONDS, "reducing to intervals",
                        lambda: reduced_conditions(kept, x, None if dom == REALS else dom), None)
    except (ParameterError, sp.PolynomialError, sp.polys.polyerrors.DomainError, NotImplementedError):
        return None, kept  # radicals in the coefficients (a tableau with sqrt(3)): kept as inequalities
    return (None, kept) if found is None else (found[0], list(found[1]))


def _estimate(name: str, entries: list, size: int, sum_terms: bool = False) -> None:
    """Refuse up front determinants of order ``size`` whose entries are large.

    A ``k x k`` determinant of entries with ``t`` terms has at most ``t^k`` term products,
    and at most ``C(k d + v, v)`` terms for entries of total degree ``d`` in ``v`` symbols;
    the smaller bound times ``k^2`` is the estimate. With ``sum_terms`` the entries are the
    coefficients of a polynomial and the bilinear map mixes them all (``t`` = their sum).
    """
    if size < 1:
        return
    entries = [sp.expand(e) for e in entries]
    counts = [len(sp.Add.make_args(e)) for e in entries] + [1]
    terms = sum(counts) if sum_terms else max(counts)
    free = set().union(*(e.free_symbols for e in entries)) - {r}
    degree = max([_total_degree(t) for e in entries for t in sp.Add.make_args(e)] + [1])
    _require_dets(name, size, terms, len(free), degree)


def _total_degree(term: sp.Expr) -> int:
    """Total degree of one term in its parameters (a radical of a parameter, ``sqrt(L)``,
    counts as a generator of degree 1, as in SymPy's ``Poly``); read off the powers
    directly, which is far cheaper than building a ``Poly`` of a large coefficient."""
    degree = 0
    for base, exp in term.as_powers_dict().items():
        if base.free_symbols - {r}:
            degree += int(exp) if exp.is_Integer and exp > 0 else 1
    return degree


def _require_dets(name: str, size: int, terms: int, symbols: int, degree: int) -> None:
    """The bound of :func:`_estimate` from the entries' sizes: largest term count, number of
    symbols, largest total degree."""
    bound = min(float(terms) ** size, float(sp.binomial(size * degree + symbols, symbols)))
    require(name, bound * size**2, f"{size}x{size} determinants of entries with {terms} terms "
            f"in {symbols} symbols")


def _schur_cohn_minors(P: sp.Poly, z: sp.Symbol, re_im: tuple) -> list:
    """Leading principal minors of the Schur-Cohn matrix of ``p(r) = sum a_k r^k``.

    ``C_ij = sum_{k=1}^{min(i,j)} (conj(a_{n-i+k}) a_{n-j+k} - a_{i-k} conj(a_{j-k}))``.
    ``C`` is Hermitian; it is positive definite iff every root has ``|r| < 1``
    (Schur-Cohn-Fujiwara), i.e. iff its ``n`` leading principal minors (real polynomials in
    the parameters) are positive. ``n x n`` instead of the ``2n``-degree ``p * conj(p)``
    that the bilinear route needs.

    The complex parameter enters as ``z`` and its conjugate as an independent symbol
    ``zc`` (every other parameter is real), so ``C`` lives in a polynomial ring over the
    coefficients' own domain (the rationals, mostly) rather than over the Gaussian
    rationals in ``re, im``, with fewer terms (``|z|^2`` is one monomial, not two). All
    minors come from one fraction-free (Bareiss) elimination, whose ``k``-th pivot is the
    ``k``-th leading principal minor; only at the end is ``z = re + I im``,
    ``zc = re - I im`` substituted, in the ring.
    """
    zc = sp.Dummy("zc")
    a = [sp.expand(c) for c in P.all_coeffs()[::-1]]
    ac = [sp.expand(sp.conjugate(c).xreplace({sp.conjugate(z): zc})) for c in a]
    n = len(a) - 1
    ring, polys = sring(a + ac + [z, zc])  # z, zc among the generators
    A, AC = polys[: n + 1], polys[n + 1: 2 * n + 2]
    C = [[sum((AC[n - i - 1 + k] * A[n - j - 1 + k] - A[i + 1 - k] * AC[j + 1 - k]
               for k in range(1, min(i, j) + 2)), ring.zero) for j in range(n)] for i in range(n)]
    entries = [e for row in C for e in row if e]  # sizes read off the ring elements (cheap)
    _require_dets("stability conditions", n, max(map(len, entries), default=1), ring.ngens,
                  max([sum(m) for e in entries for m in e.itermonoms()] + [1]))
    minors = _bareiss_minors(C, ring)
    return [_to_real(m, ring, z, zc, re_im) for m in minors]


def _bareiss_minors(C: list, ring) -> list:
    """The leading principal minors of ``C`` (ring elements): the pivots of one Bareiss
    elimination; a zero pivot (singular leading block) falls back to separate determinants."""
    n, M, prev, out = len(C), [row[:] for row in C], ring.one, []
    for k in range(n):
        pivot = M[k][k]
        out.append(pivot)
        if not pivot:  # no division by a zero minor: the remaining minors one by one
            D = DomainMatrix(C, (n, n), ring.to_domain())
            return out + [D.extract(list(range(m)), list(range(m))).det() for m in range(k + 2, n + 1)]
        for i in range(k + 1, n):
            for j in range(k + 1, n):
                M[i][j] = (pivot * M[i][j] - M[i][k] * M[k][j]).exquo(prev)
        prev = pivot
    return out


def _to_real(m, ring, z, zc, re_im: tuple) -> sp.Expr:
    """The ring element ``m(z, zc, ...)`` at ``z = re + I im``, ``zc = re - I im`` (real)."""
    re_, im_ = re_im
    gens = [g for g in ring.symbols if g not in (z, zc)]
    try:
        K = ring.domain.unify(sp.QQ_I)
    except (sp.polys.polyerrors.UnificationFailed, NotImplementedError):
        K = sp.EX
    target = PolyRing([re_, im_, *gens], K)
    x, y = target.gens[:2]
    iz, izc = ring.symbols.index(z), ring.symbols.index(zc)
    others = [i for i in range(ring.ngens) if i not in (iz, izc)]
    Z, Zc = x + K.convert(sp.I) * y, x - K.convert(sp.I) * y
    groups: dict = {}  # (power of z, power of zc) -> the cofactor, in the other generators
    for monom, coeff in m.terms():
        cofactor = groups.setdefault((monom[iz], monom[izc]), {})
        cofactor[(0, 0) + tuple(monom[i] for i in others)] = K.convert_from(coeff, ring.domain)
    out = sum((target.from_dict(c) * Z**a * Zc**b for (a, b), c in groups.items()), target.zero)
    expr = out.as_expr()
    return sp.expand(sp.re(expr)) if expr.has(sp.I) else expr


@dataclass(frozen=True)
class RootCondition(Record):
    """Strict (all ``|r| < 1``) and marginal (root condition) stability of a numeric recurrence.

    ``strict`` and ``marginal`` are exact for the coefficients as given. ``tolerance_note``
    is set when they come from floats and a root is off the unit circle by at most
    ``FLOAT_TOLERANCE``: the verdicts then rest on a float residue, and the text says
    "marginal within tolerance" instead of them.
    """

    strict: bool
    marginal: bool
    roots: tuple  # (root, multiplicity, modulus)
    spectral_radius: float
    tolerance_note: str = ""

    def _text(self) -> str:
        if self.tolerance_note:
            head = "strict and marginal: not decided (within the float tolerance), "
        else:
            head = f"strict: {self.strict}, marginal (root condition): {self.marginal}, "
        rows = [f"  r = {sstr(v)} (x{k}), |r| = {mod:.12g}" for v, k, mod in self.roots]
        note = [self.tolerance_note] if self.tolerance_note else []
        return "\n".join([head + f"spectral radius {self.spectral_radius:.12g}"] + rows + note)

    def _latex(self) -> str:
        mods = ",\\ ".join(f"|{tex(v)}| = {mod:.6g}" for v, _, mod in self.roots)
        return f"\\rho = {self.spectral_radius:.12g},\\ " + mods


@bounded("root condition")
def root_condition(rec) -> RootCondition:
    """Decide strict and marginal stability of a recurrence with no symbols left, exactly.

    The coefficients may be any algebraic numbers (rationals, ``I``, radicals). Each
    distinct root is placed inside, on or outside the unit circle by
    :func:`~depthdyn.symbolic.circle.circle_roots`: the roots on the circle are counted
    exactly (``gcd(p, p*)`` and a Sturm count after a Cayley map), the others are isolated
    in certified disks at rising precision. Multiplicities come from the square-free
    factorisation. No float comparison decides: ``r - (1 - 10**-40)`` is strictly stable,
    ``(r - 1)**2`` fails the root condition, ``r - 1`` satisfies it.

    Raises
    ------
    ParameterError
        Free parameters, non-algebraic coefficients (e.g. ``sin(1)``), or roots closer than
        ``10**-1000`` to the circle.

    Examples
    --------
    >>> from depthdyn import from_coefficients
    >>> rc = root_condition(from_coefficients([1, 0, 1]))
    >>> rc.strict, rc.marginal, rc.spectral_radius
    (False, True, 1.0)
    >>> root_condition(from_coefficients([1, "-(1 - 10**-40)"])).strict
    True
    """
    expr = sp.expand(rec.charpoly())
    if expr.free_symbols - {r}:
        left = sorted(map(str, expr.free_symbols - {r}))
        raise ParameterError(f"root_condition needs numbers; free parameters: {left}")
    P = exact_poly(expr)
    found = circle_roots(P)
    strict, marginal = verdicts(found)
    rows = tuple((c.value, c.multiplicity, c.modulus) for c in found)
    note = near_circle(found) if from_floats([P]) else ""
    return RootCondition(strict, marginal, rows, max(c.modulus for c in found), note)
