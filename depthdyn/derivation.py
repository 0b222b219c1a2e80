"""Everything the exact engine knows about one family, computed once: :func:`derive`.

``depthdyn derive`` prints its record (as text, or as JSON with ``--json``) and each family's
section of ``depthdyn report`` prints from the same record, so the two never disagree.

At real sizes the exact answer is large: a hyper-connection with 4 streams has a
characteristic polynomial of thousands of terms, and its roots and discriminant are far
larger. By default :func:`derive` therefore gives the structured form of the characteristic
polynomial (:mod:`depthdyn.structure`), expands the polynomial only when it is small,
and computes the roots, Vieta relations, discriminant and stability conditions only when that
polynomial is short or split into linear and quadratic factors; what it leaves out is listed
with the reason under ``"summarised"``. ``full=True`` computes everything, each part under the
budget of :mod:`depthdyn.budget`.

>>> from depthdyn import momentum
>>> d = derive(momentum(m="1/2"))
>>> d.to_json()["charpoly"]
'r**2 - (eta*lam + 3/2)*r + 1/2'
>>> d.results["stability"].conditions
(eta*lam + 3 > 0, -eta*lam > 0)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import sympy as sp

from .budget import part
from .errors import BudgetExceededError, DepthdynError, ParameterError
from .limits import CHARPOLY_TERMS, HEAVY_CHARS
from .printing import sstr
from .records import Record
from .recurrence import Recurrence, r

__all__ = ["Derivation", "derive", "root_lines", "PARTS", "RADICAL_CHARS"]

#: The parts that start from the expanded characteristic polynomial, in the order they are computed.
PARTS = ("roots", "vieta", "discriminant", "root_structure", "stability")

_PART_NAMES = {"charpoly": "characteristic polynomial", "structure": "structured characteristic polynomial"}


@dataclass(frozen=True, eq=False)
class Derivation(Record):
    """What :func:`derive` found about one recurrence.

    ``results`` holds the computed objects by part (``structure``, ``charpoly``, ``roots``,
    ``vieta``, ``discriminant``, ``root_structure``, ``stability``; ``None`` where a part was
    left out or ran past its budget); ``fields`` is the JSON-ready report that
    ``depthdyn derive --json`` prints, its expressions spelled as :func:`derive` was asked.
    """

    recurrence: Recurrence
    results: Mapping[str, object]
    fields: dict

    @property
    def budget_exceeded(self) -> dict:
        """Part -> the one-line message of the budget it ran past."""
        return self.fields["budget_exceeded"]

    @property
    def summarised(self) -> dict:
        """Part -> why it was left out (its size)."""
        return self.fields["summarised"]

    def modes(self):
        """The modes of the recurrence (:func:`~depthdyn.symbolic.solve.modes`)."""
        from .symbolic.solve import modes

        return modes(self.recurrence)

    def to_json(self) -> dict:
        return dict(self.fields)

    def _text(self) -> str:
        poly = self.fields["charpoly"]
        return f"{self.recurrence.name}: {self.fields['recurrence']}; characteristic polynomial " + (
            poly if poly is not None else "not expanded")

    def _latex(self) -> str:
        poly = self.results.get("charpoly")
        return sp.latex(poly) if poly is not None else sp.latex(self.results.get("structure").form)


def _matrix_strings(M, spell) -> list[list[str]]:
    return [[spell(e) for e in row] for row in M.tolist()]


def _stability_json(cond, spell) -> dict:
    return {**cond.to_json(), "conditions": [spell(c) for c in cond.conditions],
            "implied_by_domain": [spell(c) for c in cond.implied_by_domain],
            "set": None if cond.intervals is None or cond.never else cond.intervals.inequalities(spell)}


def _root_factors(rts, spell) -> list[dict]:
    """The roots grouped by the irreducible factor they come from: ``factor``, ``degree``,
    ``multiplicity``, ``roots`` (indices into the ``roots`` list) and ``values`` (each root to
    10 digits where the roots are numbers, else ``None``), so that a reader can be shown
    ``CRootOf(factor, i)`` or "the roots of factor" in place of long radicals."""
    groups: dict = {}
    for i, rt in enumerate(rts):
        groups.setdefault(rt.factor, []).append(i)
    out = []
    for factor, members in groups.items():
        values = [rts.roots[i].value for i in members]
        numeric = not any(v.free_symbols for v in values)
        out.append({"factor": spell(factor), "degree": int(sp.degree(factor, r)),
                    "multiplicity": rts.roots[members[0]].multiplicity, "roots": members,
                    "values": [sstr(sp.N(v, 10, chop=True)) for v in values] if numeric else None})
    return out


#: Longest radical form of a root that :func:`root_lines` prints by default (characters).
RADICAL_CHARS = 80

_CUBE_ROOT = re.compile(r"\*\*\(\d+/3\)")


def _cube_of_sqrt(text: str) -> bool:
    """Whether ``text`` takes a cube root of a bracket that holds a square root (Cardano's formula)."""
    for match in _CUBE_ROOT.finditer(text):
        end, depth = match.start() - 1, 0
        if end < 0 or text[end] != ")":
            continue
        for start in range(end, -1, -1):
            depth += (text[start] == ")") - (text[start] == "(")
            if depth == 0:
                break
        if "sqrt(" in text[start:end]:
            return True
    return False


def _as_is(text: str, what: str = "expression") -> str:
    return text


def root_lines(rep: Mapping, *, radicals: bool = False, text: Callable = _as_is,
               how: str = "") -> list[str]:
    """The roots of a derivation (its JSON form) as lines of text, a long radical as a root of its factor.

    A root whose radical form is longer than :data:`RADICAL_CHARS` characters or takes a cube
    root of a bracket holding a square root (Cardano's formula) is shown as ``CRootOf(factor, i)
    ≈ value`` where it is a number and as "each of the k roots of factor" where it depends on
    parameters; ``radicals=True`` prints every formula. ``text(string, what)`` spells each piece
    (``depthdyn derive`` passes its shortener); ``how`` says how to get the formulas (``depthdyn
    derive`` says ``--radicals``).
    """
    def long(s: str) -> bool:
        return len(s) > RADICAL_CHARS or _cube_of_sqrt(s)

    rts = rep["roots"]
    factors = rep.get("root_factors") or [{"roots": [i], "values": None, "factor": None}
                                          for i in range(len(rts))]
    lines = []
    for group in factors:
        members = [rts[i] for i in group["roots"]]
        values = group["values"]
        if radicals or group["factor"] is None or not any(
                long(rt["root"]) or "RootOf" in rt["root"] for rt in members):
            for k, rt in enumerate(members):
                approx = f" ≈ {text(values[k])}" if values and "RootOf" in rt["root"] else ""
                lines.append(f"r = {text(rt['root'], 'root')}{approx}  (multiplicity {rt['multiplicity']})")
            continue
        factor = text(group["factor"], "factor")
        mult = f"multiplicity {group['multiplicity']}" + (" each" if len(members) > 1 else "")
        if values is None:
            longest = max(len(rt["root"]) for rt in members)
            lines.append(f"r = each of the {len(members)} roots of {factor}  ({mult}; radicals of up to "
                         f"{longest:,} characters{': ' + how if how else ''})")
            continue
        for k, (rt, value) in enumerate(zip(members, values, strict=True)):
            name = rt["root"] if rt["root"].startswith("CRootOf") else f"CRootOf({factor}, {k})"
            lines.append(f"r = {text(name, 'root')} ≈ {text(value)}  (multiplicity {rt['multiplicity']})")
    return lines


def _parts(rec, spell) -> dict[str, tuple[Callable, Callable]]:
    """The heavy parts: ``(compute, spell the result)`` each, run separately so that one past its
    budget leaves the others."""
    from .symbolic.polynomial import discriminant, root_structure, roots, vieta
    from .symbolic.stability import stability_conditions

    return {
        "roots": (lambda: roots(rec),
                  lambda rts: [{"root": spell(rt.value), "multiplicity": rt.multiplicity} for rt in rts]),
        "vieta": (lambda: vieta(rec),
                  lambda v: [{"k": x.k, "coefficient": spell(x.coefficient), "holds": x.holds,
                              "method": x.method} for x in v.relations]),
        "discriminant": (lambda: discriminant(rec), spell),
        "root_structure": (lambda: root_structure(rec),
                           lambda rs: [{"condition": spell(c), "roots": w} for c, w in rs.cases]),
        "stability": (lambda: stability_conditions(rec), lambda cond: _stability_json(cond, spell)),
    }


def _structure_json(st, spell) -> dict | None:
    """The structured characteristic polynomial as JSON-ready strings."""
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
    from .symbolic.statespace import realisations, similarity

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


def derive(rec: Recurrence, *, full: bool = False, spell=None, parts=PARTS,
           realisations: bool = True) -> Derivation:
    """Everything the exact engine knows about ``rec``, each heavy part under the budget.

    Parameters
    ----------
    rec : Recurrence
    full : bool
        Compute every part whole, whatever its size (default: summarise large ones).
    spell : callable, optional
        Turns expressions into the report's text (default :func:`depthdyn.printing.sstr`, exact;
        ``depthdyn derive`` passes a :class:`~depthdyn.symbolic.compact.Speller` for its text).
    parts : sequence of str
        Which of :data:`PARTS` to compute (default all).
    realisations : bool
        Also give the state-space realisations and the similarity transforms between them.

    Returns
    -------
    Derivation
        A part past its budget (:class:`~depthdyn.errors.BudgetExceededError`) is ``None``
        and its one-line message is listed under ``"budget_exceeded"``; the other parts are
        complete. Without ``full``, parts left out for their size are ``None`` with the reason
        under ``"summarised"``.
    """
    from .families.registry import paper_rule
    from .structure import structured_charpoly, term_bound

    if not isinstance(rec, Recurrence):
        raise ParameterError(f"derive needs a Recurrence, got {type(rec).__name__}")
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        raise ParameterError(f"unknown parts {unknown}; choose from {list(PARTS)}")
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
    results: dict[str, object] = {}
    spell = spell or sstr

    def attempt(key: str, work, spelled=spell):
        """``work()`` and its spelling as a part under the budget; past it, ``None`` and the reason."""
        try:
            with part(_PART_NAMES.get(key, key)):
                value = work()
                results[key] = value
                return None if value is None else spelled(value)
        except BudgetExceededError as exc:
            results[key] = None
            rep["budget_exceeded"][key] = str(exc)
            return None

    attempt("structure", lambda: structured_charpoly(rec), lambda s: s)
    st = results["structure"]
    rep["structure"] = _structure_json(st, spell)
    bound = term_bound(-rec.coeffs[1]) if st is not None and not full and st.factors is None else 0
    if bound > CHARPOLY_TERMS:
        rep["summarised"]["charpoly"] = (
            f"not expanded: degree {rec.dim} in r, up to {bound:,} terms; the structured form is exact "
            "(--full expands it)")
    else:
        rep["charpoly"] = attempt("charpoly", rec.charpoly)
    if realisations:
        _realisations(rec, rep, spell)
    heavy = {key: pair for key, pair in _parts(rec, spell).items() if key in parts}
    done = Derivation(rec, results, rep)
    if "charpoly" in rep["budget_exceeded"]:  # every other part starts from the expanded polynomial
        for key in heavy:
            rep[key], rep["budget_exceeded"][key] = None, rep["budget_exceeded"]["charpoly"]
        return done
    split = st is not None and st.factors is not None and all(sp.degree(f, r) <= 2 for f, _ in st.factors)
    if not full and not split and (rep["charpoly"] is None or len(rep["charpoly"]) > HEAVY_CHARS):
        size = "an unexpanded" if rep["charpoly"] is None else f"a {len(rep['charpoly']):,}-character"
        reason = f"not computed for {size} characteristic polynomial (--full computes it under --budget)"
        for key in heavy:
            rep[key] = None
            rep["summarised"][key] = reason
        return done
    needs = {"vieta": "roots", "root_structure": "discriminant"}  # same exact work underneath
    for key, (compute, spelled) in heavy.items():
        results[key] = None
        if needs.get(key) in rep["budget_exceeded"]:
            rep[key], rep["budget_exceeded"][key] = None, rep["budget_exceeded"][needs[key]]
            continue
        try:  # each exact function bounds its own work; past the budget, this part is left out
            results[key] = compute()
            rep[key] = spelled(results[key])
        except BudgetExceededError as exc:
            results[key], rep[key] = None, None
            rep["budget_exceeded"][key] = str(exc)
    if results.get("roots") is not None:
        rep["root_factors"] = _root_factors(results["roots"], spell)
    return done
