"""``depthdyn inspect``: the depth dynamics of a torch model from the command line.

The model is one of

* a trained checkpoint (:mod:`depthdyn.nn.analysis.checkpoint`): a Hugging Face
  ``save_pretrained`` directory (loaded offline), a timm checkpoint, or a state dict file with
  ``--model module:callable`` building its architecture;
* ``module:callable`` (or ``path/to/file.py:callable``): **your own code is imported and run**;
  the callable takes no arguments and returns ``(model, example_input)``;
* a Hugging Face model type (``gpt2``, ``llama``, ``bert``, ``vit``, ``resnet``, ...), built with
  its library's default configuration (``gpt2`` -> ``GPT2Config()``) and random weights;
* a configuration JSON file (with its ``model_type``), random weights.

Nothing is downloaded. ``--device`` picks where the analysis runs (``cpu``, ``cuda``,
``cuda:N``; ``auto`` dispatches a ``save_pretrained`` model with accelerate's
``device_map="auto"`` over the GPUs, the CPU and ``--offload-folder``); by default the model's
own device (a callable's model), else CUDA when available. The analysis is
:func:`depthdyn.nn.inspect`; a cost estimate and a progress bar go to stderr, the table (or
``--json``) to stdout, ``--out FIG`` draws the measured ``lam`` on the stability region of
``--family`` (default residual). Exit status as for every verb: 0 success, 2 bad input (one
line), 3 internal error (one line).

This module imports neither torch nor matplotlib until :func:`run`.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import json
import math
import sys
import tempfile
from pathlib import Path

from ..errors import OptionalDependencyError, ParameterError

__all__ = ["add_arguments", "run", "build_model"]

#: Image models: their example input is ``pixel_values`` of this many channels and pixels.
_VISION = {"vit", "resnet", "convnext", "deit", "beit", "swin", "dinov2"}
#: Residual layers where the common layouts (depthdyn.nn.analysis.record.LAYOUTS) miss them.
_LAYERS = {"resnet": "encoder.stages.*.layers.*"}


def add_arguments(parser) -> None:
    """The arguments of ``depthdyn inspect``."""
    parser.add_argument(
        "model",
        help="a checkpoint (save_pretrained or timm directory, or a state dict file with --model), "
        "module:callable (your code, run), a Hugging Face model type, or a config .json",
    )
    parser.add_argument(
        "--model",
        dest="builder",
        metavar="MODULE:CALLABLE",
        help="with a state dict file: your code that returns (model, example_input) to load it into",
    )
    parser.add_argument(
        "--device",
        help="cpu, cuda, cuda:N, or auto (accelerate's device_map over GPUs, CPU and disk); "
        "default: the model's, else cuda when available",
    )
    parser.add_argument(
        "--max-memory",
        metavar="DEV=SIZE,...",
        help="with --device auto: memory per device, e.g. 0=20GiB,1=20GiB,cpu=64GiB",
    )
    parser.add_argument(
        "--offload-folder", help="with --device auto: where weights that fit no device go (default: temp)"
    )
    parser.add_argument("--layers", help="name pattern of the residual layers (default: found by layout)")
    parser.add_argument(
        "--batch", type=int, default=1, help="inputs in the example batch (HF models; default 1)"
    )
    parser.add_argument("--seq", type=int, default=128, help="tokens per input (text models; default 128)")
    parser.add_argument("--image", type=int, help="image size (vision models; default the config's)")
    parser.add_argument(
        "--tokens", type=int, default=8, help="token blocks sampled per causal layer (default 8)"
    )
    parser.add_argument("-k", type=int, default=5, help="top singular values per step (default 5)")
    parser.add_argument("--steps", type=int, default=200, help="at most this many Krylov steps (default 200)")
    parser.add_argument(
        "--tol", type=float, default=1e-3, help="relative residual bound to stop at (default 1e-3)"
    )
    parser.add_argument(
        "--dense-max", type=int, default=64, help="dense Jacobians up to this size (default 64)"
    )
    parser.add_argument("--dtype", choices=["float32", "float64"], help="analyse a copy in this dtype")
    parser.add_argument("--split", action="store_true", help="attention and MLP as separate depth steps")
    parser.add_argument("--streams", type=int, help="batch rows per state (default: detected)")
    parser.add_argument(
        "--stack", type=int,
        help="at most this many same-shaped layers analysed in one pass (default: on a GPU as many as "
        "fit in a quarter of its free memory, on a CPU 1)",
    )
    parser.add_argument(
        "--family", default="residual", help="family to place the measured lam on (default residual)"
    )
    parser.add_argument(
        "-p",
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a parameter of --family, e.g. m=0.9; repeatable",
    )
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: torch's)")
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the random weights and inputs (default 0)"
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument(
        "--out", metavar="FIG", help="draw the placement on the family's region into FIG (.png/.svg/.pdf)"
    )


def _torch():
    try:
        import torch
    except ImportError:
        raise OptionalDependencyError('depthdyn inspect needs torch: pip install "depthdyn[torch]"') from None
    return torch


def _user_callable(spec: str):
    """``module:callable`` or ``file.py:callable`` -> (model, example_input), by running it."""
    where, _, name = spec.rpartition(":")
    if not where or not name.isidentifier():
        raise ParameterError(f"expected module:callable, got {spec!r}")
    try:
        if where.endswith(".py"):
            path = Path(where)
            if not path.is_file():
                raise ParameterError(f"no such file: {where}")
            loader = importlib.util.spec_from_file_location(path.stem, path)
            module = importlib.util.module_from_spec(loader)
            loader.loader.exec_module(module)
        else:
            module = importlib.import_module(where)
    except ParameterError:
        raise
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the user's code: any failure is bad input
        raise ParameterError(f"importing {where} failed: {_failure(exc)}") from None
    fn = getattr(module, name, None)
    if not callable(fn):
        raise ParameterError(f"{where} has no callable {name}")
    try:
        made = fn()
    except (Exception, SystemExit) as exc:  # noqa: BLE001
        raise ParameterError(f"{spec}() failed: {_failure(exc)}") from None
    if not (isinstance(made, tuple) and len(made) == 2):
        raise ParameterError(f"{spec}() must return (model, example_input), got {type(made).__name__}")
    return made[0], made[1], None


def _failure(exc: BaseException) -> str:
    """What the user's code did, in words (``sys.exit`` included, so depthdyn does not exit with it)."""
    if isinstance(exc, SystemExit):
        return f"it called sys.exit({exc.code!r})"
    return f"{type(exc).__name__}: {exc}"


