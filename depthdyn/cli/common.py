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
from ..errors import ParameterError, UnknownParameterError

__all__ = ["Parser", "budget_value", "add_family_arguments", "build_from_cli", "suggest", "emit_json",
           "require_values", "MAX_BUDGET"]

#: Largest finite ``--budget`` in seconds (about 116 days); larger ones are refused, ``inf`` means none.
MAX_BUDGET = 1e7


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
        self.exit(2, f"depthdyn: error: {message}\n")


def budget_value(text: str) -> float:
    """Read ``--budget``: a positive finite number of seconds, or ``inf``/``none`` for no budget."""
    word = text.strip().lower()
    if word in ("inf", "infinity", "none"):
        return math.inf
    try:
        value = float(word)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds or 'inf', got {text!r}") from None
    if not math.isfinite(value) or value <= 0 or value > MAX_BUDGET:
        raise argparse.ArgumentTypeError(
            f"expected seconds in (0, {MAX_BUDGET:g}] or 'inf' for no budget, got {text!r}")
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


def _split_assignment(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip() or not value.strip():
        raise ParameterError(f"-p expects NAME=VALUE, got {text!r}")
    return name.strip(), value.strip()


def _structural_value(name: str, default, text: str):
    """Convert a -p value for a factory's structural (keyword-only) argument."""
    from ..parse import parse_expr, parse_value

    if isinstance(default, bool):
        lowered = text.lower()
        if lowered in ("1", "true", "yes"):
            return True
        if lowered in ("0", "false", "no"):
            return False
        raise ParameterError(f"-p {name}= must be true or false, got {text!r}")
    if isinstance(default, int):
        value = parse_expr(text)
        if not value.is_Integer:
            raise ParameterError(f"-p {name}= must be an integer, got {text!r}")
        return int(value)
    if isinstance(default, str):
        return text
    return parse_value(text)  # matrices and vectors: nested lists, parsed safely


def build_from_cli(family: str, assignments: Sequence[str] = (), rho: str | None = None,
                   sigma: str | None = None):
    """Build a recurrence from command-line style ``NAME=VALUE`` strings.

    An unknown name is refused with the closest known one, written as the option to give
    (``-p m=...``).
    """
    from ..families import get_family

    fam = get_family(family)
    structural = fam.structural
    kwargs: dict[str, object] = {}
    if family == "general":
        kwargs.update({"rho": rho, "sigma": sigma})
    elif rho is not None or sigma is not None:
        raise ParameterError("--rho and --sigma apply to the 'general' family only")
    values: dict[str, str] = {}
    for item in assignments:
        name, text = _split_assignment(item)
        if name in kwargs or name in values:
            raise ParameterError(f"-p {name}= is given twice")
        if name in structural and name not in ("rho", "sigma"):
            kwargs[name] = _structural_value(name, structural[name], text)
        else:
            values[name] = text  # parsed safely against the recurrence's own parameter names
    rec = fam(**kwargs)
    known = list(rec.param_names)
    for name in values:
        if name not in known:
            options = [k for k in structural if k not in ("rho", "sigma")] + known
            close = difflib.get_close_matches(name, options, n=1)
            hint = f"did you mean -p {close[0]}=...? " if close else ""
            raise UnknownParameterError(
                f"-p {name}=: {family} has no parameter {name!r}; {hint}"
                f"it takes {', '.join(options) or 'none'}")
    return rec.subs(values) if values else rec


def require_values(rec, free: Iterable[str], why: str) -> None:
    """Refuse, naming the ``-p`` options to add, when parameters of ``rec`` are still symbolic."""
    missing = [name for name in rec.param_names if name not in set(free)]
    if missing:
        example = " ".join(f"-p {name}=..." for name in missing)
        raise ParameterError(f"{why}: give values for {', '.join(missing)} ({example})")


def emit_json(obj, **kwargs) -> None:
    json.dump(obj, sys.stdout, indent=2, **kwargs)
    sys.stdout.write("\n")
