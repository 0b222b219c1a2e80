"""The text of the report: the first page, the claims tables, one section per family, sets in maths notation.

Every function returns a list of markdown lines; :func:`maths` writes SymPy's set
spellings as mathematics (``Interval.Ropen(-2, -1)`` -> ``[-2, -1)``).
"""

from __future__ import annotations

import re
from pathlib import Path

from ..derivation import root_lines
from .families import MODELS, NOTES

__all__ = ["maths", "cell", "checked_statements", "statement_tally", "trust_table",
           "claims_sections", "family_section"]


# ------------------------------------------------------------------ markdown
_SETS = {"Interval.Ropen": "[)", "Interval.Lopen": "(]", "Interval.open": "()", "Interval": "[]",
         "Union": None, "FiniteSet": "{}"}
_SET_WORD = re.compile(r"(?<![\w.])(Interval\.Ropen|Interval\.Lopen|Interval\.open|Interval|Union|FiniteSet)\(")
_INFINITY = re.compile(r"(?<![\w.])oo(?!\w)")


def _split_args(text: str) -> list[str]:
    """Top-level comma-separated arguments of a call's argument text."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    return out + [text[start:].strip()]


def maths(text: str) -> str:
    """SymPy's set spellings as maths: ``Interval.Ropen(-2, -1)`` -> ``[-2, -1)``, ``Union(A, B)`` -> ``A ∪ B``, ``oo`` -> ``∞``.

    >>> maths("x in Union(Interval.Ropen(-2, -1), Interval.open(0, oo)) or FiniteSet(3)")
    'x in [-2, -1) ∪ (0, ∞) or {3}'
    """
    text = str(text)
    while (match := _SET_WORD.search(text)) is not None:
        depth, end = 0, None
        for i in range(match.end() - 1, len(text)):
            depth += text[i] == "("
            depth -= text[i] == ")"
            if depth == 0:
                end = i
                break
        if end is None:  # unbalanced: leave the rest as it is
            break
        args = [maths(a) for a in _split_args(text[match.end():end])]
        kind = match.group(1)
        if kind == "Union":
            new = " ∪ ".join(args)
        elif kind == "Interval" and len(args) == 4:  # Interval(a, b, left_open, right_open)
            new = f"{'(' if args[2] == 'True' else '['}{args[0]}, {args[1]}{')' if args[3] == 'True' else ']'}"
        else:
            left, right = _SETS[kind]
            if left != "{":  # an infinite end is never included, whatever the spelling
                left = "(" if args[0] in ("-oo", "-∞") else left
                right = ")" if args[1] in ("oo", "∞") else right
            new = f"{left}{', '.join(args[:2] if left != '{' else args)}{right}"
        text = text[:match.start()] + new + text[end + 1:]
    return _INFINITY.sub("∞", text.replace("EmptySet", "∅"))


def cell(text: str, width: int = 90, table: bool = True) -> str:
    """One line of report text: whitespace collapsed, cut at ``width``, sets in maths notation.

    Only inside a table is ``|`` escaped (GitHub tables need ``\\|`` even in code spans);
    backslashes are never doubled (code spans show them as they are).
    """
    text = maths(" ".join(str(text).split()))
    if len(text) > width:
        text = text[: width - 1] + "…"
    text = text.replace("`", "'")
    return text.replace("|", "\\|") if table else text


def _code(text: str, width: int = 90, table: bool = True) -> str:
    text = cell(text, width, table)
    return f"`{text}`" if text else ""


def checked_statements(results) -> int:
    """How many source statements ``results`` check (the readings of one statement count once)."""
    return len({r.statement_key or r.id for r in results})


def statement_tally(results) -> str:
    """``"n statements hold, m fail, k hold with a caveat"``, counted per source statement."""
    from ..claims import statement_verdicts

    verdicts = list(statement_verdicts(results).values())
    return (f"{verdicts.count('holds')} statements hold, {verdicts.count('fails')} fail, "
            f"{verdicts.count('holds-with-caveat')} hold with a caveat")


def trust_table(results) -> list[str]:
    """The first page: per source, how many of its statements hold, fail, hold with a caveat, are not checked."""
    from ..claims import NOT_CHECKED, SOURCES, coverage, source_summary

    table, cov = source_summary(results), coverage(results)
    lines = ["## What can I trust? Statements of each source", "",
             "Counted in **source statements** (a sentence of a source counts once, however many readings "
             "or parts it is checked by); the summary below also counts **claims** (one per reading or part).",
             "",
             "| source | statements | holds | fails (false as printed) | holds with a caveat | not checked |",
             "|---|---|---|---|---|---|"]
    for key, row in table.items():
        lines.append(f"| {key}: {cell(SOURCES[key].title, 70)} | {row['total']} | {row['holds']} | "
                     f"**{row['fails']}** | {row['holds-with-caveat']} | {row['not checked']} |")
    tot = {k: sum(row[k] for row in table.values()) for k in next(iter(table.values()))}
    lines += [f"| **all** | {tot['total']} | {tot['holds']} | **{tot['fails']}** | {tot['holds-with-caveat']} | "
              f"{tot['not checked']} |", "",
              f"Counted per source statement: {cov['covered']} statements are checked by {len(results)} claims "
              "(an ambiguous statement gives one claim per reading, a compound one a claim per part, and counts "
              f"once), {len(NOT_CHECKED)} are listed below as not checked, with the reason.", "",
              "Verdict policy: **fails** means false under the plain reading of the sentence as printed (even "
              "where a charitable reading would make it true: the note gives that reading); **holds with a "
              "caveat** means true as printed only with a condition the source leaves unstated, or only in a "
              "limit it implies (the note names it); a statement whose readings disagree counts as a caveat. "
              "Every verdict is computed from the source's premises and changes when the stated value or a "
              "premise is changed (tests/test_claims_mutation.py).", ""]
    return lines


def claims_sections(results, counts) -> list[str]:
    """False as printed, true with a caveat, all claims, not checked: the sections after the summary."""
    from ..claims import NOT_CHECKED, SOURCES

    fails = [r.to_json() for r in results if r.verdict == "fails"]
    from ..claims import statement_verdicts

    keys = {r.statement_key or r.id for r in results if r.verdict == "fails"}
    whole = sum(v == "fails" for k, v in statement_verdicts(results).items() if k in keys)
    lines = ["## False as printed", "",
             f"{len(fails)} claims are false under the plain reading, each below with the correct value or a "
             f"counterexample. They are readings or parts of {len(keys)} source statements: {whole} of these "
             f"fail under every reading (the table's 'fails'), the other {len(keys) - whole} hold under another "
             "reading (counted there as 'holds with a caveat').", ""]
    for j in fails:
        lines += [f"* **{j['id']}** ({j['source'][:3]} {j['section']}): {cell(j['statement'], 10**4, False)}",
                  f"  * as printed: {_code(j['stated'], 400, False)}",
                  f"  * correct / counterexample: {_code(j['computed'], 400, False)}"]
        if j["note"]:
            lines.append(f"  * note: {cell(j['note'], 10**4, False)}")
    caveats = [r.to_json() for r in results if r.verdict == "holds-with-caveat"]
    lines += ["", "## True only with a caveat", ""]
    if not caveats:
        lines.append("None.")
    for j in caveats:
        note = cell(j["note"], 10**4, False) or "see claims.json"
        lines.append(f"* **{j['id']}** ({j['source'][:3]} {j['section']}): {cell(j['statement'], 10**4, False)}. "
                     f"*Condition:* {note}")
    lines += ["", "## All claims", "",
              f"{counts['total']} claims, each checked by computation with depthdyn (`depthdyn verify` prints "
              "the same table; `claims.json` holds the full records, `statement_key` naming the source "
              "statement a reading belongs to). The experimental claims (002 §4, 000 §8, 003 §5) need "
              "trained networks: `depthdyn verify --trained` with the torch extra.", "",
              "| id | § | verdict | statement | stated | computed |", "|---|---|---|---|---|---|"]
    for res in results:
        j = res.to_json()
        lines.append(f"| {cell(j['id'])} | {cell(j['section'], 30)} | **{j['verdict']}** | "
                     f"{cell(j['statement'], 140)} | {_code(j['stated'])} | {_code(j['computed'])} |")
    lines += ["", "## Not checked", "", "| source | § | statement | why not |", "|---|---|---|---|"]
    for u in NOT_CHECKED:
        lines.append(f"| {u.source} ({cell(SOURCES[u.source].short)}) | {cell(u.section, 30)} | "
                     f"{cell(u.statement, 140)} | {cell(u.reason, 240)} |")
    return lines


def family_section(name, fam, derivation, figures) -> list[str]:
    """The section of one family: its :class:`~depthdyn.derivation.Derivation` (the facts
    ``depthdyn derive`` prints, with the modes) and its numbered figures."""
    rec, derived = derivation.recurrence, derivation.to_json()

    def missing(key: str) -> str:
        why = derivation.budget_exceeded.get(key) or derivation.summarised.get(key) or "not computed"
        return f"not computed ({why})"

    lines = [f"### {name}", "", f"{fam.summary}. {NOTES.get(name, '')}".rstrip(),
             "", f"Source: {rec.source or '—'}.", "", "```text",
             f"recurrence:     {derived['recurrence']}",
             f"charpoly:       {derived['charpoly'] or missing('charpoly')}", "roots:"]
    roots = derived.get("roots")
    lines += [f"  {line}" for line in (root_lines(derived, how="`depthdyn derive --radicals`")
                                       if roots else [])]
    lines += [] if roots is not None else [f"  {missing('roots')}"]
    stability = derivation.results.get("stability")
    lines += [f"modes:          {maths(str(derivation.modes()))}", "stability:"]
    lines += [f"  {line}" for line in (maths(str(stability)) if stability is not None
                                       else missing("stability")).splitlines()]
    lines += ["```", ""]
    if not rec.is_scalar:
        lines += ["The modes are those of `det(r I - M)`; every component of `x_l` is a combination of them "
                  "(terms `l r^l` of a repeated eigenvalue vanish when the one-step map is "
                  "diagonalisable).", ""]
    drawn, equation, differs = MODELS[name]
    for number, rel, caption in figures:
        alt = Path(rel).stem.replace("_", " ").replace("-", " ")
        lines += [f"![{alt}]({rel})", "", f"*Figure {number}.* {caption}", "",
                  f"*Recurrence drawn:* `{drawn}`. *Source equation:* {equation}. *Differs from the source:* "
                  f"{differs}.", ""]
    return lines
