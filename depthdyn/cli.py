"""The ``depthdyn`` command line.

``depthdyn derive FAMILY [-p NAME=VALUE ...] [--json]`` derives everything the symbolic
layer knows about a family; ``depthdyn derive --list`` names the families;
``depthdyn check FAMILY`` compares the exact results with the numeric engine at random
points and exits 1 on disagreement; ``depthdyn verify [--source NAME] [--json] [--trained]`` checks the
source documents' claims; ``depthdyn report [--out DIR] [--force]`` writes the full report
(claims, figures, modes) into a directory. User errors print one line to stderr and exit with
status 2; no traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

import sympy as sp

from .claims.base import ClaimError
from .errors import DepthdynError, OptionalDependencyError, ParameterError
from .families import FAMILIES, get_family
from .parse import parse_expr, parse_value

__all__ = ["main", "build_from_cli", "derive_report"]


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


def derive_report(rec) -> dict:
    """Everything ``derive`` reports, as a JSON-ready dict."""
    from .symbolic.polynomial import discriminant, root_structure, roots, vieta
    from .symbolic.stability import stability_conditions
    from .symbolic.statespace import realisations, similarity

    rts = roots(rec)
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
    return {
        "family": rec.name,
        "description": rec.description,
        "source": rec.source,
        "recurrence": rec.equation(),
        "order": rec.order,
        "dim": rec.dim,
        "lam": rec.lam,
        "params": {p.name: {"domain": str(p.domain), "description": p.description} for p in rec.params},
        "charpoly": sp.sstr(rec.charpoly()),
        "roots": [{"root": sp.sstr(rt.value), "multiplicity": rt.multiplicity} for rt in rts],
        "vieta": [
            {"k": v.k, "coefficient": sp.sstr(v.coefficient), "holds": v.holds, "method": v.method}
            for v in vieta(rec).relations
        ],
        "discriminant": sp.sstr(discriminant(rec)),
        "root_structure": [{"condition": sp.sstr(c), "roots": w} for c, w in root_structure(rec).cases],
        "statespace": {name: _matrix_strings(real.A) for name, real in reals.items()},
        "states": {name: list(real.states) for name, real in reals.items()},
        "transforms": transforms,
        "stability": stability_conditions(rec).to_json(),
    }


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
    out("roots:\n")
    for rt in rep["roots"]:
        out(f"  r = {rt['root']}  (multiplicity {rt['multiplicity']})\n")
    out("Vieta relations (e_k of the roots = coefficient):\n")
    for v in rep["vieta"]:
        out(f"  e_{v['k']} = {v['coefficient']}  [{'holds' if v['holds'] else 'FAILS'}, {v['method']}]\n")
    out(f"discriminant: {rep['discriminant']}\n")
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


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="depthdyn", description="Residual-family networks as recurrences over depth.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    derive = sub.add_parser("derive", help="derive the symbolic facts of a family")
    _add_family_arguments(derive, family_required=False)
    derive.add_argument("--list", action="store_true", help="list the families and exit")
    chk = sub.add_parser("check", help="cross-check the exact results against the numeric engine")
    _add_family_arguments(chk)
    chk.add_argument("--samples", type=int, default=20, help="random parameter points (default 20)")
    chk.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    region = sub.add_parser("region", help="stability region over two parameters, drawn and/or as JSON")
    _add_family_arguments(region)
    region.add_argument("--x", required=True, metavar="NAME:LO:HI:N", help="x axis, e.g. re(lam):-5:1:400")
    region.add_argument("--y", required=True, metavar="NAME:LO:HI:N", help="y axis, e.g. m:0:0.99:200")
    region.add_argument("--out", metavar="FILE.png", help="write the figure here")
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
    train.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
                       help="block option, e.g. k=2, a_init=-2, n=4, mixing=sinkhorn; repeatable")
    train.add_argument("--progress", action="store_true", help="show a progress bar (tqdm if installed)")
    return parser


def _torch_part():
    try:
        from .nn import command
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
        step=args.step, lr=args.lr, device=args.device, progress=args.progress,
        **command.parse_options(args.param),
    )
    t = metrics["training"]
    acc = "" if t["accuracy"] is None else f", accuracy {t['accuracy']:.3f}"
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
        sys.stderr.write(f"depthdyn: training diverged: {t['diverged']}\n")
        return 1
    return 0


def _axis(text: str, flag: str) -> tuple[str, float, float, int]:
    parts = text.rsplit(":", 3)
    if len(parts) != 4:
        raise ParameterError(f"{flag} expects NAME:LO:HI:N, got {text!r}")
    name, lo, hi, n = parts
    lo_v, hi_v, n_v = parse_expr(lo), parse_expr(hi), parse_expr(n)
    if not (lo_v.is_real and hi_v.is_real and lo_v < hi_v):
        raise ParameterError(f"{flag}: need real LO < HI, got {lo} and {hi}")
    if not n_v.is_Integer or not 2 <= int(n_v) <= 4096:
        raise ParameterError(f"{flag}: N must be an integer in 2..4096, got {n}")
    return name.strip(), float(lo_v), float(hi_v), int(n_v)


def _region(args) -> int:
    from .numeric.region import stability_region

    x, y = _axis(args.x, "--x"), _axis(args.y, "--y")
    rec = build_from_cli(args.family, args.param, args.rho, args.sigma)  # -p values are exact
    reg = stability_region(rec, x, y, conditions=True)
    if args.out:
        from matplotlib.figure import Figure

        from .plot import plot_stability_region

        fig = Figure(figsize=(6.4, 4.8), layout="constrained")
        plot_stability_region(reg, ax=fig.add_subplot())
        fig.savefig(args.out, dpi=120)
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
    from .claims import NOT_CHECKED, coverage, format_table, resolve_sources, run_claims, source_summary, summary

    results = run_claims(args.source)
    if args.trained:
        _torch_part()
        from .nn.claims import run_trained_claims

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


def _check(args) -> int:
    from .numeric.check import check

    if args.samples < 1:
        raise ParameterError(f"--samples must be at least 1, got {args.samples}")
    rec = build_from_cli(args.family, args.param, args.rho, args.sigma)
    report = check(rec, samples=args.samples, seed=args.seed)
    if args.json:
        json.dump(report.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(f"{report}\n")
    return 0 if report.passed else 1


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``depthdyn`` command; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "check":
            return _check(args)
        if args.command == "region":
            return _region(args)
        if args.command == "verify":
            return _verify(args)
        if args.command == "report":
            return _report(args)
        if args.command == "train":
            return _train(args)
        if args.command == "derive":
            if args.list:
                _list_families()
                return 0
            if not args.family:
                raise ParameterError("derive needs a FAMILY (see depthdyn derive --list)")
            rec = build_from_cli(args.family, args.param, args.rho, args.sigma)
            rep = derive_report(rec)
            if args.json:
                json.dump(rep, sys.stdout, indent=2)
                sys.stdout.write("\n")
            else:
                _print_report(rep)
        return 0
    except ClaimError as exc:  # a check that crashed is a bug in depthdyn, not bad input
        sys.stderr.write(f"depthdyn: internal error: {exc}\n")
        return 1
    except DepthdynError as exc:
        sys.stderr.write(f"depthdyn: error: {exc}\n")
        return 2
