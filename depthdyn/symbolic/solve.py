"""Exact solutions of a depth recurrence: modes, closed forms and depth limits.

The solution of ``A_0 x_{l+p} + ... + A_p x_l = 0`` from ``x_s, ..., x_{s+p-1}`` comes
from its generating function. With the characteristic polynomial
``P(r) = a_0 r^p + ... + a_p`` and

.. math::

    N(r) = \\sum_{k=0}^{p-1} \\Big(\\sum_{j=0}^{k} a_j x_{s+k-j}\\Big) r^{p-1-k},
    \\qquad \\sum_{n \\ge 0} x_{s+n} r^{-n-1} = \\frac{N(r)}{P(r)},

so ``x_{s+n}`` is the sum of the residues of ``r^n N(r)/P(r)``. A root ``rho`` of
multiplicity ``M`` contributes
``sum_j C(n, j) rho^(n-j) H_{M-1-j}(rho)`` with ``H(t) = N(rho+t) / (P(rho+t)/t^M)``
expanded to ``t^(M-1)``; for a simple root this is ``rho^n N(rho)/P'(rho)`` and for a
zero root it is a Kronecker delta. This is exact on repeated roots (a generic formula,
:func:`sympy.rsolve`'s included, is ``0/0`` there), fast with symbolic parameters (rsolve
needs minutes at order 3), and roots without radicals stay implicit as a
:class:`sympy.RootSum` (rsolve answers ``0`` for Adams-Bashforth 5).
Matrix recurrences are solved per component through the scalar recurrence
``det(A_0 r^p + ... + A_p)`` that every component satisfies (Cayley-Hamilton).
"""

from __future__ import annotations

import numbers
import random
from dataclasses import dataclass, field

import sympy as sp
from sympy.polys.polyerrors import NotInvertible

from ..budget import bounded
from ..errors import DegreeTooLargeError, ParameterError, ShapeError, UnknownParameterError
from ..printing import sstr, tex, tex_sum
from ..records import Record
from ..recurrence import l, r, to_exact
from .forced import annihilate
from .modes import (
    Modes,
    RootGroup,
    group_coefficient,
    initial_data,
    local_data,
    mode_term,
    modes,
    root_groups,
    tidy,
)
from .polynomial import ImplicitRoot
from .puiseux import expansion, scaled_polynomials

__all__ = ["l", "Modes", "modes", "ClosedForm", "closed_form", "DepthLimit", "depth_limit"]


