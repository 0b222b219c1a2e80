"""Depth steps of a model: whole layers, or attention and MLP as two steps of one layer.

A transformer layer updates its residual stream twice: ``h = x + attn(x)``, then
``y = h + mlp(h)``. Taken as two depth steps it is the period-2 pattern attention -> MLP.
:data:`SPLITS` knows where the shipped layer classes keep the stream between the two: the
module whose input is ``h`` (``ln_2`` of GPT-2, ``post_attention_layernorm`` of LLaMA, ...)
and the MLP step as a function of ``h``. The attention step runs the recorded layer call
(the model's own masks and positions) and stops at that module's input; the MLP step is
replayed from the layer's own submodules, and the recording checks both: ``mlp(h)`` must give
the layer's recorded output (``accuracy["recording"]``; a mismatch is an error).

:class:`Step` is what :func:`~.inspection.inspect` analyses; :class:`~.product.ProductOperator`
multiplies step operators (a layer from its two steps, or the whole depth) for per-layer
views and end-to-end growth.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import torch
from torch import nn

from ...errors import ParameterError
from .local import cached_attention, tokenwise

__all__ = ["SPLITS", "Split", "Step", "capture_mids", "layer_steps", "momentum_layout", "split_steps"]


@dataclass(frozen=True)
class Split:
    """Where a layer class splits: ``mid`` the submodule whose first input is the stream after
    attention; ``mlp(layer, h)`` the MLP step (with its residual) as a function of it."""

    mid: str
    mlp: Callable


def _pre_norm(norm: str, mlp: str = "mlp"):
    return lambda b, h: h + getattr(b, mlp)(getattr(b, norm)(h))


def _vit_mlp(b, h):
    if isinstance(getattr(b, "mlp", None), nn.Module):  # transformers >= 5
        return h + b.dropout(b.mlp(b.layernorm_after(h)))
    return b.output(b.intermediate(b.layernorm_after(h)), h)


#: Known layer classes (by class name): Hugging Face GPT-2, LLaMA (and Mistral/Qwen2 layers of
#: the same layout), BERT, ViT, timm's ViT ``Block`` and depthdyn's GPT-2-style zoo block.
SPLITS: Mapping[str, Split] = {
    "GPT2Block": Split("ln_2", _pre_norm("ln_2")),
    "_GPT2Block": Split("ln_2", _pre_norm("ln_2")),
    "LlamaDecoderLayer": Split("post_attention_layernorm", _pre_norm("post_attention_layernorm")),
    "MistralDecoderLayer": Split("post_attention_layernorm", _pre_norm("post_attention_layernorm")),
    "Qwen2DecoderLayer": Split("post_attention_layernorm", _pre_norm("post_attention_layernorm")),
    "BertLayer": Split("intermediate", lambda b, h: b.output(b.intermediate(h), h)),
    "ViTLayer": Split("layernorm_after", _vit_mlp),
    "Block": Split("norm2", lambda b, h: h + b.drop_path2(b.ls2(b.mlp(b.norm2(h))))),
}


@dataclass(frozen=True, eq=False)
class Step:
    """One depth step: ``output = function(state)``; ``kind`` is ``layer``, ``attention`` or ``mlp``;
    ``layer`` the index of the model layer it belongs to."""

    name: str
    module: nn.Module
    state: torch.Tensor
    output: torch.Tensor
    function: Callable
    kind: str
    layer: int
    local: Callable | None = None  # token-local candidates (see :mod:`.local`)


class _Stop(Exception):
    """Raised by a hook to end a layer's forward at the stream between its two steps."""


def _until(fn, mid: nn.Module, name: str):
    """``x -> h``: the recorded layer call, stopped at ``mid``'s first input."""

    def step(x):
        box = {}

        def hook(module, args):
            box["h"] = args[0]
            raise _Stop

        handle = mid.register_forward_pre_hook(hook)
        try:
            fn(x)
        except _Stop:
            return box["h"]
        finally:
            handle.remove()
        raise ParameterError(f"layer {name} never called its {type(mid).__name__}: it cannot be split there")

    return step


