"""Order of a Runge-Kutta tableau from Butcher's order conditions, in exact arithmetic.

A tableau ``(A, b)`` (``c = A 1``) has order ``p`` iff for every rooted tree ``t`` with
``|t| <= p`` nodes the elementary weight equals ``1 / gamma(t)``:

.. math::

    \\Phi(t) = b^T g(t), \\quad g(\\tau) = \\mathbb{1}, \\quad
    g([t_1, \\dots, t_m]) = \\prod_k A\\, g(t_k) \\ (\\text{entrywise}), \\qquad
    \\gamma([t_1, \\dots, t_m]) = |t| \\prod_k \\gamma(t_k).

Trees are generated, not listed (1, 1, 2, 4, 9, 20, 48 of orders 1..7), and each
condition is decided exactly: entries may be rationals or radicals (``sqrt(3)`` in SDIRK
and Gauss tableaux); a difference is zero iff its minimal polynomial is ``x``. No
``s``-stage tableau has order above ``2s``, no explicit one above ``s`` (the tall tree of
``s + 1`` nodes has weight ``b^T A^(s-1) c = 0``), so checking the trees up to that bound
gives the order itself, not a lower bound.

Float entries are read as the decimals they print as and each condition is then met to a
tolerance: ``|Phi(t) - 1/gamma(t)| <= tol * max(1, |Phi|(t))``, ``|Phi|`` the weight of
``(|A|, |b|)`` (the size the entries' rounding scales with), ``tol = 1e-12`` unless given.
Source: Butcher, *Numerical Methods for Ordinary Differential Equations* (2016), §31;
Hairer, Norsett & Wanner I, §II.2 (the conditions; Table 2.2 lists those up to order 4).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
import sympy as sp

from ..errors import ParameterError, ShapeError
from ..recurrence import to_exact

__all__ = ["rooted_trees", "TableauOrder", "tableau_order", "runge_kutta_tableau",
           "recurrence_tableau_order"]

_X = sp.Dummy("x")
# float entries: a residue this small is the entries' rounding, not a failed condition
_FLOAT_TOL = 1e-12
# what runge_kutta writes in the description: "Runge-Kutta block (LABEL): x' = R(h lam) x"
_RK_PREFIX, _RK_SUFFIX = "Runge-Kutta block (", "): x' = R(h lam) x"


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


def _has_float(value) -> bool:
    """Whether a tableau (nested lists, arrays, matrices) holds a float anywhere; text is exact."""
    if isinstance(value, (float, np.floating, sp.Float)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind == "f" or (value.dtype.kind == "O" and any(map(_has_float, value.ravel())))
    if isinstance(value, sp.MatrixBase):
        return any(v.has(sp.Float) for v in value)
    if isinstance(value, (list, tuple)):
        return any(map(_has_float, value))
    return isinstance(value, sp.Basic) and value.has(sp.Float)


def _tolerance(tol, floats: bool):
    """``None`` (exact) or the tolerance as an exact non-negative number."""
    if tol is None:
        return sp.Float(_FLOAT_TOL) if floats else None
    if isinstance(tol, bool) or not isinstance(tol, (int, float, np.floating, sp.Rational, sp.Float)) or \
            not np.isfinite(float(tol)) or tol < 0:
        raise ParameterError(f"tol must be a finite number >= 0 (0: exact), got {tol!r}")
    return sp.Float(tol) if tol else None


@dataclass(frozen=True)
class TableauOrder:
    """``order``: the largest ``p <= max_order`` with all conditions met; ``first_failure``:
    the first tree (nested tuples) whose condition fails, ``None`` when all up to ``max_order``
    hold; ``residual``: ``Phi - 1/gamma`` there. ``bound``: the order no tableau of this shape
    exceeds (``s`` explicit, ``2s`` otherwise), so all conditions met up to it give the order
    exactly. ``tolerance``: ``None`` when every condition was decided exactly, else the
    tolerance they were met to (float entries)."""

    order: int
    max_order: int
    first_failure: tuple | None
    residual: sp.Expr | None
    bound: int | None = None
    tolerance: float | None = None

    @property
    def at_least(self) -> bool:
        """The order is only a lower bound: all conditions checked hold, below ``bound``."""
        return self.first_failure is None and (self.bound is None or self.order < self.bound)


def tableau_order(A, b, max_order: int | None = None, *, tol=None) -> TableauOrder:
    """Order of the Runge-Kutta tableau ``(A, b)`` by the order conditions of all trees up to ``max_order``.

    Parameters
    ----------
    A, b : nested sequences, arrays or matrices
        The Butcher tableau (``s x s`` and ``s`` entries; ``c = A 1``), exact numbers,
        text (read exactly) or floats.
    max_order : int, optional
        Check trees up to this many nodes (1..8). By default up to the order bound of the
        tableau's shape (``s`` explicit, ``2s`` otherwise; at most 8), so that the order
        found is exact whenever that bound is at most 8.
    tol : float, optional
        Decide each condition to ``|Phi(t) - 1/gamma(t)| <= tol * max(1, |Phi|(t))``
        instead of exactly. Default: exact for exact entries; ``1e-12`` when an entry is a
        float (read as the decimal it prints as, so ``2/3`` in float64 is off by ``3e-17``).

    Returns
    -------
    TableauOrder

    Raises
    ------
    ShapeError
        ``A`` not square or ``b`` of another length.
    ParameterError
        Symbols in the tableau, ``max_order`` outside 1..8, a negative or non-finite ``tol``.

    Examples
    --------
    >>> h = sp.Rational(1, 2)
    >>> tableau_order([[0, 0], [h, 0]], [0, 1]).order      # explicit midpoint
    2
    >>> tableau_order([[0, 0], [1, 0]], [h, h]).order      # Heun
    2
    >>> tableau_order([[h]], [1]).order                     # implicit midpoint
    2
    >>> found = tableau_order([[0, 0], [2 / 3, 0]], [0.25, 0.75])   # Ralston, in floats
    >>> found.order, found.tolerance, tableau_order([[0, 0], [2 / 3, 0]], [0.25, 0.75], tol=0).order
    (2, 1e-12, 1)
    """
    if max_order is not None and (isinstance(max_order, bool) or not isinstance(max_order, int)
                                  or not 1 <= max_order <= 8):
        raise ParameterError(f"max_order must be an integer in 1..8, got {max_order!r}")
    tolerance = _tolerance(tol, _has_float(A) or _has_float(b))
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
    explicit = all(A[i, j] == 0 for i in range(s) for j in range(i, s))
    bound = s if explicit else 2 * s
    top = min(bound, 8) if max_order is None else min(max_order, bound)

    def weights(A, b):
        memo: dict = {}

        def g(t):
            if t not in memo:
                v = sp.ones(s, 1)
                for c in t:
                    v = v.multiply_elementwise(A * g(c))
                memo[t] = v.applyfunc(sp.expand)
            return memo[t]

        return lambda t: (b.T * g(t))[0, 0]

    phi = weights(A, b)
    size = weights(A.applyfunc(abs), b.applyfunc(abs)) if tolerance is not None else None

    def met(t, res) -> bool:
        if tolerance is None:
            return _is_zero(res)
        scale = max(sp.Integer(1), sp.N(size(t), 30))
        return bool(sp.N(abs(res), 30) <= tolerance * scale)

    tol_out = None if tolerance is None else float(tolerance)
    for n in range(1, top + 1):
        for t in rooted_trees(n):
            res = sp.expand(phi(t) - sp.Rational(1, _gamma(t)))
            if not met(t, res):
                return TableauOrder(n - 1, top, t, sp.radsimp(res), bound, tol_out)
    return TableauOrder(top, top, None, None, bound, tol_out)


def runge_kutta_tableau(rec) -> tuple | None:
    """The Butcher tableau ``(A, b)`` a Runge-Kutta block was built from, ``None`` for any other recurrence.

    :func:`~depthdyn.families.runge_kutta` (and ``rk2``, ``rk4``) name the tableau in the
    description: a name of :data:`~depthdyn.families.literature.TABLEAUX`, or the entries
    of a tableau given by ``A`` and ``b``, exactly as read.

    Examples
    --------
    >>> from depthdyn.families import runge_kutta
    >>> runge_kutta(A=[[0, 0], ["2/3", 0]], b=["1/4", "3/4"]).description
    "Runge-Kutta block (A = [[0, 0], [2/3, 0]], b = [1/4, 3/4]): x' = R(h lam) x"
    >>> runge_kutta_tableau(runge_kutta(A=[[0, 0], ["2/3", 0]], b=["1/4", "3/4"]))
    ([[0, 0], [2/3, 0]], [1/4, 3/4])
    """
    from ..errors import DepthdynError
    from ..families.literature import TABLEAUX
    from ..parse import parse_value

    text = getattr(rec, "description", "")
    if not (isinstance(text, str) and text.startswith(_RK_PREFIX) and text.endswith(_RK_SUFFIX)):
        return None
    if not (rec.is_scalar and rec.order == 1):
        return None
    label = text[len(_RK_PREFIX):-len(_RK_SUFFIX)]
    if label in TABLEAUX:
        return TABLEAUX[label]
    a_text, sep, b_text = label.removeprefix("A = ").rpartition(", b = ")
    if not sep or not label.startswith("A = "):
        return None
    try:
        A, b = parse_value(a_text), parse_value(b_text)
    except DepthdynError:
        return None
    return (A, b) if isinstance(A, list) and isinstance(b, list) else None


def recurrence_tableau_order(rec) -> int | None:
    """The order of a Runge-Kutta block's own tableau (:func:`runge_kutta_tableau`, :func:`tableau_order`).

    ``None`` for a recurrence that is not such a block, and when all conditions up to
    order 8 hold below the tableau's order bound (the order is then at least 8).
    """
    tab = runge_kutta_tableau(rec)
    if tab is None:
        return None
    found = tableau_order(*tab)
    return None if found.at_least else found.order
