"""depthdyn report: files written, counts, figures linked and present, directory safety, atomic writes."""

import json
import os
import re
from pathlib import Path

import pytest

from depthdyn.claims import summary
from depthdyn.cli import main
from depthdyn.errors import ParameterError
from depthdyn.report import MARKER, atomic_write, report_families, write_report

FAMILIES = report_families()  # the literature's families are drawn by the docs gallery

PNG = b"\x89PNG\r\n\x1a\n"
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """One full run of the report (about 20 s; the claims dominate)."""
    out = tmp_path_factory.mktemp("rep") / "report"
    return write_report(out, progress=STAGES.append), out


#: The stages the module's report run announced (what `depthdyn report` shows after 2 s).
STAGES: list[str] = []


@pytest.fixture(scope="module")
def claim_results(all_claim_results):
    return list(all_claim_results)


def test_files_written(report):
    summ, out = report
    assert summ.report == out / "report.md" and summ.report.is_file()
    assert summ.claims == out / "claims.json" and summ.claims.is_file()
    assert (out / MARKER).is_file()
    assert not [p for p in out.rglob("*.tmp")], "temporary files left behind"


def test_every_linked_figure_is_a_png(report):
    summ, out = report
    text = summ.report.read_text(encoding="utf-8")
    links = IMAGE.findall(text)
    assert len(links) >= 2 * len(FAMILIES)
    assert len(set(links)) == len(links)
    for rel in links:
        assert not Path(rel).is_absolute() and rel.endswith(".png")
        path = out / rel
        assert path.is_file(), rel
        assert path.read_bytes()[:8] == PNG, rel
    assert sorted(str(p.relative_to(out)) for p in summ.figures if p.suffix == ".png") == sorted(links)
    assert {p.suffix for p in summ.figures} == {".png", ".pdf"}  # each PNG with its vector twin


def test_each_figure_has_a_caption(report):
    text = report[0].report.read_text(encoding="utf-8")
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if IMAGE.search(line):
            caption = lines[i + 2]
            assert caption.startswith("*Figure ") and len(caption) > 60, caption


def test_each_family_has_a_section_with_region_trajectories_and_modes(report):
    summ, out = report
    text = summ.report.read_text(encoding="utf-8")
    links = IMAGE.findall(text)
    for name in FAMILIES:
        assert f"\n### {name}\n" in text
        assert f"figures/{name}-region.png" in links
        assert f"figures/{name}-trajectories.png" in links
    assert text.count("\nmodes:          x_l = ") == len(FAMILIES)
    assert text.count("\ncharpoly:       ") == len(FAMILIES)


def test_first_page_is_the_per_source_summary(report, claim_results):
    from depthdyn.claims import NOT_CHECKED, SOURCES, source_summary

    summ, _ = report
    text = summ.report.read_text(encoding="utf-8")
    sections = re.findall(r"^## (.+)$", text, flags=re.M)
    assert sections[0].startswith("What can I trust?")
    first = text.split("\n## ")[1]
    table = source_summary(claim_results)
    for key, row in table.items():  # one row per source with the statement counts
        assert re.search(rf"^\| {key}: .* \| {row['total']} \| {row['holds']} \| \*\*{row['fails']}\*\* \| "
                         rf"{row['holds-with-caveat']} \| {row['not checked']} \|$", first, flags=re.M), key
    assert len(SOURCES) == len(table)
    assert sections.index("False as printed") < sections.index("All claims") < sections.index("Not checked")
    nc = text.split("\n## Not checked\n")[1].split("\n## ")[0]
    assert nc.count("\n| ") - 1 == len(NOT_CHECKED)  # header row, then one row per statement


def test_every_figure_names_its_recurrence_and_source_equation(report):
    summ, _ = report
    text = summ.report.read_text(encoding="utf-8")
    n_fig = len(IMAGE.findall(text))
    assert text.count("*Recurrence drawn:*") == n_fig and text.count("*Source equation:*") == n_fig
    dense = text.split("\n### dense\n")[1].split("\n### ")[0]
    assert "not 002's eq. 9 system" in dense and "002-eq15-recurrence" in dense


def test_claims_json_matches_run_claims(report, claim_results):
    summ, _ = report
    data = json.loads(summ.claims.read_text(encoding="utf-8"))
    assert isinstance(data, list) and len(data) == len(claim_results)
    assert [d["id"] for d in data] == [r.id for r in claim_results]
    assert [d["verdict"] for d in data] == [r.verdict for r in claim_results]
    keys = {"id", "source", "section", "statement", "stated", "computed", "verdict", "method"}
    assert all(keys <= set(d) for d in data)


def test_summary_counts_match(report, claim_results):
    summ, _ = report
    counts = summary(claim_results)
    assert summ.counts == counts
    text = str(summ)
    assert (f"{counts['holds']} hold, {counts['fails']} fail, "
            f"{counts['holds-with-caveat']} hold with a caveat") in text
    md = summ.report.read_text(encoding="utf-8")
    assert f"**{counts['holds']} hold**, **{counts['fails']} fail**" in md
    assert md.count("| **fails** |") == counts["fails"]


