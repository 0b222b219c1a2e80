"""Whether two recurrences are the same model: a rule-derived one against a hand-derived one."""

from __future__ import annotations

import sympy as sp

from ..recurrence import Recurrence, r

__all__ = ["differences"]


def _plain(expr: sp.Expr) -> sp.Expr:
    """Parameters as assumption-free symbols, so that equal names are equal symbols."""
    return expr.xreplace({s: sp.Symbol(s.name) for s in expr.free_symbols})


def differences(a: Recurrence, b: Recurrence) -> list[str]:
    """What differs between ``a`` and ``b``; empty when they are the same model.

    Compared: the characteristic polynomials up to a unit (a factor free of ``r``, not
    zero), the realisation dimension ``order * dim``, and the parameters with their domains.

    Examples
    --------
    >>> from depthdyn import momentum, from_rule
    >>> differences(from_rule("v' = m*v + eta*f(x); x' = x + v'"), momentum())
    ['parameter domains differ: eta: Reals != Interval(0, oo); m: Reals != Interval.Ropen(0, 1)']
    """
    out = []
    if a.order * a.dim != b.order * b.dim:
        out.append(f"realisation dimension {a.order * a.dim} != {b.order * b.dim}")
    pa, pb = (sp.Poly(_plain(sp.expand(x.charpoly())), r) for x in (a, b))
    if pa.degree() != pb.degree():
        out.append(f"charpoly degree {pa.degree()} != {pb.degree()}")
    else:
        la, lb = pa.LC(), pb.LC()
        bad = [j for j, (ca, cb) in enumerate(zip(pa.all_coeffs(), pb.all_coeffs(), strict=True))
               if sp.expand(ca * lb - cb * la) != 0]
        if bad:
            out.append(f"charpolys differ beyond a unit: {pa.as_expr()} vs {pb.as_expr()}")
    da = {p.name: p.domain for p in a.params}
    db = {p.name: p.domain for p in b.params}
    if set(da) != set(db):
        out.append(f"parameters differ: {sorted(da)} != {sorted(db)}")
    else:
        wrong = [f"{k}: {da[k]} != {db[k]}" for k in sorted(da) if da[k] != db[k]]
        if wrong:
            out.append("parameter domains differ: " + "; ".join(wrong))
    return out
