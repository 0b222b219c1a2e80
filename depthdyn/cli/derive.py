"""``depthdyn derive``: everything the symbolic layer knows about a family.

At real sizes the exact answer is large: a hyper-connection with 4 streams has a
characteristic polynomial of thousands of terms, and its roots and discriminant are far
larger. By default ``derive`` therefore reports the structured form of the characteristic
polynomial (:mod:`depthdyn.symbolic.compact`), computes the expanded polynomial only when
it is small, and the roots, Vieta relations, discriminant and stability conditions only
when that polynomial is short or split into linear and quadratic factors; what it leaves out is listed with the reason under
``"summarised"``. ``--full`` computes and prints everything (each part under the budget).
"""

from __future__ import annotations

import sys

from ..errors import BudgetExceededError, DepthdynError, ParameterError
from . import rule as rule_options
from .common import add_family_arguments, build_from_cli, emit_json

__all__ = ["derive_report", "add_arguments", "run", "CHARPOLY_TERMS", "HEAVY_CHARS"]

#: The expanded characteristic polynomial of a matrix family is computed by default only when
#: its term bound (:func:`~depthdyn.symbolic.compact.term_bound`) is at most this.
CHARPOLY_TERMS = 1000
#: Roots, Vieta, discriminant and stability are computed by default only for a characteristic
#: polynomial of at most this many characters, or one split into factors of degree at most 2.
HEAVY_CHARS = 1000


_PART_NAMES = {"charpoly": "characteristic polynomial", "structure": "structured characteristic polynomial"}


def add_arguments(cmd) -> None:
    add_family_arguments(cmd, family_required=False)
    cmd.add_argument("--list", action="store_true", help="list the families and exit")
    rule_options.add_arguments(cmd)
    cmd.add_argument("--full", action="store_true",
                     help="compute and print every part whole: expanded polynomials, all roots, exact "
                     "numbers (default: a structured form, sizes of long expressions)")


def _matrix_strings(M, spell) -> list[list[str]]:
    return [[spell(e) for e in row] for row in M.tolist()]


def _stability_json(cond, spell) -> dict:
    return {**cond.to_json(), "conditions": [spell(c) for c in cond.conditions],
            "implied_by_domain": [spell(c) for c in cond.implied_by_domain]}


def _parts(rec, spell) -> dict:
    """The heavy parts of ``derive``, each a thunk; run separately so one past its budget
    leaves the others."""
    from ..symbolic.polynomial import discriminant, root_structure, roots, vieta
    from ..symbolic.stability import stability_conditions

    return {
        "roots": lambda: [{"root": spell(rt.value), "multiplicity": rt.multiplicity} for rt in roots(rec)],
        "vieta": lambda: [
            {"k": v.k, "coefficient": spell(v.coefficient), "holds": v.holds, "method": v.method}
            for v in vieta(rec).relations
        ],
        "discriminant": lambda: spell(discriminant(rec)),
        "root_structure": lambda: [{"condition": spell(c), "roots": w} for c, w in root_structure(rec).cases],
        "stability": lambda: _stability_json(stability_conditions(rec), spell),
    }


def _structure_json(st, spell) -> dict | None:
    """The structured characteristic polynomial as JSON-ready strings."""
    import sympy as sp

    from ..recurrence import r

    if st is None:
        return None
    out = {
        "form": spell(st.form),
        "method": st.method,
        "pieces": [{"name": p.name, "meaning": p.meaning, "bound": p.bound,
                    "value": None if p.value is None else spell(p.value)} for p in st.pieces],
        "facts": list(st.facts),
        "factors": None,
        "discriminant": None,
    }
    if st.factors is not None:
        out["factors"] = [{"factor": spell(f), "multiplicity": m,
                           "root": spell(sp.expand(r - f)) if sp.degree(f, r) == 1 else None}  # f monic
                          for f, m in st.factors]
        if any(m > 1 for _, m in st.factors):
            out["discriminant"] = "0 (a repeated factor: repeated roots for every parameter value)"
        elif len(st.factors) > 1:
            out["discriminant"] = ("product of the factors' discriminants times the squared resultant of "
                                   "each pair of factors (for a linear factor r - a and a factor f: f(a)^2)")
    return out


