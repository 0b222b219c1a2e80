"""The ``depthdyn explore FAMILY [-p NAME=VALUE ...] --out page.html`` command.

Writes the stability explorer of one family (or of a periodic pattern, several
``FAMILY[:NAME=VALUE,...]`` layers as in ``product``, or of an update rule with ``--rule``) as
one self-contained HTML page (default ``explore.html``) that runs in any browser with no Python
and no server. ``-p`` fixes a structural argument (``k=3``) or a parameter (``m=1/2``); every
parameter left free gets a slider, starting at ``--at`` values where given.
"""

from __future__ import annotations

import sys

from ..errors import ParameterError, UnknownParameterError
from . import rule as rule_options
from .common import build_from_cli, suggest

__all__ = ["add_arguments", "run"]


def add_arguments(parser) -> None:
    """Arguments of the ``explore`` command."""
    parser.add_argument("family", nargs="*", metavar="FAMILY",
                        help="a family (see derive --list), or several FAMILY[:NAME=VALUE,...] layers of "
                        "a periodic pattern")
    parser.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
                        help="structural argument (k=3) or fixed parameter value (m=1/2); repeatable")
    parser.add_argument("--rho", help="general family: rho(r), a polynomial in r")
    parser.add_argument("--sigma", help="general family: sigma(r), a polynomial in r")
    rule_options.add_arguments(parser)
    parser.add_argument("--at", action="append", default=[], metavar="NAME=VALUE",
                        help="starting value of a slider; repeatable")
    parser.add_argument("--x", metavar="NAME", help="horizontal parameter of the region (default lam)")
    parser.add_argument("--y", metavar="NAME", help="vertical parameter of the region")
    parser.add_argument("--depth", type=int, default=None, metavar="L",
                        help="layers of the trajectory (default 30)")
    parser.add_argument("--out", default="explore.html", metavar="FILE.html",
                        help="the page to write (default explore.html)")


def _recurrence(args):
    from .product import build_pattern

    if args.rule:
        args.family = None
        return rule_options.build(args)
    if not args.family:
        raise ParameterError("explore needs a FAMILY (see depthdyn derive --list) or --rule")
    if len(args.family) > 1:
        if args.param or args.rho or args.sigma:
            raise ParameterError("a periodic pattern takes its values in each layer (residual:lam=a), not -p")
        return build_pattern(args.family)
    return build_from_cli(args.family[0], args.param, args.rho, args.sigma)


def run(args) -> int:
    """Run the ``explore`` command; returns the exit status."""
    from pathlib import Path

    from ..explore.page import write_page
    from ..explore.spec import DEFAULT_DEPTH

    out = Path(args.out)
    if out.suffix.lower() not in (".html", ".htm"):
        raise ParameterError(f"--out must name an .html file, got {args.out!r}")
    rec = _recurrence(args)
    at = {}
    for item in args.at:
        key, eq, value = item.partition("=")
        if not eq or not key.strip() or not value.strip():
            raise ParameterError(f"--at expects NAME=VALUE, got {item!r}")
        at[key.strip()] = value.strip()  # parsed safely (depthdyn.parse) by the compiler
    for name in [*at, *(n for n in (args.x, args.y) if n is not None)]:
        if name not in rec.param_names:
            raise UnknownParameterError(f"{rec.name} has no free parameter {name!r}"
                                        f"{suggest(name, rec.param_names)}; its free parameters: "
                                        f"{', '.join(rec.param_names) or 'none'}")
    depth = DEFAULT_DEPTH if args.depth is None else args.depth
    path = write_page(rec, out, at=at, x=args.x, y=args.y, depth=depth)
    free = ", ".join(rec.param_names) or "none"
    if not args.quiet:
        size = path.stat().st_size / 1024
        sys.stdout.write(f"wrote {path} ({size:.0f} kB): {rec.name}, sliders for {free}\n")
    return 0
