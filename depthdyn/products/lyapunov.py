"""Numeric products of per-layer matrices, in the log domain, batched over samples.

* :func:`lyapunov`: the top ``k`` (or all) Lyapunov exponents of ``A_L ... A_1`` by QR
  re-orthonormalisation: ``A_l Q_{l-1} = Q_l R_l``, exponent ``i`` is the mean of
  ``log |(R_l)_{ii}|`` over the layers. Only ``Q`` (orthonormal) is ever multiplied, so ``10^4``
  layers never overflow.
* :func:`growth_rate`: ``(1/L) log ||A_L ... A_1||_F``, the product renormalised as it goes.
* :func:`product_singular_values`: the singular values of the end-to-end product, as logs.
* :func:`random_layers`: seeded ensembles (Gaussian, Haar orthogonal, Sinkhorn doubly
  stochastic, unconstrained hyper-connection mixing matrices).

Arrays are ``(L, n, n)`` (one product) or ``(B, L, n, n)`` (``B`` samples, or ``B`` parameter
points); exponents are per layer, natural log, largest first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import DepthdynError, ParameterError, ShapeError
from ..mixing import sinkhorn
from ..records import Record

__all__ = [
    "LyapunovSpectrum",
    "lyapunov",
    "growth_rate",
    "LogSingularValues",
    "product_singular_values",
    "random_layers",
    "ProductOverflowError",
    "SingularProductError",
    "as_layers",
    "KINDS",
    "seeded",
]


class ProductOverflowError(DepthdynError, OverflowError):
    """A product over depth left the float64 range even with renormalisation (entries near 1e308)."""


class SingularProductError(DepthdynError, ArithmeticError):
    """The product lost rank at some layer: an exponent is minus infinity."""


def as_layers(matrices, what: str = "matrices") -> np.ndarray:
    """``(B, L, n, n)`` float64 (or complex128) from ``(L, n, n)`` or ``(B, L, n, n)``, checked finite."""
    try:
        A = np.asarray(matrices)
    except (TypeError, ValueError) as exc:
        raise ShapeError(f"{what} must be an array of shape (L, n, n) or (B, L, n, n): {exc}") from None
    if A.dtype == object or not (np.issubdtype(A.dtype, np.number) or A.dtype == bool):
        raise ShapeError(f"{what} must be numeric, got dtype {A.dtype}")
    if A.ndim not in (3, 4) or A.shape[-1] != A.shape[-2] or A.shape[-1] == 0:
        raise ShapeError(f"{what} must have shape (L, n, n) or (B, L, n, n) with square layers, "
                         f"got {A.shape}")
    if A.shape[-3] == 0 or (A.ndim == 4 and A.shape[0] == 0):
        raise ShapeError(f"{what}: an empty stack (no layers or no samples)")
    A = A.astype(np.complex128 if np.iscomplexobj(A) else np.float64, copy=False)
    if not np.isfinite(A).all():
        bad = np.argwhere(~np.isfinite(A))[0]
        raise ParameterError(f"{what} are not finite (first at index {tuple(int(i) for i in bad)}); "
                             "remove NaN/inf layers")
    return A if A.ndim == 4 else A[None]


@dataclass(frozen=True, eq=False)
class LyapunovSpectrum(Record):
    """Lyapunov exponents per layer (natural log), largest first.

    ``exponents`` ``(k,)`` is the mean over the samples, ``stderr`` ``(k,)`` its standard error
    (``std / sqrt(B)``, ddof 1) where ``B >= 2`` samples, else None; ``samples`` ``(B, k)``;
    ``history`` ``(L, k)``: the running estimate (mean over samples) after each layer, the
    convergence in depth.
    """

    exponents: np.ndarray
    stderr: np.ndarray | None
    samples: np.ndarray
    layers: int
    history: np.ndarray
    method: str = "QR re-orthonormalisation (Benettin et al. 1980; Shimada & Nagashima 1979)"

    def _text(self) -> str:
        rows = [f"Lyapunov exponents per layer (natural log), {self.layers} layers, "
                f"{self.samples.shape[0]} sample(s); {self.method}"]
        for i, x in enumerate(self.exponents):
            se = "" if self.stderr is None else f" +- {self.stderr[i]:.3g}"
            rows.append(f"  lambda_{i + 1} = {x:.6g}{se}")
        return "\n".join(rows)

    def _latex(self) -> str:
        return ",\\ ".join(f"\\lambda_{{{i + 1}}} = {x:.6g}" for i, x in enumerate(self.exponents))

    def to_json(self) -> dict:
        return {"exponents": self.exponents.tolist(),
                "stderr": None if self.stderr is None else self.stderr.tolist(),
                "layers": self.layers, "samples": int(self.samples.shape[0]), "method": self.method}


def seeded(seed) -> np.random.Generator:
    """NumPy's generator for ``seed``, a non-negative integer, or a typed error."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ParameterError(f"seed must be a non-negative integer, got {seed!r}")
    return np.random.default_rng(int(seed))


