"""Hyper-connection gains as the mHC paper measures them: per token, from the actual ``H_res``.

With dynamic mixing every token ``t`` has its own ``H_res^(l)(X_l)`` at every layer; the
residual streams of that token are carried over depth by the composite

.. math::

    P_l = H_{res}^{(l)} H_{res}^{(l-1)} \\cdots H_{res}^{(0)} .

Its *forward gain* is the largest absolute row sum ``||P_l||_inf`` (how much a stream can
grow going forward), its *backward gain* the largest absolute column sum ``||P_l||_1``
(gradients flow through ``P_l^T``). Both are 1 for products of doubly stochastic matrices
(Sinkhorn mixing, mHC). *Stream homogenisation*: a doubly stochastic product tends to
``J/n`` (every stream the mean) and its second singular value ``sigma_2(P_l)`` measures
how far it still is (0 at ``J/n``). :func:`hc_profile` records the streams during the
model's forward and evaluates ``H_res`` at each recorded state, for static, dynamic and
Sinkhorn mixing alike (the static ``hc_gain`` of :mod:`.diagnostics` is the token-free case).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from ...errors import ParameterError, ShapeError
from .record import record

__all__ = ["HCProfile", "hc_profile"]


@dataclass(frozen=True, eq=False)
class HCProfile:
    """Composite ``H_res`` products per token and depth, and their gains.

    Attributes
    ----------
    products : ndarray
        ``(L, N, n, n)``: ``P_l`` for every token (``N`` = all leading axes of the stream
        state flattened: samples, or samples x positions).
    forward_gain, backward_gain : ndarray
        ``(L, N)``: max absolute row / column sum of ``P_l``.
    homogenisation : ndarray
        ``(L, N)``: second singular value of ``P_l``.
    streams : int
    """

    products: np.ndarray
    forward_gain: np.ndarray
    backward_gain: np.ndarray
    homogenisation: np.ndarray
    streams: int

    @property
    def max_forward_gain(self) -> float:
        return float(self.forward_gain[-1].max())

    @property
    def max_backward_gain(self) -> float:
        return float(self.backward_gain[-1].max())

    def to_json(self) -> dict:
        return {
            "streams": self.streams,
            "max_forward_gain": self.max_forward_gain,
            "max_backward_gain": self.max_backward_gain,
            "forward_gain_by_depth": self.forward_gain.max(axis=1).tolist(),
            "backward_gain_by_depth": self.backward_gain.max(axis=1).tolist(),
            "homogenisation_by_depth": self.homogenisation.mean(axis=1).tolist(),
        }

    def __str__(self) -> str:
        return (
            f"hyper-connections, {self.streams} streams, {self.products.shape[1]} tokens, "
            f"{self.products.shape[0]} layers: forward gain up to {self.max_forward_gain:.4g}, "
            f"backward gain up to {self.max_backward_gain:.4g}, "
            f"sigma_2 of the composite {self.homogenisation[-1].mean():.3g} (0 = all streams mixed)"
        )


def _default_mixing(layer, state):
    if not hasattr(layer, "mixing_matrices"):
        raise ParameterError(
            f"{type(layer).__name__} has no mixing_matrices(state); pass mixing=lambda layer, state: H_res"
        )
    return layer.mixing_matrices(state)[0]


def hc_profile(model, inputs, layers=None, *, mixing: Callable | None = None) -> HCProfile:
    """Per-token composite ``H_res`` over depth of a hyper-connection model.

    Parameters
    ----------
    model : torch.nn.Module
        Any model whose residual layers carry ``n`` streams as the state's second-to-last
        axis (``(..., n, d)``).
    inputs, layers
        As for :func:`~depthdyn.nn.analysis.inspect.inspect`.
    mixing : callable, optional
        ``mixing(layer, state) -> H_res`` with shape ``(n, n)`` (static) or
        ``(*state.shape[:-2], n, n)`` (per token). Default: the layer's
        ``mixing_matrices(state)[0]`` (depthdyn's :class:`~depthdyn.nn.HyperConnectionBlock`).

    Raises
    ------
    ShapeError
        ``H_res`` is not ``n x n`` for the state's ``n`` streams.
    """
    rec = record(model, inputs, layers)
    mixing = _default_mixing if mixing is None else mixing
    P, out = None, []
    with torch.no_grad():
        for call in rec.calls:
            state = call.state.detach()
            n = state.shape[-2]
            H = torch.as_tensor(mixing(call.module, state)).detach().to(torch.float64)
            lead = state.shape[:-2]
            if H.shape[-2:] != (n, n):
                raise ShapeError(
                    f"H_res of layer {call.name} has shape {tuple(H.shape)}; expected (..., {n}, {n})"
                )
            try:
                H = H.expand(*lead, n, n).reshape(-1, n, n)
            except RuntimeError:
                raise ShapeError(
                    f"H_res of layer {call.name} has shape {tuple(H.shape)}, which fits no token of the "
                    f"state {tuple(state.shape)}"
                ) from None
            P = H if P is None else H @ P
            out.append(P)
    prods = torch.stack(out).cpu().numpy()
    A = np.abs(prods)
    sv = np.linalg.svd(prods, compute_uv=False)
    second = sv[..., 1] if sv.shape[-1] > 1 else np.zeros(sv.shape[:-1])
    return HCProfile(
        products=prods,
        forward_gain=A.sum(axis=-1).max(axis=-1),
        backward_gain=A.sum(axis=-2).max(axis=-1),
        homogenisation=second,
        streams=int(prods.shape[-1]),
    )