# ------------------------------------------------------------------ closed form
@dataclass(frozen=True)
class ClosedForm(Record):
    """Exact ``x_l`` for ``l >= start``; see :func:`closed_form`.

    ``terms`` holds ``(root, multiplicity, coefficient)`` with ``x_l`` the sum of
    ``coefficient * root**l`` (for ``root = 0`` the coefficient alone: Kronecker deltas).
    ``initial`` holds the ``(index, value)`` pairs the solution starts from.
    """

    expr: sp.Basic
    terms: tuple
    initial: tuple
    convention: str
    start: int
    recurrence: object = field(repr=False, compare=False)
    _data: tuple = field(repr=False, compare=False)

    @property
    def symbols(self) -> dict:
        """Every name :meth:`at` accepts (parameters and symbolic initial values)."""
        syms = set(self.recurrence.symbols.values())
        for _, v in self.initial:
            syms |= v.free_symbols
        return {s.name: s for s in syms}

    def _mapping(self, values) -> dict:
        syms = self.symbols
        unknown = set(values) - set(syms)
        if unknown:
            raise UnknownParameterError(
                f"unknown names {sorted(unknown)}; the closed form uses {sorted(syms)}")
        return {syms[k]: to_exact(v, syms) for k, v in values.items()}

    def _n(self, at) -> int:
        if not (isinstance(at, int) or (isinstance(at, sp.Basic) and at.is_Integer)):
            raise ParameterError(f"l must be an integer, got {at!r}")
        if int(at) < self.start:
            raise ParameterError(f"the closed form holds for l >= {self.start}, got l = {at}")
        return int(at) - self.start

    def at(self, index, **values) -> sp.Expr:
        """Exact ``x_index`` with some names replaced by values.

        Each root group is summed exactly: one explicit root by substitution, all roots
        of an irreducible factor ``f`` (radicals, ``CRootOf`` or ``RootSum``) by the
        trace identity ``sum_i G(r_i) / f'(r_i) = [r^(d-1)] (G mod f) / lc(f)``, so the
        result lies in the coefficient field (no radicals are introduced).
        """
        n, mapping = self._n(index), self._mapping(values)
        special = self._on_surface(mapping)
        if special is not None:
            return special[0].at(index, **special[1])
        out = [sp.Add(*[_group_value(g, Hs[c], n, mapping) for g, Hs in self._data])
               for c in range(self.recurrence.dim)]
        out = [sp.cancel(sp.expand(v)) if v.free_symbols else sp.expand(v) for v in out]
        return out[0] if self.recurrence.is_scalar else sp.Matrix(out)

    __call__ = at

    def numeric(self, index, digits: int = 30, **values):
        """``x_index`` from the terms themselves at ``digits`` digits (roots of a RootSum numerically).

        At parameter values where roots that are distinct in general coincide (a
        repeated-root surface, where the generic terms are ``0/0``) the terms of the
        closed form of the substituted recurrence are used: the repeated-root form.
        """
        n, mapping = self._n(index), self._mapping(values)
        special = self._on_surface(mapping)
        if special is not None:
            return special[0].numeric(index, digits, **special[1])
        # terms of close roots are large and cancel: raise the working precision until the
        # digits lost to cancellation (log10 of largest term / sum) leave ``digits`` correct
        work = digits + 15
        for _ in range(7):
            totals, biggest = self._terms_sum(n, mapping, work)
            lost = [sp.log(big / abs(t), 10) if t != 0 else sp.oo for t, big in zip(totals, biggest, strict=True)
                    if big != 0]
            if all(x < work - digits - 5 for x in lost):
                break
            work *= 2
        out = [sp.N(t, digits) for t in totals]
        return out[0] if self.recurrence.is_scalar else sp.Matrix(out)

    def _terms_sum(self, n: int, mapping: dict, work: int) -> list:
        out, sizes = [], []
        for c in range(self.recurrence.dim):
            total, big = sp.S.Zero, sp.S.Zero
            for g, Hs in self._data:
                H = tuple(h.xreplace(mapping) for h in Hs[c])
                if g.factor is None:
                    vals = [g.values[0].xreplace(mapping)]
                elif g.values is not None and not any(v.has(sp.CRootOf) for v in g.values):
                    vals = [sp.N(v.xreplace(mapping), work) for v in g.values]
                else:  # implicit, or CRootOf (slow to evaluate one by one): all roots of f
                    f = sp.Poly(g.factor.as_expr().xreplace(mapping), r)
                    if f.free_symbols - {r}:
                        missing = sorted(map(str, f.free_symbols - {r}))
                        raise ParameterError(f"numeric needs values for {missing}")
                    vals = f.nroots(n=work, maxsteps=500)
                for rho in vals:
                    term = sp.N(mode_term(rho, group_coefficient(g, H, rho, self.start)).xreplace({l: n + self.start}), work)
                    total += term
                    if not term.free_symbols:
                        big = max(big, abs(term))
            if total.free_symbols:
                raise ParameterError(f"numeric needs values for {sorted(map(str, total.free_symbols))}")
            out.append(total)
            sizes.append(big)
        return out, sizes

    def _on_surface(self, mapping: dict):
        """``(closed form at the values, remaining values)`` if every parameter has a value
        and the roots there are fewer than the generic ones; else None."""
        rec = self.recurrence
        given = {k: v for k, v in mapping.items() if k.name in rec.symbols}
        if not rec.params or len(given) < len(rec.params) or any(v.free_symbols for v in given.values()):
            return None
        P = sp.Poly(sp.expand(rec.charpoly().xreplace(given)), r)
        distinct = P.degree() - sp.gcd(P, P.diff(r)).degree()
        generic = sum(g.factor.degree() if g.factor is not None else 1 for g, _ in self._data)
        if distinct >= generic:
            return None
        sub = rec.subs({k.name: v for k, v in given.items()})
        initial = [v.xreplace(given) for _, v in self.initial]
        rest = {k.name: v for k, v in mapping.items() if k not in given}
        return closed_form(sub, initial, start=self.start), rest

    def cases(self) -> tuple:
        """The closed form split at the double-root surface: ``((condition, expr), ...)``.

        Where the discriminant ``D`` of the characteristic polynomial vanishes, two roots
        meet: the first subresultant ``S_1(r)`` of ``P`` and ``P'`` is then their gcd, so
        the double root is ``r_0 = -S_1(0)/S_1'`` (rational in the parameters) and
        ``P = (r - r_0)^2 Q`` there. The first case is the closed form of that polynomial
        (terms ``l r_0^l`` appear), valid where ``D = 0`` and ``r_0 != 0``; the second is
        the generic form, valid where ``D != 0``. Rarer points (a double root at 0,
        a triple root where ``S_1`` drops too) belong to neither case; :meth:`numeric` and
        :meth:`at` handle every point exactly. Without parameters, or when ``D`` is
        constant, there is one case.

        Examples
        --------
        >>> from depthdyn import momentum
        >>> cases = closed_form(momentum()).cases()
        >>> cases[0][0]
        Ne(eta*lam/2 + m/2 + 1/2, 0) & Eq(eta**2*lam**2 + 2*eta*lam*m + 2*eta*lam + m**2 - 2*m + 1, 0)
        >>> closed_form(momentum()).numeric(3, m=0.25, eta=1, lam=-0.25, x_0=1, x_1=1, digits=10)
        0.5000000000
        """
        rec = self.recurrence
        P = sp.Poly(rec.charpoly(), r)
        D = sp.factor(sp.discriminant(P.as_expr(), r)) if P.degree() > 1 else sp.S.One
        if not rec.is_scalar or not D.free_symbols:
            return ((sp.true, self.expr),)
        S1 = [q for q in sp.subresultants(P, P.diff(r)) if q.degree() == 1]
        if not S1:
            return ((sp.true, self.expr),)
        r0 = sp.cancel(-S1[-1].nth(0) / S1[-1].nth(1))
        Q = sp.div(P.as_expr(), sp.expand((r - r0) ** 2), r)[0]
        surface = sp.Poly(sp.expand(sp.cancel(Q * (r - r0) ** 2)), r)
        sub = type(rec)([sp.factor(c) for c in surface.all_coeffs()], rec.params, lam=rec.lam,
                        name=f"{rec.name} (double root)")
        case = closed_form(sub, [v for _, v in self.initial], start=self.start)
        on = sp.Eq(D, 0) if sp.Ne(r0, 0) is sp.true else sp.And(sp.Eq(D, 0), sp.Ne(r0, 0))
        return ((on, case.expr), (sp.Ne(D, 0), self.expr))

    def piecewise(self) -> sp.Piecewise:
        """:meth:`cases` as one :class:`sympy.Piecewise`."""
        return sp.Piecewise(*[(e, c) for c, e in self.cases()])

    def check(self, steps: int = 8, *, seed: int = 0, digits: int = 50) -> bool:
        """Compare with exact iteration at a random rational point, ``l = start .. start+steps``.

        Parameters and symbolic initial values get random rationals (inside each
        parameter's domain). Two comparisons must pass: :meth:`at` against
        :meth:`Recurrence.iterate` exactly (``expand``, then ``simplify``), and the terms
        themselves (:meth:`numeric`, radicals and ``RootOf`` evaluated) to ``digits - 10``
        significant digits.
        """
        rng, rec, syms = random.Random(seed), self.recurrence, self.symbols
        tol = sp.Float(10) ** (10 - digits)
        for _attempt in range(10):
            point = {name: _sample(rec, name, rng) for name in syms}
            try:  # a degenerate point (colliding roots) raises ParameterError: draw again
                sub = rec.subs({k: v for k, v in point.items() if k in rec.symbols})
                at_point = {syms[k]: x for k, x in point.items()}
                seq = sub.iterate([v.xreplace(at_point) for _, v in self.initial], steps)
                exact = [sp.Matrix([self.at(self.start + k, **point)]) for k in range(steps + 1)]
                num = [sp.Matrix([self.numeric(self.start + k, digits, **point)]) for k in range(steps + 1)]
            except ParameterError:
                continue
            for want, a, z in zip(seq, exact, num, strict=True):
                for b, ea, za in zip(sp.Matrix([want]), a, z, strict=True):
                    d = sp.expand(ea - b)
                    if d != 0 and sp.simplify(d) != 0:
                        return False
                    if abs(sp.N(za - b, digits)) > tol * max(1, abs(sp.N(b, digits))):
                        return False
            return True
        raise ParameterError("no regular random point found to check the closed form")

    def _text(self) -> str:
        return f"x_l = {sstr(self.expr)}   [{self.convention}]"

    def _latex(self) -> str:
        return f"x_l = {tex(self.expr)}"


