"""``depthdyn solve``: closed form, modes and first terms, with an optional forcing."""

from __future__ import annotations

import sys

from ..errors import ParameterError
from .common import add_family_arguments, build_from_cli, emit_json


def add_arguments(cmd) -> None:
    add_family_arguments(cmd)
    cmd.add_argument("--initial", metavar="X0,X1,...",
                     help="initial values x_0, x_1, ... (default: symbols); vector states (several "
                     "streams) as bracketed vectors, '[1,0],[0,1]'; extra values are checked")
    cmd.add_argument("--forcing", metavar="EXPR", help="right-hand side F(l), e.g. '2**l' or 'l*cos(l)'")
    cmd.add_argument("--start", type=int, default=0, help="index of the first initial value (default 0)")
    cmd.add_argument("--terms", type=int, default=6, help="how many first terms to print (default 6)")


def _nested(value, depth: int) -> bool:
    """Whether lists nest deeper than ``depth`` levels below ``value``."""
    return isinstance(value, list) and (depth == 0 or any(_nested(e, depth - 1) for e in value))


def _initial(rec, text: str | None):
    from ..parse import parse_value

    if text is None:
        return None
    initial = parse_value(f"[{text}]")
    # vector states (several streams) come as bracketed vectors, one per initial value:
    # lists nest one level for them, none for a scalar recurrence
    if not isinstance(initial, list) or any(_nested(v, 0 if rec.is_scalar else 1) for v in initial):
        shape = "comma-separated values" if rec.is_scalar else (
            f"comma-separated states, each a bracketed vector of {rec.dim} entries ('[1,0],[0,1]')")
        raise ParameterError(f"--initial expects {shape}, got {text!r}")
    return initial


def _spell(value):
    """A scalar as one string, a vector state (several streams) as a list of its entries'."""
    import sympy as sp

    return [sp.sstr(e) for e in value] if isinstance(value, sp.MatrixBase) else sp.sstr(value)


def run(args) -> int:
    import sympy as sp

    from ..budget import part
    from ..symbolic.solve import closed_form, modes

    if not 0 <= args.terms <= 200:
        raise ParameterError(f"--terms must be in 0..200, got {args.terms}")
    rec = build_from_cli(args.family, args.param, args.rho, args.sigma)
    initial = _initial(rec, args.initial)
    if args.forcing is not None and not args.forcing.strip():
        raise ParameterError("--forcing is empty; give an expression of l such as '2**l', or leave it out")
    forcing = args.forcing or (0 if rec.is_scalar else None)  # the forced path also checks extra values
    cf = closed_form(rec, initial, start=args.start, forcing=forcing)  # under the budget main() sets
    first = cf.start
    with part("printing the closed form"):  # SymPy orders numeric terms by value: RootOf to any precision
        terms = [(first + k, cf.at(first + k)) for k in range(args.terms)]
        report = {
            "family": rec.name,
            "recurrence": rec.equation() + (f"  with F(l) = {args.forcing} on the right"
                                            if args.forcing else ""),
            "forcing": args.forcing,
            "closed_form": _spell(cf.expr),
            "valid_from": first,
            "convention": cf.convention,
            "modes": sp.sstr(modes(rec).general_solution),
            "terms": [{"l": k, "x": _spell(v)} for k, v in terms],
        }
    if args.json:
        emit_json(report)
        return 0
    out = sys.stdout.write
    out(f"{report['recurrence']}\n")
    text = lambda v: v if isinstance(v, str) else "[" + ", ".join(v) + "]"  # noqa: E731
    out(f"x_l = {text(report['closed_form'])}   (l >= {first})\n")
    out(f"modes: x_l = {report['modes']}\n")
    for t in report["terms"]:
        out(f"  x_{t['l']} = {text(t['x'])}\n")
    return 0
