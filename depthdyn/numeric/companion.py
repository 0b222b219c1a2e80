"""Batched polynomial roots: closed forms for degree 1 and 2, companion eigenvalues above.

Coefficient arrays are *monic* ``batch + (p + 1,)`` arrays as made by
:func:`~depthdyn.numeric.bridge.batch_coefficients` (a non-monic array is divided by its
leading column) or, with ``matrix=True``, ``batch + (p + 1, n, n)`` arrays of
``A_0^{-1} A_j``. The quadratic uses the cancellation-free
``q = -(b + s sqrt(b^2 - 4c))/2``, ``r_1 = q``, ``r_2 = c/q``; above degree 2 the
(block) companion matrices are balanced and their eigenvalues computed in chunks of bounded
memory. :mod:`~depthdyn.numeric.spectra` builds the spectral radius, dominant modes and the
refined :class:`~depthdyn.numeric.spectra.Spectrum` on :func:`roots`.
"""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError, ShapeError

__all__ = ["CHUNK_BYTES", "block_companion", "checked_coefficients", "roots"]

CHUNK_BYTES = 1 << 24  # companion stacks are processed in pieces of about 16 MiB


def _monic(a: np.ndarray) -> np.ndarray:
    lead = a[..., :1]
    if np.all(lead == 1):
        return a
    if np.any(lead == 0):
        raise ParameterError("the leading coefficient is zero at some points; the degree drops there")
    with np.errstate(over="ignore", invalid="ignore"):
        return a / lead


