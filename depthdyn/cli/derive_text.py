"""The text form of ``depthdyn derive``: compact by default, whole with ``--full``.

Compact means: numbers with more than 12 digits (exact rationals read from float64, such
as Sinkhorn matrices) are shown to 10 significant digits, one note says so; expressions
longer than :data:`LIMIT` characters and matrices longer than :data:`MATRIX_LIMIT` are
replaced by their size.
"""

from __future__ import annotations

import sys

__all__ = ["print_report", "LIMIT", "MATRIX_LIMIT"]

#: Longest expression printed whole by default (characters).
LIMIT = 1200
#: Longest matrix printed whole by default (characters, all rows).
MATRIX_LIMIT = 2400


class _Writer:
    def __init__(self, full: bool):
        self.full, self.shortened = full, False

    def text(self, text: str, what: str = "expression", limit: int = LIMIT) -> str:
        from ..symbolic.compact import shorten_numbers, summary

        if self.full:
            return text
        text, changed = shorten_numbers(text)
        self.shortened |= changed
        return summary(text, limit, what)

    def __call__(self, line: str) -> None:
        sys.stdout.write(line + "\n")


def _structure(out: _Writer, st: dict) -> None:
    out(f"structured form ({st['method']}):")
    out(f"  charpoly = {out.text(st['form'], 'structured form')}")
    for piece in st["pieces"]:
        value = (f"not expanded (up to {piece['bound']:,} terms)" if piece["value"] is None
                 else out.text(piece["value"], piece["name"]))
        out(f"  {piece['name']} = {piece['meaning']}:")
        out(f"    {value}")
    for fact in st["facts"]:
        out(f"  {fact}")
    for f in st["factors"] or []:
        if f["root"] is not None:
            out(f"  root r = {out.text(f['root'], 'root')}" + (f"  (multiplicity {f['multiplicity']})"
                                                               if f["multiplicity"] > 1 else ""))
    if st["discriminant"]:
        out(f"  discriminant: {st['discriminant']}")


def _matrix(out: _Writer, rows: list[list[str]], indent: str) -> None:
    lines = [f"{indent}[{', '.join(row)}]" for row in rows]
    text = out.text("\n".join(lines), f"{len(rows)}x{len(rows)} matrix", MATRIX_LIMIT)
    out(text if text.startswith(indent) else indent + text)


def print_report(rep: dict, full: bool = False, shortened: bool = False) -> None:
    """Print the JSON form of a :class:`~depthdyn.derivation.Derivation` for a reader
    (``shortened``: its expressions had long numbers shortened already)."""
    out = _Writer(full)
    out.shortened = shortened
    out(f"{rep['family']}: {rep['description']}")
    if rep.get("rule"):
        out(f"rule: {rep['rule']}")
    if rep["source"]:
        out(f"source: {rep['source']}")
    out(f"recurrence: {out.text(rep['recurrence'], 'recurrence', MATRIX_LIMIT)}")
    for name, info in rep["params"].items():
        out(f"  {name} in {info['domain']}" + (f"  ({info['description']})" if info["description"] else ""))
    over, summarised = rep.get("budget_exceeded", {}), rep.get("summarised", {})

    def missing(key: str, title: str) -> bool:
        if rep.get(key) is None:
            reason = f"not computed ({over[key]})" if key in over else summarised.get(key, "skipped")
            out(f"{title}: {reason}")
            return True
        return False

    out("")
    if not missing("charpoly", "characteristic polynomial"):
        out(f"characteristic polynomial: {out.text(rep['charpoly'], 'characteristic polynomial')}")
    if rep.get("structure"):
        _structure(out, rep["structure"])
    elif "structure" in over:
        missing("structure", "structured form")
    if not missing("roots", "roots"):
        out("roots:")
        for rt in rep["roots"]:
            out(f"  r = {out.text(rt['root'], 'root')}  (multiplicity {rt['multiplicity']})")
    if not missing("vieta", "Vieta relations"):
        out("Vieta relations (e_k of the roots = coefficient):")
        for v in rep["vieta"]:
            out(f"  e_{v['k']} = {out.text(v['coefficient'])}  [{'holds' if v['holds'] else 'FAILS'}, "
                f"{v['method']}]")
    if not missing("discriminant", "discriminant"):
        out(f"discriminant: {out.text(rep['discriminant'], 'discriminant')}")
    if not missing("root_structure", "root structure"):
        for case in rep["root_structure"]:
            out(f"  {out.text(case['condition'], 'condition')}: {case['roots']}")
    out("\nstate-space realisations s' = A s:")
    for name, A in rep["statespace"].items():
        check = rep["transforms"].get(name)
        tag = "" if check is None else (
            "  (similar to companion: verified)" if check["verified"] else "  (NOT similar)")
        if check is not None and check.get("same_matrix"):
            out(f"  {name} [{', '.join(rep['states'][name])}]  (the same matrix as companion)")
            continue
        out(f"  {name} [{', '.join(rep['states'][name])}]{tag}")
        _matrix(out, A, "    ")
    st = rep["stability"]
    if st is None:
        out("")
        missing("stability", "stability")
    else:
        assumptions = f"; {', '.join(st['assumptions'])}" if st.get("assumptions") else ""
        out(f"\nstability (all roots strictly inside the unit circle{assumptions}):")
        if st.get("never"):
            out(f"  never: {st.get('reason', '')}")
        for cond in st["conditions"]:
            out(f"  {out.text(cond, 'condition')}")
        for cond in st.get("implied_by_domain", []):
            out(f"  ({out.text(cond, 'condition')}: implied by the parameter domains)")
    if out.shortened:
        out("\nnote: numbers with more than 12 digits are shown to 10 significant digits "
            "(exact values: --full or --json)")
