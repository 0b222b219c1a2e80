"""The ``depthdyn`` entry point: argument parsing, exit statuses and the mapping of errors.

Each verb is a module of this package with ``add_arguments(parser)`` and ``run(args)``,
listed once in :data:`VERBS`. Only the verb being run is imported (and only its arguments
are built), so ``depthdyn --help`` and ``depthdyn VERB --help`` load neither SymPy nor
NumPy.
"""

from __future__ import annotations

import importlib
import io
import os
import sys
import traceback
from collections.abc import Sequence

from .common import Parser, common_options

__all__ = ["main", "EXIT_CODES", "VERBS", "COMMANDS"]

#: What each exit status of ``depthdyn`` means.
EXIT_CODES = {
    0: "success",
    1: "check found a disagreement",
    2: "bad input, a budget exceeded, training diverged, or an output path that cannot be written",
    3: "internal error (run with --traceback for details)",
    130: "interrupted (Ctrl-C)",
    141: "the output pipe was closed by its reader",
}

#: verb -> (module of this package, one-line help). A new verb is a module and a line here.
VERBS = {
    "derive": ("derive", "derive the symbolic facts of a family"),
    "check": ("check", "cross-check the exact results against the numeric engine"),
    "region": ("region", "stability region over two parameters, drawn and/or as JSON"),
    "stability": ("stability", "stability intervals, A(alpha), zero-stability and order of a method"),
    "solve": ("solve", "closed form, modes and first terms, with an optional forcing"),
    "verify": ("verify", "check the source documents' claims by computation"),
    "compare": ("compare", "families side by side: a table of stability facts and an overlay"),
    "product": ("product", "a periodic stack: exact Floquet conditions, exponents"),
    "inspect": ("inspect", "depth dynamics of a torch model (yours or a HF config)"),
    "report": ("report", "write report.md, claims.json and the figures into a directory"),
    "train": ("train", "train torch blocks on a task; write metrics and plots (needs the torch extra)"),
    "meanfield": ("meanfield", "signal propagation at initialisation: mean-field fixed points and phases"),
    "explore": ("explore", "an interactive stability explorer as one self-contained HTML page"),
}


def _module(verb: str):
    return importlib.import_module(f"{__package__}.{VERBS[verb][0]}")


class _Verb:
    """A verb's ``run``, imported when first called."""

    def __init__(self, verb: str):
        self.verb = verb

    def __call__(self, args) -> int:
        return _module(self.verb).run(args)


#: verb -> callable(args) -> exit status (tests replace entries to simulate failures).
COMMANDS = {verb: _Verb(verb) for verb in VERBS}


def _parser(argv: Sequence[str]) -> Parser:
    from ..version import __version__

    parser = Parser(prog="depthdyn", description="Residual-family networks as recurrences over depth.",
                    epilog="exit status: 0 success, 1 check disagreement, 2 bad input or budget exceeded, "
                    "3 internal error, 130 interrupted, 141 output pipe closed")
    parser.add_argument("--version", action="version", version=f"depthdyn {__version__}")
    parser.add_argument("--traceback", action="store_true",
                        help="on an error, show the full traceback (for bug reports)")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    chosen = next((a for a in argv if a in VERBS), None)
    parent = common_options()
    for verb, (_, text) in VERBS.items():
        cmd = sub.add_parser(verb, help=text, parents=[parent])
        if verb == chosen:  # only the verb being run is imported and built
            _module(verb).add_arguments(cmd)
    return parser


def _one_line(text: str, limit: int = 500) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _fail(kind: str, exc: BaseException, status: int, show: bool, message: str | None = None) -> int:
    """Print one line for ``exc`` (after its traceback with ``--traceback``); return ``status``."""
    if show:
        traceback.print_exception(exc, file=sys.stderr)
    message = _one_line(message or str(exc) or type(exc).__name__)
    if kind == "internal":
        message = f"internal error: {type(exc).__name__}: {message}"
        if not show:
            message += " (run with --traceback for details)"
    elif kind:
        message = f"{kind}: {message}"
    sys.stderr.write(f"depthdyn: {message}\n")
    return status


def _silence_stdout() -> None:
    """After a closed pipe: send what is still buffered nowhere, so exiting stays quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass


def _is_digit_limit(exc: BaseException) -> bool:
    return isinstance(exc, ValueError) and "integer string conversion" in str(exc)


def _run(args) -> int:
    from ..budget import DEFAULT_SECONDS, budget
    from .progress import Working, enabled

    verb = sys.modules.get(f"{__package__}.{VERBS.get(args.command, ('',))[0]}")
    own = getattr(verb, "OWN_PROGRESS", False)  # e.g. train's bar over its optimiser steps
    with budget(DEFAULT_SECONDS if args.budget is None else args.budget), \
            Working(args.command, enabled(args) and not own):
        return COMMANDS[args.command](args)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``depthdyn`` command; returns the exit status (see :data:`EXIT_CODES`)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    # the one-line error says "run with --traceback": taken wherever it is given, after the command too
    show = "--traceback" in argv
    argv = [a for a in argv if a != "--traceback"]
    try:
        args = _parser(argv).parse_args(argv)
        return _run(args)
    except KeyboardInterrupt:
        sys.stderr.write("depthdyn: interrupted\n")
        return 130
    except BrokenPipeError:
        _silence_stdout()
        return 141
    except Exception as exc:
        return _status(exc, show)


def _status(exc: Exception, show: bool) -> int:
    """The exit status and one line for an exception a verb raised."""
    from ..errors import DepthdynError

    claims = sys.modules.get("depthdyn.claims.base")  # none imported: no claim can have failed
    if claims is not None and isinstance(exc, claims.ClaimError):  # a crashed check is a bug, not bad input
        return _fail("internal", exc, 3, show)
    if isinstance(exc, DepthdynError):
        return _fail("error", exc, 2, show)
    if isinstance(exc, OSError):  # paths and disks: missing, read-only, full, names too long
        where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
        return _fail("error", exc, 2, show, f"{exc.strerror or exc}{where}")
    if isinstance(exc, MemoryError):
        return _fail("error", exc, 2, show, "not enough memory for this request; use smaller sizes or grids")
    if _is_digit_limit(exc):  # Python refuses to print integers past 4,300 digits
        return _fail("error", exc, 2, show, "a number in the result has more than 4,300 digits; "
                     "substitute smaller values")
    return _fail("internal", exc, 3, show)