def _balanced(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(b, k)``: ``b`` the coefficients of ``p(2^k s)`` scaled by a power of two to
    ``max |b_j| = 1`` (exactly, in exponent arithmetic), ``k`` per row balancing the first
    and last non-zero coefficient, so the roots ``2^k s`` of coefficients whose quotients
    overflow float64 (``[1e-300, 1, 1e300]``) are found in range."""
    p = a.shape[-1] - 1
    m, e = np.frexp(a)
    nz = a != 0
    last = p - np.argmax(nz[..., ::-1], axis=-1)  # index of the last non-zero coefficient
    e_last = np.take_along_axis(e, last[..., None], axis=-1)[..., 0]
    k = np.rint((e_last - e[..., 0]) / np.maximum(last, 1)).astype(np.int64)
    shift = e + k[..., None] * (p - np.arange(p + 1))
    top = np.where(nz, shift, np.iinfo(np.int64).min).max(axis=-1, keepdims=True)
    return np.ldexp(m, np.clip(shift - top, -1100, 0).astype(np.int32)), k


def checked_coefficients(coeffs, matrix: bool) -> np.ndarray:
    """``coeffs`` as a float64 (or complex) array of a valid shape, finite, else a typed error."""
    a = np.asarray(coeffs)
    if a.dtype.kind not in "iufc":
        raise ParameterError(f"coefficients must be numeric, got dtype {a.dtype}")
    need = 3 if matrix else 1
    if a.ndim < need or a.shape[-need] < 2 or (matrix and a.shape[-1] != a.shape[-2]):
        want = "batch + (p + 1, n, n)" if matrix else "batch + (p + 1,)"
        raise ShapeError(f"coefficients must have shape {want} with p >= 1, got {a.shape}")
    if not np.isfinite(a).all():
        raise ParameterError("coefficients must be finite (no NaN or inf)")
    return a.astype(np.result_type(a.dtype, np.float64), copy=False)


def _quadratic(b, c) -> np.ndarray:
    """Roots of ``r^2 + b r + c`` (arrays), cancellation-free; shape ``batch + (2,)``."""
    b = np.asarray(b, dtype=complex)
    c = np.asarray(c, dtype=complex)
    d = np.sqrt(b * b - 4 * c)
    flip = (b.real * d.real + b.imag * d.imag) < 0  # make sqrt point the way b does
    d = np.where(flip, -d, d)
    q = -0.5 * (b + d) + 0.0  # + 0.0 turns -0.0 into 0.0
    out = np.empty(np.broadcast_shapes(b.shape, c.shape) + (2,), dtype=complex)
    out[..., 0] = q
    with np.errstate(divide="ignore", invalid="ignore"):
        out[..., 1] = np.where(q == 0, 0, c / q) + 0.0  # q == 0 only when b == c == 0
    return out


def _eig_stack(flat: np.ndarray, build) -> np.ndarray:
    """Eigenvalues of the companion matrices ``build(block)`` for rows of ``flat``, chunked."""
    N = flat.shape[0]
    m = build(flat[:1]).shape[-1]
    step = max(1, CHUNK_BYTES // (16 * m * m))
    out = np.empty((N, m), dtype=complex)
    for start in range(0, N, step):
        out[start : start + step] = np.linalg.eigvals(build(flat[start : start + step]))
    return out


def _companion(a: np.ndarray) -> np.ndarray:
    p = a.shape[-1] - 1
    C = np.zeros(a.shape[:-1] + (p, p), dtype=a.dtype)
    C[..., 0, :] = -a[..., 1:]
    idx = np.arange(p - 1)
    C[..., idx + 1, idx] = 1
    return C


def block_companion(A: np.ndarray) -> np.ndarray:
    N, p1, n, _ = A.shape
    p = p1 - 1
    C = np.zeros((N, p * n, p * n), dtype=A.dtype)
    C[:, :n, :] = -np.concatenate(list(np.moveaxis(A[:, 1:], 1, 0)), axis=-1)
    if p > 1:
        C[:, n:, : (p - 1) * n] = np.eye((p - 1) * n)
    return C


def roots(coeffs, *, matrix: bool = False) -> np.ndarray:
    """All roots of a batch of polynomials (or matrix polynomials), unsorted.

    Parameters
    ----------
    coeffs : array_like
        ``batch + (p + 1,)`` coefficients, highest power first, or with ``matrix=True``
        ``batch + (p + 1, n, n)`` matrix coefficients (monic: ``A_0 = I``).
    matrix : bool
        Treat the last two axes as matrix coefficients (block companion eigenvalues).

    Returns
    -------
    numpy.ndarray
        Complex array ``batch + (p,)`` (``batch + (p n,)`` for matrices).

    Examples
    --------
    >>> roots([1.0, -3.0, 2.0])
    array([2.+0.j, 1.+0.j])
    """
    a = checked_coefficients(coeffs, matrix)
    if matrix:
        batch, (p1, n, _) = a.shape[:-3], a.shape[-3:]
        A0 = a[..., 0, :, :]
        if not np.all(A0 == np.eye(n)):
            a = np.linalg.solve(A0[..., None, :, :], a)
        if p1 == 2:
            return np.linalg.eigvals(-a[..., 1, :, :]).astype(complex)
        flat = a.reshape((-1,) + a.shape[-3:])
        return _eig_stack(flat, block_companion).reshape(batch + ((p1 - 1) * n,))
    mon = _monic(a)
    if not np.isfinite(mon).all():  # quotients of the coefficients overflow: balance first
        b, k = _balanced(a)
        z = _scalar_roots(_monic(b))
        with np.errstate(over="ignore", invalid="ignore"):
            z = np.ldexp(z.real, k[..., None]) + 1j * np.ldexp(z.imag, k[..., None])
        if not np.isfinite(z).all():
            raise ParameterError("some roots exceed the float64 range (1.8e308); rescale the coefficients")
        return z
    return _scalar_roots(mon)


def _scalar_roots(a: np.ndarray) -> np.ndarray:
    p = a.shape[-1] - 1
    if p == 1:
        return (-a[..., 1:]).astype(complex)
    if p == 2:
        return _quadratic(a[..., 1], a[..., 2])
    flat = a.reshape(-1, p + 1)
    return _eig_stack(flat, _companion).reshape(a.shape[:-1] + (p,))
