"""Models dispatched by accelerate (``device_map``): analysed where each layer lives.

A model loaded with ``device_map`` (``from_pretrained(..., device_map=...)``,
``accelerate.dispatch_model``) has its layers spread over GPUs, the CPU and the disk; hooks
on the modules move each module's inputs to its device and, for offloaded modules, load the
module's weights just before its forward and drop them just after. :func:`~.inspection.inspect`
calls the model and its layers as they are, so those hooks run for every recorded forward and
every Jacobian product: a layer's weights are in memory while that layer is computed.

Two things would still gather the model: a copy in another dtype (``copy.deepcopy(model).to``
loads every weight), which :func:`analysis_dtype_of` refuses for a dispatched model, and the
autograd graph of the recorded forward, which keeps every weight a layer saved for its
backward. :func:`weights_by_reference` makes the graph keep, for offloaded weights, where to
reload them from instead of the tensors (``torch.autograd.graph.saved_tensors_hooks``), and
loads them without ``requires_grad`` (an ``AccumulateGrad`` node would hold them too): the
backward through the recording loads each module's weights again as it reaches it. The
Jacobian products of a layer run with its weights loaded once (:func:`loaded`), and their
graphs are freed when the layer is done (:meth:`~.operators.LayerOperator.release`).
"""

from __future__ import annotations

import contextlib

import torch
from torch import nn

from ...errors import ParameterError

__all__ = ["check_dispatched_dtype", "dispatched", "loaded", "offloaded_names", "weights_by_reference"]


def _hooks(module: nn.Module) -> list:
    """accelerate's hooks on ``module`` (a ``SequentialHook`` holds several)."""
    hook = getattr(module, "_hf_hook", None)
    if hook is None:
        return []
    return list(getattr(hook, "hooks", [hook]))


def dispatched(model: nn.Module) -> bool:
    """Whether accelerate's device hooks are attached anywhere in ``model``."""
    return any(_hooks(m) for m in model.modules())


def _offloading(model: nn.Module):
    """``(module name, module, hook)`` of every hook that loads its module's weights on demand."""
    for name, mod in model.named_modules():
        for hook in _hooks(mod):
            if getattr(hook, "weights_map", None) is not None and hasattr(hook, "offload"):
                yield name, mod, hook


def offloaded_names(model: nn.Module) -> set[str]:
    """Names of the parameters and buffers that an offload hook materialises (meta until then)."""
    out = set()
    for name, mod, hook in _offloading(model):
        if not hook.offload:
            continue
        tensors = (*mod.named_parameters(recurse=hook.place_submodules),
                   *mod.named_buffers(recurse=hook.place_submodules))
        out.update(f"{name}.{n}" if name else n for n, _ in tensors)
    return out


def check_dispatched_dtype(model_dtype: torch.dtype, requested: torch.dtype | None) -> None:
    """A dispatched model is analysed in its own dtype: a copy in another would gather it."""
    want = requested or model_dtype
    if model_dtype not in (torch.float32, torch.float64) or want != model_dtype:
        name = str(model_dtype).replace("torch.", "")
        raise ParameterError(
            f"the model is dispatched by accelerate (device_map) in {name}; a copy in "
            f"{str(want if want != model_dtype else torch.float32).replace('torch.', '')} would load every "
            "weight at once: load it in the dtype to analyse, e.g. from_pretrained(..., device_map=..., "
            "torch_dtype=torch.float32)"
        )


class _Reload:
    """A saved tensor that is an offloaded weight: where to load it from, and its view."""

    __slots__ = ("source", "name", "device", "dtype", "size", "stride", "offset")

    def __init__(self, source, name, t: torch.Tensor):
        self.source, self.name = source, name
        self.device, self.dtype = t.device, t.dtype
        self.size, self.stride, self.offset = t.size(), t.stride(), t.storage_offset()

    def load(self) -> torch.Tensor:
        value = self.source[self.name].to(device=self.device, dtype=self.dtype)
        return value.as_strided(self.size, self.stride, self.offset)


@contextlib.contextmanager
def weights_by_reference(model: nn.Module):
    """Autograd graphs built inside keep offloaded weights as references, reloaded at backward.

    While an offload hook has its module's weights loaded, their storages are known; a tensor
    saved for backward on one of those storages is replaced by a :class:`_Reload`. Everything
    else is saved as usual. A no-op for a model without offloaded modules.
    """
    hooked = [h for h in _offloading(model) if h[2].offload]
    if not hooked:
        yield
        return
    live: dict[tuple, tuple] = {}

    def tensors(mod, hook):
        yield from mod.named_parameters(recurse=hook.place_submodules)
        yield from mod.named_buffers(recurse=hook.place_submodules)

    def wrap(mod, hook):
        pre, post = hook.pre_forward, hook.post_forward

        def pre_forward(module, *args, **kwargs):
            out = pre(module, *args, **kwargs)
            for n, t in tensors(mod, hook):
                if t.device.type != "meta" and t.numel():
                    live[(t.device, t.untyped_storage().data_ptr())] = (hook.weights_map, n)
            return out

        def post_forward(module, output):
            for _, t in tensors(mod, hook):
                if t.device.type != "meta" and t.numel():
                    live.pop((t.device, t.untyped_storage().data_ptr()), None)
            return post(module, output)

        hook.pre_forward, hook.post_forward = pre_forward, post_forward

    def pack(t):
        if t.numel():
            where = live.get((t.device, t.untyped_storage().data_ptr()))
            if where is not None:
                return _Reload(*where, t)
        return t

    def unpack(t):
        return t.load() if isinstance(t, _Reload) else t

    # a weight that requires grad is held by its AccumulateGrad node as well: the analysis needs
    # gradients with respect to the states only, so the offloaded weights load without
    frozen = [p for _, mod, hook in hooked for p in mod.parameters(recurse=hook.place_submodules)
              if p.requires_grad]
    for p in frozen:
        p.requires_grad_(False)
    for _, mod, hook in hooked:
        wrap(mod, hook)
    try:
        with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
            yield
    finally:
        for _, _, hook in hooked:  # the instance attributes set above shadow the class's methods
            del hook.pre_forward, hook.post_forward
        for p in frozen:
            p.requires_grad_(True)


@contextlib.contextmanager
def loaded(module: nn.Module):
    """The offloaded weights of ``module`` (and its submodules) loaded onto their execution
    devices for the duration, the hooks told not to load or drop them meanwhile.

    The analysis of one layer runs inside: its Jacobian products are ``torch.func``
    transforms, inside which accelerate's loading cannot run, and one load serves all of them.
    Re-entrant; a no-op for a module without offloaded weights.
    """
    hooked = [(mod, hook) for _, mod, hook in _offloading(module) if hook.offload]
    if not hooked:
        yield
        return
    from accelerate.utils import named_module_tensors, set_module_tensor_to_device

    def names(mod, hook):
        return [n for n, _ in named_module_tensors(mod, include_buffers=hook.offload_buffers,
                                                   recurse=hook.place_submodules, remove_non_persistent=True)]

    for mod, hook in hooked:
        for n in names(mod, hook):
            set_module_tensor_to_device(mod, n, hook.execution_device, value=hook.weights_map[n])
        hook.offload = False
    try:
        yield
    finally:
        for mod, hook in hooked:
            hook.offload = True
            for n in names(mod, hook):
                set_module_tensor_to_device(mod, n, "meta")
