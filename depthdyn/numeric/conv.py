"""Convolutional entanglement kernels of 001 Fig. 3 and their operator spectra.

A 2-D convolution with circular padding is block-circulant, so its spectrum is the union
over spatial frequencies of the eigenvalues of ``C x C`` matrices obtained with the 2-D
DFT; the tests compare it with the dense ``(C H W)^2`` operator on small maps.
"""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError, ShapeError

__all__ = ["conv_kernel", "conv_spectrum"]


def conv_kernel(
    kind: str = "spatial", gamma: float = 0.5, kernel_size: int = 3, channels: int = 4, seed: int = 0
):
    """The 2-D entanglement kernels of 001 Fig. 3, shape ``(k, k, C, C)`` (HWIO layout).

    * ``"spatial"``: each channel mixes with its own ``k x k`` neighbourhood,
      ``gamma / k^2`` everywhere plus ``1 - gamma`` at the centre tap;
    * ``"channel"``: every channel and tap gets ``gamma / (k^2 C)``, plus ``1 - gamma`` on
      the centre tap's diagonal (channel + spatial entanglement);
    * ``"orthogonal"``: a ``1 x 1`` kernel holding the Q of the QR factorisation of a
      standard normal ``C x C`` matrix drawn from ``seed`` (``kernel_size`` is ignored).

    Source: 001 Fig. 3 (``sp_kernel``, ``ch_kernel``, ``orth_kernel``), eq. 7.
    """
    if kind not in ("spatial", "channel", "orthogonal"):
        raise ParameterError(f"kind must be 'spatial', 'channel' or 'orthogonal', got {kind!r}")
    for name, v in (("kernel_size", kernel_size), ("channels", channels)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ParameterError(f"{name} must be a positive integer, got {v!r}")
    if not np.isfinite(gamma) or not 0 <= gamma <= 1:
        raise ParameterError(f"gamma must lie in [0, 1], got {gamma!r}")
    k, C, mid = int(kernel_size), int(channels), int(kernel_size) // 2
    if kind == "orthogonal":
        Q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(C, C)))
        return Q.reshape(1, 1, C, C)
    if kind == "spatial":
        K = np.zeros((k, k, C, C))
        K[:, :, np.arange(C), np.arange(C)] = gamma / k**2
    else:
        K = np.full((k, k, C, C), gamma / (k**2 * C))
    K[mid, mid, np.arange(C), np.arange(C)] += 1.0 - gamma
    return K


def conv_spectrum(kernel, H: int, W: int) -> np.ndarray:
    """Eigenvalues of a 2-D convolution with circular padding, per spatial frequency.

    The operator maps ``x`` (``C x H x W``) to
    ``y[o, h, w] = sum_{a, b, i} K[a, b, i, o] x[i, (h + a - c_a) % H, (w + b - c_b) % W]``
    with the centre tap ``c = (k_h // 2, k_w // 2)``: a "same" cross-correlation (TensorFlow
    ``conv2d`` with circular padding). It is block-circulant, so the Fourier modes
    ``x[i, h, w] = v_i e^{2 pi i (u h / H + v w / W)}`` reduce it to the ``C x C`` matrices

    .. math::

        M(u, v) = \\sum_{a, b} K[a, b]^T e^{2 \\pi i (u (a - c_a)/H + v (b - c_b)/W)}

    computed with one 2-D FFT. Returns a complex array ``(H, W, C)``: the eigenvalues of
    ``M(u, v)`` at ``[u, v]``; together, the ``C H W`` eigenvalues of the operator.
    """
    K = np.asarray(kernel, dtype=float)
    if K.ndim != 4 or K.shape[2] != K.shape[3]:
        raise ShapeError(f"kernel must have shape (kh, kw, C, C), got {K.shape}")
    for name, v in (("H", H), ("W", W)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ParameterError(f"{name} must be a positive integer, got {v!r}")
    kh, kw, C, _ = K.shape
    G = np.zeros((H, W, C, C))
    s = (kh // 2 - np.arange(kh)) % H  # e^{+2 pi i u (a - c)/H} = e^{-2 pi i u s/H}
    t = (kw // 2 - np.arange(kw)) % W
    np.add.at(G, (s[:, None], t[None, :]), np.swapaxes(K, 2, 3))
    M = np.fft.fft2(G, axes=(0, 1))
    return np.linalg.eigvals(M)