def _sample(rec, name: str, rng: random.Random):
    domain = rec.param(name).domain if name in rec.symbols else sp.S.Reals
    for _ in range(200):
        v = sp.Rational(rng.randint(-40, 40), rng.randint(1, 12))
        if v != 0 and domain.contains(v) is sp.true:
            return v
    return sp.Rational(1, 2) if domain.contains(sp.Rational(1, 2)) is sp.true else sp.Integer(1)


def _poly(expr) -> sp.Poly:
    """``Poly`` in ``r`` over an algebraic field rather than ``EX`` when the coefficients
    hold radicals (``lam = sqrt(2)*I/2``): arithmetic in ``EX`` is many times slower."""
    P = sp.Poly(expr, r)
    return sp.Poly(expr, r, extension=True) if P.domain.is_EX and not P.free_symbols - {r} else P


def _powmod(k: int, f: sp.Poly) -> sp.Poly:
    result, base = sp.Poly(1, r), sp.Poly(r, r).rem(f)
    while k:
        if k & 1:
            result = (result * base).rem(f)
        base, k = (base * base).rem(f), k >> 1
    return result


def _group_value(g: RootGroup, H: tuple, n: int, mapping: dict) -> sp.Expr:
    """The group's contribution to ``x_{start+n}``, exactly."""
    M = g.mult
    js = range(min(n, M - 1) + 1)
    if g.factor is None:
        rho = g.values[0].xreplace(mapping)
        return sp.Add(*[sp.binomial(n, j) * rho ** (n - j) * H[M - 1 - j].xreplace(mapping) for j in js])
    f = _poly(g.factor.as_expr().xreplace(mapping))
    if f.degree() != g.factor.degree():
        raise ParameterError(f"the leading coefficient of {g.factor.as_expr()} vanishes at these values")
    acc = sp.Poly(0, r)
    try:
        for j in js:
            num, den = sp.fraction(sp.cancel(H[M - 1 - j].xreplace(mapping)))
            G = _powmod(n - j, f) * _poly(num) * _poly(den).invert(f)
            acc += G.rem(f) * sp.Integer(sp.binomial(n, j))
    except (NotInvertible, ZeroDivisionError):
        raise ParameterError(
            f"the closed form is singular at these values (roots of {f.as_expr()} collide with others); "
            "substitute them into the recurrence first"
        ) from None
    K = (acc * f.diff(r)).rem(f)
    return K.coeff_monomial(r ** (f.degree() - 1)) / f.LC()


