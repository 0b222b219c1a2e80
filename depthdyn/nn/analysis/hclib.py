"""``H_res`` of lucidrains ``hyper-connections`` layers, read from the library's own code.

The library (``pip install hyper-connections``) folds the ``n`` residual streams of a layer
into the batch axis in ``HyperConnections`` and ``ManifoldConstrainedHyperConnections`` (mHC):
the state is ``(b s) ... d`` (``channel_first``: ``(b s) d ...``), with ``s`` the minor index.
The mHC of ``hyper_connections.mHCv2`` (used by the library's ViT) keeps them as an axis of
their own, ``... s d``, as depthdyn does. Each layer's ``width_connection(residuals)``
computes its mixing weights ``alpha`` from the RMS-normed streams (a static plus a dynamic,
state-dependent part; in mHC the residual part goes through Sinkhorn, in float32) and returns
the mixed residual streams ``H_res X`` beside the branch input.

With the normed streams held fixed that output is linear in the streams, so ``H_res`` at a
recorded state is read by calling ``width_connection`` twice: on the state itself (keeping
the input of the layer's ``norm``, the streams ``alpha`` depends on), then on an identity
probe whose features are the unit vectors (stream ``j`` of every token carries ``e_j``) with
the norm given the kept input, so that ``alpha`` is that of the state. The probe's mixed
streams are then ``H_res`` of every token, row ``i`` = output stream ``i``. Nothing of the
library's formulas is repeated here; what this module knows is the documented layout. With
``num_fracs = f > 1`` (frac-connections) the ``f`` fractions of the ``n`` streams are mixed
together: ``H_res`` is ``(f n) x (f n)``, index ``fraction * n + stream``.

The library is never imported here: a model built from it has already imported it, so its
classes are looked up in :data:`sys.modules`.
"""

from __future__ import annotations

import math
import sys

import torch
from torch import nn

from ...errors import ParameterError, ShapeError

__all__ = ["library_classes", "library_layers", "library_mixing"]

#: (module, class, streams folded into the batch) of the layers :func:`library_mixing` reads.
CLASSES: tuple[tuple[str, str, bool], ...] = (
    ("hyper_connections.hyper_connections", "HyperConnections", True),
    ("hyper_connections.manifold_constrained_hyper_connections", "ManifoldConstrainedHyperConnections", True),
    ("hyper_connections.mHCv2", "ManifoldConstrainedHyperConnections", False),
)


def _loaded() -> dict[type, bool]:
    found = {}
    for module, name, folded in CLASSES:
        cls = getattr(sys.modules.get(module), name, None)
        if isinstance(cls, type):
            found[cls] = folded
    return found


def library_classes() -> tuple[type, ...]:
    """The library's hyper-connection classes that are loaded (empty when it is not imported)."""
    return tuple(_loaded())


def library_layers(model: nn.Module) -> list[tuple[str, nn.Module]]:
    """``(name, layer)`` of every library hyper-connection layer in ``model``, in module order."""
    classes = library_classes()
    if not classes:
        return []
    return [(n, m) for n, m in model.named_modules() if isinstance(m, classes)]


def _probe(state: torch.Tensor, n: int, f: int, folded: bool, channel_first: bool) -> torch.Tensor:
    """Stream ``s`` of fraction ``g`` of every token carries ``e_(g n + s)`` (width ``f n``)."""
    m = f * n
    E = torch.eye(m, dtype=state.dtype, device=state.device).reshape(f, n, m).transpose(0, 1)
    if not folded:  # ... s (f d)
        return E.reshape(n, f * m).expand(*state.shape[:-2], n, f * m).contiguous()
    x = state.movedim(1, -1) if channel_first else state  # (b s) ... D
    b, pos = x.shape[0] // n, x.shape[1:-1]
    E = E.reshape(1, n, *(1,) * len(pos), f, m).expand(b, n, *pos, f, m)
    probe = E.reshape(b * n, *pos, f * m)
    return probe.movedim(-1, 1) if channel_first else probe


def library_mixing(layer: nn.Module, state: torch.Tensor, name: str = "") -> torch.Tensor:
    """``H_res`` of every token of ``state``: ``(N, f n, f n)``, ``N`` = ``b`` x positions.

    Tokens are in the order of the state with the streams taken out (``b`` major).

    Raises
    ------
    ShapeError
        The state is not in the layer's layout: its first axis is not a multiple of the
        stream count (``(b s) ... d``), its second-to-last axis is not the streams (mHCv2,
        ``... s d``), or its features do not split into the fractions.
    ParameterError
        A layer whose skip is not a stream mixing (``add_branch_out_to_residual=False``, a
        ``residual_transform``), an mHC layer with ``channel_first``, or a library version
        whose ``width_connection`` does not call its ``norm`` once.
    """
    label = f"layer {name} ({type(layer).__name__})" if name else type(layer).__name__
    folded = _loaded().get(type(layer), True)
    n, f = int(layer.num_residual_streams), int(getattr(layer, "num_fracs", 1))
    channel_first = bool(getattr(layer, "channel_first", False))
    if not getattr(layer, "add_branch_out_to_residual", True):
        raise ParameterError(
            f"{label} has add_branch_out_to_residual=False: its output is the branch alone and no "
            "residual stream is carried over; pass mixing= if a mixing matrix applies"
        )
    transform = getattr(layer, "residual_transform", None)
    if transform is not None and not isinstance(transform, nn.Identity):
        raise ParameterError(
            f"{label} has a residual_transform ({type(transform).__name__}): its skip is not a "
            "mixing of the streams alone; pass mixing=lambda layer, state: H_res"
        )
    if channel_first and not (folded and type(layer).__name__ == "HyperConnections"):
        raise ParameterError(
            f"{label} with channel_first=True is not read; pass mixing=lambda layer, state: H_res"
        )
    if not folded and (state.dim() < 2 or state.shape[-2] != n):
        raise ShapeError(
            f"{label} carries {n} streams as the state's second-to-last axis (... s d), but its "
            f"state has shape {tuple(state.shape)}"
        )
    if folded and (state.dim() < 2 or state.shape[0] % n):
        raise ShapeError(
            f"{label} carries {n} streams folded into the batch axis as (b s) ... d, but its state "
            f"has shape {tuple(state.shape)}: the first axis is not a multiple of {n}"
        )
    width = state.shape[1] if channel_first else state.shape[-1]
    if width % f:
        raise ShapeError(f"{label}: feature width {width} does not split into {f} fractions")
    kept: list[tuple] = []

    def hold(module, args):  # the first call keeps the norm's input, the probe's call gets it
        kept.append(args)
        return kept[0] if len(kept) > 1 else None

    handle = layer.norm.register_forward_pre_hook(hold)
    try:
        with torch.no_grad():
            layer.width_connection(state)
            mixed = layer.width_connection(_probe(state, n, f, folded, channel_first))[1]
    finally:
        handle.remove()
    if len(kept) != 2:
        raise ParameterError(
            f"{label}: width_connection called its norm {len(kept)} times for two calls; this "
            "version of hyper-connections is not read here; pass mixing=lambda layer, state: H_res"
        )
    m = f * n
    if not folded:  # ... t (g k)
        return mixed.reshape(-1, n, f, m).transpose(1, 2).reshape(-1, m, m)
    out = mixed.movedim(1, -1) if channel_first else mixed  # (b t) ... (g k)
    b, pos = out.shape[0] // n, out.shape[1:-1]
    H = out.reshape(b, n, *pos, f, m).movedim(1, -2)  # b ... g t k
    return H.reshape(b * math.prod(pos), m, m)
