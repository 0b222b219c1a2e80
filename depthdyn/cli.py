"""The ``depthdyn`` command line.

``depthdyn derive FAMILY [-p NAME=VALUE ...] [--json]`` derives everything the symbolic
layer knows about a family; ``depthdyn derive --list`` names the families;
``depthdyn stability FAMILY`` prints the stability intervals, A(alpha) angle,
zero-stability and order; ``depthdyn solve FAMILY --initial 1,0 [--forcing EXPR]`` the
closed form, modes and first terms; ``depthdyn check FAMILY`` compares the exact results with the numeric engine at random
points and exits 1 on disagreement; ``depthdyn verify [--source NAME] [--json] [--trained]`` checks the
source documents' claims; ``depthdyn compare FAMILY[:NAME=VALUE,...] ... [--json] [--out FIG]``
puts families side by side; ``depthdyn report [--out DIR] [--force]`` writes the full report
(claims, figures, modes) into a directory.

Exit status (:data:`EXIT_CODES`), the same for every subcommand: 0 success; 1 ``check``
found a disagreement; 2 bad input, an exceeded budget, a diverged training run or a
path that cannot be written (one line on stderr); 3 an internal error (one line; the global
``--traceback`` flag shows the traceback); 130 interrupted (Ctrl-C); 141 the reader of
the output went away (a closed pipe, as in ``depthdyn derive momentum | head -1``), quietly.
No traceback is printed unless ``--traceback`` is given.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

import sympy as sp

from .budget import DEFAULT_SECONDS, budget
from .claims.base import ClaimError
from .errors import BudgetExceededError, DepthdynError, OptionalDependencyError, ParameterError
from .families import FAMILIES, get_family
from .parse import parse_expr, parse_value
from .symbolic.solve import closed_form

__all__ = ["main", "build_from_cli", "derive_report", "EXIT_CODES"]

#: Most random parameter points ``depthdyn check --samples`` takes (each is an exact computation).
MAX_SAMPLES = 1000

#: What each exit status of ``depthdyn`` means.
EXIT_CODES = {
    0: "success",
    1: "check found a disagreement",
    2: "bad input, a budget exceeded, training diverged, or an output path that cannot be written",
    3: "internal error (run with --traceback for details)",
    130: "interrupted (Ctrl-C)",
    141: "the output pipe was closed by its reader",
}


def _split_assignment(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip() or not value.strip():
        raise ParameterError(f"-p expects NAME=VALUE, got {text!r}")
    return name.strip(), value.strip()


def _structural_value(name: str, default, text: str):
    """Convert a -p value for a factory's structural (keyword-only) argument."""
    if isinstance(default, bool):
        lowered = text.lower()
        if lowered in ("1", "true", "yes"):
            return True
        if lowered in ("0", "false", "no"):
            return False
        raise ParameterError(f"{name} must be true or false, got {text!r}")
    if isinstance(default, int):
        value = parse_expr(text)
        if not value.is_Integer:
            raise ParameterError(f"{name} must be an integer, got {text!r}")
        return int(value)
    if isinstance(default, str):
        return text
    return parse_value(text)  # matrices and vectors: nested lists, parsed safely


def build_from_cli(
    family: str, assignments: Sequence[str] = (), rho: str | None = None, sigma: str | None = None
):
    """Build a recurrence from command-line style ``NAME=VALUE`` strings."""
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
            raise ParameterError(f"{name} is given twice")
        if name in structural and name not in ("rho", "sigma"):
            kwargs[name] = _structural_value(name, structural[name], text)
        else:
            values[name] = text  # parsed safely against the recurrence's own parameter names
    rec = fam(**kwargs)
    return rec.subs(values) if values else rec


def _matrix_strings(M) -> list[list[str]]:
    return [[sp.sstr(e) for e in row] for row in M.tolist()]