@bounded("closed form")
def closed_form(rec, initial=None, *, start: int = 0, realisation=None, forcing=None) -> ClosedForm:
    """Exact solution ``x_l`` of ``rec`` for given initial data.

    .. math::

        x_l = \\sum_i c_i(l)\\, r_i^l, \\qquad
        c_i(l) = \\sum_{j < m_i} \\binom{l-s}{j} r_i^{-s-j} H_{i, m_i-1-j}

    (see the module docstring); for a simple root ``c_i = N(r_i) / (P'(r_i) r_i^s)``.

    Parameters
    ----------
    rec : Recurrence
        Scalar or matrix coefficients, numeric or symbolic.
    initial : sequence or dict, optional
        Without ``realisation``: the ``p`` values ``x_start, ..., x_{start+p-1}``
        (lists for vector recurrences); default symbols ``x_0, x_1, ...`` (``x_m1`` for
        index -1). With ``realisation``: the state ``s_start`` as a dict by state name or
        a sequence; default symbols named after the states.
    start : int
        Index of the first initial value (or of the state).
    realisation : str or Realisation, optional
        A realisation of :func:`depthdyn.realisations` with ``s_l = T w_{l+shift}``,
        ``w_l = (x_l, ..., x_{l-p+1})``: the state ``s_start`` gives
        ``x_{start+shift-p+1} .. x_{start+shift}`` through ``T^-1``. So
        ``content_velocity`` (``v_0 = x_0 - x_{-1}``, the block convention of 000 §2)
        starts from ``x_{-1}, x_0``; ``content_velocity_forward`` (``v_0 = x_1 - x_0``,
        000 §3) from ``x_0, x_1``; ``difference`` (``q_n = (delta^-)^(n-1) x_0``, 002 §2.2)
        from the ghost values ``x_{-(p-1)} .. x_0``.
    forcing : expr or str, optional
        Right-hand side ``F(l)`` of ``A_0 x_{l+p} + ... + A_p x_l = F(l)``: sums of
        ``polynomial(l) * b**l`` (times ``cos``/``sin(theta*l)``); see
        :func:`depthdyn.symbolic.forced.annihilate`. With a forcing (``0`` too),
        ``initial`` may also be a dict ``{index: value}`` or hold extra values, which are
        checked (:class:`~depthdyn.errors.InconsistentInitialDataError`).

    Returns
    -------
    ClosedForm
        Explicit roots (degree <= 3, or numeric coefficients) give ``sum c_i(l) r_i^l``;
        a factor without radicals gives ``RootSum(f, Lambda(r, r**l c(r)))``. Zero roots
        give ``KroneckerDelta(l, start + j)``. The formula is exact where the root
        structure found is exact: a generic closed form is singular on a surface of
        repeated roots; :meth:`ClosedForm.cases` gives the double-root case with its
        condition, and :meth:`ClosedForm.at` / :meth:`ClosedForm.numeric` switch to the
        repeated-root form at values on such a surface. ``expr.subs(l, k)`` on a symbolic ``RootSum``
        is slow in SymPy: use :meth:`ClosedForm.at`.

    Raises
    ------
    ParameterError, ShapeError, RealisationError
        Wrong initial data or unknown realisation.

    Examples
    --------
    >>> from depthdyn import residual
    >>> closed_form(residual()).expr
    x_0*(lam + 1)**l
    >>> closed_form(residual(), [3], start=2).at(4, lam=1)
    12
    >>> closed_form(residual(lam=1), {0: 1}, forcing="2**l").expr   # resonance: 2 is the root
    2**l*(l/2 + 1)
    """
    if isinstance(start, bool) or not isinstance(start, numbers.Integral):
        raise ParameterError(f"start must be an integer layer index, got {start!r}")
    start = int(start)
    if forcing is not None:
        if realisation is not None:
            raise ParameterError("give the initial data as x values (no realisation) with a forcing")
        rec, initial, start = annihilate(rec, initial, forcing, start=start)  # now homogeneous
    first, vals, convention = initial_data(rec, initial, start, realisation)
    P = sp.Poly(rec.charpoly(), r)
    D, a = P.degree(), P.all_coeffs()
    # each component of a matrix recurrence satisfies the scalar one det(A(r)) of order p*dim
    seqs = [vals] if rec.is_scalar else [list(col) for col in zip(*rec.iterate(vals, D - 1), strict=True)]
    Ns = [sp.Poly(sp.Add(*[sp.Add(*[a[j] * seq[k - j] for j in range(k + 1)]) * r ** (D - 1 - k)
                           for k in range(D)]), r) for seq in seqs]
    groups = root_groups(rec)
    if sum(g.mult * (g.factor.degree() if g.factor else 1) for g in groups) != D:
        raise DegreeTooLargeError(f"could not account for all {D} roots of {P.as_expr()}")
    data = tuple((g, tuple(local_data(P, N, g) for N in Ns)) for g in groups)
    terms, comps = [], [[] for _ in Ns]
    for g, Hs in data:
        implicit = g.values is None
        rhos = [ImplicitRoot(g.factor.as_expr(), i) for i in range(g.factor.degree())] if implicit else g.values
        per_root = [(rho, [group_coefficient(g, H, rho, first) for H in Hs]) for rho in rhos]
        per_root = per_root if implicit else [(rho, [tidy(cf) for cf in cfs]) for rho, cfs in per_root]
        terms += [(rho, g.mult, cfs[0] if rec.is_scalar else sp.ImmutableMatrix(cfs))
                  for rho, cfs in per_root]
        for c, (comp, H) in enumerate(zip(comps, Hs, strict=True)):
            if implicit:  # exact and never a wrong 0: the sum over all roots of the factor
                comp.append(sp.RootSum(g.factor, sp.Lambda(r, mode_term(r, group_coefficient(g, H, r, first)))))
            else:
                comp += [mode_term(rho, cfs[c]) for rho, cfs in per_root]
    exprs = [sp.Add(*comp) for comp in comps]
    expr = exprs[0] if rec.is_scalar else sp.ImmutableMatrix(exprs)
    pairs = tuple((first + k, v if rec.is_scalar else sp.ImmutableMatrix(v)) for k, v in enumerate(vals))
    return ClosedForm(expr, tuple(terms), pairs, convention, first, rec, data)


