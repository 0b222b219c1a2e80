"""Doubly stochastic mixing: the Sinkhorn-Knopp projection of hyper-connections (003, mHC).

One convention everywhere (NumPy here; :func:`depthdyn.nn.blocks.hyper.sinkhorn` is its
torch twin with the same parameters): the input is the matrix of *logits* ``M`` and the
result is ``diag(u) exp(M) diag(v)``, computed in the log domain; a round normalises the
rows, then the columns. ``iterations=k`` runs exactly ``k`` rounds, as a network layer does;
``iterations=None`` runs until every row and column sum is within ``tol`` of 1.
"""

from __future__ import annotations

import numpy as np

from .errors import ParameterError
from .limits import MAX_SINKHORN_ROUNDS

__all__ = ["sinkhorn"]



def _logsumexp(a: np.ndarray, axis: int) -> np.ndarray:
    top = a.max(axis=axis, keepdims=True)
    return top + np.log(np.exp(a - top).sum(axis=axis, keepdims=True))


def sinkhorn(logits, iterations: int | None = None, *, tol: float = 1e-14) -> np.ndarray:
    """Doubly stochastic ``diag(u) exp(logits) diag(v)`` by log-domain Sinkhorn-Knopp.

    Parameters
    ----------
    logits : array_like
        ``(..., n, n)`` finite real logits (``log`` of a positive matrix); batched over
        leading axes.
    iterations : int or None
        Rounds (rows, then columns) to run, ``>= 1``; ``None`` (default) runs until every row
        and column sum is within ``tol`` of 1 (at most ``MAX_SINKHORN_ROUNDS``).
    tol : float
        Convergence tolerance of ``iterations=None`` (ignored otherwise).

    Returns
    -------
    numpy.ndarray
        float64, same shape. After any round the columns sum to 1 up to rounding.

    Raises
    ------
    ParameterError
        Logits that are not real, finite and square; ``iterations`` not a positive integer;
        no convergence within ``MAX_SINKHORN_ROUNDS`` rounds.

    Examples
    --------
    Equal logits give the uniform doubly stochastic matrix after one round:

    >>> sinkhorn([[0.0, 0.0], [0.0, 0.0]], 1).tolist()
    [[0.5, 0.5], [0.5, 0.5]]
    """
    try:
        M = np.array(logits, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"sinkhorn needs real logits: {exc}") from None
    if M.ndim < 2 or M.shape[-1] != M.shape[-2] or M.shape[-1] == 0:
        raise ParameterError(f"sinkhorn needs square matrices (..., n, n) of logits, got shape {M.shape}")
    if not np.isfinite(M).all():
        raise ParameterError("sinkhorn needs finite logits (log of a positive matrix)")
    integer = isinstance(iterations, (int, np.integer)) and not isinstance(iterations, bool)
    if iterations is not None and not (integer and iterations >= 1):
        raise ParameterError(f"iterations must be a positive integer or None, got {iterations!r}")
    if not (isinstance(tol, (int, float)) and tol > 0):
        raise ParameterError(f"tol must be a positive number, got {tol!r}")
    log_v = np.zeros(M.shape[:-2] + (1, M.shape[-1]))
    rounds = iterations if iterations is not None else MAX_SINKHORN_ROUNDS
    for _ in range(rounds):
        log_u = -_logsumexp(M + log_v, axis=-1)  # rows sum to 1
        log_v = -_logsumexp(M + log_u, axis=-2)  # columns sum to 1
        if iterations is None:
            A = np.exp(M + log_u + log_v)
            if np.abs(A.sum(axis=-1) - 1).max() <= tol:
                return A
    if iterations is None:
        raise ParameterError(f"Sinkhorn-Knopp did not reach {tol:g} in {MAX_SINKHORN_ROUNDS} rounds; "
                             "pass iterations=k for a fixed number of rounds")
    return np.exp(M + log_u + log_v)
