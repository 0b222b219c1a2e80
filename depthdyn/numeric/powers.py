"""The final state ``x_L`` of a batch of linear recurrences by repeated squaring of its companion matrix.

:func:`depthdyn.numeric.simulate.final_state` uses it, and falls back to the layer loop where
:func:`ill_conditioned` flags an entry. Order 2, the common case, squares
``r^L mod (r^2 - c_1 r - c_2)`` elementwise on cache-sized pieces of the batch; higher orders
and matrix recurrences square the batched companion matrices.
"""

from __future__ import annotations

import numpy as np

from .bridge import check_size

_STEP = 1 << 13  # entries per chunk: 4 working arrays of 64 KiB


def _flat(a):
    return a if np.ndim(a) == 0 else a.reshape(-1)


def _piece(a, s: int):
    return a if np.ndim(a) == 0 else a[s:s + _STEP]


def _final2(prob, L: int) -> np.ndarray:
    """``x_L`` of a scalar order-2 batch: :func:`_power2` on cache-sized pieces."""
    out = np.empty(prob.batch, prob.dtype)
    flat = out.reshape(-1)
    c1, c2 = (_flat(c) for c in prob.cols)
    x0, x1 = (_flat(x) for x in prob.init)
    for s in range(0, flat.size, _STEP):
        size = min(_STEP, flat.size - s)
        S, T = _power2(_piece(c1, s), _piece(c2, s), L, (size,), prob.dtype)
        S *= _piece(x1, s)
        T *= _piece(x0, s)
        np.add(S, T, out=flat[s:s + size])
    return out


def _power2(c1, c2, L: int, batch: tuple, dtype):
    """``C^L = s C + t I`` for the companion ``C = [[c1, c2], [1, 0]]`` (Cayley-Hamilton).

    Left-to-right binary powering on the pair ``(s, t)``: squaring
    ``(s r + t)^2 mod (r^2 - c1 r - c2)`` gives ``(s (c1 s + 2 t), t^2 + c2 s^2)`` and a
    step by ``C`` gives ``(c1 s + t, c2 s)``: the 2x2 matrix products written out
    elementwise on two arrays, in place.
    """
    s, t = np.ones(batch, dtype), np.zeros(batch, dtype)
    u, w = np.empty(batch, dtype), np.empty(batch, dtype)
    for bit in bin(L)[3:]:
        np.multiply(s, c1, out=u)   # square
        u += t
        u += t
        np.multiply(s, s, out=w)
        w *= c2
        s *= u
        t *= t
        t += w
        if bit == "1":  # times C
            np.multiply(s, c2, out=u)
            s *= c1
            s += t
            t, u = u, t
    return s, t


def _companion(prob) -> np.ndarray:
    p = prob.order
    n = prob.init[0].shape[-1] if prob.matrix else 1
    C = np.zeros(prob.batch + (p * n, p * n), prob.dtype)
    for j, c in enumerate(prob.cols):
        C[..., :n, j * n:(j + 1) * n] = c if prob.matrix else np.asarray(c)[..., None, None]
    for i in range(1, p):
        C[..., i * n:(i + 1) * n, (i - 1) * n:i * n] = np.eye(n)
    return C


def _matrix_power(C: np.ndarray, L: int) -> np.ndarray:
    R = C.copy()
    for bit in bin(L)[3:]:
        R = np.matmul(R, R)
        if bit == "1":
            R = np.matmul(R, C)
    return R


def final_by_squaring(prob, L: int):
    """``x_L`` of every entry of ``prob`` (a :class:`~depthdyn.numeric.simulate.Problem`), by
    repeated squaring; overflow is left in the result for the caller to report."""
    p = prob.order
    if L < p:
        return prob.init[L].copy()
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        if not prob.matrix and p == 1:
            return np.power(prob.cols[0], L) * prob.init[0]
        if not prob.matrix and p == 2:
            return _final2(prob, L)
        m = p * (prob.init[0].shape[-1] if prob.matrix else 1)
        check_size(f"companion powers of {int(np.prod(prob.batch))} recurrences", 3 * int(np.prod(prob.batch))
                   * m * m, prob.dtype.itemsize, "split the batch into pieces")
        R = _matrix_power(_companion(prob), L)
        n = prob.init[0].shape[-1] if prob.matrix else 1
        w0 = np.concatenate([x.reshape(prob.batch + (n,)) for x in prob.init[::-1]], axis=-1)
        x = np.einsum("...ij,...j->...i", R[..., (p - 1) * n:, :], w0)
        return x if prob.matrix else x[..., 0]


def ill_conditioned(prob) -> np.ndarray:
    """Scalar entries whose roots are clustered or repeated, by the root-error estimate of
    :func:`~depthdyn.numeric.spectra.spectral_radius` (relative error above ``1e-12``):
    there the companion matrix is far from normal and its repeated squares lose digits
    (``(r - 0.999)^2`` at ``L = 10^5``: 4e-8 relative against 5e-10 for the loop)."""
    from .spectra import near_double, radius_chunk

    if prob.matrix or prob.order < 2:
        return np.zeros(prob.batch, bool)
    if prob.order == 2:  # r^2 - C_1 r - C_2, chunk by chunk (cache-sized pieces)
        flags = np.empty(prob.batch, bool).reshape(-1)
        c1, c2 = (_flat(c) for c in prob.cols)
        for s in range(0, flags.size, _STEP):
            flags[s:s + _STEP] = near_double(-_piece(c1, s), -_piece(c2, s), 1e-12)
        return flags.reshape(prob.batch)
    cols = [np.broadcast_to(-np.asarray(c), prob.batch).reshape(-1) for c in prob.cols]
    flags = np.empty(cols[0].size, bool)
    for s in range(0, flags.size, _STEP):
        with np.errstate(all="ignore"):
            flags[s:s + _STEP] = radius_chunk([1.0] + [c[s:s + _STEP] for c in cols], None, 1e-12)[1]
    return flags.reshape(prob.batch)
