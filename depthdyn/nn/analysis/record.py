"""Find a model's residual layers and record its residual stream during its own forward.

Hooks on each layer keep, during the model's real forward, the layer's input state, every
other argument of its call (attention masks, position embeddings, flags) and its output.
Nothing is re-derived: a layer's function for the analysis is the layer called with exactly
the arguments the model gave it, in the model's dtype and on its device, so masks,
float32-internal norms and position encodings are what the model used.

Layers are found from a ``ModuleList``/``Sequential`` (or any list of the model's modules),
from name patterns such as ``"transformer.h.*"`` or ``"model.layers.*"``, or, with
``layers=None``, from the common layouts in :data:`LAYOUTS`.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import torch
from torch import nn

from ...errors import ParameterError, ShapeError

__all__ = ["LAYOUTS", "Call", "Recording", "detached", "find_layers", "first_tensor", "record"]

#: Where common models keep their residual layers, tried in order when ``layers=None``:
#: (attribute path, what it is). torchvision ResNets are recognised by their stages
#: ``layer1`` .. ``layer4`` (every residual block of every stage, in order).
LAYOUTS: tuple[tuple[str, str], ...] = (
    ("blocks", "depthdyn DepthStack / timm ViT blocks"),
    ("stack.blocks", "depthdyn DepthModel"),
    ("transformer.h", "Hugging Face GPT-2 decoder layers"),
    ("h", "Hugging Face GPT2Model (the bare model) decoder layers"),
    ("model.layers", "Hugging Face LLaMA-style decoder layers"),
    ("layers", "a model's own ModuleList"),
    ("gpt_neox.layers", "Hugging Face GPT-NeoX decoder layers"),
    ("encoder.layer", "Hugging Face BERT-style encoder layers"),
    ("encoder.layers", "encoder layers (torchvision ViT, BART-style)"),
)

_RESNET_STAGES = ("layer1", "layer2", "layer3", "layer4")

#: Keyword names under which a layer may receive its state instead of positionally.
_STATE_KEYWORDS = ("hidden_states", "x", "input", "state")


def _resolve_path(model: nn.Module, path: str):
    try:
        return model.get_submodule(path)
    except AttributeError:
        return None


def _sequence(mod) -> list[nn.Module] | None:
    if isinstance(mod, (nn.ModuleList, nn.Sequential)) and len(mod) >= 1:
        return list(mod)
    return None


def _matches(name: str, pattern: str) -> bool:
    """``fnmatch`` per dotted part: ``"transformer.h.*"`` matches ``transformer.h.0`` only."""
    parts, pats = name.split("."), pattern.split(".")
    return len(parts) == len(pats) and all(
        fnmatch.fnmatchcase(a, p) for a, p in zip(parts, pats, strict=True)
    )


def find_layers(model: nn.Module, layers=None) -> list[tuple[str, nn.Module]]:
    """``(name, module)`` of the residual layers of ``model``, in forward order.

    Parameters
    ----------
    model : torch.nn.Module
    layers : None, str, sequence of str, ModuleList/Sequential or sequence of modules
        ``None``: the first of :data:`LAYOUTS` (or torchvision ResNet stages) that the model
        has, also under a Hugging Face model's base model (``base_model_prefix``: the layers of
        ``ViTForImageClassification`` at ``vit.encoder.layer``). A string is an ``fnmatch``
        pattern on the names of ``model.named_modules()``
        (``"transformer.h.*"`` matches ``transformer.h.0`` but not ``transformer.h.0.attn``).

    Raises
    ------
    ParameterError
        Nothing matched; the message lists the candidate ``ModuleList`` names.
    """
    if not isinstance(model, nn.Module):
        raise ParameterError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    names = {id(m): n for n, m in model.named_modules()}
    if layers is None:
        found = None
        # a Hugging Face model with a head keeps its layers in the base model (vit.encoder.layer)
        base = getattr(model, "base_model_prefix", "")
        prefixes = ("", f"{base}.") if isinstance(base, str) and base else ("",)
        for path in (pre + p for pre in prefixes for p, _ in LAYOUTS):
            found = _sequence(_resolve_path(model, path))
            if found:
                break
        if not found and all(_sequence(_resolve_path(model, s)) for s in _RESNET_STAGES):
            found = [b for s in _RESNET_STAGES for b in model.get_submodule(s)]
        if not found:
            candidates = [
                n for n, m in model.named_modules() if isinstance(m, (nn.ModuleList, nn.Sequential))
            ]
            raise ParameterError(
                f"no residual layers found in {type(model).__name__} at the known places "
                f"({', '.join(p for p, _ in LAYOUTS)}); pass layers= a ModuleList or a name pattern, "
                f"e.g. one of: {', '.join(candidates[:8]) or '(no ModuleList in the model)'}"
            )
        return [(names.get(id(m), f"layers[{i}]"), m) for i, m in enumerate(found)]
    if isinstance(layers, str) or (
        isinstance(layers, (list, tuple)) and layers and all(isinstance(p, str) for p in layers)
    ):
        patterns = [layers] if isinstance(layers, str) else list(layers)
        found = [(n, m) for n, m in model.named_modules() if n and any(_matches(n, p) for p in patterns)]
        if not found:
            raise ParameterError(f"no module of {type(model).__name__} matches {patterns}")
        return found
    if isinstance(layers, nn.Module) and not isinstance(layers, (nn.ModuleList, nn.Sequential)):
        layers = [layers]
    if not isinstance(layers, Iterable):
        raise ParameterError(
            f"layers must be a ModuleList, a list of modules or a name pattern, got {layers!r}"
        )
    mods = list(layers)
    if not mods or not all(isinstance(m, nn.Module) for m in mods):
        raise ParameterError("layers must hold at least one torch.nn.Module")
    missing = [i for i, m in enumerate(mods) if id(m) not in names]
    if missing:
        raise ParameterError(f"layers {missing} are not submodules of the model")
    return [(names[id(m)], m) for m in mods]


def _state_of(args: tuple, kwargs: dict) -> tuple[torch.Tensor, str | int]:
    if args and isinstance(args[0], torch.Tensor):
        return args[0], 0
    for key in _STATE_KEYWORDS:
        if isinstance(kwargs.get(key), torch.Tensor):
            return kwargs[key], key
    raise ShapeError("a layer was called without a tensor as its first argument or as hidden_states=")


def first_tensor(out) -> torch.Tensor:
    if isinstance(out, torch.Tensor):
        return out
    if isinstance(out, Mapping):
        out = list(out.values())
    if isinstance(out, (tuple, list)):
        for o in out:
            if isinstance(o, torch.Tensor):
                return o
    raise ShapeError(f"cannot read a tensor state from a layer output of type {type(out).__name__}")


def detached(value):
    """Tensors (also inside tuples, lists and dicts) detached: constants of the layer function."""
    if isinstance(value, torch.Tensor):
        return value.detach()
    if isinstance(value, (tuple, list)):
        return type(value)(detached(v) for v in value)
    if isinstance(value, dict):
        return {k: detached(v) for k, v in value.items()}
    return value


def _no_cache(kwargs: dict, name: str) -> None:
    for key, value in kwargs.items():
        if value is not None and type(value).__name__.endswith("Cache"):
            raise ParameterError(
                f"layer {name} was called with a key/value cache ({key}); call the model with "
                "use_cache=False to analyse it (a cached step would be appended to during the analysis)"
            )


@dataclass(frozen=True, eq=False)
class Call:
    """One recorded layer call: its input state, the rest of its arguments, its output state."""

    name: str
    module: nn.Module
    state: torch.Tensor
    where: str | int
    args: tuple
    kwargs: dict
    output: torch.Tensor

    def function(self):
        """The layer as a function of its state alone, the other arguments as recorded."""

        args, kwargs = detached(self.args), detached(self.kwargs)

        def fn(x):
            x = x.clone()  # a layer that updates its input in place (x += h) must not touch ours
            if self.where == 0:
                out = self.module(x, *args[1:], **kwargs)
            else:
                out = self.module(*args, **{**kwargs, self.where: x})
            return first_tensor(out)

        return fn


@dataclass(frozen=True, eq=False)
class Recording:
    """The residual stream of one forward pass: one :class:`Call` per layer and the model output.

    ``states[0]`` is the first layer's input and ``states[l + 1]`` layer ``l``'s output
    (with the graph of the forward attached, for gradients).
    """

    calls: tuple[Call, ...]
    output: object

    @property
    def states(self) -> tuple[torch.Tensor, ...]:
        return (self.calls[0].state, *(c.output for c in self.calls))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.calls)


def call_model(model: nn.Module, inputs):
    """``model(**inputs)`` for a mapping, ``model(*inputs)`` for a tuple, else ``model(inputs)``."""
    if isinstance(inputs, Mapping):
        return model(**inputs)
    if isinstance(inputs, tuple):
        return model(*inputs)
    return model(inputs)


def record(model: nn.Module, inputs, layers=None, *, found=None, graph: bool = True) -> Recording:
    """Run ``model`` on ``inputs`` once with hooks on its residual layers.

    The one recorder of depthdyn: every analysis of a forward (profiles, gradients, Jacobians,
    ``H_res`` products, placement) reads the :class:`Recording` it returns.

    With ``graph`` (the default) the forward runs with grad enabled and a layer input that
    carries no graph (the first layer of a model whose inputs and earlier parameters need no
    gradient) is marked ``requires_grad``, so that gradients with respect to the states exist;
    values are untouched. ``graph=False`` runs under ``no_grad`` (states only). Each layer must
    be called once per forward; ``found`` is a :func:`find_layers` result to reuse.
    """
    found = find_layers(model, layers) if found is None else found
    calls: dict[int, dict] = {}
    handles = []

    def pre(i, name):
        def hook(module, args, kwargs):
            if i in calls:
                raise ParameterError(f"layer {name} was called twice in one forward; pass its stages instead")
            x, where = _state_of(args, kwargs)
            if not x.is_floating_point():
                raise ShapeError(
                    f"layer {name} received a {x.dtype} state; the residual stream must be floating"
                )
            _no_cache(kwargs, name)
            if graph and not x.requires_grad:
                x = x.detach().requires_grad_(True)
            # the layer gets a copy: an in-place residual update (x += h) must leave the recorded
            # state as it was (and a leaf that requires grad cannot be updated in place at all)
            given = x.clone()
            if where == 0:
                args = (given, *args[1:])
            else:
                kwargs = {**kwargs, where: given}
            calls[i] = {
                "name": name,
                "module": module,
                "state": x,
                "where": where,
                "args": args,
                "kwargs": kwargs,
            }
            return args, kwargs

        return hook

    def post(i):
        def hook(module, args, kwargs, out):
            calls[i]["output"] = first_tensor(out)
            if isinstance(out, torch.Tensor):  # the model goes on with a copy (in-place updates later)
                return out.clone()
            return None

        return hook

    for i, (name, mod) in enumerate(found):
        handles.append(mod.register_forward_pre_hook(pre(i, name), with_kwargs=True))
        handles.append(mod.register_forward_hook(post(i), with_kwargs=True))
    try:
        with torch.set_grad_enabled(graph):
            output = call_model(model, inputs)
    finally:
        for h in handles:
            h.remove()
    missing = [found[i][0] for i in range(len(found)) if "output" not in calls.get(i, {})]
    if missing:
        raise ParameterError(f"layers {missing} were not called by the model's forward")
    return Recording(tuple(Call(**calls[i]) for i in range(len(found))), output)