# ------------------------------------------------------------------ depth limits
@dataclass(frozen=True)
class DepthLimit(Record):
    """``x_L = limit + leading_term + O(L^-(order+1))``, ``leading_term ∝ L^-order``.

    ``order`` is ``None`` when every correction computed (``expansion``: the
    coefficients of ``L^0, L^-1, ...``) vanishes.
    """

    limit: sp.Expr
    leading_term: sp.Expr
    order: int | None
    depth: sp.Symbol
    expansion: tuple

    def _rest(self) -> int:
        return (self.order if self.order is not None else len(self.expansion) - 1) + 1

    def _text(self) -> str:
        lead = "" if self.order is None else f" + ({sstr(self.leading_term)})"
        return f"x_{self.depth} = {sstr(self.limit)}{lead} + O({self.depth}**-{self._rest()})"

    def _latex(self) -> str:
        L = tex(self.depth)
        terms = [self.limit] + ([self.leading_term] if self.order is not None else [])
        return f"x_{{{L}}} = {tex_sum(*terms, f'O({L}^{{-{self._rest()}}})')}"


def _strengthen(rec) -> dict:
    """Parameter symbol -> same name with the sign assumption its domain implies."""
    out = {}
    for p in rec.params:
        if p.domain.is_subset(sp.Interval.open(0, sp.oo)):
            out[p.symbol] = sp.Symbol(p.name, positive=True)
        elif p.domain.is_subset(sp.Interval(0, sp.oo)):
            out[p.symbol] = sp.Symbol(p.name, nonnegative=True)
    return out