def _hf_config(model: str):
    try:
        import transformers
    except ImportError:
        raise OptionalDependencyError(
            f"{model!r} is not module:callable, and Hugging Face model types need transformers: "
            "pip install transformers"
        ) from None
    if model.endswith(".json"):
        try:
            data = json.loads(Path(model).read_text())
        except (OSError, ValueError) as exc:
            raise ParameterError(f"cannot read the config {model}: {exc}") from None
        except RecursionError:
            raise ParameterError(f"cannot read the config {model}: nested too deeply") from None
        if not isinstance(data, dict) or "model_type" not in data:
            raise ParameterError(f"{model} has no model_type: not a Hugging Face config file")
        kind = data.pop("model_type")
        try:
            return transformers, transformers.AutoConfig.for_model(kind, **data)
        except (ValueError, KeyError, TypeError) as exc:
            raise ParameterError(f"{model}: {exc}") from None
    try:
        return transformers, transformers.AutoConfig.for_model(model)
    except (ValueError, KeyError) as exc:
        raise ParameterError(
            f"unknown model {model!r}: give module:callable, a config .json, or a Hugging Face model type "
            f"such as gpt2, llama, bert, vit ({str(exc).splitlines()[0][:120]})"
        ) from None


def _hf_inputs(torch, cfg, *, batch: int, seq: int, image: int | None, seed: int):
    """A random example batch for a Hugging Face model of configuration ``cfg``."""
    gen = torch.Generator().manual_seed(seed)
    if cfg.model_type in _VISION:
        size = image or getattr(cfg, "image_size", 224)
        return {
            "pixel_values": torch.randn(batch, getattr(cfg, "num_channels", 3), size, size, generator=gen)
        }
    seq = min(seq, getattr(cfg, "max_position_embeddings", seq) or seq)
    if not isinstance(getattr(cfg, "vocab_size", None), int):
        raise ParameterError(
            f"model type {cfg.model_type!r} reads neither token ids of a vocabulary nor images alone "
            "(a composite model such as clip takes both): give module:callable returning the model "
            "and its example input")
    inputs = {"input_ids": torch.randint(0, cfg.vocab_size, (batch, seq), generator=gen)}
    if getattr(cfg, "use_cache", False):
        inputs["use_cache"] = False
    return inputs


