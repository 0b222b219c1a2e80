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
how far it still is (0 at ``J/n``).

:func:`hc_profile` reads ``H_res`` at each state of a :func:`~.record.record` of the model's
forward, for static, dynamic and Sinkhorn mixing alike, for depthdyn's blocks and, with no
glue, for models built from lucidrains ``hyper-connections`` (streams folded into the batch;
``H_res`` read by :mod:`.hclib` from the library's own code). The gains of the products are
those of :func:`depthdyn.products.hc.composite_gains` (each token one sample).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from ...errors import ParameterError, ShapeError
from ...products.hc import CompositeGains, composite_gains
from ...records import Record
from .hclib import library_classes, library_layers, library_mixing
from .readonly import frozen
from .record import Recording

__all__ = ["HCProfile", "hc_layers", "hc_profile"]


@dataclass(frozen=True, eq=False)
class HCProfile(Record):
    """The ``H_res`` of every layer and token of one recorded forward, and their composite gains.

    Attributes
    ----------
    matrices : ndarray
        ``(L, N, n, n)``: ``H_res^(l)`` of every token (``N`` = all leading axes of the stream
        state flattened: samples, or samples x positions).
    gains : CompositeGains
        :func:`depthdyn.products.hc.composite_gains` of the products over depth, one sample
        per token (logs of the gains, the second singular value, the stochastic defect).
    streams : int
    """

    matrices: np.ndarray
    gains: CompositeGains
    streams: int

    @property
    def products(self) -> np.ndarray:
        """``(L, N, n, n)``: the composites ``P_l`` of every token."""
        out, P = [], None
        for H in self.matrices:
            P = H if P is None else H @ P
            out.append(P)
        return np.stack(out)

    @property
    def forward_gain(self) -> np.ndarray:
        """``(L, N)``: ``||P_l||_inf``, the largest absolute row sum."""
        return np.exp(self.gains.log_row_gain.T)

    @property
    def backward_gain(self) -> np.ndarray:
        """``(L, N)``: ``||P_l||_1``, the largest absolute column sum."""
        return np.exp(self.gains.log_col_gain.T)

    @property
    def homogenisation(self) -> np.ndarray:
        """``(L, N)``: ``sigma_2(P_l)`` (0 once every stream is the mean)."""
        return np.exp(self.gains.log_sigma2.T)

    @property
    def spectral_norm(self) -> np.ndarray:
        """``(L, N)``: ``||P_l||_2``."""
        return np.linalg.norm(self.products, 2, axis=(-2, -1))

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
            "max_spectral_norm": float(self.spectral_norm[-1].max()),
            "forward_gain_by_depth": self.forward_gain.max(axis=1).tolist(),
            "backward_gain_by_depth": self.backward_gain.max(axis=1).tolist(),
            "spectral_norm_by_depth": self.spectral_norm.max(axis=1).tolist(),
            "homogenisation_by_depth": self.homogenisation.mean(axis=1).tolist(),
            "max_stochastic_defect": float(self.gains.stochastic_defect.max()),
        }

    def _text(self) -> str:
        return (
            f"hyper-connections, {self.streams} streams, {self.matrices.shape[1]} tokens, "
            f"{self.matrices.shape[0]} layers: forward gain up to {self.max_forward_gain:.4g}, "
            f"backward gain up to {self.max_backward_gain:.4g}, "
            f"sigma_2 of the composite {self.homogenisation[-1].mean():.3g} (0 = all streams mixed)"
        )

    def _latex(self) -> str:
        return (rf"\max_t \|P_L\|_\infty = {self.max_forward_gain:.4g},\ "
                rf"\max_t \|P_L\|_1 = {self.max_backward_gain:.4g}")


def _default_mixing(layer, state, name):
    """``H_res`` ``(N, n, n)`` of a depthdyn block or a library layer, or a typed refusal."""
    if library_classes() and isinstance(layer, library_classes()):
        return library_mixing(layer, state, name)
    if hasattr(layer, "mixing_matrices"):
        return _tokens(layer.mixing_matrices(state)[0], state, name)
    coefficients = getattr(layer, "coefficients", None)
    static = coefficients() if callable(coefficients) else {}
    if "H_res" in static:  # a block with a fixed mixing matrix
        return _tokens(static["H_res"], state, name)
    inner = [n for n, _ in library_layers(layer)]
    hint = f" (it holds the hyper-connection layers {inner[:4]}: record at hc_layers(model))" if inner else ""
    raise ParameterError(
        f"layer {name} ({type(layer).__name__}) is neither depthdyn's HyperConnectionBlock "
        "(mixing_matrices, H_res) nor a hyper-connections layer (HyperConnections, "
        f"ManifoldConstrainedHyperConnections){hint}; pass mixing=lambda layer, state: H_res"
    )


