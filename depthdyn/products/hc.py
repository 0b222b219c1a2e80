"""Hyper-connection mixing over depth: composite gains of ``H_res`` products, HC against mHC.

An HC stack mixes its ``n`` residual streams by ``H_res`` at every layer, so over depth the
streams are mixed by the composite ``P_l = H_l ... H_1``. Its gain (the largest absolute row
sum, ``||P_l||_inf``, and column sum, ``||P_l||_1``) is what the mHC paper plots; its second
singular value says how fast the streams homogenise. mHC projects each ``H_res`` onto the
doubly stochastic matrices (Sinkhorn-Knopp of ``exp(H)``): a product of doubly stochastic
matrices is doubly stochastic, so the composite gain is exactly 1 at every depth.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ParameterError
from ..mixing import sinkhorn
from ..records import Record
from .lyapunov import ProductOverflowError, SingularProductError, as_layers

__all__ = ["CompositeGains", "composite_gains", "HcComparison", "hc_vs_mhc"]


@dataclass(frozen=True, eq=False)
class CompositeGains(Record):
    """Gains of the composites ``P_l = H_l ... H_1``, ``l = 1..L``, per sample.

    ``log_row_gain``, ``log_col_gain``, ``log_sigma2`` ``(B, L)``: natural logs of
    ``||P_l||_inf`` (largest absolute row sum), ``||P_l||_1`` (column sum) and of the second
    singular value. ``rate`` ``(B,)``: least-squares slope of ``log ||P_l||_inf`` against ``l``
    (growth per layer, natural log); ``stochastic_defect`` ``(B, L)``: largest ``|row or column
    sum - 1|`` of ``P_l`` (0 for doubly stochastic composites up to rounding).
    """

    label: str
    log_row_gain: np.ndarray
    log_col_gain: np.ndarray
    log_sigma2: np.ndarray
    stochastic_defect: np.ndarray

    @property
    def layers(self) -> int:
        return self.log_row_gain.shape[1]

    @property
    def rate(self) -> np.ndarray:
        depth = np.arange(1, self.layers + 1)
        return np.polyfit(depth, self.log_row_gain.T, 1)[0]

    def gain(self) -> np.ndarray:
        """``||P_l||_inf`` itself, ``(B, L)``; refuses values past float64 instead of inf."""
        if self.log_row_gain.max() > np.log(np.finfo(float).max):
            raise ProductOverflowError(f"{self.label}: the composite gain exceeds 1e308; use log_row_gain")
        return np.exp(self.log_row_gain)

    def _text(self) -> str:
        last = self.log_row_gain[:, -1] / np.log(10)
        return (f"{self.label}: {self.layers} layers, final gain 10^{last.mean():.4f} (mean over "
                f"{last.size} sample(s)), growth rate {self.rate.mean():.4g} per layer (natural log)")

    def _latex(self) -> str:
        top = self.log_row_gain.max() / np.log(10)
        return rf"\text{{{self.label}}}: \max_l \|P_l\|_\infty = 10^{{{top:.4g}}}"

    def to_json(self) -> dict:
        return {"label": self.label, "layers": self.layers, "rate": self.rate.tolist(),
                "log10_final_gain": (self.log_row_gain[:, -1] / np.log(10)).tolist(),
                "max_stochastic_defect": float(self.stochastic_defect.max())}


def composite_gains(H, label: str = "H_res") -> CompositeGains:
    """Gains of ``P_l = H_l ... H_1`` for ``H`` of shape ``(L, n, n)`` or ``(B, L, n, n)``.

    The composite is kept renormalised by a scale whose log is accumulated, so gains in the
    thousands or beyond ``1e308`` come back as logs, never as inf.

    Examples
    --------
    >>> import numpy as np
    >>> H = np.array([[[0.75, 0.25], [0.25, 0.75]]] * 5)
    >>> g = composite_gains(H)
    >>> float(np.abs(g.log_row_gain).max()) < 1e-12, float(g.stochastic_defect.max()) < 1e-12
    (True, True)
    """
    A = as_layers(H, "H_res matrices")
    if np.iscomplexobj(A):
        raise ParameterError("H_res matrices must be real")
    B, L, n, _ = A.shape
    P = np.broadcast_to(np.eye(n), (B, n, n)).copy()
    acc = np.zeros(B)
    rows, cols, s2, defect = (np.empty((B, L)) for _ in range(4))
    for layer in range(L):
        P = A[:, layer] @ P
        s = np.abs(P).max(axis=(1, 2))
        if not (s > 0).all():
            raise SingularProductError(f"the composite is zero after layer {layer + 1}")
        P /= s[:, None, None]
        acc += np.log(s)
        rows[:, layer] = np.log(np.abs(P).sum(axis=2).max(axis=1)) + acc
        cols[:, layer] = np.log(np.abs(P).sum(axis=1).max(axis=1)) + acc
        sv = np.linalg.svd(P, compute_uv=False)
        with np.errstate(divide="ignore"):
            s2[:, layer] = np.log(sv[:, 1]) + acc if n > 1 else -np.inf
        with np.errstate(over="ignore"):
            scale = np.exp(acc)[:, None]  # inf where the composite is huge: defect inf, as it should be
            sums = np.concatenate([P.sum(axis=2), P.sum(axis=1)], axis=1) * scale
        defect[:, layer] = np.abs(sums - 1).max(axis=1)
    return CompositeGains(label, rows, cols, s2, defect)


@dataclass(frozen=True, eq=False)
class HcComparison(Record):
    """Composite gains of one seeded stack of learned ``H_res`` read two ways: as is (HC) and
    projected by Sinkhorn-Knopp of ``exp(H)`` (mHC)."""

    hc: CompositeGains
    mhc: CompositeGains
    seed: int
    scale: float

    def _text(self) -> str:
        return f"{self.hc}\n{self.mhc}"

    def _latex(self) -> str:
        return self.hc._latex() + r",\quad " + self.mhc._latex()


def hc_vs_mhc(layers: int = 60, n: int = 4, *, samples: int = 1, seed: int = 0,
              scale: float = 0.5) -> HcComparison:
    """HC against mHC on the same seeded ``H_res`` logits ``I + scale * G / sqrt(n)``.

    HC uses the matrices as they are (unconstrained); mHC projects them with
    :func:`depthdyn.mixing.sinkhorn` (the matrices as logits, run to convergence).
    """
    if isinstance(layers, bool) or not isinstance(layers, int) or layers < 1:
        raise ParameterError(f"layers must be a positive integer, got {layers!r}")
    from .lyapunov import random_layers

    H = random_layers("hc", n, layers, samples, seed=seed, scale=scale)
    return HcComparison(composite_gains(H, "HC (unconstrained H_res)"),
                        composite_gains(sinkhorn(H), "mHC (Sinkhorn doubly stochastic)"), seed, scale)
