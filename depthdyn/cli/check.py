"""``depthdyn check``: the exact results against the numeric engine at random points."""

from __future__ import annotations

import sys

from ..errors import ParameterError
from .common import add_family_arguments, build_from_cli, emit_json

#: Most random parameter points ``depthdyn check --samples`` takes (each is an exact computation).
MAX_SAMPLES = 1000


def add_arguments(cmd) -> None:
    add_family_arguments(cmd)
    cmd.add_argument("--samples", type=int, default=20, help="random parameter points, 1..1000 (default 20)")
    cmd.add_argument("--seed", type=int, default=0, help="random seed (default 0)")


def run(args) -> int:
    from ..numeric.check import check

    if not 1 <= args.samples <= MAX_SAMPLES:
        raise ParameterError(f"--samples must be in 1..{MAX_SAMPLES}, got {args.samples}")
    rec = build_from_cli(args.family, args.param, args.rho, args.sigma)
    report = check(rec, samples=args.samples, seed=args.seed)  # under the budget main() sets
    if args.json:
        emit_json(report.to_json())
    else:
        sys.stdout.write(f"{report}\n")
    return 0 if report.passed else 1
