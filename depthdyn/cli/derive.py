"""``depthdyn derive``: everything the exact engine knows about a family.

The work is :func:`depthdyn.derivation.derive` (the report's family sections print the same
record); this module reads the arguments and prints the record as text
(:mod:`~depthdyn.cli.derive_text`, compact unless ``--full``) or as JSON.
"""

from __future__ import annotations

import sys

from ..errors import ParameterError
from . import rule as rule_options
from .common import add_family_arguments, build_from_cli, emit_json

__all__ = ["add_arguments", "run"]


def add_arguments(cmd) -> None:
    add_family_arguments(cmd, family_required=False)
    cmd.add_argument("--list", action="store_true", help="list the families and exit")
    rule_options.add_arguments(cmd)
    cmd.add_argument("--full", action="store_true",
                     help="compute and print every part whole: expanded polynomials, all roots, exact "
                     "numbers, every parameter (default: a structured form, sizes of long expressions, "
                     "runs of indexed parameters as one line)")
    cmd.add_argument("--radicals", action="store_true",
                     help="print every root as its radical formula (default: a root whose formula is longer "
                     "than 80 characters or nests a square root in a cube root is shown as the root of its "
                     "factor, with its value where it is a number)")


def _list_families() -> None:
    from ..families.registry import families_help

    sys.stdout.write(families_help())


def run(args) -> int:
    from ..derivation import derive
    from ..symbolic.compact import Speller
    from .derive_text import print_report

    if args.list:
        _list_families()
        return 0
    if not args.family and not args.rule:
        raise ParameterError("derive needs a FAMILY (see depthdyn derive --list) or --rule")
    rec = rule_options.build(args) if args.rule else build_from_cli(
        args.family, args.param, args.rho, args.sigma)
    spell = Speller(full=args.full or args.json)  # JSON stays exact; text shortens long numbers
    rep = derive(rec, full=args.full, spell=spell).to_json()  # under the budget main() sets
    if args.json:
        emit_json(rep)
    else:
        print_report(rep, full=args.full, shortened=spell.shortened, radicals=args.radicals)
    if rep["budget_exceeded"]:  # the rest is printed; one line names what is missing
        sys.stdout.flush()
        first = next(iter(rep["budget_exceeded"].values()))
        more = len(rep["budget_exceeded"]) - 1
        sys.stderr.write(f"depthdyn: error: {first}" + (f" (and {more} more part(s))" if more else "") + "\n")
        return 2
    return 0