def _check_k(k, n: int) -> int:
    if k is None:
        return n
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= n:
        raise ParameterError(f"k must be an integer in 1..{n} (the state size), got {k!r}")
    return int(k)


def lyapunov(matrices, k: int | None = None, *, seed: int = 0) -> LyapunovSpectrum:
    """Top ``k`` Lyapunov exponents of the product ``A_L ... A_1`` by QR re-orthonormalisation.

    Parameters
    ----------
    matrices : array_like
        ``(L, n, n)`` or ``(B, L, n, n)`` (``B`` independent samples or parameter points),
        ``A_1`` first.
    k : int, optional
        How many exponents (default all ``n``).
    seed : int
        Seed of the random orthonormal start ``Q_0`` (``n x k``), shared by the samples.

    Returns
    -------
    LyapunovSpectrum
        Per-layer exponents (natural log), largest first; standard errors over ``B >= 2``
        samples.

    Raises
    ------
    ShapeError, ParameterError
        Bad shapes, empty stacks, non-finite matrices, bad ``k``.
    SingularProductError
        A layer maps the tracked subspace to a lower dimension (an exponent is ``-inf``): a
        diagonal entry of ``R`` at or below ``n eps ||A_l||_F``, rounding rather than a
        contraction QR can resolve.
    ProductOverflowError
        A layer times an orthonormal basis overflows float64.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([np.diag([2.0, 0.5])] * 1000)
    >>> np.round(lyapunov(A).exponents, 2)  # log 2 and log 1/2, to O(1/L)
    array([ 0.69, -0.69])
    """
    A = as_layers(matrices)
    B, L, n, _ = A.shape
    k = _check_k(k, n)
    rng = seeded(seed)
    Q0 = np.linalg.qr(rng.standard_normal((n, k)))[0].astype(A.dtype)
    Q = np.broadcast_to(Q0, (B, n, k))
    logs = np.empty((L, B, k))
    # A diagonal entry of R below n eps ||A_l|| is rounding, not a contraction QR can resolve:
    # the layer has lost rank in that direction and the true exponent is -inf.
    floor = _rank_floor(A)  # (B, L)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for layer in range(L):
            Z = A[:, layer] @ Q
            Q, R = np.linalg.qr(Z)
            d = np.abs(np.diagonal(R, axis1=-2, axis2=-1))
            if not np.isfinite(d).all():
                raise ProductOverflowError(f"layer {layer + 1} overflows float64 (entries near 1e308); "
                                           "rescale the matrices")
            lost = d <= floor[:, layer, None]
            if lost.any():
                i = int(np.argmax(lost.any(axis=0)))
                raise SingularProductError(
                    f"the product loses rank at layer {layer + 1}: exponent {i + 1} is -inf (the "
                    f"diagonal of R is below n eps ||A|| there); ask for the exponents above it "
                    f"with k={i}" if i else
                    f"the product loses rank at layer {layer + 1}: every exponent is -inf")
            logs[layer] = np.log(d)
    total = logs.sum(axis=0) / L  # (B, k)
    samples = -np.sort(-total, axis=1)
    exps = samples.mean(axis=0)
    stderr = samples.std(axis=0, ddof=1) / np.sqrt(B) if B >= 2 else None
    history = np.cumsum(logs, axis=0) / np.arange(1, L + 1)[:, None, None]
    history = -np.sort(-history, axis=2).mean(axis=1)
    return LyapunovSpectrum(exps, stderr, samples, L, history)


def _rank_floor(A: np.ndarray) -> np.ndarray:
    """``n eps ||A_l||_F`` per sample and layer, ``(B, L)``, in an order that cannot overflow."""
    n = A.shape[-1]
    m = np.abs(A).max(axis=(-2, -1))
    safe = np.where(m > 0, m, 1.0)
    scaled = np.sqrt((np.abs(A / safe[..., None, None]) ** 2).sum(axis=(-2, -1)))
    return n * np.finfo(np.float64).eps * scaled * m


