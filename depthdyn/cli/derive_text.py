"""The text form of ``depthdyn derive``: compact by default, whole with ``--full``.

Compact means: numbers with more than 12 digits (exact rationals read from float64, such
as Sinkhorn matrices) are shown to 10 significant digits, one note says so; expressions
longer than :data:`LIMIT` characters and matrices longer than :data:`MATRIX_LIMIT` are
replaced by their size; a root whose radical form is long (see
:func:`depthdyn.derivation.root_lines`) is shown as the root of its factor:
``CRootOf(factor, i) ≈ value`` where it is a number, "the roots of factor" where it depends
on parameters (``--radicals`` or ``--full`` print the radicals); the stability conditions in
one real parameter are preceded by the exact set they describe (``-6/11 < lam < 0``); runs of
three or more parameters that share a name stem, a domain and a description (``hres_1_1``,
``hres_1_2``, ...) are shown as one line.
"""

from __future__ import annotations

import re
import sys

from ..derivation import root_lines

__all__ = ["print_report", "LIMIT", "MATRIX_LIMIT"]

#: Longest expression printed whole by default (characters).
LIMIT = 1200
#: Longest matrix printed whole by default (characters, all rows).
MATRIX_LIMIT = 2400

_INDEXED = re.compile(r"^(.*?[A-Za-z])((?:_\d+)+)$")  # hres_1_2 -> ("hres", "_1_2")


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


def _param_lines(params: dict, every: bool = False) -> list[str]:
    """One line per parameter, runs of three or more indexed names (same stem, number of indices,
    domain and description) as one line with their index ranges unless ``every``."""
    groups: list[tuple[tuple, list]] = []
    for name, info in params.items():
        m = _INDEXED.match(name)
        key = (m.group(1), m.group(2).count("_"), info["domain"], info["description"]) if m else (name,)
        if m and groups and groups[-1][0] == key:
            groups[-1][1].append(name)
        else:
            groups.append((key, [name]))
    lines = []
    for key, names in groups:
        info = params[names[0]]
        note = f"  ({info['description']})" if info["description"] else ""
        if len(names) < 3 or every:
            lines += [f"  {n} in {params[n]['domain']}" + (f"  ({params[n]['description']})"
                                                          if params[n]["description"] else "") for n in names]
            continue
        stem, count = key[0], key[1]
        index = [[int(i) for i in _INDEXED.match(n).group(2)[1:].split("_")] for n in names]
        letters = "ijkmn"[:count] if count <= 5 else [f"i{c + 1}" for c in range(count)]
        ranges = ", ".join(f"{letters[c]} = {min(ix[c] for ix in index)}..{max(ix[c] for ix in index)}"
                           for c in range(count))
        pattern = stem + "".join(f"_{letters[c]}" for c in range(count))
        lines.append(f"  {pattern} in {info['domain']}: {len(names)} parameters ({names[0]} .. {names[-1]}; "
                     f"{ranges}){note}")
    return lines


def _matrix(out: _Writer, rows: list[list[str]], indent: str) -> None:
    lines = [f"{indent}[{', '.join(row)}]" for row in rows]
    text = out.text("\n".join(lines), f"{len(rows)}x{len(rows)} matrix", MATRIX_LIMIT)
    out(text if text.startswith(indent) else indent + text)


def print_report(rep: dict, full: bool = False, shortened: bool = False, radicals: bool = False) -> None:
    """Print the JSON form of a :class:`~depthdyn.derivation.Derivation` for a reader
    (``shortened``: its expressions had long numbers shortened already; ``radicals``: print
    roots as radicals whatever their length, as ``full`` does)."""
    out = _Writer(full)
    out.shortened = shortened
    out(f"{rep['family']}: {rep['description']}")
    if rep.get("rule"):
        out(f"rule: {rep['rule']}")
    if rep["source"]:
        out(f"source: {rep['source']}")
    out(f"recurrence: {out.text(rep['recurrence'], 'recurrence', MATRIX_LIMIT)}")
    for line in _param_lines(rep["params"], every=full):
        out(line)
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
        for line in root_lines(rep, radicals=radicals or full, text=out.text, how="--radicals"):
            out("  " + line)
    if not missing("vieta", "Vieta relations"):
        out("Vieta relations (e_k of the roots = coefficient):")
        for v in rep["vieta"]:
            out(f"  e_{v['k']} = {out.text(v['coefficient'])}  [{'holds' if v['holds'] else 'FAILS'}, "
                f"{v['method']}]")
    if not missing("discriminant", "discriminant"):
        out(f"discriminant: {out.text(rep['discriminant'], 'discriminant')}")
    if not missing("root_structure", "root structure"):
        for case in rep["root_structure"]:  # condition True: no parameter left, one case
            out(f"  {case['roots']}" if case["condition"] == "True"
                else f"  {out.text(case['condition'], 'condition')}: {case['roots']}")
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
        if st.get("set"):
            # one real parameter: the exact set the conditions below describe
            out(f"  {out.text(st['set'], 'condition')}")
            if len(st["conditions"]) > 1:
                out(f"  from: {', '.join(out.text(c, 'condition') for c in st['conditions'])}")
        else:
            # a record that is never stable holds the one condition False: the line above says it
            for cond in [] if st.get("never") else st["conditions"]:
                out(f"  {out.text(cond, 'condition')}")
        if st.get("tolerance_note"):
            out(f"  {st['tolerance_note']}")
        for cond in st.get("implied_by_domain", []):
            out(f"  ({out.text(cond, 'condition')}: implied by the parameter domains)")
    if out.shortened:
        out("\nnote: numbers with more than 12 digits are shown to 10 significant digits "
            "(exact values: --full or --json)")
