"""``depthdyn region``: the stability region over two parameters, drawn and/or as JSON."""

from __future__ import annotations

import sys

from .common import (
    add_family_arguments,
    build_from_cli,
    emit_json,
    figure_path,
    grid_axis,
    require_values,
    write_figure,
)


def add_arguments(cmd) -> None:
    add_family_arguments(cmd)
    cmd.add_argument("--x", required=True, metavar="NAME:LO:HI:N", help="x axis, e.g. re(lam):-5:1:400")
    cmd.add_argument("--y", required=True, metavar="NAME:LO:HI:N", help="y axis, e.g. m:0:0.99:200")
    cmd.add_argument("--out", metavar="FILE", help="write the figure here (.png at 200 dpi, .pdf or .svg)")


def _axis_parameter(name: str) -> str:
    """The parameter an axis names: ``lam`` for ``re(lam)``/``im(lam)``."""
    for part in ("re(", "im("):
        if name.startswith(part) and name.endswith(")"):
            return name[len(part):-1].strip()
    return name


def run(args) -> int:
    from ..numeric.region import stability_region

    x, y = grid_axis(args.x, "--x"), grid_axis(args.y, "--y")
    out = figure_path(args.out) if args.out else None
    rec = build_from_cli(args.family, args.param, args.rho, args.sigma)  # -p values are exact
    axes = {_axis_parameter(x[0]), _axis_parameter(y[0])}
    if axes <= set(rec.param_names):  # else stability_region names the unknown axis
        require_values(rec, axes, "the region is drawn over --x and --y with every other parameter fixed")
    reg = stability_region(rec, x, y, conditions=True)
    if out is not None:
        from ..families.registry import get_family
        from ..plot import plot_stability_region
        from ..plot.common import fixed_text
        from ..style import family_label

        # the -p values are in the recurrence, not in the region: the title names them as given
        structural = get_family(args.family).structural
        values = dict(item.split("=", 1) for item in args.param)
        values = {k.strip(): v.strip() for k, v in values.items() if k.strip() not in structural}

        def draw(ax):
            plot_stability_region(reg, ax=ax, recurrence=rec)
            ax.set_title(f"stability region: {family_label(rec.name)}{fixed_text(values, rec=rec)}")

        write_figure(draw, out)
    report = {
        "family": rec.name,
        "x": {"name": x[0], "lo": x[1], "hi": x[2], "n": x[3]},
        "y": {"name": y[0], "lo": y[1], "hi": y[2], "n": y[3]},
        "fixed": list(args.param),
        "stable_fraction": float(reg.strict.mean()),
        "marginal_fraction": float(reg.marginal.mean()),
        "method": reg.method,
        "conditions": reg.conditions.to_json() if reg.conditions is not None else None,
        "figure": args.out,
    }
    if args.json:
        emit_json(report)
    else:
        sys.stdout.write(f"{rec.name}: stable fraction {report['stable_fraction']:.4f} of the grid\n")
        for cond in (report["conditions"] or {}).get("conditions", []):
            sys.stdout.write(f"  {cond}\n")
        if args.out:
            sys.stdout.write(f"figure written to {args.out}\n")
    return 0