def growth_rate(matrices) -> np.ndarray:
    """``(1/L) log ||A_L ... A_1||_F`` per sample: shape ``()`` or ``(B,)``.

    The product is renormalised by its largest entry after every layer and the logs of the
    scales summed, so it never overflows; only a product that is exactly zero (or whose
    entries all underflow within one layer) is refused.

    Raises
    ------
    SingularProductError
        The product vanished.
    """
    one = np.ndim(matrices) == 3
    A = as_layers(matrices)
    B, L, n, _ = A.shape
    P = A[:, 0].copy()
    acc = np.zeros(B)
    for layer in range(L):
        if layer:
            P = np.matmul(A[:, layer], P)
        s = np.abs(P).max(axis=(1, 2))
        if not (s > 0).all():
            raise SingularProductError(f"the product is zero after layer {layer + 1}")
        P /= s[:, None, None]
        acc += np.log(s)
    acc += np.log(np.sqrt((np.abs(P) ** 2).sum(axis=(1, 2))))
    out = acc / L
    return out[0] if one else out


@dataclass(frozen=True, eq=False)
class LogSingularValues(Record):
    """Singular values of the end-to-end product ``A_L ... A_1`` as natural logs, largest first.

    ``log_values`` ``(B, n)``; ``resolved`` ``(B, n)``: False where ``sigma_i / sigma_1`` is
    below ``n`` times the float64 epsilon (the renormalised product cannot resolve it; use
    :func:`lyapunov` for the small end of the spectrum).
    """

    log_values: np.ndarray
    resolved: np.ndarray
    layers: int

    @property
    def rates(self) -> np.ndarray:
        """``log sigma_i / L``: growth rate per layer of each singular value."""
        return self.log_values / self.layers

    def _text(self) -> str:
        top = ", ".join(f"{x:.6g}" for x in self.log_values[0, :6])
        return f"log singular values of the product of {self.layers} layers: {top}" + (
            " ..." if self.log_values.shape[1] > 6 else "")

    def _latex(self) -> str:
        top = self.log_values[0, :6]
        return ",\\ ".join(f"\\log\\sigma_{{{i + 1}}} = {x:.6g}" for i, x in enumerate(top))


def product_singular_values(matrices) -> LogSingularValues:
    """Singular values of ``A_L ... A_1`` per sample, as logs (renormalised dense product)."""
    A = as_layers(matrices)
    B, L, n, _ = A.shape
    P = np.broadcast_to(np.eye(n, dtype=A.dtype), (B, n, n)).copy()
    acc = np.zeros(B)
    for layer in range(L):
        P = np.matmul(A[:, layer], P)
        s = np.abs(P).max(axis=(1, 2))
        if not (s > 0).all():
            raise SingularProductError(f"the product is zero after layer {layer + 1}")
        P /= s[:, None, None]
        acc += np.log(s)
    sv = np.linalg.svd(P, compute_uv=False)
    with np.errstate(divide="ignore"):
        logs = np.log(sv) + acc[:, None]
    resolved = sv > n * np.finfo(float).eps * sv[:, :1]
    return LogSingularValues(logs, resolved, L)


# ------------------------------------------------------------------ ensembles
KINDS = ("gaussian", "orthogonal", "sinkhorn", "hc")


def random_layers(kind: str, n: int, layers: int, samples: int = 1, *, seed: int = 0,
                  scale: float = 1.0) -> np.ndarray:
    """A seeded ensemble of per-layer matrices, ``(samples, layers, n, n)``.

    ``"gaussian"``: i.i.d. entries ``N(0, scale^2 / n)``. ``"orthogonal"``: Haar (QR of a
    Gaussian matrix with the signs of ``R``'s diagonal fixed). ``"sinkhorn"``: doubly stochastic,
    Sinkhorn-Knopp of ``exp(scale * G)`` (the mHC projection). ``"hc"``: unconstrained
    hyper-connection mixing ``I + scale * G / sqrt(n)``.
    """
    if kind not in KINDS:
        raise ParameterError(f"kind must be one of {KINDS}, got {kind!r}")
    for name, v in (("n", n), ("layers", layers), ("samples", samples)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ParameterError(f"{name} must be a positive integer, got {v!r}")
    if not np.isfinite(scale):
        raise ParameterError(f"scale must be finite, got {scale!r}")
    rng = seeded(seed)
    G = rng.standard_normal((samples, layers, n, n))
    if kind == "gaussian":
        return G * (scale / np.sqrt(n))
    if kind == "orthogonal":
        Q, R = np.linalg.qr(G)
        return Q * np.sign(np.diagonal(R, axis1=-2, axis2=-1))[..., None, :]
    if kind == "hc":
        return np.eye(n) + G * (scale / np.sqrt(n))
    return sinkhorn(scale * G)