#: File name endings of state dicts and training checkpoints.
_WEIGHTS = (".safetensors", ".pt", ".pth", ".bin", ".ckpt", ".tar")


def _is_checkpoint(model: str, builder: str | None) -> bool:
    path = Path(model)
    if builder is not None or model.endswith(_WEIGHTS):
        return True
    return path.is_dir()


def _checkpoint(torch, model: str, *, builder, device, dtype, max_memory, offload_folder, batch, seq, image,
                seed):
    from ..nn.analysis.checkpoint import load_checkpoint

    example = None
    build = None
    if builder is not None:
        def build():
            nonlocal example
            made, example, _ = _user_callable(builder)
            return made

    net = load_checkpoint(model, build=build, device=device, dtype=dtype, max_memory=max_memory,
                          offload_folder=offload_folder)
    if example is not None:
        return net, example, None
    cfg = getattr(net, "config", None)
    if cfg is not None and hasattr(cfg, "model_type"):
        torch.manual_seed(seed)
        return net, _hf_inputs(torch, cfg, batch=batch, seq=seq, image=image, seed=seed), _LAYERS.get(
            cfg.model_type
        )
    # timm: an image batch of the size the model was trained at
    size = image or (getattr(net, "pretrained_cfg", {}) or {}).get("input_size", (3, 224, 224))[-1]
    return net, torch.randn(batch, 3, size, size, generator=torch.Generator().manual_seed(seed)), None


def build_model(model: str, *, batch: int = 1, seq: int = 128, image: int | None = None, seed: int = 0,
                builder: str | None = None, device: str | None = None, dtype=None, max_memory=None,
                offload_folder=None):
    """``(model, inputs, layers)`` for the ``model`` argument (see the module docstring)."""
    torch = _torch()
    if _is_checkpoint(model, builder):
        return _checkpoint(torch, model, builder=builder, device=device, dtype=dtype, max_memory=max_memory,
                           offload_folder=offload_folder, batch=batch, seq=seq, image=image, seed=seed)
    if device == "auto":
        raise ParameterError("--device auto (accelerate's device_map) needs a save_pretrained directory")
    if ":" in model and not model.endswith(".json"):
        net, inputs, layers = _user_callable(model)
        if device is not None and isinstance(net, torch.nn.Module):
            from ..nn.analysis.checkpoint import pick_device

            net = net.to(pick_device(device))
        return net, inputs, layers
    transformers, cfg = _hf_config(model)
    _check_size(torch, transformers, cfg, model)
    torch.manual_seed(seed)
    try:
        net = transformers.AutoModel.from_config(cfg)
    except Exception as exc:  # noqa: BLE001 - a config the library rejects
        raise ParameterError(f"transformers cannot build {model}: {type(exc).__name__}: {exc}") from None
    from ..nn.analysis.checkpoint import pick_device

    net = net.to(pick_device(device)).eval()
    inputs = _hf_inputs(torch, cfg, batch=batch, seq=seq, image=image, seed=seed)
    return net, inputs, _LAYERS.get(cfg.model_type)


def _check_size(torch, transformers, cfg, model: str) -> None:
    """Refuse a configuration past :data:`~depthdyn.limits.MAX_PARAMETERS` before a weight is made:
    a first bound from the sizes the config names (layers x width^2), then the exact count of a
    build on the meta device (shapes only, no memory)."""
    from ..limits import MAX_PARAMETERS

    def size(*names):
        return next((v for v in (getattr(cfg, n, None) for n in names) if isinstance(v, int) and v > 0), 1)

    layers = size("num_hidden_layers", "n_layer", "num_layers")
    width = size("hidden_size", "n_embd", "d_model")
    bound = layers * width * width  # every layer holds at least one width x width map
    if bound > MAX_PARAMETERS:
        raise ParameterError(f"{model}: {bound:.2g} parameters or more ({layers} layers of width {width}); "
                             f"depthdyn inspect builds at most {MAX_PARAMETERS:.2g}")
    try:
        with torch.device("meta"):
            shaped = transformers.AutoModel.from_config(cfg)
    except Exception:  # noqa: BLE001 - no meta build: the bound above stands, the real build reports
        return
    count = sum(p.numel() for p in shaped.parameters())
    if count > MAX_PARAMETERS:
        raise ParameterError(f"{model} has {count:.3g} parameters; depthdyn inspect builds at most "
                             f"{MAX_PARAMETERS:.2g} from a configuration")


