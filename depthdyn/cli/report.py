"""``depthdyn report``: the full report (claims, figures, modes) into a directory."""

from __future__ import annotations

import sys


def add_arguments(cmd) -> None:
    cmd.add_argument("--out", default="report", metavar="DIR", help="output directory (default: report)")
    cmd.add_argument("--force", action="store_true",
                     help="write into a non-empty directory that depthdyn report did not create")


def run(args) -> int:
    from ..report import write_report
    from .progress import stage

    summary = write_report(args.out, force=args.force, progress=stage)  # under the budget main() sets
    sys.stdout.write(f"{summary}\n")
    return 0
