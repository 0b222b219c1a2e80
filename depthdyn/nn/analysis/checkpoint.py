"""Trained models from their checkpoints, for :func:`~depthdyn.nn.inspect`.

A researcher's question is about their trained network as it lies on disk:

* a Hugging Face ``save_pretrained`` directory (``config.json`` with its ``model_type`` and
  the weights, ``model.safetensors``, sharded or ``pytorch_model.bin``): loaded with
  ``local_files_only`` (nothing is downloaded), as the class in the config's
  ``architectures``;
* a timm checkpoint: a directory written by ``timm.models.save_for_hf`` (``config.json`` with
  its ``architecture``) or the file of timm's training script (``arch`` and ``state_dict``);
* a state dict (``.safetensors``, ``.pt``/``.pth``/``.bin``) with a callable that builds the
  architecture (the user's code): the weights are loaded into it, strictly.

:func:`load_checkpoint` returns the model in ``eval()`` mode on the device asked for, or
dispatched by accelerate over the available devices with ``device_map`` (layers on several
GPUs, the rest offloaded to the CPU and the disk). Every failure is one
:class:`~depthdyn.errors.ParameterError` line that names the file and what to do.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path

import torch
from torch import nn

from ...errors import OptionalDependencyError, ParameterError

__all__ = ["WEIGHT_FILES", "load_checkpoint", "load_state_dict", "pick_device"]

#: The weight files of a ``save_pretrained`` directory, any one of which holds its weights.
WEIGHT_FILES = (
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)


def pick_device(device: str | None, model: nn.Module | None = None) -> torch.device:
    """``"cpu"``, ``"cuda"``, ``"cuda:N"``; ``None``: the model's device, else CUDA when available."""
    if device is None:
        held = [t.device for t in (*model.parameters(), *model.buffers())] if model is not None else []
        held = [d for d in held if d.type != "meta"]
        if held:
            return held[0]
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError):
        raise ParameterError(f"unknown device {device!r}: give cpu, cuda, cuda:N or auto") from None
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ParameterError(
                f"device {device!r}: CUDA is not available here (torch {torch.__version__}); use --device cpu"
            )
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ParameterError(f"device {device!r}: only {torch.cuda.device_count()} CUDA devices here")
    elif dev.type != "cpu":
        raise ParameterError(f"unknown device {device!r}: give cpu, cuda, cuda:N or auto")
    return dev


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ParameterError(f"cannot read {path}: {exc}") from None
    except RecursionError:
        raise ParameterError(f"cannot read {path}: nested too deeply") from None
    if not isinstance(data, dict):
        raise ParameterError(f"{path} is not a JSON object")
    return data


def _unwrap(state, path: Path) -> dict:
    """The tensors of a state dict as training scripts save it: nested under ``state_dict`` or
    ``model``, keys prefixed ``module.`` by DistributedDataParallel."""
    for key in ("state_dict", "model", "model_state_dict"):
        if isinstance(state, Mapping) and isinstance(state.get(key), Mapping):
            state = state[key]
            break
    if not isinstance(state, Mapping) or not state or not all(
        isinstance(v, torch.Tensor) for v in state.values()
    ):
        raise ParameterError(f"{path} holds no state dict (a mapping of parameter names to tensors)")
    if all(k.startswith("module.") for k in state):
        state = {k[len("module."):]: v for k, v in state.items()}
    return dict(state)


def _read_state(path: Path):
    """The raw object in a weight file (safetensors, or torch's format read with ``weights_only``)."""
    if not path.is_file():
        raise ParameterError(f"no such checkpoint file: {path}")
    try:
        if path.suffix == ".safetensors":
            from safetensors.torch import load_file

            return load_file(str(path))
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - a truncated or foreign file fails in many ways
        raise ParameterError(
            f"cannot read the checkpoint {path} ({type(exc).__name__}: {str(exc).splitlines()[0][:120]}): "
            "missing, corrupt or not a weight file"
        ) from None


def load_state_dict(model: nn.Module, path) -> nn.Module:
    """Load the state dict in ``path`` into ``model`` (strict: every key must match)."""
    path = Path(path)
    return _fill(model, _unwrap(_read_state(path), path), path)


def _fill(model: nn.Module, state: dict, path: Path) -> nn.Module:
    name = type(model).__name__
    try:
        missing, unexpected = model.load_state_dict(state, strict=False)
    except RuntimeError as exc:  # shapes that do not fit
        lines = str(exc).splitlines()
        line = next((s.strip() for s in lines if "size mismatch" in s), lines[0] if lines else "")
        raise ParameterError(f"{path} does not fit {name}: {line[:200]}") from None
    # a tied weight (GPT-2's lm_head is wte) is stored once, safetensors refusing shared tensors
    loaded = {t.data_ptr() for k, t in model.state_dict().items() if k in state}
    missing = [k for k in missing if model.state_dict()[k].data_ptr() not in loaded]
    if missing or unexpected:
        raise ParameterError(
            f"{path} does not fit {name}: {len(missing)} missing keys ({', '.join(missing[:3]) or '-'}), "
            f"{len(unexpected)} unexpected ({', '.join(unexpected[:3]) or '-'})"
        )
    return model


def _transformers():
    try:
        import transformers
    except ImportError:
        raise OptionalDependencyError(
            'a save_pretrained directory needs transformers: pip install "depthdyn[models]"'
        ) from None
    return transformers


