"""Order of a Runge-Kutta tableau from Butcher's order conditions, in exact arithmetic.

A tableau ``(A, b)`` (``c = A 1``) has order ``p`` iff for every rooted tree ``t`` with
``|t| <= p`` nodes the elementary weight equals ``1 / gamma(t)``:

.. math::

    \\Phi(t) = b^T g(t), \\quad g(\\tau) = \\mathbb{1}, \\quad
    g([t_1, \\dots, t_m]) = \\prod_k A\\, g(t_k) \\ (\\text{entrywise}), \\qquad
    \\gamma([t_1, \\dots, t_m]) = |t| \\prod_k \\gamma(t_k).

Trees are generated, not listed (1, 1, 2, 4, 9, 20, 48 of orders 1..7), and each
condition is decided exactly: entries may be rationals or radicals (``sqrt(3)`` in SDIRK
and Gauss tableaux); a difference is zero iff its minimal polynomial is ``x``. Source:
Butcher, *Numerical Methods for Ordinary Differential Equations* (2016), §31;
Hairer, Norsett & Wanner I, §II.2.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import sympy as sp

from ..errors import ParameterError, ShapeError
from ..recurrence import to_exact

__all__ = ["rooted_trees", "TableauOrder", "tableau_order"]

_X = sp.Dummy("x")


@cache
def rooted_trees(n: int) -> tuple:
    """Rooted trees with ``n`` nodes, each a sorted tuple of its subtrees (``()`` is the one-node tree)."""
    if n < 1:
        return ()
    if n == 1:
        return ((),)
    out = set()
    for forest in _forests(n - 1, n - 1):
        out.add(tuple(sorted(forest)))
    return tuple(sorted(out, key=repr))


def _forests(total: int, largest: int) -> list:
    """Multisets of trees with ``total`` nodes in all, each tree at most ``largest`` nodes."""
    if total == 0:
        return [()]
    out = []
    for k in range(min(total, largest), 0, -1):
        for t in rooted_trees(k):
            for rest in _forests(total - k, k):
                if rest and _size(rest[0]) == k and repr(rest[0]) < repr(t):
                    continue  # keep equal-size trees in one order: no duplicate multisets
                out.append((t,) + rest)
    return out


def _size(t: tuple) -> int:
    return 1 + sum(_size(c) for c in t)


def _gamma(t: tuple) -> int:
    out = _size(t)
    for c in t:
        out *= _gamma(c)
    return out


def _is_zero(e: sp.Expr) -> bool:
    e = sp.radsimp(sp.expand(e))
    if e == 0:
        return True
    if e.is_Rational:
        return False
    return sp.minimal_polynomial(e, _X) == _X


@dataclass(frozen=True)
class TableauOrder:
    """``order``: the largest ``p <= max_order`` with all conditions met; ``first_failure``:
    the first tree (nested tuples) whose condition fails, ``None`` when all up to ``max_order``
    hold (the order is then at least ``max_order``); ``residual``: ``Phi - 1/gamma`` there."""

    order: int
    max_order: int
    first_failure: tuple | None
    residual: sp.Expr | None

    @property
    def at_least(self) -> bool:
        return self.first_failure is None


def tableau_order(A, b, max_order: int = 6) -> TableauOrder:
    """Order of the Runge-Kutta tableau ``(A, b)`` by the order conditions of all trees up to ``max_order``.

    Examples
    --------
    >>> h = sp.Rational(1, 2)
    >>> tableau_order([[0, 0], [h, 0]], [0, 1]).order      # explicit midpoint
    2
    >>> tableau_order([[0, 0], [1, 0]], [h, h]).order      # Heun
    2
    >>> tableau_order([[h]], [1]).order                     # implicit midpoint
    2
    """
    if isinstance(max_order, bool) or not isinstance(max_order, int) or not 1 <= max_order <= 8:
        raise ParameterError(f"max_order must be an integer in 1..8, got {max_order!r}")
    try:
        A = sp.Matrix([[to_exact(v) for v in row] for row in A])
        b = sp.Matrix([to_exact(v) for v in b])
    except (TypeError, ValueError) as exc:
        raise ShapeError(f"a Butcher tableau needs a square list of rows A and a list b: {exc}") from None
    s = A.shape[0]
    if A.shape != (s, s) or b.shape != (s, 1):
        raise ShapeError(f"a Butcher tableau needs a square A and len(b) = {s}, got {A.shape}, {b.shape}")
    if A.free_symbols or b.free_symbols:
        raise ParameterError("the Butcher tableau must have numeric entries")
    memo: dict = {}

    def g(t):
        if t not in memo:
            v = sp.ones(s, 1)
            for c in t:
                v = v.multiply_elementwise(A * g(c))
            memo[t] = v.applyfunc(sp.expand)
        return memo[t]

    for n in range(1, max_order + 1):
        for t in rooted_trees(n):
            res = sp.expand((b.T * g(t))[0, 0] - sp.Rational(1, _gamma(t)))
            if not _is_zero(res):
                return TableauOrder(n - 1, max_order, t, sp.radsimp(res))
    return TableauOrder(max_order, max_order, None, None)
