"""``depthdyn compare``: families side by side, a table of stability facts and an overlay."""

from __future__ import annotations

import sys

from ..errors import ParameterError
from .common import emit_json, figure_path, write_figure


def add_arguments(cmd) -> None:
    cmd.add_argument("families", nargs="+", metavar="FAMILY[:NAME=VALUE,...]",
                     help="family with structural arguments and parameter values, e.g. momentum:m=1/2")
    cmd.add_argument("--box", default="-5,1,-3.5,3.5", metavar="RE_LO,RE_HI,IM_LO,IM_HI",
                     help="part of the lam plane for the areas and the figure (default -5,1,-3.5,3.5)")
    cmd.add_argument("--grid", type=int, default=301, help="grid points per axis (default 301)")
    cmd.add_argument("--format", choices=("text", "markdown", "latex"), default="text",
                     help="table format when not --json (default text)")
    cmd.add_argument("--json", action="store_true", help="emit one JSON object")
    cmd.add_argument("--out", metavar="FILE", help="write the overlay figure here (.png, .pdf or .svg)")


def run(args) -> int:
    from ..compare import compare
    from ..parse import parse_expr
    from .progress import stage

    box = [parse_expr(v) for v in args.box.split(",")]
    if len(box) != 4 or not all(v.is_real for v in box):
        raise ParameterError(f"--box expects four real numbers RE_LO,RE_HI,IM_LO,IM_HI, got {args.box!r}")
    out = figure_path(args.out) if args.out else None  # checked before the work
    # under main()'s budget
    table = compare(*args.families, box=[float(v) for v in box], n=args.grid, progress=stage)
    if out is not None:
        from ..plot import plot_comparison

        stage("figure")

        write_figure(lambda ax: plot_comparison(table, ax=ax), out, figsize=(6.4, 5.6))
    if args.json:
        emit_json({**table.to_json(), "figure": args.out})
    else:
        text = {"text": str, "markdown": type(table).to_markdown, "latex": type(table).to_latex}[args.format]
        sys.stdout.write(text(table).rstrip() + "\n")
        if args.out:
            sys.stdout.write(f"figure written to {args.out}\n")
    return 0