def _tokens(H, state, name):
    """``H`` of shape ``(n, n)`` or ``(*state.shape[:-2], n, n)`` as ``(N, n, n)``."""
    n = state.shape[-2] if state.dim() >= 2 else 0
    H = torch.as_tensor(H)
    lead = state.shape[:-2]
    if H.dim() < 2 or H.shape[-2:] != (n, n):
        raise ShapeError(f"H_res of layer {name} has shape {tuple(H.shape)}; expected (..., {n}, {n})")
    try:
        return H.expand(*lead, n, n).reshape(-1, n, n)
    except RuntimeError:
        raise ShapeError(
            f"H_res of layer {name} has shape {tuple(H.shape)}, which fits no token of the "
            f"state {tuple(state.shape)}"
        ) from None


def hc_layers(model) -> list | None:
    """The library hyper-connection layers of ``model`` in module order (the ``layers`` to record
    it at), or ``None`` where it has none (the common layouts apply)."""
    return [m for _, m in library_layers(model)] or None


def hc_profile(recording: Recording, *, mixing: Callable | None = None) -> HCProfile:
    """Per-token composite ``H_res`` over depth of one recorded forward of a hyper-connection model.

    Parameters
    ----------
    recording : Recording
        :func:`~depthdyn.nn.analysis.record.record` of a model of depthdyn's
        :class:`~depthdyn.nn.blocks.hyper.HyperConnectionBlock` (state ``(..., n, d)``, ``H_res``
        from the block's ``mixing_matrices``; a block with a fixed ``coefficients()["H_res"]``
        also works), or of one built from lucidrains ``hyper-connections`` recorded at
        :func:`hc_layers` (``HyperConnections``, mHC's ``ManifoldConstrainedHyperConnections``:
        streams folded into the batch as ``(b s) ... d``; the ``mHCv2`` one: ``... s d``;
        ``H_res`` read from the layer's own ``width_connection``, see
        :mod:`~depthdyn.nn.analysis.hclib`). Tokens are the state's leading axes with the
        streams taken out (``b`` major). Any other model needs ``mixing``. Nothing is run
        again but the mixing itself.
    mixing : callable, optional
        ``mixing(layer, state) -> H_res`` with shape ``(n, n)`` (static) or
        ``(*state.shape[:-2], n, n)`` (per token), for a state ``(..., n, d)``.

    Raises
    ------
    ParameterError
        ``recording`` is not a Recording, or a layer is none of the kinds above and no
        ``mixing`` is given.
    ShapeError
        ``H_res`` is not ``n x n`` for the state's ``n`` streams, a library layer's state is
        not in its layout, or layers disagree on the tokens or streams.
    """
    if not isinstance(recording, Recording):
        raise ParameterError(
            "hc_profile reads a Recording (record(model, inputs, hc_layers(model))), got "
            f"{type(recording).__name__}"
        )
    out = []
    with torch.no_grad():
        for call in recording.calls:
            state = call.state.detach()
            if mixing is None:
                H = _default_mixing(call.module, state, call.name)
            else:
                H = _tokens(mixing(call.module, state), state, call.name)
            H = H.detach().to("cpu", torch.float64)
            if out and H.shape != out[0].shape:
                raise ShapeError(
                    f"layer {call.name} has H_res for {H.shape[0]} tokens of {H.shape[-1]} streams, the "
                    f"layers before it {out[0].shape[0]} tokens of {out[0].shape[-1]}: the product over "
                    "depth needs the same tokens and streams at every layer"
                )
            out.append(H)
    mats = torch.stack(out).numpy()
    return HCProfile(
        matrices=frozen(mats), gains=composite_gains(mats.transpose(1, 0, 2, 3)), streams=int(mats.shape[-1])
    )
