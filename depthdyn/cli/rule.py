"""``depthdyn derive --rule "..."``: the options of a rule and the recurrence they give.

The command line hooks :func:`add_arguments` into ``derive`` and builds with :func:`build`;
everything after that (the analysis, its printing, exit statuses) is ``derive``'s own, so
``derive --rule`` prints the same analysis as ``derive FAMILY``.
"""

from __future__ import annotations

import argparse

from ..errors import ParameterError

__all__ = ["add_arguments", "build"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``--rule`` options of ``derive``."""
    parser.add_argument("--rule", metavar="RULE",
                        help="an update rule instead of a FAMILY, e.g. \"v' = m*v + eta*f(x); x' = x + v'\"")
    parser.add_argument("--branch", action="append", default=[], metavar="NAME=MODE",
                        help="with --rule: a branch function and its slope in the mode "
                        "(default f=lam); repeatable")
    parser.add_argument("--domain", action="append", default=[], metavar="NAME=DOMAIN",
                        help="with --rule: a parameter's domain, e.g. m=[0,1) or h=positive; repeatable")
    parser.add_argument("--matrix", action="append", default=[], metavar="NAME=[[...]]",
                        help="with --rule: a matrix parameter, e.g. H_res=[[a,1-a],[1-a,a]]; repeatable")
    parser.add_argument("--streams", type=int, default=1, metavar="N",
                        help="with --rule: streams per state (default 1)")
    parser.add_argument("--strict", action="store_true",
                        help="with --rule: every parameter must be declared with --domain")


def _pairs(items, flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ParameterError(f"{flag} expects NAME=VALUE, got {item!r}")
        if key.strip() in out:
            raise ParameterError(f"{flag} {key.strip()} is given twice")
        out[key.strip()] = value.strip()
    return out


def build(args: argparse.Namespace):
    """The recurrence of ``args.rule`` with its declarations and ``-p`` values."""
    from ..rules.build import from_rule

    if args.family:
        raise ParameterError("give a FAMILY or --rule, not both")
    if args.rho is not None or args.sigma is not None:
        raise ParameterError("--rho and --sigma apply to the 'general' family, not to --rule")
    rec = from_rule(args.rule, branches=_pairs(args.branch, "--branch") or None,
                    params=_pairs(args.domain, "--domain"), n=args.streams,
                    matrices=_pairs(args.matrix, "--matrix"), strict=args.strict)
    values = _pairs(args.param, "-p")
    return rec.subs(values) if values else rec
