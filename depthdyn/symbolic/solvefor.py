"""``solve_for``: the exact set of one parameter where stability conditions hold.

The front door over :mod:`depthdyn.symbolic.intervals` (exact points and sets of one real
variable) and :mod:`depthdyn.symbolic.forall` (conditions that must hold for every value of a
second parameter), which both build on the former.
"""

from __future__ import annotations

import sympy as sp

from ..budget import bounded
from ..errors import ParameterError, UnknownParameterError
from ..recurrence import REALS, to_exact
from .intervals import IntervalUnion, conditions_of, holding_set, real_domain, widened

__all__ = ["solve_for"]


@bounded("solving for a parameter")
def solve_for(conditions_or_rec, param: str, *, domain=None, for_all=None, **values) -> IntervalUnion:
    """The set of real ``param`` values where all conditions hold, as an exact union of intervals.

    Parameters
    ----------
    conditions_or_rec : StabilityConditions, Relational, iterable of them, or Recurrence
        Conditions such as ``g(x) > 0`` with ``g`` polynomial or rational in ``param``
        once ``values`` are substituted. A :class:`~depthdyn.Recurrence` stands for its
        strict stability conditions (``stability_conditions(rec.subs(values))``, ``lam``
        real) and its parameter's domain.
    param : str
        The parameter to solve for (every other symbol needs a value).
    domain : sympy.Interval, optional
        Restrict ``param`` to this set (default: the parameter's domain for a recurrence,
        else the real line).
    for_all : dict, optional
        ``{name: interval}``: the conditions must hold for every value of that other
        parameter in the interval (a :class:`sympy.Interval` or ``(lo, hi)``, closed),
        e.g. ``for_all={"lam": sympy.Interval.Ropen(-4, 0)}``. The answer changes only
        at the real roots (in ``param``) of each condition at the interval's ends, of its
        leading coefficient and discriminant in the other parameter, and of the pairwise
        resultants; each gap and each rational root is decided exactly by solving for the
        other parameter there. An irrational root is decided by openness when the
        interval is compact (strict conditions on a compact set hold on an open set, so
        it is good iff its neighbours are and no condition vanishes there, decided with
        the norm ``Res_x(q, g)`` of its minimal polynomial ``q``); otherwise it raises.
    **values
        Exact values of the other symbols.

    Returns
    -------
    IntervalUnion
        Disjoint intervals with exact endpoints; redundant bounds never appear.

    Raises
    ------
    ParameterError
        A condition is not rational in ``param`` or other symbols lack values.

    Examples
    --------
    >>> import sympy as sp
    >>> K = sp.Symbol("K", real=True)
    >>> print(solve_for([K > 0, 6321 - 2642*K > 0, 27358 - 1037*K > 0], "K"))
    K in (0, 6321/2642)
    >>> print(solve_for([K**2 - 2 > 0, K < 3], "K"))
    K in (-oo, -sqrt(2)) U (sqrt(2), 3)
    """
    from ..recurrence import Recurrence
    from .stability import stability_conditions

    if isinstance(conditions_or_rec, Recurrence):
        rec = conditions_or_rec.subs(values) if values else conditions_or_rec
        if param not in rec.param_names:
            raise UnknownParameterError(f"{rec.name} has no free parameter {param!r}; left: {list(rec.param_names)}")
        if for_all is not None and not isinstance(for_all, dict):
            raise ParameterError(f"for_all must be {{name: interval}}, got {for_all!r}")
        if for_all:
            from .forall import solve_for_all

            return solve_for_all(rec, param, domain, for_all, solve_for)  # it solves inner problems with it
        if len(rec.params) > 1:
            left = [p for p in rec.param_names if p != param]
            raise ParameterError(f"give values for {left} to solve for {param}")
        dom = rec.param(param).domain.intersect(REALS) if domain is None else real_domain(param, domain)
        rec = widened(rec, param, dom)
        sc = stability_conditions(rec, lam="real")
        conds, values = conditions_of(sc), {}
        x = next((s for s, _ in sc.domains if s.name == param), sp.Symbol(param, real=True))
    else:
        conds, dom = conditions_of(conditions_or_rec), domain
        syms = set().union(*(getattr(c, "free_symbols", set()) for c in conds))
        named = {s.name: s for s in syms}
        x = named.get(param, sp.Symbol(param, real=True))
        if values:
            sub = {named[k]: to_exact(v) for k, v in values.items() if k in named}
            unknown = set(values) - set(named)
            if unknown:
                raise UnknownParameterError(f"the conditions do not use {sorted(unknown)}")
            conds = [c.subs(sub) for c in conds]
    return holding_set(conds, x, dom, param)
