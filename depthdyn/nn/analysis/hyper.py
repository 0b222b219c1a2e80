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
Sinkhorn mixing alike (the static ``hc_gain`` of :mod:`.diagnostics` is the token-free case),
for depthdyn's blocks and, with no glue, for models built from lucidrains ``hyper-connections``
(streams folded into the batch; ``H_res`` read by :mod:`.hclib` from the library's own code).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from ...errors import ParameterError, ShapeError
from .hclib import library_classes, library_layers, library_mixing
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


def _default_mixing(layer, state, name):
    """``H_res`` ``(N, n, n)`` of a depthdyn block or a library layer, or a typed refusal."""
    if library_classes() and isinstance(layer, library_classes()):
        return library_mixing(layer, state, name)
    if hasattr(layer, "mixing_matrices"):
        return _tokens(layer.mixing_matrices(state)[0], state, name)
    inner = [n for n, _ in library_layers(layer)]
    hint = f" (it holds the hyper-connection layers {inner[:4]}: pass layers=None)" if inner else ""
    raise ParameterError(
        f"layer {name} ({type(layer).__name__}) is neither depthdyn's HyperConnectionBlock "
        "(mixing_matrices) nor a hyper-connections layer (HyperConnections, "
        f"ManifoldConstrainedHyperConnections){hint}; pass mixing=lambda layer, state: H_res"
    )


def _tokens(H, state, name):
    """``H`` of shape ``(n, n)`` or ``(*state.shape[:-2], n, n)`` as ``(N, n, n)``."""
    n = state.shape[-2]
    H = torch.as_tensor(H)
    lead = state.shape[:-2]
    if H.shape[-2:] != (n, n):
        raise ShapeError(f"H_res of layer {name} has shape {tuple(H.shape)}; expected (..., {n}, {n})")
    try:
        return H.expand(*lead, n, n).reshape(-1, n, n)
    except RuntimeError:
        raise ShapeError(
            f"H_res of layer {name} has shape {tuple(H.shape)}, which fits no token of the "
            f"state {tuple(state.shape)}"
        ) from None


def hc_profile(model, inputs, layers=None, *, mixing: Callable | None = None) -> HCProfile:
    """Per-token composite ``H_res`` over depth of a hyper-connection model.

    Parameters
    ----------
    model : torch.nn.Module
        A model of depthdyn's :class:`~depthdyn.nn.HyperConnectionBlock` (state
        ``(..., n, d)``, ``H_res`` from the block's ``mixing_matrices``), or one built from
        lucidrains ``hyper-connections`` (``HyperConnections``, mHC's
        ``ManifoldConstrainedHyperConnections``: streams folded into the batch as
        ``(b s) ... d``; the ``mHCv2`` one: ``... s d``; ``H_res`` read from the layer's own
        ``width_connection``, see :mod:`~depthdyn.nn.analysis.hclib`). Tokens are the state's
        leading axes with the streams taken out (``b`` major). Any other model needs ``mixing``.
    inputs, layers
        As for :func:`~depthdyn.nn.analysis.inspect.inspect`. With ``layers=None`` a model
        holding library hyper-connection layers is analysed at those layers, in module order.
    mixing : callable, optional
        ``mixing(layer, state) -> H_res`` with shape ``(n, n)`` (static) or
        ``(*state.shape[:-2], n, n)`` (per token), for a state ``(..., n, d)``.

    Raises
    ------
    ParameterError
        A layer is none of the kinds above and no ``mixing`` is given.
    ShapeError
        ``H_res`` is not ``n x n`` for the state's ``n`` streams, a library layer's state is
        not in its layout, or layers disagree on the tokens or streams.
    """
    if layers is None and isinstance(model, torch.nn.Module):
        layers = [m for _, m in library_layers(model)] or None
    rec = record(model, inputs, layers)
    P, out = None, []
    with torch.no_grad():
        for call in rec.calls:
            state = call.state.detach()
            if mixing is None:
                H = _default_mixing(call.module, state, call.name)
            else:
                H = _tokens(mixing(call.module, state), state, call.name)
            H = H.detach().to(torch.float64)
            if P is not None and H.shape != P.shape:
                raise ShapeError(
                    f"layer {call.name} has H_res for {H.shape[0]} tokens of {H.shape[-1]} streams, the "
                    f"layers before it {P.shape[0]} tokens of {P.shape[-1]}: the product over depth "
                    "needs the same tokens and streams at every layer"
                )
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