def _parts(rec) -> dict:
    """The parts of ``derive``, each a thunk; run separately so one past its budget leaves
    the others."""
    from .symbolic.polynomial import discriminant, root_structure, roots, vieta
    from .symbolic.stability import stability_conditions

    return {
        "roots": lambda: [{"root": sp.sstr(rt.value), "multiplicity": rt.multiplicity} for rt in roots(rec)],
        "vieta": lambda: [
            {"k": v.k, "coefficient": sp.sstr(v.coefficient), "holds": v.holds, "method": v.method}
            for v in vieta(rec).relations
        ],
        "discriminant": lambda: sp.sstr(discriminant(rec)),
        "root_structure": lambda: [{"condition": sp.sstr(c), "roots": w} for c, w in root_structure(rec).cases],
        "stability": lambda: stability_conditions(rec).to_json(),
    }


def derive_report(rec) -> dict:
    """Everything ``derive`` reports, as a JSON-ready dict.

    A part past its budget (:class:`~depthdyn.errors.BudgetExceededError`) is ``None`` and
    its one-line message is listed under ``"budget_exceeded"``; the other parts are complete.
    """
    from .symbolic.statespace import realisations, similarity

    reals = realisations(rec)
    transforms = {}
    for name in reals:
        if name == "companion":
            continue
        try:
            sim = similarity(rec, "companion", name)
        except DepthdynError as exc:  # e.g. a singular transform at these parameter values
            transforms[name] = {"verified": False, "error": str(exc)}
            continue
        transforms[name] = {
            "T": _matrix_strings(sim.T),
            "T_inv": _matrix_strings(sim.T_inv),
            "verified": sim.verified,
        }
    rep = {
        "family": rec.name,
        "description": rec.description,
        "source": rec.source,
        "recurrence": rec.equation(),
        "order": rec.order,
        "dim": rec.dim,
        "lam": rec.lam,
        "params": {p.name: {"domain": str(p.domain), "description": p.description} for p in rec.params},
        "charpoly": sp.sstr(rec.charpoly()),
        "statespace": {name: _matrix_strings(real.A) for name, real in reals.items()},
        "states": {name: list(real.states) for name, real in reals.items()},
        "transforms": transforms,
        "budget_exceeded": {},
    }
    needs = {"vieta": "roots", "root_structure": "discriminant"}  # same exact work underneath
    for key, thunk in _parts(rec).items():
        if needs.get(key) in rep["budget_exceeded"]:
            rep[key], rep["budget_exceeded"][key] = None, rep["budget_exceeded"][needs[key]]
            continue
        try:
            rep[key] = thunk()
        except BudgetExceededError as exc:
            rep[key] = None
            rep["budget_exceeded"][key] = str(exc)
    return rep


def _print_report(rep: dict) -> None:
    out = sys.stdout.write
    out(f"{rep['family']}: {rep['description']}\n")
    if rep["source"]:
        out(f"source: {rep['source']}\n")
    out(f"recurrence: {rep['recurrence']}\n")
    for name, info in rep["params"].items():
        out(
            f"  {name} in {info['domain']}"
            + (f"  ({info['description']})" if info["description"] else "")
            + "\n"
        )
    out(f"\ncharacteristic polynomial: {rep['charpoly']}\n")
    skipped = rep.get("budget_exceeded", {})

    def missing(key: str, title: str) -> bool:
        if rep.get(key) is None:
            out(f"{title}: not computed ({skipped.get(key, 'skipped')})\n")
            return True
        return False

    if not missing("roots", "roots"):
        out("roots:\n")
        for rt in rep["roots"]:
            out(f"  r = {rt['root']}  (multiplicity {rt['multiplicity']})\n")
    if not missing("vieta", "Vieta relations"):
        out("Vieta relations (e_k of the roots = coefficient):\n")
        for v in rep["vieta"]:
            out(f"  e_{v['k']} = {v['coefficient']}  [{'holds' if v['holds'] else 'FAILS'}, {v['method']}]\n")
    if not missing("discriminant", "discriminant"):
        out(f"discriminant: {rep['discriminant']}\n")
    if not missing("root_structure", "root structure"):
        for case in rep["root_structure"]:
            out(f"  {case['condition']}: {case['roots']}\n")
    out("\nstate-space realisations s' = A s:\n")
    for name, A in rep["statespace"].items():
        check = rep["transforms"].get(name)
        tag = (
            ""
            if check is None
            else ("  (similar to companion: verified)" if check["verified"] else "  (NOT similar)")
        )
        out(f"  {name} [{', '.join(rep['states'][name])}]{tag}\n")
        for row in A:
            out(f"    [{', '.join(row)}]\n")
    st = rep["stability"]
    if st is None:
        out("\n")
        missing("stability", "stability")
        return
    assumptions = f"; {', '.join(st['assumptions'])}" if st.get("assumptions") else ""
    out(f"\nstability (all roots strictly inside the unit circle{assumptions}):\n")
    if st.get("never"):
        out(f"  never: {st.get('reason', '')}\n")
    for cond in st["conditions"]:
        out(f"  {cond}\n")
    for cond in st.get("implied_by_domain", []):
        out(f"  ({cond}: implied by the parameter domains)\n")


