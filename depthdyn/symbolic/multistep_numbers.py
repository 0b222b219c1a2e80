"""L-stability of a linear multistep method: where its roots go as ``h lam -> oo``.

A ``k``-step method ``rho(r) - z sigma(r)`` (``z = h lam``) has the characteristic
polynomial ``sum_j (alpha_j - z beta_j) r^j``. Divided by ``z`` it tends to ``-sigma(r)``
as ``|z| -> oo``, so its ``k`` roots tend to the roots of ``sigma`` (a root escapes to
infinity for each degree ``sigma`` lacks, e.g. every root of an explicit method's
``beta_k = 0``). The method damps infinitely stiff modes in one step (``R(oo) = 0`` of a
one-step method) iff every root tends to 0, i.e. ``sigma(r) = beta_k r^k`` with
``beta_k != 0``. L-stable: A-stable and that. Decided on the exact coefficients of
``sigma``. Source: Hairer & Wanner II, §IV.3 (L-stability) and §V.1 (stiff decay of
multistep methods: the roots at ``z = oo`` are those of ``sigma``); BDF1 and BDF2 are
L-stable, the trapezoidal rule (``|R(oo)| = 1``) is not.
"""

from __future__ import annotations

import sympy as sp

__all__ = ["damps_at_infinity", "multistep_l_stable"]


def damps_at_infinity(beta) -> bool:
    """Every root of ``rho - z sigma`` tends to 0 as ``|z| -> oo``: ``sigma = beta_k r^k``, ``beta_k != 0``.

    Parameters
    ----------
    beta : sequence
        The exact coefficients ``beta_0, ..., beta_k`` of ``sigma`` (lowest power first),
        ``k`` the number of steps.

    Examples
    --------
    >>> damps_at_infinity([0, 0, sp.Rational(2, 3)])                 # BDF2: sigma = 2/3 r^2
    True
    >>> damps_at_infinity([sp.Rational(1, 2), sp.Rational(1, 2)])    # trapezoidal: root -> -1
    False
    >>> damps_at_infinity([1, 0])                                     # forward Euler: root -> oo
    False
    """
    beta = [sp.sympify(c, strict=True) for c in beta]
    return bool(beta) and all(c == 0 for c in beta[:-1]) and beta[-1] != 0


def multistep_l_stable(a_stable: bool, beta) -> bool:
    """L-stability of a ``k``-step method: ``a_stable`` and :func:`damps_at_infinity` of ``beta``.

    Examples
    --------
    >>> multistep_l_stable(True, [0, 0, sp.Rational(2, 3)]), multistep_l_stable(False, [0, 0, 0, 1])
    (True, False)
    """
    return bool(a_stable) and damps_at_infinity(beta)
