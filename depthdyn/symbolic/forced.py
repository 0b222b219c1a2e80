"""Forced recurrences ``A_0 x_{l+p} + ... + A_p x_l = F(l)`` solved exactly.

A forcing ``F(l) = sum_k P_k(l) b_k^l`` (``P_k`` polynomials, and ``cos``/``sin(theta l)``
times such terms) is annihilated by ``A(r) = prod_k (r - b_k)^(deg P_k + 1)`` (for
``b^l cos(theta l)`` the real factor ``r^2 - 2 b cos(theta) r + b^2``). So ``x`` solves
the homogeneous recurrence with characteristic polynomial ``P(r) A(r)``, and its first
``deg(P A)`` values, computed by iterating the forced recurrence, fix it: the closed form
is :func:`~depthdyn.closed_form` of that recurrence. Resonance (``b_k`` a root of ``P``)
is a repeated root there and is handled exactly by the same machinery.

Initial data may hold more values than the order; the extra ones are checked against
the recurrence, and :class:`~depthdyn.errors.InconsistentInitialDataError` says which
one contradicts it.
"""

from __future__ import annotations

import sympy as sp

from ..errors import InconsistentInitialDataError, ParameterError, ShapeError
from ..parse import free_names, parse_expr
from ..recurrence import Recurrence, l, r, to_exact

__all__ = ["annihilate", "annihilator", "parse_forcing"]


def parse_forcing(forcing, rec) -> sp.Expr:
    """The forcing as a SymPy expression in the layer index ``l`` (strings parsed safely)."""
    if isinstance(forcing, str):
        names = {"l": l, **rec.symbols}
        unknown = free_names(forcing) - set(names)
        if unknown:
            raise ParameterError(f"the forcing uses unknown names {sorted(unknown)}; "
                                 f"allowed: l and the parameters {list(rec.param_names)}")
        return parse_expr(forcing, names)
    expr = to_exact(forcing, rec.symbols)
    rename = {s: l for s in expr.free_symbols if s.name == "l" and s != l}
    rename.update({s: rec.symbols[s.name] for s in expr.free_symbols if s.name in rec.symbols})
    return expr.xreplace(rename)


def _linear(arg: sp.Expr, l, what: str) -> tuple[sp.Expr, sp.Expr]:
    try:
        poly = sp.Poly(sp.expand(arg), l)
    except sp.PolynomialError:
        poly = None
    if poly is None or poly.degree() > 1:
        raise ParameterError(f"{what} must be linear in l, got {arg}")
    return poly.coeff_monomial(l), poly.coeff_monomial(1)


def _term(term: sp.Expr, l) -> tuple[sp.Poly, int]:
    """``(factor, degree)``: the factor of the annihilator for one term and the polynomial degree."""
    base, trig, rest = sp.Integer(1), None, []
    for f in sp.Mul.make_args(term):
        if not f.has(l):
            rest.append(f)
        elif f.is_Pow and f.exp.has(l) and not f.base.has(l):
            a, c = _linear(f.exp, l, f"the exponent of {f}")
            base, rest = base * f.base**a, rest + [f.base**c]
        elif isinstance(f, sp.exp):
            a, c = _linear(f.args[0], l, f"the argument of {f}")
            base, rest = base * sp.exp(a), rest + [sp.exp(c)]
        elif isinstance(f, (sp.cos, sp.sin)):
            if trig is not None:
                raise ParameterError(f"one cos/sin factor per term, got {term}; expand products first")
            trig = _linear(f.args[0], l, f"the argument of {f}")[0]
        else:
            rest.append(f)
    poly = sp.Mul(*rest)
    try:
        deg = sp.Poly(poly, l).degree()
    except sp.PolynomialError:
        deg = None
    if deg is None or poly.has(sp.Function) and any(a.has(l) for a in poly.atoms(sp.Function)):
        raise ParameterError(
            f"cannot annihilate {term}: forcing terms must be polynomial(l) * b**l (times cos/sin(theta*l))")
    base = sp.simplify(base)
    if trig is None:
        return sp.Poly(r - base, r), deg
    return sp.Poly(r**2 - 2 * base * sp.cos(trig) * r + base**2, r), deg


def annihilator(forcing: sp.Expr) -> sp.Poly:
    """The polynomial ``A(r)`` whose recurrence annihilates ``forcing(l)`` (monic factors).

    Examples
    --------
    >>> from depthdyn.symbolic.solve import l
    >>> annihilator(l**2 + 3 * 2**l).as_expr().factor()
    (r - 2)*(r - 1)**3
    """
    degrees: dict = {}
    for term in sp.Add.make_args(sp.expand(forcing)):
        if term == 0:
            continue
        fac, deg = _term(term, l)
        key = fac.as_expr()
        degrees[key] = max(degrees.get(key, -1), deg)
    A = sp.Poly(1, r)
    for fac, deg in degrees.items():
        A *= sp.Poly(fac, r) ** (deg + 1)
    return A


