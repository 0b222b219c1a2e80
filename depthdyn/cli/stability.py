"""``depthdyn stability``: stability intervals, A(alpha), zero-stability and order."""

from __future__ import annotations

import sys

from .common import add_family_arguments, build_from_cli, emit_json, require_values


def add_arguments(cmd) -> None:
    add_family_arguments(cmd)
    cmd.add_argument("--variable", default="lam", metavar="NAME",
                     help="the free complex parameter (default lam; give the others with -p)")


def run(args) -> int:
    from ..symbolic.numbers import stability_numbers
    from ..symbolic.onestep import scaled_out

    rec = build_from_cli(args.family, args.param, args.rho, args.sigma)
    if args.variable in rec.param_names:  # else stability_numbers says what the variable may be
        # a step h entering only as h*lam is scaled out (the numbers are in h*lam); name the rest
        require_values(scaled_out(rec, args.variable)[0], [args.variable],
                       f"stability numbers need {args.variable} as the only free parameter")
    numbers = stability_numbers(rec, param=args.variable)  # under the budget main() sets
    if args.json:
        emit_json(numbers.to_json())
    else:
        sys.stdout.write(f"{numbers}\n")
    return 0