def _list_families() -> None:
    width = max(map(len, FAMILIES))
    for name, fam in FAMILIES.items():
        extra = ", ".join(f"{k}={v!r}" for k, v in fam.structural.items() if k not in ("rho", "sigma"))
        sys.stdout.write(f"{name:<{width}}  {fam.summary}" + (f"  [{extra}]" if extra else "") + "\n")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2
        self.exit(2, f"depthdyn: error: {message}\n")


def _add_family_arguments(cmd: argparse.ArgumentParser, family_required: bool = True) -> None:
    """FAMILY, -p NAME=VALUE, --rho/--sigma and --json: shared by the family commands."""
    cmd.add_argument("family", nargs=None if family_required else "?", help="family name (see derive --list)")
    cmd.add_argument(
        "-p",
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="structural argument (k=3) or exact parameter value (m=1/2); repeatable",
    )
    cmd.add_argument("--rho", help="general family: rho(r), a polynomial in r")
    cmd.add_argument("--sigma", help="general family: sigma(r), a polynomial in r")
    cmd.add_argument("--json", action="store_true", help="emit one JSON object")
    cmd.add_argument(
        "--budget",
        type=float,
        default=None,
        metavar="SECONDS",
        help=f"time budget of each exact part (default {DEFAULT_SECONDS:g}; inf for none)",
    )


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="depthdyn", description="Residual-family networks as recurrences over depth.",
                     epilog="exit status: 0 success, 1 check disagreement, 2 bad input or budget exceeded, "
                     "3 internal error, 130 interrupted, 141 output pipe closed")
    parser.add_argument("--traceback", action="store_true",
                        help="on an error, show the full traceback (for bug reports)")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    derive = sub.add_parser("derive", help="derive the symbolic facts of a family")
    _add_family_arguments(derive, family_required=False)
    derive.add_argument("--list", action="store_true", help="list the families and exit")
    chk = sub.add_parser("check", help="cross-check the exact results against the numeric engine")
    _add_family_arguments(chk)
    chk.add_argument("--samples", type=int, default=20, help="random parameter points, 1..1000 (default 20)")
    chk.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    region = sub.add_parser("region", help="stability region over two parameters, drawn and/or as JSON")
    _add_family_arguments(region)
    region.add_argument("--x", required=True, metavar="NAME:LO:HI:N", help="x axis, e.g. re(lam):-5:1:400")
    region.add_argument("--y", required=True, metavar="NAME:LO:HI:N", help="y axis, e.g. m:0:0.99:200")
    region.add_argument("--out", metavar="FILE.png", help="write the figure here")
    stab = sub.add_parser("stability", help="stability intervals, A(alpha), zero-stability and order of a method")
    _add_family_arguments(stab)
    stab.add_argument("--variable", default="lam", metavar="NAME",
                      help="the free complex parameter (default lam; give the others with -p)")
    solve = sub.add_parser("solve", help="closed form, modes and first terms, with an optional forcing")
    _add_family_arguments(solve)
    solve.add_argument("--initial", metavar="X0,X1,...",
                       help="initial values x_0, x_1, ... (default: symbols); vector states (several "
                       "streams) as bracketed vectors, '[1,0],[0,1]'; extra values are checked")
    solve.add_argument("--forcing", metavar="EXPR", help="right-hand side F(l), e.g. '2**l' or 'l*cos(l)'")
    solve.add_argument("--start", type=int, default=0, help="index of the first initial value (default 0)")
    solve.add_argument("--terms", type=int, default=6, help="how many first terms to print (default 6)")
    verify = sub.add_parser("verify", help="check the source documents' claims by computation")
    verify.add_argument("--source", help="only this source (e.g. 000 or post); default: all")
    verify.add_argument("--json", action="store_true",
                        help="emit JSON: claims, not_checked, coverage and the per-source summary")
    verify.add_argument(
        "--trained",
        action="store_true",
        help="also check the experimental claims by training torch blocks (needs the torch extra; about "
        "200 s of one CPU core; progress on stderr)",
    )
    cmp_ = sub.add_parser("compare", help="families side by side: a table of stability facts and an overlay")
    cmp_.add_argument("families", nargs="+", metavar="FAMILY[:NAME=VALUE,...]",
                      help="family with structural arguments and parameter values, e.g. momentum:m=1/2")
    cmp_.add_argument("--box", default="-5,1,-3.5,3.5", metavar="RE_LO,RE_HI,IM_LO,IM_HI",
                      help="part of the lam plane for the areas and the figure (default -5,1,-3.5,3.5)")
    cmp_.add_argument("--grid", type=int, default=301, help="grid points per axis (default 301)")
    cmp_.add_argument("--format", choices=("text", "markdown", "latex"), default="text",
                      help="table format when not --json (default text)")
    cmp_.add_argument("--json", action="store_true", help="emit one JSON object")
    cmp_.add_argument("--out", metavar="FILE.png", help="write the overlay figure here")
    rep = sub.add_parser("report", help="write report.md, claims.json and the figures into a directory")
    rep.add_argument("--out", default="report", metavar="DIR", help="output directory (default: report)")
    rep.add_argument("--force", action="store_true",
                     help="write into a non-empty directory that depthdyn report did not create")
    train = sub.add_parser(
        "train", help="train torch blocks on a task; write metrics and plots (needs the torch extra)"
    )
    train.add_argument("family", nargs="?", help="block family (see train --list)")
    train.add_argument("--task", help="task name (see train --list)")
    train.add_argument("--list", action="store_true", help="list the families and tasks and exit")
    train.add_argument("--layers", type=int, help="depth L (default: the task's)")
    train.add_argument("--steps", type=int, help="optimiser steps (default: the task's)")
    train.add_argument("--seed", type=int, default=0, help="seed of data and initialisation (default 0)")
    train.add_argument("--step", type=float, help="layer step size h (default: the task's)")
    train.add_argument("--lr", type=float, help="Adam learning rate (default: the task's)")
    train.add_argument("--device", help="cpu or cuda (default: cuda when available)")
    train.add_argument("--out", default="train-out", metavar="DIR", help="output directory")
    train.add_argument("--force", action="store_true",
                       help="write into a non-empty directory that depthdyn train did not create")
    train.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
                       help="block option, e.g. k=2, a_init=-2, n=4, mixing=sinkhorn; repeatable")
    train.add_argument("--progress", action="store_true", help="show a progress bar (tqdm if installed)")
    return parser