def _nice(e: sp.Expr) -> sp.Expr:
    """Expand, write ``exp(i*theta)`` (``theta`` real) as ``cos + i sin``, factor."""
    e = sp.expand(e)
    trig = {a: sp.cos(a.args[0] / sp.I) + sp.I * sp.sin(a.args[0] / sp.I)
            for a in e.atoms(sp.exp) if (a.args[0] / sp.I).is_extended_real}
    return sp.factor(sp.expand(e.xreplace(trig)))


def _mode_series(rho, coef, eps, n: int):
    """``coef * rho^(1/eps)`` as ``sum_k b_k eps^k`` for ``k <= n`` (``rho -> 1``)."""
    cs = sp.expand(sp.series(coef, eps, 0, n + 1).removeO())
    kneg = max([0] + [-t.as_coeff_exponent(eps)[1] for t in sp.Add.make_args(cs)])
    E = sp.expand(sp.series(sp.log(rho), eps, 0, n + kneg + 2).removeO())
    slow = [t for t in sp.Add.make_args(E) if t.has(eps) and t.as_coeff_exponent(eps)[1] < 1]
    if slow:  # log r ~ eps^k with k < 1: r^L ~ exp(c L^(1-k)) grows or turns without a limit
        raise ParameterError(f"a mode tends to 1 only like {slow[0]} with {eps} = 1/L (a power below 1/L), "
                             "so x_L has no limit")
    a1 = E.coeff(eps, 1)
    rest = sp.series(sp.exp(sp.expand(E / eps - a1)), eps, 0, n + kneg + 1).removeO()
    return sp.exp(a1) * sp.expand(rest * cs), kneg