def _realisations(rec, rep: dict, spell) -> None:
    import sympy as sp

    from ..symbolic.statespace import realisations, similarity

    reals = realisations(rec)
    transforms = {}
    for name, real in reals.items():
        if name == "companion":
            continue
        if real.A == reals["companion"].A and len(real.states) == len(reals["companion"].states):
            eye = _matrix_strings(sp.eye(real.A.rows), spell)  # the same matrix: T = I verifies at once
            transforms[name] = {"T": eye, "T_inv": eye, "verified": True, "same_matrix": True}
            continue
        try:
            sim = similarity(rec, "companion", name)
        except DepthdynError as exc:  # e.g. a singular transform at these parameter values
            transforms[name] = {"verified": False, "error": str(exc)}
            continue
        transforms[name] = {"T": _matrix_strings(sim.T, spell), "T_inv": _matrix_strings(sim.T_inv, spell),
                            "verified": sim.verified}
    rep["statespace"] = {name: _matrix_strings(real.A, spell) for name, real in reals.items()}
    rep["states"] = {name: list(real.states) for name, real in reals.items()}
    rep["transforms"] = transforms


def derive_report(rec, full: bool = False, spell=None) -> dict:
    """Everything ``derive`` reports, as a JSON-ready dict.

    A part past its budget (:class:`~depthdyn.errors.BudgetExceededError`) is ``None`` and
    its one-line message is listed under ``"budget_exceeded"``; the other parts are
    complete. Without ``full``, parts left out for their size are ``None`` with the reason
    under ``"summarised"``. ``spell`` turns expressions into text (default ``sympy.sstr``,
    exact; the text output passes a :class:`~depthdyn.symbolic.compact.Speller`).
    """
    import sympy as sp

    from ..budget import part
    from ..recurrence import r
    from ..rules.catalogue import paper_rule
    from ..symbolic.compact import structured_charpoly, term_bound

    rep = {
        "family": rec.name,
        "description": rec.description,
        "source": rec.source,
        "rule": rec.rule or paper_rule(rec.name),
        "recurrence": rec.equation(),
        "order": rec.order,
        "dim": rec.dim,
        "lam": rec.lam,
        "params": {p.name: {"domain": str(p.domain), "description": p.description} for p in rec.params},
        "structure": None,
        "charpoly": None,
        "budget_exceeded": {},
        "summarised": {},
    }
    spell = spell or sp.sstr

    def attempt(key: str, work):
        """``work()`` as a part under the budget; past it, ``None`` and the reason recorded."""
        try:
            with part(_PART_NAMES.get(key, key)):
                return work()
        except BudgetExceededError as exc:
            rep["budget_exceeded"][key] = str(exc)
            return None

    st = attempt("structure", lambda: structured_charpoly(rec))
    rep["structure"] = _structure_json(st, spell)
    bound = term_bound(-rec.coeffs[1]) if st is not None and not full and st.factors is None else 0
    if bound > CHARPOLY_TERMS:
        rep["summarised"]["charpoly"] = (
            f"not expanded: degree {rec.dim} in r, up to {bound:,} terms; the structured form is exact "
            "(--full expands it)")
    else:
        rep["charpoly"] = attempt("charpoly", lambda: spell(rec.charpoly()))
    _realisations(rec, rep, spell)
    if "charpoly" in rep["budget_exceeded"]:  # every other part starts from the expanded polynomial
        for key in _parts(rec, spell):
            rep[key], rep["budget_exceeded"][key] = None, rep["budget_exceeded"]["charpoly"]
        return rep
    split = st is not None and st.factors is not None and all(sp.degree(f, r) <= 2 for f, _ in st.factors)
    if not full and not split and (rep["charpoly"] is None or len(rep["charpoly"]) > HEAVY_CHARS):
        size = "an unexpanded" if rep["charpoly"] is None else f"a {len(rep['charpoly']):,}-character"
        reason = f"not computed for {size} characteristic polynomial (--full computes it under --budget)"
        for key in _parts(rec, spell):
            rep[key] = None
            rep["summarised"][key] = reason
        return rep
    needs = {"vieta": "roots", "root_structure": "discriminant"}  # same exact work underneath
    for key, thunk in _parts(rec, spell).items():
        if needs.get(key) in rep["budget_exceeded"]:
            rep[key], rep["budget_exceeded"][key] = None, rep["budget_exceeded"][needs[key]]
            continue
        try:
            rep[key] = thunk()
        except BudgetExceededError as exc:
            rep[key] = None
            rep["budget_exceeded"][key] = str(exc)
    return rep


def _list_families() -> None:
    from ..families.registry import families_help

    sys.stdout.write(families_help())


def run(args) -> int:
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
    rep = derive_report(rec, full=args.full, spell=spell)  # under the budget main() sets
    if args.json:
        emit_json(rep)
    else:
        print_report(rep, full=args.full, shortened=spell.shortened)
    if rep["budget_exceeded"]:  # the rest is printed; one line names what is missing
        sys.stdout.flush()
        first = next(iter(rep["budget_exceeded"].values()))
        more = len(rep["budget_exceeded"]) - 1
        sys.stderr.write(f"depthdyn: error: {first}" + (f" (and {more} more part(s))" if more else "") + "\n")
        return 2
    return 0
