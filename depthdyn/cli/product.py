"""The ``depthdyn product SPEC SPEC ...`` command: one period of a periodic stack.

Each ``SPEC`` is one layer, ``FAMILY[:NAME=VALUE,...]`` as in ``compare``. A value may use new
names (``residual:lam=a residual:lam=b``): they become per-layer parameters of the pattern, so
the exact Floquet conditions come out in them. Prints the monodromy, the Floquet
characteristic polynomial and the exact stability conditions; with ``--at`` (or a pattern
with no parameters left) the multipliers and the Lyapunov exponents per layer; with ``--x``,
``--y`` and ``--out`` the region in the plane of two parameters.
"""

from __future__ import annotations

import json
import sys

import numpy as np
import sympy as sp

from ..errors import BudgetExceededError, ParameterError
from ..products.periodic import periodic

__all__ = ["add_arguments", "run", "build_pattern"]


def add_arguments(parser) -> None:
    """Arguments of the ``product`` command."""
    parser.add_argument("layers", nargs="+", metavar="FAMILY[:NAME=VALUE,...]",
                        help="one layer of the period each, e.g. residual:lam=a residual:lam=b")
    parser.add_argument("--at", metavar="NAME=VALUE,...", help="a parameter point for the numbers")
    parser.add_argument("--x", metavar="NAME:LO:HI:N", help="x axis of the region figure, e.g. a:-3:1:301")
    parser.add_argument("--y", metavar="NAME:LO:HI:N", help="y axis of the region figure")
    parser.add_argument("--out", metavar="FILE", help="write the region figure here, .png, .pdf or .svg (needs --x, --y)")
    parser.add_argument("--json", action="store_true", help="emit one JSON object")


def _layer(spec: str):
    """One layer from its specification; names not known to the family become new symbols."""
    from ..families import get_family
    from ..families.registry import build_from_assignments, parse_spec
    from ..parse import free_names, parse_expr

    name, given = parse_spec(spec)
    fam = get_family(name)
    structural = [a for a in given if a.partition("=")[0].strip() in fam.structural]
    rec = build_from_assignments(name, structural)
    values = {}
    for item in given:
        key, eq, text = item.partition("=")
        key = key.strip()
        if not eq:
            raise ParameterError(f"{spec}: expected NAME=VALUE, got {item!r}")
        if key in fam.structural:
            continue
        rec.param(key)  # an unknown parameter name is refused
        symbols = dict(rec.symbols)
        for new in sorted(free_names(text) - set(symbols)):
            symbols[new] = sp.Symbol(new)  # a new per-layer parameter (made real by subs)
        values[key] = parse_expr(text, symbols)
    return rec.subs(values) if values else rec


def build_pattern(specs):
    """The :class:`~depthdyn.products.periodic.Periodic` of command-line layer specifications."""
    return periodic(*[_layer(s) for s in specs])


def _point(text: str | None, pattern) -> dict:
    from ..parse import parse_expr

    if not text:
        return {}
    out = {}
    for item in text.split(","):
        key, eq, val = item.partition("=")
        if not eq:
            raise ParameterError(f"--at expects NAME=VALUE,..., got {item!r}")
        pattern.param(key.strip())
        if key.strip() in out:
            raise ParameterError(f"--at: {key.strip()} is given twice")
        out[key.strip()] = parse_expr(val)
    return out


def _numbers(pattern) -> dict:
    """Multipliers and exponents of a numeric pattern, from its exact monodromy."""
    M = np.array(pattern.monodromy.evalf(30).tolist(), dtype=complex)
    if not np.isfinite(M).all():
        from ..products.lyapunov import ProductOverflowError

        raise ProductOverflowError("the monodromy at these values leaves the float64 range "
                                   "(|entry| > 1e308); drop --at for its exact multipliers and conditions")
    mult = np.linalg.eigvals(M)
    mult = mult[np.argsort(-np.abs(mult))]
    with np.errstate(divide="ignore"):
        exps = np.log(np.abs(mult)) / pattern.period
    return {"multipliers": [[float(z.real), float(z.imag)] for z in mult],
            "spectral_radius": float(np.abs(mult).max()),
            "exponents_per_layer": [None if not np.isfinite(e) else float(e) for e in exps]}