@bounded("depth limit")
def depth_limit(rec, initial=None, *, depth: str = "L", realisation=None, terms: int = 3) -> DepthLimit:
    """``x_L`` as the depth ``L -> oo`` for a family whose coefficients scale with ``1/L``.

    With the closed form ``x_l = sum_i c_i(l) r_i^l`` at ``l = L`` and ``L = 1/eps``,
    each mode is expanded as

    .. math::

        c_i(1/\\varepsilon)\\, r_i^{1/\\varepsilon}
        = c_i \\exp\\Big(\\frac{\\log r_i(\\varepsilon)}{\\varepsilon}\\Big)
        = \\sum_k b_{ik} \\varepsilon^k \\quad (r_i \\to 1),

    modes with ``|r_i| -> rho < 1`` are dropped (exponentially small) and any other
    mode raises. E.g. ``residual(scaled=True)``: ``x_L = e^lam x_0 - lam^2 e^lam x_0/(2L) + ...``.

    Parameters
    ----------
    rec, initial, realisation
        As for :func:`closed_form` (initial data at ``l = 0``); ``rec`` has a parameter
        named ``depth``.
    terms : int
        Corrections ``L^-1 .. L^-terms`` searched for the leading one (doubled once if
        all vanish).

    Raises
    ------
    UnknownParameterError
        ``rec`` has no parameter ``depth``.
    ParameterError
        A mode does not tend to 1 or decay, or ``x_L`` diverges.
    DegreeTooLargeError
        Roots without radicals (the expansion needs explicit roots).
    ShapeError
        Matrix coefficients.

    Examples
    --------
    >>> from depthdyn import residual
    >>> res = depth_limit(residual(scaled=True))
    >>> res.limit, res.leading_term, res.order
    (x_0*exp(lam), -lam**2*x_0*exp(lam)/(2*L), 1)
    """
    if not rec.is_scalar:
        raise ShapeError("depth_limit handles scalar recurrences; take one eigenmode of a matrix family")
    L = rec.param(depth).symbol
    eps = sp.Dummy("eps", positive=True)
    strong = _strengthen(rec)
    back = {v: k for k, v in strong.items()}
    sub = {**strong, L: 1 / eps}
    if any(g.factor is not None and g.factor.degree() > 2 for g in root_groups(rec)):
        # cubics and beyond: expand the roots from the polynomial, never from their radical formulas
        return _from_polynomial(rec, initial, realisation, sub, eps, back, terms)
    cf = closed_form(rec, initial, realisation=realisation)
    for n in (terms, 2 * terms):
        total, kneg = sp.S.Zero, 0
        for rho, _m, coef in cf.terms:
            if isinstance(rho, ImplicitRoot):
                return _from_polynomial(rec, initial, realisation, sub, eps, back, terms)
            if rho.is_zero:
                continue
            rho_e = rho.xreplace(sub)
            r0 = sp.limit(rho_e, eps, 0, "+")
            if r0 == 1:
                try:
                    part, k = _mode_series(rho_e, coef.xreplace(sub).xreplace({l: 1 / eps}), eps, n)
                except (NotImplementedError, sp.PoleError):  # SymPy's series of a radical: from P instead
                    return _from_polynomial(rec, initial, realisation, sub, eps, back, terms)
                total, kneg = total + part, max(kneg, k)
                continue
            small = sp.Abs(r0) < 1
            if small is sp.true:
                continue
            raise ParameterError(
                f"the mode r = {rho} tends to {r0} as {depth} -> oo: "
                + ("x_L has no limit" if small is sp.false else "cannot decide |r| < 1; substitute values")
            )
        total = sp.expand(total)
        found = _result({k: total.coeff(eps, k) for k in range(-kneg, n + 1)}, n, L, back)
        if found is not None:
            return found
    return _result({k: total.coeff(eps, k) for k in range(-kneg, n + 1)}, n, L, back, last=True)