def _split_of(module: nn.Module, splits: Mapping[str, Split]) -> Split:
    split = splits.get(type(module).__name__)
    if split is None or not isinstance(getattr(module, split.mid, None), nn.Module):
        raise ParameterError(
            f"no attention/MLP split known for {type(module).__name__}: pass split={{'"
            f"{type(module).__name__}': Split(mid='<submodule whose input is the stream after attention>', "
            "mlp=lambda layer, h: ...)}, or split=False"
        )
    return split


def capture_mids(layers: list[tuple[str, nn.Module]], splits: Mapping[str, Split]):
    """Hooks that keep, during the model's own forward, each layer's stream between its steps
    (graph attached, for gradients). Returns (store, handles)."""
    store: dict[int, torch.Tensor] = {}
    handles = []
    for i, (_, layer) in enumerate(layers):
        mid = getattr(layer, _split_of(layer, splits).mid)

        def hook(module, args, i=i):
            store.setdefault(i, args[0])

        handles.append(mid.register_forward_pre_hook(hook))
    return store, handles


def split_steps(calls, mids: dict, splits: Mapping[str, Split]) -> list[Step]:
    """Two steps per recorded layer call: attention (``x -> h``) and MLP (``h -> y``)."""
    steps = []
    for i, call in enumerate(calls):
        split = _split_of(call.module, splits)
        if i not in mids:
            raise ParameterError(f"layer {call.name} never called its {split.mid}: it cannot be split there")
        fn = call.function()
        mod = call.module
        mid = getattr(mod, split.mid)
        attn = _until(fn, mid, call.name)
        whole = cached_attention(call)
        attn_local = lambda tokens, whole=whole, mid=mid, name=call.name: [  # noqa: E731
            _until(f, mid, name) for f in whole(tokens)
        ]
        mlp = lambda h, mod=mod, split=split: split.mlp(mod, h)  # noqa: E731
        h = mids[i]
        steps.append(Step(f"{call.name}.attention", mod, call.state, h, attn, "attention", i, attn_local))
        steps.append(Step(f"{call.name}.mlp", mod, h, call.output, mlp, "mlp", i, tokenwise(mlp)))
    return steps


def layer_steps(calls, kind: str = "layer") -> list[Step]:
    return [
        Step(c.name, c.module, c.state, c.output, c.function(), kind, i, cached_attention(c))
        for i, c in enumerate(calls)
    ]


def momentum_layout(model: nn.Module):
    """``(gamma, functions)`` of the momentumnet ``MomentumNet`` modules inside ``model``, else None.

    Its state over depth is the pair ``(x, v)``: ``v' = gamma v + (1 - gamma) f(x)``,
    ``x' = x + v'`` (Sander et al. 2021); the recorded layers are the branch functions ``f``,
    whose Jacobians are the ``lam`` of the momentum family with ``m = gamma``, ``eta = 1 - gamma``.
    Several MomentumNets (``transform_to_momentumnet`` makes one per ResNet stage) give the
    functions of all of them, in order; they must share one ``gamma``.
    """
    nets = [
        (name, mod)
        for name, mod in model.named_modules()
        if type(mod).__name__.startswith("MomentumNet")
        and hasattr(mod, "gamma")
        and hasattr(mod, "functions")
    ]
    # MomentumNet wraps MomentumNetWithBackprop/NoBackprop as .network: count the outermost only
    inner = {id(getattr(mod, "network", None)) for _, mod in nets}
    nets = [(name, mod) for name, mod in nets if id(mod) not in inner]
    if not nets:
        return None
    if not all(getattr(getattr(mod, "network", mod), "is_residual", True) for _, mod in nets):
        raise ParameterError(
            "a MomentumNet with is_residual=False (f(x) - x as the branch) is not supported: "
            "pass layers= explicitly to analyse its functions as plain layers"
        )
    gammas = {float(mod.gamma) for _, mod in nets}
    if len(gammas) > 1:
        raise ParameterError(
            "the MomentumNets of this model have different gamma ("
            + ", ".join(f"{n}: {float(m.gamma):g}" for n, m in nets)
            + "): inspect each as a model of its own, inspect(net, its input)"
        )
    return gammas.pop(), [f for _, mod in nets for f in mod.functions]