def _torch_part():
    try:
        from .nn.experiments import command
    except ImportError as exc:
        if isinstance(exc, DepthdynError):
            raise
        raise OptionalDependencyError(
            f'depthdyn train needs torch: pip install "depthdyn[torch]" ({exc})'
        ) from None
    return command


def _train(args) -> int:
    command = _torch_part()
    if args.list:
        sys.stdout.write(command.list_text() + "\n")
        return 0
    if not args.family or not args.task:
        raise ParameterError("train needs a FAMILY and --task NAME (see depthdyn train --list)")
    if args.steps is not None and args.steps < 1:
        raise ParameterError(f"--steps must be at least 1, got {args.steps}")
    metrics = command.train_to_dir(
        args.family, args.task, out=args.out, layers=args.layers, steps=args.steps, seed=args.seed,
        step=args.step, lr=args.lr, device=args.device, progress=args.progress, force=args.force,
        **command.parse_options(args.param),
    )
    t = metrics["training"]
    acc = "" if t["accuracy"] is None else f", accuracy {t['accuracy']:.3f}"
    if t["diverged"]:
        acc += " (diverged)"
    sys.stdout.write(
        f"{t['family']} on {t['task']}: L={t['layers']}, h={t['step_size']}, {t['steps']} steps, "
        f"loss {t['final_loss']}{acc}, {t['wall_time_s']:.1f}s on {t['device']}\n"
    )
    agreement = (metrics["bridge"] or {}).get("agreement")
    if agreement:
        sys.stdout.write(f"linear response vs measured: max relative error {agreement['max_rel']:.3g}\n")
    placement = (metrics["bridge"] or {}).get("placement")
    if placement:
        sys.stdout.write(
            f"learned layers inside the stability region: {placement['fraction']:.1%} strictly, "
            f"{placement['marginal_fraction']:.1%} at least marginally\n"
        )
    sys.stdout.write(f"metrics and {len(metrics['figures'])} figures written to {args.out}\n")
    if t["diverged"]:
        sys.stderr.write(f"depthdyn: error: training diverged: {t['diverged']}\n")
        return 2
    return 0


