"""``depthdyn derive``: everything the symbolic layer knows about a family."""

from __future__ import annotations

import sys

from ..errors import BudgetExceededError, DepthdynError, ParameterError
from .common import add_family_arguments, build_from_cli, emit_json

__all__ = ["derive_report", "add_arguments", "run"]


def add_arguments(cmd) -> None:
    add_family_arguments(cmd, family_required=False)
    cmd.add_argument("--list", action="store_true", help="list the families and exit")


def _matrix_strings(M) -> list[list[str]]:
    import sympy as sp

    return [[sp.sstr(e) for e in row] for row in M.tolist()]


def _parts(rec) -> dict:
    """The parts of ``derive``, each a thunk; run separately so one past its budget leaves
    the others."""
    import sympy as sp

    from ..symbolic.polynomial import discriminant, root_structure, roots, vieta
    from ..symbolic.stability import stability_conditions

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
    import sympy as sp

    from ..symbolic.statespace import realisations, similarity

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
    from ..families import FAMILIES

    width = max(map(len, FAMILIES))
    for name, fam in FAMILIES.items():
        extra = ", ".join(f"{k}={v!r}" for k, v in fam.structural.items() if k not in ("rho", "sigma"))
        sys.stdout.write(f"{name:<{width}}  {fam.summary}" + (f"  [{extra}]" if extra else "") + "\n")


def run(args) -> int:
    if args.list:
        _list_families()
        return 0
    if not args.family:
        raise ParameterError("derive needs a FAMILY (see depthdyn derive --list)")
    rec = build_from_cli(args.family, args.param, args.rho, args.sigma)
    rep = derive_report(rec)  # under the budget main() sets
    if args.json:
        emit_json(rep)
    else:
        _print_report(rep)
    if rep["budget_exceeded"]:  # the rest is printed; one line names what is missing
        sys.stdout.flush()
        first = next(iter(rep["budget_exceeded"].values()))
        more = len(rep["budget_exceeded"]) - 1
        sys.stderr.write(f"depthdyn: error: {first}" + (f" (and {more} more part(s))" if more else "") + "\n")
        return 2
    return 0