def _by_exp(e: sp.Expr) -> sp.Expr:
    """Expanded, collected by its exponentials (a sum over the roots stays a sum: never factored)."""
    e = sp.expand(e, power_exp=False)
    return sp.collect(e, sorted(e.atoms(sp.exp), key=sp.default_sort_key))


def _result(coeffs: dict, n: int, L, back: dict, last: bool = False, tidy=None) -> DepthLimit | None:
    """The :class:`DepthLimit` from the coefficients of ``eps^k`` (``k <= n``, negative and fractional
    powers included), each through ``tidy`` (default ``_nice``); None when every correction vanishes
    and ``last`` is False (try more terms)."""
    nice = {k: (tidy or _nice)(c) for k, c in coeffs.items()}
    depth = L.name
    bad = sorted(k for k, c in nice.items() if k < 0 and c != 0)
    if bad:
        raise ParameterError(f"x_{depth} diverges like {depth}**{-bad[0]} (coefficient {nice[bad[0]]})")
    odd = sorted(k for k, c in nice.items() if int(k) != k and c != 0)
    series = tuple(nice.get(k, sp.S.Zero).xreplace(back) for k in range(n + 1))
    nonzero = [k for k in range(1, n + 1) if series[k] != 0]
    if odd and (not nonzero or odd[0] < nonzero[0]):
        raise DegreeTooLargeError(f"x_{depth} has a correction in {depth}**(-{odd[0]}), a fractional power; "
                                  "depth_limit gives integer orders")
    if nonzero:
        k = nonzero[0]
        return DepthLimit(series[0], series[k] / L**k, k, L, series)
    return DepthLimit(series[0], sp.S.Zero, None, L, series) if last else None


def _from_polynomial(rec, initial, realisation, sub: dict, eps, back: dict, terms: int) -> DepthLimit:
    """:func:`depth_limit` by Puiseux series of the roots near 1 (:mod:`~depthdyn.symbolic.puiseux`)."""
    P, N, first = scaled_polynomials(rec, initial, realisation, sub)
    L = next(k for k, v in sub.items() if v == 1 / eps)
    for n in (terms, 2 * terms):
        found = _result(expansion(P, N, r, eps, first, n, depth=L.name), n, L, back, last=n == 2 * terms,
                        tidy=_by_exp)
        if found is not None:
            return found
    raise AssertionError("unreachable")  # the last try returns
