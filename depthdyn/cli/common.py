"""What the verbs of the ``depthdyn`` command share: options, family building, output.

Imported at start-up, so it imports nothing heavy at module level: SymPy and the analyses
come in inside the functions that need them.
"""

from __future__ import annotations

import argparse
import difflib
import json
import math
import sys
from collections.abc import Iterable, Sequence

from ..budget import DEFAULT_SECONDS
from ..errors import ParameterError
from ..limits import MAX_BUDGET_SECONDS

__all__ = ["Parser", "budget_value", "add_family_arguments", "build_from_cli", "suggest", "emit_json",
           "require_values", "grid_axis", "figure_path", "write_figure"]


def suggest(word: str, choices: Iterable[str]) -> str:
    """``" (did you mean 'x'?)"`` for the closest of ``choices``, or ``""``."""
    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line with exit status 2 and a suggestion."""

    def error(self, message: str):
        if "invalid choice: " in message and "(choose from " in message:
            word = message.split("invalid choice: ", 1)[1].split(" (choose from ", 1)[0].strip("'")
            choices = [c.strip(" '") for c in message.rsplit("(choose from ", 1)[1].rstrip(")").split(",")]
            close = difflib.get_close_matches(word, choices, n=1)
            if close:
                message = f"{message}; did you mean {close[0]!r}?"
        elif message.startswith("unrecognized arguments: "):
            options = self.option_names()
            for word in message.split(": ", 1)[1].split():
                close = difflib.get_close_matches(word.split("=", 1)[0], options, n=1) \
                    if word.startswith("--") else []
                if close:
                    message = f"{message}; did you mean {close[0]!r}?"
                    break
        self.exit(2, f"depthdyn: error: {message}\n")

    def option_names(self) -> list[str]:
        """Every long option of this parser and of the verbs built into it (``--format``, ``--out``, ...)."""
        names, parsers = set(), [self]
        while parsers:
            parser = parsers.pop()
            for action in parser._actions:  # argparse keeps no public list of a parser's actions
                names.update(o for o in action.option_strings if o.startswith("--"))
                if isinstance(action, argparse._SubParsersAction):
                    parsers += list(action.choices.values())
        return sorted(names)


def budget_value(text: str) -> float:
    """Read ``--budget``: a positive finite number of seconds, or ``inf``/``none`` for no budget."""
    word = text.strip().lower()
    if word in ("inf", "infinity", "none"):
        return math.inf
    try:
        value = float(word)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds or 'inf', got {text!r}") from None
    if not math.isfinite(value) or value <= 0 or value > MAX_BUDGET_SECONDS:
        raise argparse.ArgumentTypeError(
            f"expected seconds in (0, {MAX_BUDGET_SECONDS:g}] or 'inf' for no budget, got {text!r}")
    return value


def common_options() -> argparse.ArgumentParser:
    """The options every verb takes (a parent parser): ``--budget``, ``--quiet``, ``--progress``."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument("--budget", type=budget_value, default=None, metavar="SECONDS",
                        help=f"budget of each exact part (default {DEFAULT_SECONDS:g}; inf for none)")
    shown = parent.add_mutually_exclusive_group()
    shown.add_argument("-q", "--quiet", action="store_true", help="no progress display on stderr")
    shown.add_argument("--progress", action="store_true",
                       help="show progress on stderr even when it is not a terminal")
    return parent


def add_family_arguments(cmd: argparse.ArgumentParser, family_required: bool = True) -> None:
    """FAMILY, -p NAME=VALUE, --rho/--sigma and --json: shared by the family verbs."""
    cmd.add_argument("family", nargs=None if family_required else "?", help="family name (see derive --list)")
    cmd.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
                     help="structural argument (k=3) or exact parameter value (m=1/2); repeatable")
    cmd.add_argument("--rho", help="general family: rho(r), a polynomial in r")
    cmd.add_argument("--sigma", help="general family: sigma(r), a polynomial in r")
    cmd.add_argument("--json", action="store_true", help="emit one JSON object")


def build_from_cli(family: str, assignments: Sequence[str] = (), rho: str | None = None,
                   sigma: str | None = None):
    """Build a recurrence from ``-p NAME=VALUE`` strings: the registry's
    :func:`~depthdyn.families.registry.build_from_assignments`, imported on first use so that
    ``depthdyn --help`` stays light (an unknown name is refused with the nearest known one)."""
    from ..families.registry import build_from_assignments

    return build_from_assignments(family, assignments, rho, sigma)


def require_values(rec, free: Iterable[str], why: str) -> None:
    """Refuse, naming the ``-p`` options to add, when parameters of ``rec`` are still symbolic."""
    missing = [name for name in rec.param_names if name not in set(free)]
    if missing:
        example = " ".join(f"-p {name}=..." for name in missing)
        raise ParameterError(f"{why}: give values for {', '.join(missing)} ({example})")


def emit_json(obj, **kwargs) -> None:
    json.dump(obj, sys.stdout, indent=2, **kwargs)
    sys.stdout.write("\n")


def _bound(text: str, flag: str) -> float:
    from ..parse import parse_expr

    value = parse_expr(text)
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        number = float("nan")
    if not (value.is_number and value.is_extended_real is not False) or number != number \
            or abs(number) == float("inf"):
        raise ParameterError(f"{flag}: the bounds must be real numbers within the float range, got {text}")
    return number


def grid_axis(text: str, flag: str) -> tuple[str, float, float, int]:
    """Read a grid axis ``NAME:LO:HI:N`` (``--x``, ``--y``): exact bounds, ``2 <= N <= 4096`` points."""
    from ..parse import parse_expr

    parts = text.rsplit(":", 3)
    if len(parts) != 4:
        raise ParameterError(f"{flag} expects NAME:LO:HI:N, got {text!r}")
    name, lo, hi, n = parts
    lo_v, hi_v, n_v = _bound(lo, flag), _bound(hi, flag), parse_expr(n)
    if not lo_v < hi_v:
        raise ParameterError(f"{flag}: need real LO < HI, got {lo} and {hi}")
    if not n_v.is_Integer or not 2 <= int(n_v) <= 4096:
        raise ParameterError(f"{flag}: N must be an integer in 2..4096, got {n}")
    return name.strip(), lo_v, hi_v, int(n_v)


def figure_path(text: str):
    """Check a ``--out FILE.png|.pdf|.svg`` before any work is done; returns the path."""
    from ..output import figure_destination

    return figure_destination(text)


def write_figure(draw, path, figsize=None) -> None:
    """``draw(ax)`` on the one axes of a new house-style figure, then the figure written to ``path``."""
    from ..output import save_figure
    from ..plot.common import single_axes
    from ..style import new_figure

    ax = single_axes(new_figure(figsize))  # one axes: the legend goes below it
    draw(ax)
    save_figure(ax.figure, path)
