"""``depthdyn train``: torch blocks trained on a task; metrics and plots (needs the torch extra)."""

from __future__ import annotations

import sys

from ..errors import DepthdynError, OptionalDependencyError, ParameterError
from .progress import enabled

#: train shows its own progress bar (over the optimiser steps).
OWN_PROGRESS = True


def add_arguments(cmd) -> None:
    cmd.add_argument("family", nargs="?", help="block family (see train --list)")
    cmd.add_argument("--task", help="task name (see train --list)")
    cmd.add_argument("--list", action="store_true", help="list the families and tasks and exit")
    cmd.add_argument("--layers", type=int, help="depth L (default: the task's)")
    cmd.add_argument("--steps", type=int, help="optimiser steps (default: the task's)")
    cmd.add_argument("--seed", type=int, default=0, help="seed of data and initialisation (default 0)")
    cmd.add_argument("--step", type=float, help="layer step size h (default: the task's)")
    cmd.add_argument("--lr", type=float, help="Adam learning rate (default: the task's)")
    cmd.add_argument("--device", help="cpu or cuda (default: cuda when available)")
    cmd.add_argument("--out", default="train-out", metavar="DIR", help="output directory")
    cmd.add_argument("--format", action="append", choices=("png", "pdf", "svg"), metavar="FMT",
                     help="file format of the figures: png (200 dpi), pdf or svg (vector); repeatable "
                          "(default png)")
    cmd.add_argument("--force", action="store_true",
                     help="write into a non-empty directory that depthdyn train did not create")
    cmd.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
                     help="block option, e.g. k=2, a_init=-2, n=4, mixing=sinkhorn; repeatable")


def torch_part():
    """The torch side of the command, or a one-line error naming the extra to install."""
    try:
        from ..nn.experiments import command
    except ImportError as exc:
        if isinstance(exc, DepthdynError):
            raise
        raise OptionalDependencyError(
            f'depthdyn train needs torch: pip install "depthdyn[torch]" ({exc})'
        ) from None
    return command


def run(args) -> int:
    command = torch_part()
    if args.list:
        sys.stdout.write(command.list_text() + "\n")
        return 0
    if not args.family or not args.task:
        raise ParameterError("train needs a FAMILY and --task NAME (see depthdyn train --list)")
    if args.steps is not None and args.steps < 1:
        raise ParameterError(f"--steps must be at least 1, got {args.steps}")
    metrics = command.train_to_dir(
        args.family, args.task, out=args.out, layers=args.layers, steps=args.steps, seed=args.seed,
        step=args.step, lr=args.lr, device=args.device, progress=enabled(args), force=args.force,
        formats=tuple(args.format or ("png",)),
        **command.parse_options(args.param),
    )
    t = metrics["training"]
    acc = "" if t["accuracy"] is None else f", accuracy {t['accuracy']:.3f}"
    if t["diverged"]:
        acc += " (diverged)"
    sys.stdout.write(
        f"{t['family']} on {t['task']}: L={t['layers']}, h={t['step_size']}, {t['steps']} steps, "
        f"loss {t['final_loss']}{acc}, {t['wall_time_s']:.1f}s on {t['device']}\n"
    )
    agreement = (metrics["bridge"] or {}).get("agreement")
    if agreement:
        sys.stdout.write(f"linear response vs measured: max relative error {agreement['max_rel']:.3g}\n")
    placement = (metrics["bridge"] or {}).get("placement")
    if placement:
        sys.stdout.write(
            f"learned layers inside the stability region: {placement['fraction']:.1%} strictly, "
            f"{placement['marginal_fraction']:.1%} at least marginally\n"
        )
    sys.stdout.write(f"metrics and {len(metrics['figures'])} figures written to {args.out}\n")
    if t["diverged"]:
        sys.stderr.write(f"depthdyn: error: training diverged: {t['diverged']}\n")
        return 2
    return 0