def _value(rec, v) -> sp.Expr:
    """An exact value; plain symbols named like parameters become those parameters."""
    expr = to_exact(v, rec.symbols)
    return expr.xreplace({s: rec.symbols[s.name] for s in expr.free_symbols if s.name in rec.symbols})


def _data(rec, initial, start: int) -> tuple[int, list]:
    """``(first index, values)`` from a sequence or a dict ``{index: value}`` (consecutive)."""
    if initial is None:
        return start, [sp.Symbol(f"x_{start + k}") for k in range(rec.order)]
    if isinstance(initial, dict):
        try:
            keys = sorted(int(k) for k in initial)
        except (TypeError, ValueError):
            raise ParameterError(f"initial data keys must be layer indices, got {list(initial)}") from None
        if keys != list(range(keys[0], keys[0] + len(keys))):
            raise ParameterError(f"initial data must be at consecutive layers, got {keys}")
        return keys[0], [_value(rec, initial[k] if k in initial else initial[str(k)]) for k in keys]
    vals = [_value(rec, v) for v in initial]
    return start, vals


def annihilate(rec, initial=None, forcing=0, *, start: int = 0) -> tuple[Recurrence, list, int]:
    """Reduce ``A_0 x_{l+p} + ... + A_p x_l = F(l)`` (``l >= start``) to a homogeneous problem.

    The forcing's annihilator ``A(r)`` (:func:`annihilator`) multiplies the characteristic
    polynomial; the forced recurrence, iterated from the initial values, gives the extra
    initial values the augmented (homogeneous) recurrence needs. Its closed form,
    :func:`depthdyn.closed_form`, is the solution of the forced one; ``closed_form(rec,
    initial, forcing=F)`` does exactly this.

    Parameters
    ----------
    rec : Recurrence
        Scalar recurrence.
    initial : sequence or dict, optional
        ``x_start, x_start+1, ...`` (at least ``p`` values; extra ones are checked) or a
        dict ``{index: value}`` at consecutive indices (the first index is the start).
        Default: symbols ``x_start .. x_{start+p-1}``.
    forcing : expr or str
        ``F(l)``: sums of ``polynomial(l) * b**l``, optionally times ``cos``/``sin`` of
        ``theta*l + c``, in the layer index ``l`` and the recurrence's parameters.

    Returns
    -------
    (Recurrence, list, int)
        The homogeneous recurrence (``rec`` itself for ``F = 0``), its initial values and
        the index of the first one.

    Raises
    ------
    InconsistentInitialDataError
        An extra initial value contradicts the recurrence.
    ParameterError, ShapeError
        A forcing that is not of the supported form, too few values, a matrix recurrence.

    Examples
    --------
    >>> from depthdyn import from_coefficients
    >>> rec = from_coefficients([1, -1])          # x_{l+1} - x_l = F(l)
    >>> hom, values, first = annihilate(rec, [0], "l")
    >>> sp.factor(hom.charpoly()), values, first  # resonance at r = 1: a triple root
    ((r - 1)**3, [0, 0, 1], 0)
    """
    if not rec.is_scalar:
        raise ShapeError("forced recurrences are solved for scalar recurrences (one eigenmode)")
    F = parse_forcing(forcing, rec)
    stray = F.free_symbols - {l} - set(rec.symbols.values())
    if stray:
        raise ParameterError(f"the forcing uses {sorted(map(str, stray))}, which are neither l nor parameters")
    first, vals = _data(rec, initial, start)
    p = rec.order
    if len(vals) < p:
        raise ParameterError(f"{rec.name} has order {p}: give at least {p} initial values, got {len(vals)}")
    A = annihilator(F)
    a = [rec.coeffs[j][0, 0] for j in range(p + 1)]
    aug = sp.Poly(rec.charpoly(), r) * A
    total = aug.degree()
    seq = list(vals[:p])
    while len(seq) < max(total, len(vals)):
        n = first + len(seq) - p  # x_{n+p} from x_n .. x_{n+p-1}
        rhs = F.xreplace({l: n}) - sum(a[j] * seq[-j] for j in range(1, p + 1))
        seq.append(sp.cancel(rhs / a[0]))
    for k in range(p, len(vals)):
        if sp.simplify(seq[k] - vals[k]) != 0:
            raise InconsistentInitialDataError(
                f"x_{first + k} = {vals[k]} contradicts the recurrence, which gives x_{first + k} = {seq[k]} "
                f"from the earlier values; give {p} value(s) or consistent ones")
    hom = Recurrence(coeffs=tuple(aug.all_coeffs()), params=rec.params, lam=rec.lam,
                     name=f"{rec.name} (forced)",
                     description=f"{rec.name} with forcing F(l) = {F}, annihilated by {A.as_expr()}",
                     source=rec.source)
    if total == p:  # no forcing
        return rec, seq[:p], first
    return hom, seq[:total], first