def _memory(text: str | None) -> dict | None:
    """``0=20GiB,cpu=64GiB`` -> ``{0: "20GiB", "cpu": "64GiB"}``."""
    if text is None:
        return None
    out = {}
    for item in text.split(","):
        name, sep, size = item.partition("=")
        name, size = name.strip(), size.strip()
        if not sep or not name or not size:
            raise ParameterError(f"--max-memory expects DEVICE=SIZE,... (0=20GiB,cpu=64GiB), got {text!r}")
        out[int(name) if name.isdigit() else name] = size
    return out


def _params(items) -> dict:
    out = {}
    for text in items:
        name, sep, value = text.partition("=")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            sep = ""
        if not sep or not name.strip():
            raise ParameterError(f"-p expects NAME=NUMBER, got {text!r}")
    return out


def _plain(obj):
    """JSON-safe: NaN and infinities become null (strict JSON has neither)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj


def run(args) -> int:
    """Run ``depthdyn inspect``; returns the exit status."""
    torch = _torch()
    for name in ("batch", "seq", "tokens", "k", "steps"):
        if getattr(args, name) < 1:
            raise ParameterError(f"--{name} must be at least 1, got {getattr(args, name)}")
    if args.threads is not None:
        if args.threads < 1:
            raise ParameterError(f"--threads must be at least 1, got {args.threads}")
        torch.set_num_threads(args.threads)
    params = _params(args.param)
    dtype = {"float32": torch.float32, "float64": torch.float64}.get(args.dtype)
    if args.device != "auto" and (args.max_memory or args.offload_folder):
        raise ParameterError("--max-memory and --offload-folder go with --device auto")
    with contextlib.ExitStack() as stack:
        offload = args.offload_folder
        if args.device == "auto" and offload is None:
            offload = stack.enter_context(tempfile.TemporaryDirectory(prefix="depthdyn-offload-"))
        model, inputs, layers = build_model(
            args.model, batch=args.batch, seq=args.seq, image=args.image, seed=args.seed,
            builder=args.builder,
            device=args.device, max_memory=_memory(args.max_memory), offload_folder=offload,
            # a dispatched model is analysed in the dtype it is loaded in: never bfloat16
            dtype=(dtype or torch.float32) if args.device == "auto" else None,
        )
        return _analyse(args, model, inputs, layers, dtype, params)


def _analyse(args, model, inputs, layers, dtype, params) -> int:
    from ..nn import inspect

    ins = inspect(
        model,
        inputs,
        args.layers or layers,
        k=args.k,
        tokens=args.tokens,
        steps=args.steps,
        tol=args.tol,
        dense_max=args.dense_max,
        dtype=dtype,
        split=args.split,
        streams=args.streams,
        stack=args.stack,
        progress=not args.quiet,
        seed=args.seed,
    )
    placed = None
    if args.out or args.family != "residual" or params:
        placed = ins.placement(args.family, **params)
    if args.out:
        _figure(placed, args.out, f"{ins.dtype} on {ins.device}")
    if args.json:
        report = ins.to_json()
        report["placement"] = placed.to_json() if placed is not None else None
        json.dump(_plain(report), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print(ins)
        if placed is not None:
            print(
                f"{100 * placed.fraction_inside:.1f}% of the measured lam strictly inside the {args.family} "
                f"region{' (' + ', '.join(f'{k}={v:g}' for k, v in params.items()) + ')' if params else ''}"
            )
    return 0


def _figure(placed, out: str, where: str) -> None:
    suffix = Path(out).suffix.lower().lstrip(".")
    if suffix not in ("png", "svg", "pdf"):
        raise ParameterError(f"--out must end in .png, .svg or .pdf, got {out!r}")
    from matplotlib.figure import Figure

    from ..output import save_figure
    from ..plot.placement import plot_placement

    fig = Figure(figsize=(6.4, 4.8), layout="constrained")
    plot_placement(placed, fig.add_subplot())
    fig.suptitle(f"computed in {where}", fontsize="small")
    save_figure(fig, Path(out))