def run(args) -> int:
    """Run the ``product`` command; returns the exit status."""
    from ..symbolic.stability import stability_conditions
    from .common import grid_axis

    pattern = build_pattern(args.layers)
    at = _point(args.at, pattern)
    if (args.x is None) != (args.y is None) or (args.out and args.x is None):
        raise ParameterError("the region figure needs both --x and --y (and --out to write it)")
    report = {
        "pattern": list(args.layers),
        "period": pattern.period,
        "state": pattern.dim,
        "parameters": list(pattern.param_names),
        "monodromy": [[sp.sstr(e) for e in row] for row in pattern.monodromy.tolist()],
        "charpoly": sp.sstr(pattern.charpoly()),
    }
    exceeded = None
    try:  # under the budget main() sets
        report["conditions"] = stability_conditions(pattern).to_json()
    except BudgetExceededError as exc:
        report["conditions"], exceeded = None, exc
    numeric = pattern.subs(at) if at else pattern
    if numeric.is_numeric():
        report["at"] = {k: sp.sstr(v) for k, v in at.items()}
        report.update(_numbers(numeric))
    if args.x is not None:
        report["region"] = _region(pattern, grid_axis(args.x, "--x"), grid_axis(args.y, "--y"), at, args.out)
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        _print(report)
    if exceeded is not None:
        sys.stdout.flush()
        sys.stderr.write(f"depthdyn: error: {exceeded}\n")
        return 2
    return 0


def _region(pattern, x, y, at: dict, out) -> dict:
    from ..numeric.region import stability_region

    fixed = {k: v for k, v in at.items() if k not in (x[0], y[0])}
    reg = stability_region(pattern, x, y, conditions=False, **fixed)
    if out:
        from ..plot import plot_stability_region
        from .common import figure_path, write_figure

        write_figure(lambda ax: plot_stability_region(reg, ax=ax), figure_path(out))
    return {"x": x[0], "y": y[0], "stable_fraction": float(np.asarray(reg.strict).mean()), "figure": out}


def _print(rep: dict) -> None:
    w = sys.stdout.write
    w(f"pattern ({rep['period']} layers, state of {rep['state']}): {'  ->  '.join(rep['pattern'])}\n")
    w(f"monodromy M = {rep['monodromy']}\n")
    w(f"Floquet multipliers: roots of {rep['charpoly']} = 0\n")
    cond = rep.get("conditions")
    if cond is None:
        w("stability conditions: past the exact-work budget\n")
    elif cond["never"]:
        w(f"never strictly stable over the period: {cond['reason']}\n")
    elif not cond["conditions"]:
        w("strictly stable over the period on the whole parameter domain (implied: "
          + " and ".join(cond["implied_by_domain"]) + ")\n")
    else:
        w("strictly stable over the period iff: " + " and ".join(cond["conditions"]) + "\n")
    if "multipliers" in rep:
        at = ", ".join(f"{k}={v}" for k, v in rep.get("at", {}).items())
        w(f"at {at or 'the given values'}: spectral radius of M {rep['spectral_radius']:.10g}\n")
        w("Lyapunov exponents per layer: " + ", ".join(
            "-inf" if e is None else f"{e:.10g}" for e in rep["exponents_per_layer"]) + "\n")
    if "region" in rep:
        reg = rep["region"]
        w(f"region over {reg['x']}, {reg['y']}: {100 * reg['stable_fraction']:.3g}% strictly stable"
          + (f"; figure {reg['figure']}" if reg["figure"] else "") + "\n")
