"""The modes of a recurrence: its roots grouped by irreducible factor, and the initial data.

:func:`modes` lists the terms ``c(l) r^l`` of every solution; the root groups, the local
expansions at each root and the reading of initial data (``x`` values or a realisation's
state) are shared with :func:`~depthdyn.symbolic.solve.closed_form`, which builds on them.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..budget import bounded
from ..errors import ParameterError, ShapeError
from ..printing import sstr, tex
from ..records import Record
from ..recurrence import l, r, to_exact
from .polynomial import ImplicitRoot
from .polynomial import roots as _roots
from .statespace import realisation as _realisation

__all__ = [
    "Modes",
    "RootGroup",
    "group_coefficient",
    "initial_data",
    "local_data",
    "mode_term",
    "modes",
    "root_groups",
    "tidy",
]


# ----------------------------------------------------------------- root groups
@dataclass(frozen=True)
class RootGroup:
    """All roots of one irreducible factor (``factor``), or one explicit root (``None``)."""

    factor: sp.Poly | None
    values: tuple | None  # explicit root values; None: implicit (RootSum)
    mult: int


def root_groups(rec) -> list[RootGroup]:
    by_factor: dict = {}
    for rt in _roots(rec):
        by_factor.setdefault(rt.factor, []).append(rt)
    out = []
    for fexpr, members in by_factor.items():
        f = sp.Poly(fexpr, r)
        mults = {rt.multiplicity for rt in members}
        if f.degree() > 1 and len(members) == f.degree() and len(mults) == 1:
            vals = tuple(rt.value for rt in members) if members[0].explicit else None
            out.append(RootGroup(f, vals, members[0].multiplicity))
        else:  # linear factor, or radicals that coincide although the factor looked squarefree
            out += [RootGroup(None, (rt.value,), rt.multiplicity) for rt in members]
    return out


def _taylor(poly: sp.Poly, at, count: int, offset: int = 0) -> list:
    """``poly^(offset+k)(at) / (offset+k)!`` for ``k < count``."""
    return [poly.diff((r, offset + k)).as_expr().xreplace({r: at}) / sp.factorial(offset + k)
            for k in range(count)]


def local_data(P: sp.Poly, N: sp.Poly, g: RootGroup) -> tuple:
    """``H_0 .. H_{M-1}``: functions of ``r`` for a factor group, numbers for one root."""
    at = r if g.factor is not None else g.values[0]
    M = g.mult
    den, num = _taylor(P, at, M, offset=M), _taylor(N, at, M)
    H: list = []
    for k in range(M):
        acc = num[k] - sum((den[i] * H[k - i] for i in range(1, k + 1)), sp.S.Zero)
        H.append(sp.cancel(acc / den[0]))
    return tuple(H)


def group_coefficient(g: RootGroup, H: tuple, rho, start: int) -> sp.Expr:
    """Coefficient of ``rho^l`` (for ``rho = 0``: the Kronecker-delta part itself)."""
    M = g.mult
    Hs = [h.xreplace({r: rho}) for h in H] if g.factor is not None else list(H)
    if rho.is_zero:
        return sp.Add(*[Hs[M - 1 - j] * sp.KroneckerDelta(l, start + j) for j in range(M)])
    binom = [sp.expand_func(sp.binomial(l - start, j)) for j in range(M)]
    return sp.Add(*[binom[j] * rho ** (-start - j) * Hs[M - 1 - j] for j in range(M)])


def tidy(e: sp.Expr) -> sp.Expr:
    """Cheap exact tidying of a small coefficient (radicals out of denominators)."""
    if e.has(sp.CRootOf) or sp.count_ops(e) > 120:
        return e
    c = sp.cancel(e)
    if e.is_number and e.has(sp.I):  # radicals of complex numbers: radsimp is slow and never shorter
        return min((e, c), key=sp.count_ops)
    return min((e, c, sp.radsimp(c)), key=sp.count_ops)


def mode_term(rho, coeff):
    return coeff if rho.is_zero else coeff * rho**l


# ----------------------------------------------------------------------- modes
@dataclass(frozen=True)
class Modes(Record):
    """Basis of the general solution: ``l^j r_i^l`` (``j < m_i``), deltas for ``r_i = 0``."""

    roots: tuple  # (root, multiplicity)
    basis: tuple
    constants: tuple
    general_solution: sp.Expr

    def _text(self) -> str:
        return f"x_l = {sstr(self.general_solution)}"

    def _latex(self) -> str:
        return f"x_l = {tex(self.general_solution)}"


@bounded("modes")
def modes(rec, **values) -> Modes:
    """The modes of ``rec`` (with parameter ``values`` substituted, as ``rec.subs(**values)``):
    for each distinct root ``r_i`` of multiplicity ``m_i``

    .. math::

        l^j r_i^l \\quad (j < m_i), \\qquad \\delta_{l,j} \\ (j < m_i) \\text{ if } r_i = 0.

    Implicit roots appear as ``RootOf(factor, i)``. For matrix coefficients these are
    the modes of ``det``; every component is a combination of them.

    Examples
    --------
    >>> from depthdyn import general
    >>> modes(general(rho="r**3 - r**2")).general_solution
    c_1 + c_2*KroneckerDelta(0, l) + c_3*KroneckerDelta(1, l)
    """
    rec = rec.subs(values) if values else rec
    pairs, basis = [], []
    for g in root_groups(rec):
        vals = g.values or tuple(ImplicitRoot(g.factor.as_expr(), i) for i in range(g.factor.degree()))
        for rho in vals:
            pairs.append((rho, g.mult))
            basis += [sp.KroneckerDelta(l, j) if rho.is_zero else l**j * rho**l for j in range(g.mult)]
    consts = sp.symbols(f"c_1:{len(basis) + 1}")
    general = sp.Add(*[c * b for c, b in zip(consts, basis, strict=True)])
    return Modes(tuple(pairs), tuple(basis), tuple(consts), general)


# ------------------------------------------------------------------ initial data
def _sym(stem: str, k: int) -> sp.Symbol:
    return sp.Symbol(f"{stem}_{k if k >= 0 else f'm{-k}'}")


def _value(rec, v):
    if rec.is_scalar and not isinstance(v, (list, tuple, sp.MatrixBase)):
        return to_exact(v, rec.symbols)
    entries = v if isinstance(v, (list, tuple, sp.MatrixBase)) else [v]
    M = sp.Matrix([to_exact(e, rec.symbols) for e in entries])
    if M.shape != (rec.dim, 1):
        raise ShapeError(f"each initial value of {rec.name} must have {rec.dim} entries, got {M.shape[0]}")
    return M[0] if rec.is_scalar else M


def initial_data(rec, initial, start: int, realisation):
    """``(first index, values x_first .. x_{first+p-1}, convention)``."""
    p, n = rec.order, rec.dim
    if realisation is None:
        if initial is None:
            vals = [_sym("x", start + k) if rec.is_scalar else
                    sp.Matrix([_sym(f"x{c + 1}", start + k) for c in range(n)]) for k in range(p)]
        elif isinstance(initial, dict) or len(initial) != p:
            what = "values" if rec.is_scalar else f"states (each a vector of {n} entries)"
            raise ParameterError(
                f"{rec.name} has order {p}: give the {p} {what} x_{start}..x_{start + p - 1} as a sequence, "
                "or name a realisation (realisation='content_velocity', ...) to give a dict of states")
        else:
            vals = [_value(rec, v) for v in initial]
        return start, vals, f"x_{start}..x_{start + p - 1} given; valid for l >= {start}"
    real = realisation if hasattr(realisation, "T") else _realisation(rec, realisation)
    states = real.states
    if initial is None:
        s = [_sym(st if st.isidentifier() else f"s{i + 1}", start) for i, st in enumerate(states)]
    elif isinstance(initial, dict):
        if set(map(str, initial)) != set(states):
            raise ParameterError(
                f"realisation {real.name!r} has the states {list(states)}; got {sorted(map(str, initial))}")
        s = [to_exact(initial[st], rec.symbols) for st in states]
    elif len(initial) == len(states):
        s = [to_exact(v, rec.symbols) for v in initial]
    else:
        raise ParameterError(f"realisation {real.name!r} needs {len(states)} state values {list(states)}")
    w = (real.T.inv() * sp.Matrix(s)).applyfunc(sp.cancel)  # w_{start+shift} = T^-1 s_start
    top = start + real.shift  # block i of w is x_{top-i}
    vals = [w[i * n:(i + 1) * n, 0] for i in reversed(range(p))]
    vals = [v[0] for v in vals] if rec.is_scalar else vals
    return top - p + 1, vals, (
        f"state ({', '.join(states)}) of realisation {real.name!r} at l = {start} ({real.description}) "
        f"-> x_{top - p + 1}..x_{top}; valid for l >= {top - p + 1}")
