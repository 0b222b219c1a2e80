"""The ``depthdyn report`` main job: every claim, a figure set and the modes of each family.

:func:`write_report` runs all claims of the source documents, draws a stability-region
figure and a trajectory figure for each family of the sources in :data:`~depthdyn.families.FAMILIES`
(plus a root locus where the region alone says little), derives each family's
characteristic polynomial, roots, modes and exact stability conditions, and writes

* ``report.md``: first the answer to "what can I trust?": a per-source table of source
  statements that hold, fail, hold with a caveat or are not checked (a statement with
  several readings counts once); then the statements that are false as printed, each with
  the correct value or a counterexample; the caveats; the full claims table; the table of
  statements not checked and why; and one section per family whose figures say which
  recurrence they draw, from which source equation, and where it differs from it;
* ``claims.json``: one JSON object per claim (as ``depthdyn verify --json``);
* ``figures/*.png`` (200 dpi, linked from ``report.md``) and ``figures/*.pdf`` (vector, for a paper),
  drawn in the house style of :mod:`depthdyn.style`.

Every file is written atomically (a temporary file in the same directory, then
:func:`os.replace`); the previous ``report.md`` and ``claims.json`` are removed first and
written again last, so an interrupted run never leaves a stale pair. A directory the
report did not create (no ``.depthdyn-report`` marker) and that is not empty is refused
unless ``force=True``. Figures are drawn on :class:`matplotlib.figure.Figure` objects,
never through ``pyplot``. The package is split by idea: :mod:`.families` (which recurrence
each section analyses and what it says of it), :mod:`.figures` (the figures, their captions,
how they are rendered) and :mod:`.text` (the markdown); this module runs the job.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ParameterError
from ..output import atomic_write, claim_directory
from .families import family_recurrences, report_families
from .figures import render, specs
from .text import checked_statements, claims_sections, family_section, statement_tally, trust_table

__all__ = ["ReportSummary", "write_report", "report_families", "atomic_write", "claim_directory", "MARKER"]

#: Name of the marker file that says a directory was made by ``depthdyn report``.
MARKER = ".depthdyn-report"
_MARKER_TEXT = "This directory was written by `depthdyn report`; it may be overwritten by it.\n"


# ------------------------------------------------------------------ files
def _prepare_dir(out: Path, force: bool) -> None:
    """Claim ``out`` for the report and drop the previous report's set of files.

    ``report.md`` and ``claims.json`` are removed before anything new is written and come
    back last, so an interrupted run never leaves an old ``report.md`` beside a new
    ``claims.json``.
    """
    claim_directory(out, MARKER, _MARKER_TEXT, force)
    try:
        (out / "figures").mkdir(exist_ok=True)
        for name in ("report.md", "claims.json"):
            (out / name).unlink(missing_ok=True)
    except OSError as exc:
        raise ParameterError(f"cannot write to {out}: {exc.strerror or exc}") from None



# ------------------------------------------------------------------ the job
@dataclass(frozen=True)
class ReportSummary:
    """What :func:`write_report` wrote: paths, verdict counts and the time taken."""

    out_dir: Path
    report: Path
    claims: Path
    figures: tuple[Path, ...]
    counts: dict = field(default_factory=dict)
    seconds: float = 0.0
    #: the verdicts counted per source statement (the unit of the report's first table)
    statements: str = ""

    def __str__(self) -> str:
        c = self.counts
        return (f"{c.get('total', 0)} claims (one per reading or part of a source statement): "
                f"{c.get('holds', 0)} hold, {c.get('fails', 0)} fail, {c.get('holds-with-caveat', 0)} hold "
                "with a caveat\n"
                + (f"in source statements (the unit of report.md's first table): {self.statements}\n"
                   if self.statements else "") +
                f"report:  {self.report}\nclaims:  {self.claims}\n"
                f"figures: {len(self.figures)} files (PNG and vector) in {self.out_dir / 'figures'}\n"
                f"done in {self.seconds:.1f} s")



def write_report(out_dir="report", force: bool = False, progress=None) -> ReportSummary:
    """Run every claim, draw every family's figures and write the report into ``out_dir``.

    Parameters
    ----------
    out_dir : str or Path
        Created if missing. An existing non-empty directory is accepted only when it holds
        the ``.depthdyn-report`` marker of an earlier report, or with ``force``.
    force : bool
        Write into a non-empty directory the report did not create (files of the same
        names are replaced; other files are left alone).
    progress : callable, optional
        Called as ``progress(stage)`` with the stage starting (``"claims"``, then
        ``"figures: momentum (3/12)"``, ...); ``depthdyn report`` shows it on stderr.

    Returns
    -------
    ReportSummary

    Raises
    ------
    ParameterError
        ``out_dir`` is a file, a non-empty foreign directory without ``force``, or unwritable.
    ClaimError
        A claim's check failed internally (a bug in depthdyn).
    """
    out = Path(out_dir)
    _prepare_dir(out, force)
    return _build(out, progress or (lambda stage: None))


def _build(out: Path, progress) -> ReportSummary:
    """Run the claims, draw the figures and write every file into the prepared ``out``."""
    from ..claims import run_claims, summary
    from ..derivation import derive

    start = time.perf_counter()
    progress("claims")
    results = run_claims()
    counts = summary(results)

    figures_of, recs = specs(), family_recurrences()
    families = report_families()
    missing = [name for name in families if name not in figures_of]
    if missing:  # a new family needs its figures chosen here
        raise ParameterError(f"the report has no figures for the families {missing}")
    sections, written, number = [], [], 0
    for i, (name, fam) in enumerate(families.items()):
        progress(f"figures and modes: {name} ({i + 1}/{len(families)})")
        rec = recs[name]()
        figures = []
        for spec in figures_of[name]:
            number += 1
            rel = f"figures/{spec.stem}.png"
            files, note = render(spec, rec=rec)
            for fmt, data in files.items():
                written.append(atomic_write(out / f"figures/{spec.stem}.{fmt}", data))
            figures.append((number, rel, spec.caption + note))
        # the facts `depthdyn derive` prints, computed whole (the families are small)
        derived = derive(rec, full=True, parts=("roots", "stability"), realisations=False)
        sections += family_section(name, fam, derived, figures)

    from ..version import __version__

    tally = (f"**{counts['holds']} hold**, **{counts['fails']} fail**, "
             f"**{counts['holds-with-caveat']} hold with a caveat**")
    head = [
        "# depthdyn report", "",
        f"Written by `depthdyn report` (depthdyn {__version__}). Re-run it with "
        f"`depthdyn report --out {out.as_posix()}`; every number below is computed, none is copied.", "",
        *trust_table(results),
        "## Summary", "",
        f"* In claims: {counts['total']} claims (the readings and parts of {checked_statements(results)} "
        f"checked source statements) from the five source documents and the literature: {tally}. "
        "In source statements, the unit of the table above: " + statement_tally(results) + ".",
        f"* {len(families)} families of the sources, each with its exact characteristic polynomial, roots, "
        f"modes and Schur–Cohn stability conditions, and {number} figures.",
        "* Files: `claims.json` (one object per claim: id, source, section, statement, stated, computed, "
        "verdict, method, note), `figures/*.png` (200 dpi) and `figures/*.pdf` (vector, for a paper).", "",
        "Each family's figures name the recurrence they draw, its source equation and where the two differ.",
        "",
        "Stability below means all characteristic roots strictly inside the unit circle (`lam` real unless "
        "the "
        "figure uses the complex `lam` plane). In the region figures the light fill marks strictly stable "
        "grid "
        "points, a darker fill marks points where only the root condition holds (simple roots on the unit "
        "circle), and the drawn curves are the exact boundaries (boundary locus dashed, each exact "
        "Schur–Cohn "
        "condition `expr = 0` as a coloured line).", "",
    ]
    progress("writing")
    body = head + claims_sections(results, counts) + ["", "## Families", ""] + sections
    # the pair is written last, claims first: report.md present means the set is complete
    atomic_write(out / "claims.json",
                 json.dumps([r.to_json() for r in results], ensure_ascii=False, indent=2) + "\n")
    report = atomic_write(out / "report.md", "\n".join(body).rstrip() + "\n")
    return ReportSummary(out, report, out / "claims.json", tuple(written), counts,
                         time.perf_counter() - start, statement_tally(results))