def _hf_class(transformers, config: dict, path: Path):
    kind = config.get("model_type")
    try:
        transformers.AutoConfig.for_model(kind)
    except (ValueError, KeyError):
        raise ParameterError(
            f"{path}: unknown architecture (model_type {kind!r} is not known to transformers "
            f"{transformers.__version__})"
        ) from None
    for name in config.get("architectures") or ():
        cls = getattr(transformers, name, None)
        if isinstance(cls, type):
            return cls
    return transformers.AutoModel


def _hf(path: Path, config: dict, *, dtype, device_map, max_memory, offload_folder):
    transformers = _transformers()
    if not any((path / f).is_file() for f in WEIGHT_FILES):
        raise ParameterError(
            f"{path} has a config but no weights ({', '.join(WEIGHT_FILES[::2])}): for random weights pass "
            "the config .json itself"
        )
    cls = _hf_class(transformers, config, path)
    opts = dict(local_files_only=True)
    if dtype is not None:
        opts["dtype"] = dtype
    if device_map is not None:
        try:
            import accelerate  # noqa: F401
        except ImportError:
            raise OptionalDependencyError(
                'device_map (--device auto) needs accelerate: pip install "depthdyn[models]"'
            ) from None
        opts.update(device_map=device_map, max_memory=max_memory, offload_folder=offload_folder)
    try:
        return cls.from_pretrained(str(path), **opts)
    except Exception as exc:  # noqa: BLE001 - a truncated file fails in many ways (safetensors' own errors)
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:160]
        raise ParameterError(
            f"cannot load {path} as {cls.__name__} ({type(exc).__name__}: {first}): missing or corrupt "
            "weights"
        ) from None


def _timm(arch: str, state: dict, path: Path, **kwargs) -> nn.Module:
    try:
        import timm
    except ImportError:
        raise OptionalDependencyError(
            'a timm checkpoint needs timm: pip install "depthdyn[models]"'
        ) from None
    try:
        model = timm.create_model(arch, pretrained=False, **kwargs)
    except Exception as exc:  # noqa: BLE001 - an unknown or misconfigured architecture
        raise ParameterError(f"{path}: timm cannot build {arch!r} ({type(exc).__name__}: {exc})") from None
    return _fill(model, state, path)


def load_checkpoint(
    path,
    *,
    build: Callable[[], nn.Module] | None = None,
    device: str | None = None,
    dtype: torch.dtype | None = None,
    max_memory: dict | None = None,
    offload_folder=None,
) -> nn.Module:
    """The trained model in ``path`` (see the module docstring), in ``eval()`` mode.

    Parameters
    ----------
    path : str or Path
        A ``save_pretrained`` or timm directory, a timm training checkpoint, or a state dict
        file (then ``build`` is required).
    build : callable, optional
        ``build()`` returns the architecture (an ``nn.Module``) that a state dict is loaded into.
    device : str, optional
        ``"cpu"``, ``"cuda"``, ``"cuda:N"``; ``"auto"``: dispatched by accelerate
        (``device_map="auto"``: the GPUs first, then the CPU, then ``offload_folder`` on disk;
        Hugging Face directories only). ``None``: CUDA when available, else the CPU.
    dtype : torch.dtype, optional
        Load the weights in this dtype (default: as saved).
    max_memory : dict, optional
        With ``device="auto"``: accelerate's ``max_memory`` (``{0: "20GiB", "cpu": "40GiB"}``).
    offload_folder : str or Path, optional
        With ``device="auto"``: where weights that fit on no device go.

    Raises
    ------
    ParameterError
        A missing or corrupt file, a config without weights, an unknown architecture, weights
        that do not fit the architecture, an unavailable device.
    OptionalDependencyError
        transformers, timm or accelerate not installed where the checkpoint needs them.
    """
    path = Path(path)
    if not path.exists():
        raise ParameterError(f"no such checkpoint: {path}")
    spread = device == "auto"
    target = None if spread else pick_device(device)
    if path.is_dir():
        if build is not None:
            raise ParameterError(
                f"{path} is a directory: --model builds the architecture for a state dict file"
            )
        if not (path / "config.json").is_file():
            raise ParameterError(
                f"{path} is not a checkpoint directory (no config.json; save_pretrained writes one): give "
                "the directory of save_pretrained, or a state dict file with --model module:callable"
            )
        config = _read_json(path / "config.json")
        if "model_type" in config:
            model = _hf(path, config, dtype=dtype, device_map="auto" if spread else None,
                        max_memory=max_memory, offload_folder=offload_folder)
        elif "architecture" in config:
            weights = path / "model.safetensors"
            if not weights.is_file():
                weights = path / "pytorch_model.bin"
            model = _timm(config["architecture"], _unwrap(_read_state(weights), weights), path,
                          num_classes=config.get("num_classes"), **config.get("model_args", {}))
        else:
            raise ParameterError(
                f"{path / 'config.json'} names no model_type (transformers) or architecture (timm)"
            )
    else:
        state = _read_state(path)
        if build is not None:
            model = build()
            if not isinstance(model, nn.Module):
                raise ParameterError(f"--model must build a torch.nn.Module, got {type(model).__name__}")
            model = _fill(model, _unwrap(state, path), path)
        elif isinstance(state, Mapping) and isinstance(state.get("arch"), str):
            model = _timm(state["arch"], _unwrap(state, path), path)
        else:
            raise ParameterError(
                f"{path} is a state dict without its architecture: pass --model module:callable that "
                "builds it"
            )
    if spread:
        if not hasattr(model, "hf_device_map"):
            raise ParameterError("--device auto (accelerate's device_map) needs a save_pretrained directory")
    else:
        model = model.to(device=target, dtype=dtype) if dtype is not None else model.to(target)
    return model.eval()