def _bound(text: str, flag: str) -> float:
    value = parse_expr(text)
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        number = float("nan")
    if not (value.is_number and value.is_extended_real is not False) or number != number \
            or abs(number) == float("inf"):
        raise ParameterError(f"{flag}: the bounds must be real numbers within the float range, got {text}")
    return number


def _axis(text: str, flag: str) -> tuple[str, float, float, int]:
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


def _figure_path(text: str) -> Path:
    """Check a ``--out FILE.png`` before any work is done."""
    path = Path(text)
    if len(os.fsencode(path.name)) > 255:
        raise ParameterError(f"--out: the file name is longer than 255 bytes ({len(path.name)} characters)")
    if text.endswith(("/", os.sep)) or path.is_dir() or path.suffix.lower() != ".png":
        raise ParameterError(f"--out must name a .png file (e.g. region.png), got {text!r}")
    parent = path.parent
    if not parent.is_dir():
        raise ParameterError(f"--out: the directory {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK):
        raise ParameterError(f"--out: the directory {str(parent)!r} is not writable")
    return path


def _region(args) -> int:
    from .numeric.region import stability_region

    x, y = _axis(args.x, "--x"), _axis(args.y, "--y")
    out = _figure_path(args.out) if args.out else None
    rec = build_from_cli(args.family, args.param, args.rho, args.sigma)  # -p values are exact
    reg = stability_region(rec, x, y, conditions=True)
    if out is not None:
        from matplotlib.figure import Figure

        from .plot import plot_stability_region
        from .report import atomic_write

        fig = Figure(figsize=(6.4, 4.8), layout="constrained")
        plot_stability_region(reg, ax=fig.add_subplot())
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=120)
        atomic_write(out, buf.getvalue())
    report = {
        "family": rec.name,
        "x": {"name": x[0], "lo": x[1], "hi": x[2], "n": x[3]},
        "y": {"name": y[0], "lo": y[1], "hi": y[2], "n": y[3]},
        "fixed": list(args.param),
        "stable_fraction": float(reg.strict.mean()),
        "marginal_fraction": float(reg.marginal.mean()),
        "method": reg.method,
        "conditions": reg.conditions.to_json() if reg.conditions is not None else None,
        "figure": args.out,
    }
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(f"{rec.name}: stable fraction {report['stable_fraction']:.4f} of the grid\n")
        for cond in (report["conditions"] or {}).get("conditions", []):
            sys.stdout.write(f"  {cond}\n")
        if args.out:
            sys.stdout.write(f"figure written to {args.out}\n")
    return 0


