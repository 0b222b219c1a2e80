"""``depthdyn inspect``: the depth dynamics of a torch model from the command line.

The model is one of

* ``module:callable`` (or ``path/to/file.py:callable``): **your own code is imported and run**;
  the callable takes no arguments and returns ``(model, example_input)``;
* a Hugging Face model type (``gpt2``, ``llama``, ``bert``, ``vit``, ``resnet``, ...), built with
  its library's default configuration (``gpt2`` -> ``GPT2Config()``) and random weights;
* a configuration JSON file (with its ``model_type``), random weights.

Nothing is downloaded. The analysis is :func:`depthdyn.nn.inspect`; a cost estimate and a
progress bar go to stderr, the table (or ``--json``) to stdout, ``--out FIG`` draws the measured
``lam`` on the stability region of ``--family`` (default residual). Exit status as for every
verb: 0 success, 2 bad input (one line), 3 internal error (one line).

This module imports neither torch nor matplotlib until :func:`run`.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import math
import sys
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
        "model", help="module:callable (your code, run), a Hugging Face model type, or a config .json"
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
    except Exception as exc:  # noqa: BLE001 - the user's code: any failure is bad input
        raise ParameterError(f"importing {where} failed: {type(exc).__name__}: {exc}") from None
    fn = getattr(module, name, None)
    if not callable(fn):
        raise ParameterError(f"{where} has no callable {name}")
    try:
        made = fn()
    except Exception as exc:  # noqa: BLE001
        raise ParameterError(f"{spec}() failed: {type(exc).__name__}: {exc}") from None
    if not (isinstance(made, tuple) and len(made) == 2):
        raise ParameterError(f"{spec}() must return (model, example_input), got {type(made).__name__}")
    return made[0], made[1], None


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


def build_model(model: str, *, batch: int = 1, seq: int = 128, image: int | None = None, seed: int = 0):
    """``(model, inputs, layers)`` for the ``model`` argument (see the module docstring)."""
    torch = _torch()
    if ":" in model and not model.endswith(".json"):
        return _user_callable(model)
    transformers, cfg = _hf_config(model)
    torch.manual_seed(seed)
    try:
        net = transformers.AutoModel.from_config(cfg)
    except Exception as exc:  # noqa: BLE001 - a config the library rejects
        raise ParameterError(f"transformers cannot build {model}: {type(exc).__name__}: {exc}") from None
    net.eval()
    kind = cfg.model_type
    gen = torch.Generator().manual_seed(seed)
    if kind in _VISION:
        size = image or getattr(cfg, "image_size", 224)
        inputs = {
            "pixel_values": torch.randn(batch, getattr(cfg, "num_channels", 3), size, size, generator=gen)
        }
    else:
        seq = min(seq, getattr(cfg, "max_position_embeddings", seq) or seq)
        inputs = {"input_ids": torch.randint(0, cfg.vocab_size, (batch, seq), generator=gen)}
        if getattr(cfg, "use_cache", False):
            inputs["use_cache"] = False
    return net, inputs, _LAYERS.get(kind)


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
    model, inputs, layers = build_model(
        args.model, batch=args.batch, seq=args.seq, image=args.image, seed=args.seed
    )
    from ..nn import inspect

    dtype = {"float32": torch.float32, "float64": torch.float64}.get(args.dtype)
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
        progress=not args.quiet,
        seed=args.seed,
    )
    placed = None
    if args.out or args.family != "residual" or params:
        placed = ins.placement(args.family, **params)
    if args.out:
        _figure(placed, args.out)
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


def _figure(placed, out: str) -> None:
    suffix = Path(out).suffix.lower().lstrip(".")
    if suffix not in ("png", "svg", "pdf"):
        raise ParameterError(f"--out must end in .png, .svg or .pdf, got {out!r}")
    from matplotlib.figure import Figure

    from ..output import save_figure
    from ..plot.placement import plot_placement

    fig = Figure(figsize=(6.4, 4.8), layout="constrained")
    plot_placement(placed, fig.add_subplot())
    save_figure(fig, Path(out))
