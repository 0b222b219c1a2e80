"""Characteristic polynomials of matrix recurrences, using their structure.

A first-order matrix recurrence ``x_{l+1} = M x_l`` has ``det(r I - M)``. Expanding that
determinant with symbolic entries (Berkowitz on a SymPy ``Matrix``) is what made 8
entangled features or 4 hyper-connection streams slow; the structure of the families
makes it cheap:

* ``M = G + lam I`` (entangled maps): ``det(r I - M) = chi_G(r - lam)``, so the
  characteristic polynomial ``chi_G`` of ``G`` is computed once, without ``lam``, and
  shifted;
* ``M = G + lam u v^T`` (hyper-connections, a rank-one update in ``lam``): the matrix
  determinant lemma in polynomial form,
  ``det(r I - G - lam u v^T) = chi_G(r) - lam v^T adj(r I - G) u`` with
  ``adj(r I - G) = sum_j r^(n-1-j) sum_{i<=j} c_i G^(j-i)`` (``c_i`` the coefficients of
  ``chi_G``), which needs only the Krylov products ``v^T G^k u``;
* otherwise, the division-free Berkowitz charpoly of :class:`DomainMatrix` over the
  sparse polynomial ring of the parameters.

All three run in SymPy's sparse polynomial arithmetic (``DomainMatrix``), not on
expression trees.
"""

from __future__ import annotations

import sympy as sp
from sympy.polys.matrices import DomainMatrix

__all__ = ["matrix_charpoly"]


def _coefficients(M: sp.MatrixBase) -> list:
    """Coefficients ``c_0 = 1, c_1, ..., c_n`` of ``det(r I - M)``, as SymPy expressions."""
    D = DomainMatrix.from_Matrix(sp.Matrix(M))
    return [D.domain.to_sympy(c) for c in D.charpoly()]


def _rank_one(M1: sp.MatrixBase):
    """``(u, v)`` with ``M1 = u v^T`` if ``M1`` has rank one, else ``None``."""
    nonzero = [(i, j) for i in range(M1.rows) for j in range(M1.cols) if M1[i, j] != 0]
    if not nonzero:
        return None
    i0, j0 = nonzero[0]
    u = M1[:, j0]
    v = M1[i0, :] / M1[i0, j0]
    if (u * v - M1).applyfunc(lambda e: sp.cancel(e)) != sp.zeros(*M1.shape):
        return None
    return u, v.T


def _polynomial(coeffs: list, var) -> sp.Expr:
    n = len(coeffs) - 1
    return sp.Add(*[c * var ** (n - j) for j, c in enumerate(coeffs)])


def _in_r(expr: sp.Expr, r) -> list:
    return [sp.expand(c) for c in sp.Poly(expr, r).all_coeffs()]


def _lemma(G: sp.MatrixBase, u: sp.MatrixBase, v: sp.MatrixBase, lam) -> list:
    """Coefficients in ``r`` of ``det(r I - G - lam u v^T)`` by the matrix determinant lemma (see the module)."""
    n = G.rows
    D, U, V = DomainMatrix.from_Matrix(sp.Matrix(G)), DomainMatrix.from_Matrix(u), DomainMatrix.from_Matrix(v.T)
    D, U, V = D.unify(U, V)
    c = D.charpoly()
    moments, w = [], U
    for _ in range(n):  # v^T G^k u, k = 0 .. n-1
        moments.append((V * w)[0, 0].element)
        w = D * w
    dom = D.domain
    adj = [sum((c[i] * moments[j - i] for i in range(j + 1)), dom.zero) for j in range(n)]
    chi = [dom.to_sympy(x) for x in c]
    return [chi[0]] + [sp.expand(chi[j + 1] - lam * dom.to_sympy(adj[j])) for j in range(n)]


def matrix_charpoly(coeffs: tuple, lam, r) -> tuple[list, str]:
    """Coefficients in ``r`` (highest first) of ``det(A_0 r^p + ... + A_p)``, and the method.

    See the module docstring for the methods.
    """
    if len(coeffs) == 2 and coeffs[0] == sp.eye(coeffs[0].rows):
        M = -sp.Matrix(coeffs[1])
        if lam is not None and M.has(lam) and all(sp.degree(e, lam) <= 1 for e in M if e.has(lam)):
            M1 = M.diff(lam)
            G = (M - lam * M1).applyfunc(sp.expand)
            if M1 == sp.eye(M.rows):
                return _in_r(_polynomial(_coefficients(G), r - lam), r), "shift: chi_Gamma(r - lam)"
            pair = _rank_one(M1)
            if pair is not None:
                return _lemma(G, *pair, lam), "matrix determinant lemma (rank-one update in lam)"
        return _coefficients(M), "DomainMatrix charpoly"
    P = sp.zeros(coeffs[0].rows)
    p = len(coeffs) - 1
    for j, A in enumerate(coeffs):
        P += A * r ** (p - j)
    D = DomainMatrix.from_Matrix(P)
    return _in_r(D.domain.to_sympy(D.det()), r), "DomainMatrix det"