def _verify(args) -> int:
    from .claims import (
        NOT_CHECKED,
        coverage,
        format_table,
        resolve_sources,
        run_claims,
        source_summary,
        summary,
    )

    results = run_claims(args.source)
    if args.trained:
        _torch_part()
        from .nn.experiments.claims import run_trained_claims

        def progress(done, total, claim_id, seconds):
            what = f"training for {claim_id}" if claim_id else "done"
            sys.stderr.write(f"[trained claims {done}/{total}, {seconds:.0f} s] {what}\n")

        results += run_trained_claims(args.source, progress=progress)
    if args.json:
        keys = {s.key for s in resolve_sources(args.source)}
        listed = [u for u in NOT_CHECKED if u.source in keys]
        out = {"claims": [res.to_json() for res in results], "not_checked": [u.to_json() for u in listed],
               "coverage": coverage(results, listed),
               "summary": {k: v for k, v in source_summary(results, listed).items() if k in keys}}
        json.dump(out, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        counts = summary(results)
        tally = ", ".join(f"{counts[v]} {v}" for v in counts if v != "total")
        sys.stdout.write(f"{format_table(results)}\n\n{counts['total']} claims: {tally}\n")
        keys = {s.key for s in resolve_sources(args.source)}
        listed = [u for u in NOT_CHECKED if u.source in keys]
        for key, row in source_summary(results, listed).items():  # counted per source statement
            if key in keys:
                sys.stdout.write(f"source {key}: {row['total']} statements: {row['holds']} hold, {row['fails']} "
                                 f"fail, {row['holds-with-caveat']} hold with a caveat, {row['not checked']} "
                                 "not checked\n")
    return 0  # verdicts are results, not errors


def _report(args) -> int:
    from .report import write_report

    summary = write_report(args.out, force=args.force)
    sys.stdout.write(f"{summary}\n")
    return 0


def _compare(args) -> int:
    from .compare import compare, figure_path, write_comparison_figure

    box = [parse_expr(v) for v in args.box.split(",")]
    if len(box) != 4 or not all(v.is_real for v in box):
        raise ParameterError(f"--box expects four real numbers RE_LO,RE_HI,IM_LO,IM_HI, got {args.box!r}")
    if args.out:
        figure_path(args.out)  # refuse a bad destination before the work
    table = compare(*args.families, box=[float(v) for v in box], n=args.grid)
    if args.out:
        write_comparison_figure(table, args.out)
    if args.json:
        json.dump({**table.to_json(), "figure": args.out}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        text = {"text": str, "markdown": type(table).to_markdown, "latex": type(table).to_latex}[args.format]
        sys.stdout.write(text(table).rstrip() + "\n" + (f"figure written to {args.out}\n" if args.out else ""))
    return 0


def _check(args) -> int:
    from .numeric.check import check

    if not 1 <= args.samples <= MAX_SAMPLES:
        raise ParameterError(f"--samples must be in 1..{MAX_SAMPLES}, got {args.samples}")
    rec = build_from_cli(args.family, args.param, args.rho, args.sigma)
    with budget(args.budget if args.budget is not None else DEFAULT_SECONDS):
        report = check(rec, samples=args.samples, seed=args.seed)
    if args.json:
        json.dump(report.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(f"{report}\n")
    return 0 if report.passed else 1


def _stability(args) -> int:
    from .symbolic.numbers import stability_numbers

    rec = build_from_cli(args.family, args.param, args.rho, args.sigma)
    numbers = stability_numbers(rec, param=args.variable)
    if args.json:
        json.dump(numbers.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(f"{numbers}\n")
    return 0


def _solve(args) -> int:
    from .symbolic.solve import modes

    if not 0 <= args.terms <= 200:
        raise ParameterError(f"--terms must be in 0..200, got {args.terms}")
    rec = build_from_cli(args.family, args.param, args.rho, args.sigma)
    initial = None
    if args.initial is not None:
        initial = parse_value(f"[{args.initial}]")
        # vector states (several streams) come as bracketed vectors, one per initial value:
        # lists nest one level for them, none for a scalar recurrence
        nested = lambda v, depth: isinstance(v, list) and (  # noqa: E731
            depth == 0 or any(nested(e, depth - 1) for e in v))
        if not isinstance(initial, list) or any(nested(v, 0 if rec.is_scalar else 1) for v in initial):
            shape = "comma-separated values" if rec.is_scalar else (
                f"comma-separated states, each a bracketed vector of {rec.dim} entries ('[1,0],[0,1]')")
            raise ParameterError(f"--initial expects {shape}, got {args.initial!r}")
    if args.forcing is not None and not args.forcing.strip():
        raise ParameterError("--forcing is empty; give an expression of l such as '2**l', or leave it out")
    forcing = args.forcing or (0 if rec.is_scalar else None)  # the forced path also checks extra values
    cf = closed_form(rec, initial, start=args.start, forcing=forcing)
    first = cf.start
    terms = [(first + k, cf.at(first + k)) for k in range(args.terms)]
    report = {
        "family": rec.name,
        "recurrence": rec.equation() + ("" if not args.forcing else f"  with F(l) = {args.forcing} on the right"),
        "forcing": args.forcing,
        "closed_form": _spell(cf.expr),
        "valid_from": first,
        "convention": cf.convention,
        "modes": sp.sstr(modes(rec).general_solution),
        "terms": [{"l": k, "x": _spell(v)} for k, v in terms],
    }
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        out = sys.stdout.write
        out(f"{report['recurrence']}\n")
        text = lambda v: v if isinstance(v, str) else "[" + ", ".join(v) + "]"  # noqa: E731
        out(f"x_l = {text(report['closed_form'])}   (l >= {first})\n")
        out(f"modes: x_l = {report['modes']}\n")
        for t in report["terms"]:
            out(f"  x_{t['l']} = {text(t['x'])}\n")
    return 0


def _spell(value):
    """A scalar as one string, a vector state (several streams) as a list of its entries'."""
    return [sp.sstr(e) for e in value] if isinstance(value, sp.MatrixBase) else sp.sstr(value)


def _derive(args) -> int:
    if args.list:
        _list_families()
        return 0
    if not args.family:
        raise ParameterError("derive needs a FAMILY (see depthdyn derive --list)")
    rec = build_from_cli(args.family, args.param, args.rho, args.sigma)
    with budget(args.budget if args.budget is not None else DEFAULT_SECONDS):
        rep = derive_report(rec)
    if args.json:
        json.dump(rep, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        _print_report(rep)
    if rep["budget_exceeded"]:  # the rest is printed; one line names what is missing
        sys.stdout.flush()
        first = next(iter(rep["budget_exceeded"].values()))
        more = len(rep["budget_exceeded"]) - 1
        sys.stderr.write(f"depthdyn: error: {first}" + (f" (and {more} more part(s))" if more else "") + "\n")
        return 2
    return 0


_COMMANDS = {"derive": _derive, "check": _check, "region": _region, "verify": _verify,
             "report": _report, "train": _train, "stability": _stability, "solve": _solve,
             "compare": _compare}


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


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``depthdyn`` command; returns the exit status (see :data:`EXIT_CODES`)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    show = "--traceback" in argv
    try:
        args = _parser().parse_args(argv)
        show = args.traceback
        return _COMMANDS[args.command](args)
    except KeyboardInterrupt:
        sys.stderr.write("depthdyn: interrupted\n")
        return 130
    except BrokenPipeError:
        _silence_stdout()
        return 141
    except ClaimError as exc:  # a check that crashed is a bug in depthdyn, not bad input
        return _fail("internal", exc, 3, show)
    except DepthdynError as exc:
        return _fail("error", exc, 2, show)
    except OSError as exc:  # paths and disks: missing, read-only, full, names too long
        where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
        return _fail("error", exc, 2, show, f"{exc.strerror or exc}{where}")
    except MemoryError as exc:
        return _fail("error", exc, 2, show, "not enough memory for this request; use smaller sizes or grids")
    except Exception as exc:
        if _is_digit_limit(exc):  # Python refuses to print integers past 4,300 digits
            return _fail("error", exc, 2, show, "a number in the result has more than 4,300 digits; "
                         "substitute smaller values")
        return _fail("internal", exc, 3, show)