def test_refuses_foreign_nonempty_dir_then_force(tmp_path, capsys, monkeypatch):
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    assert main(["report", "--out", str(foreign)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--force" in err
    assert sorted(os.listdir(foreign)) == ["notes.txt"]  # nothing written
    with pytest.raises(ParameterError):
        write_report(foreign)

    calls = []
    monkeypatch.setattr("depthdyn.report._build", lambda out, progress=None: calls.append(out) or _fake(out))
    assert main(["report", "--out", str(foreign), "--force"]) == 0
    assert calls and (foreign / MARKER).is_file() and (foreign / "notes.txt").read_text() == "keep me"
    assert "report:" in capsys.readouterr().out


def _fake(out, progress=None):
    from depthdyn.report import ReportSummary

    atomic_write(out / "report.md", "# fake\n")
    return ReportSummary(out, out / "report.md", out / "claims.json", (), {"total": 0}, 0.0)


def test_rerun_into_own_dir_and_file_refused(tmp_path, monkeypatch):
    monkeypatch.setattr("depthdyn.report._build", _fake)
    out = tmp_path / "fresh" / "nested"
    write_report(out)
    (out / "extra.txt").write_text("x")
    write_report(out)  # ours (marker): accepted without --force
    assert (out / "report.md").read_text() == "# fake\n"
    empty = tmp_path / "empty"
    empty.mkdir()
    write_report(empty)  # an empty directory is accepted
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(ParameterError, match="not a directory"):
        write_report(a_file, force=True)


def test_atomic_write_leaves_no_temp_files(tmp_path):
    target = tmp_path / "a.txt"
    atomic_write(target, "first")
    atomic_write(target, b"second")
    assert target.read_bytes() == b"second"
    assert os.listdir(tmp_path) == ["a.txt"]
    with pytest.raises(TypeError):
        atomic_write(target, 12345)  # not bytes or text: nothing replaced, nothing left
    assert target.read_bytes() == b"second"
    assert os.listdir(tmp_path) == ["a.txt"]


def test_atomic_write_failure_cleans_up(tmp_path, monkeypatch):
    target = tmp_path / "b.txt"
    target.write_text("old")

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        atomic_write(target, "new")
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["b.txt"]


def test_interrupted_rerun_leaves_no_stale_pair(tmp_path, monkeypatch):
    """Killed midway, a rerun leaves neither the old report.md nor a mismatched claims.json."""
    import depthdyn.claims as claims_pkg
    import depthdyn.report as report_mod

    out = tmp_path / "rep"
    out.mkdir()
    (out / MARKER).write_text("marker")
    (out / "report.md").write_text("old report")
    (out / "claims.json").write_text("[]")
    monkeypatch.setattr(claims_pkg, "run_claims", lambda source=None: [])
    calls = []

    def killed(spec, *args, **kwargs):
        calls.append(spec.stem)
        raise KeyboardInterrupt

    monkeypatch.setattr(report_mod, "render", killed)
    with pytest.raises(KeyboardInterrupt):
        write_report(out)
    assert calls  # the run got as far as the figures
    assert not (out / "report.md").exists() and not (out / "claims.json").exists()


# ------------------------------------------------------------------ readable text and vector figures
def test_report_text_is_maths_not_code(report):
    summ, out = report
    md = summ.report.read_text(encoding="utf-8")
    assert "Interval." not in md and "Union(" not in md  # sets in maths notation
    debris = [line for line in md.splitlines() if "\\|" in line and not line.startswith("|")]
    assert not debris, debris[:3]  # "\|" only where a table needs it
    first = md.split("## False as printed")[0]
    assert "**source statements**" in first and "In claims:" in first and "In source statements" in first
    assert "Strictly stable area in the `lam` plane: exactly `pi`" in md


def test_every_png_has_a_pdf(report):
    summ, out = report
    pngs = sorted((out / "figures").glob("*.png"))
    assert pngs and all(p.with_suffix(".pdf").read_bytes().startswith(b"%PDF-") for p in pngs)


def test_maths_notation_and_cells():
    from depthdyn.report.text import cell, maths

    assert maths("Interval.Ropen(-2, -1)") == "[-2, -1)"
    assert maths("Interval.Lopen(0, 1)") == "(0, 1]"
    assert maths("Interval(0, oo)") == "[0, ∞)" and maths("Interval(-oo, 0)") == "(-∞, 0]"
    assert maths("Interval(a, b, True, False)") == "(a, b]"
    assert maths("Union(Interval.open(-oo, -1), FiniteSet(0))") == "(-∞, -1) ∪ {0}"
    assert maths("zoo and oo_x and foo") == "zoo and oo_x and foo"  # only the word oo
    assert maths("Interval.open(0, (1") == "Interval.open(0, (1"  # unbalanced: left as it is
    assert cell("|r| < 1") == "\\|r\\| < 1" and cell("|r| < 1", table=False) == "|r| < 1"
    assert cell("a\\b", table=False) == "a\\b"  # backslashes kept as they are


def test_the_report_names_its_stages(report):
    from depthdyn.report.families import report_families

    names = list(report_families())
    assert STAGES[0] == "claims" and STAGES[-1] == "writing"
    assert STAGES[1:-1] == [f"figures and modes: {n} ({i + 1}/{len(names)})" for i, n in enumerate(names)]
    assert "in source statements (the unit of report.md's first table): " in str(report[0])
