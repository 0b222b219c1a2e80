"""Doubly stochastic mixing: the Sinkhorn-Knopp projection that mHC applies to ``H_res``.

Kept apart so that both the random ensembles (:mod:`depthdyn.products.lyapunov`) and the HC
composites (:mod:`depthdyn.products.hc`) use it without importing each other.
"""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError

__all__ = ["sinkhorn"]


def sinkhorn(M, *, tol: float = 1e-14, max_iter: int = 10_000) -> np.ndarray:
    """Sinkhorn-Knopp: scale the rows and columns of positive matrices ``(..., n, n)`` to sum 1.

    Alternates row and column normalisation until every row and column sum is within ``tol``
    of 1 (a positive matrix always converges, Sinkhorn 1964).

    Raises
    ------
    ParameterError
        Entries that are not positive and finite, or no convergence in ``max_iter`` sweeps.
    """
    M = np.array(M, dtype=float)
    if M.ndim < 2 or M.shape[-1] != M.shape[-2]:
        raise ParameterError(f"sinkhorn needs square matrices (..., n, n), got shape {M.shape}")
    if not (np.isfinite(M).all() and (M > 0).all()):
        raise ParameterError("sinkhorn needs positive finite entries (exponentiate logits first)")
    for _ in range(max_iter):
        M /= M.sum(axis=-1, keepdims=True)
        M /= M.sum(axis=-2, keepdims=True)
        if np.abs(M.sum(axis=-1) - 1).max() <= tol:
            return M
    raise ParameterError(f"Sinkhorn-Knopp did not reach {tol:g} in {max_iter} sweeps; raise max_iter")
